"""The door's operations, each declared once.

An operation is a frozen dataclass: its fields are the request (wire names, checked by
``wire``), its base ``Op[Answer]`` names the answer's shape, its ``run`` is the engine work
over an open session, and the ``@operation(...)`` over it says how the other faces reach it:
the HTTP method and path (path fields are the ``{names}`` in it; a GET or DELETE takes the
other fields as query parameters, any other method as a JSON body), whether it is served
only on the memory's Unix socket, and its MCP tool, if any.

    @operation("POST", "/v1/beliefs/{belief_id}/accept", "Keep a proposed belief", errors=(404,))
    @dataclass(frozen=True)
    class AcceptBelief(Op[BeliefDetail]):
        belief_id: str
        reason: str | None = None

        def run(self, session: Session) -> BeliefDetail:
            return decisions.accept(session.db, self.belief_id, self.reason)

From that one declaration: ``Session.call`` runs it in process, ``serve`` serves it (and the
OpenAPI document describes it), ``RemoteSession.call`` sends it to the sadie that holds the
memory, and the MCP face offers it as a tool whose input schema is the request's own. A
face asks ``session.call(AcceptBelief(belief_id, reason="…"))``: typed, its answer a
``BeliefDetail``. The table of the product's operations is ``engine.operations``.
"""

from __future__ import annotations

import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, ClassVar, Generic, Literal, TypeVar

from .jsonvalue import JSONObject

A = TypeVar("A")
C = TypeVar("C", bound="type[Op[Any]]")  # Any: an operation of any answer

Method = Literal["GET", "POST", "PUT", "DELETE"]
JSON_MEDIA = "application/json"


@dataclass(frozen=True)
class Tool:
    """An operation offered to other assistants over MCP: the tool's name and description,
    whether it changes the memory (off unless ``mcp_write``), and how its answer reads (by
    default the answer as the wire writes it)."""

    name: str
    description: str
    writes: bool = False
    present: Callable[[Any], JSONObject] | None = None  # Any: the operation's answer


@dataclass(frozen=True)
class Declared:
    """How an operation is reached, as ``@operation`` declared it."""

    method: Method
    path: str
    summary: str
    status: int = 200
    errors: tuple[int, ...] = ()
    socket_only: bool = False
    tool: Tool | None = None
    body: Literal["json", "text"] = "json"  # "text": the one field is the body, as sent
    body_limit: int | None = None  # bytes; None: the server's own limit
    # The answer's (shape, media type) pairs when it is not one JSON shape (an export).
    answers: tuple[tuple[Any, str], ...] = ()  # Any: a shape


class _Answer:
    """``Op.answer``: the answer's shape, read from ``Op[Answer]`` when first asked. A table
    may write its answers as names in quotes (``Op["Search"]``), so a face imports it without
    the store and retrieval the shapes bring; the names are then looked up in its module and
    in what its ``answer_types()`` imports."""

    def __get__(self, obj: object, cls: type) -> Any:  # Any: a shape
        found = _ANSWERS.get(cls)
        if found is None:
            found = _ANSWERS[cls] = _answer_of(cls)
        return found


_ANSWERS: dict[type, Any] = {}  # Any: a shape; each operation's, once read


class Op(Generic[A]):
    """The base of every operation (see the module docstring)."""

    declared: ClassVar[Declared]
    answer: ClassVar[Any] = _Answer()  # Any: a shape (``wire``), read from ``Op[Answer]``

    # Any: the open Session (engine.session imports this module); each run names it
    def run(self, session: Any) -> A:
        """The engine work: what the operation answers over an open session."""
        raise NotImplementedError(type(self).__name__)

    def media(self) -> str:
        """The answer's media type (an export answers Markdown or JSON as text)."""
        return JSON_MEDIA


#: Every declared operation by name (its class name), in declaration order.
OPERATIONS: dict[str, type[Op[Any]]] = {}  # Any: operations of every answer


def operation(
    method: Method,
    path: str,
    summary: str,
    *,
    status: int = 200,
    errors: tuple[int, ...] = (),
    socket_only: bool = False,
    tool: Tool | None = None,
    body: Literal["json", "text"] = "json",
    body_limit: int | None = None,
    answers: tuple[tuple[Any, str], ...] = (),  # Any: a shape
) -> Callable[[C], C]:
    """Declare the dataclass below as an operation of the door (see the module docstring)."""

    def declare(cls: C) -> C:
        if not is_dataclass(cls):
            raise TypeError(f"{cls.__name__}: an operation is a dataclass")
        names = {f.name for f in fields(cls)}
        missing = [p for p in path_fields(path) if p not in names]
        if missing:
            raise TypeError(f"{cls.__name__}: {path} names {missing}, which are not fields")
        if body == "text" and len(names - set(path_fields(path))) != 1:
            raise TypeError(f"{cls.__name__}: a text body fills exactly one field")
        cls.declared = Declared(
            method, path, summary, status, errors, socket_only, tool, body, body_limit, answers
        )
        if cls.__name__ in OPERATIONS and OPERATIONS[cls.__name__] is not cls:
            raise TypeError(f"two operations are named {cls.__name__}")
        OPERATIONS[cls.__name__] = cls
        return cls

    return declare


def withdraw(cls: type[Op[Any]]) -> None:  # Any: an operation of any answer
    """Take an operation out of the table (a test's own, when it ends)."""
    OPERATIONS.pop(cls.__name__, None)


def path_fields(path: str) -> list[str]:
    """The ``{names}`` in a path, in order."""
    return [part[1:-1] for part in path.split("/") if part.startswith("{")]


def _answer_of(cls: type) -> Any:  # Any: a shape
    for base in getattr(cls, "__orig_bases__", ()):
        if typing.get_origin(base) is Op:
            (answer,) = typing.get_args(base)
            if isinstance(answer, typing.ForwardRef):
                module = sys.modules[cls.__module__]
                names = dict(vars(module))
                load = names.get("answer_types")
                if callable(load):
                    names.update(load())
                answer = eval(answer.__forward_arg__, names)  # noqa: S307 - a type's name
            return answer
    raise TypeError(f"{cls.__name__}: an operation subclasses Op[Answer]")
