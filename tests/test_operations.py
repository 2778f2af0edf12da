"""The door's table (``engine.operations``): an operation declared once is served by every
face. A test's own operation, declared here and nowhere else, is answered over HTTP on
loopback, over the holder's Unix socket, by ``RemoteSession`` and, being marked, as an MCP
tool; MCP's input schemas are HTTP's request schemas; and what the table declares agrees
with the routes the app serves."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar, cast

import httpx
import pytest
from pydantic import Field

from sadie_tui.engine.door import OPERATIONS, Op, Tool, operation, path_fields, withdraw
from sadie_tui.engine.errors import UsageError
from sadie_tui.engine.session import Session
from sadie_tui.engine.wire import schema_of
from sadie_tui.mcp_server import Tools, input_schema
from sadie_tui.serve.holder import hold
from sadie_tui.serve.openapi import spec
from sadie_tui.serve.remote import RemoteSession
from sadie_tui.serve.socket import socket_path
from tests.support.fake_session import FakeSession
from tests.support.serve import running

A = TypeVar("A")


@dataclass(frozen=True)
class Echoed:
    said: str
    times: int
    home: str


@dataclass
class Door(FakeSession):
    """The fake door, except that it runs every operation as ``Session.call`` does."""

    def call(self, op: Op[A]) -> A:
        return op.run(cast(Session, self))


@pytest.fixture
def echo() -> Iterator[type[Op[Echoed]]]:
    """An operation of this test's own, in the table while the test runs."""

    @operation(
        "POST",
        "/v1/echo/{said}",
        "Say it back",
        errors=(400,),
        tool=Tool("echo", "Say it back, as often as asked."),
    )
    @dataclass(frozen=True)
    class Echo(Op[Echoed]):
        said: str
        times: Annotated[int, Field(ge=1, le=3)] = 1

        def run(self, session: Session) -> Echoed:
            return Echoed(" ".join([self.said] * self.times), self.times, str(session.home))

    try:
        yield Echo
    finally:
        withdraw(Echo)


def test_a_declared_operation_is_served_over_http(tmp_path: Path, echo: Any) -> None:
    with running(Door(tmp_path)) as api, httpx.Client(base_url=api.url, timeout=30) as c:
        answered = c.post("/v1/echo/hello", json={"times": 2})
        assert (answered.status_code, answered.json()) == (
            200,
            {"said": "hello hello", "times": 2, "home": str(tmp_path)},
        )
        refused = c.post("/v1/echo/hello", json={"times": 9})
        assert refused.status_code == 400
        assert refused.json()["error"] == "'times' must be at most 3"
        described = spec()["paths"]["/v1/echo/{said}"]["post"]
        assert described["summary"] == "Say it back"
        assert described["requestBody"]["content"]["application/json"]["schema"]


def test_a_declared_operation_is_served_on_the_socket_and_by_the_remote_session(
    tmp_path: Path, echo: Any
) -> None:
    door = Door(tmp_path)
    holder = hold(door)
    assert holder is not None
    try:
        remote = RemoteSession(tmp_path, door.settings, socket_path(tmp_path), holder="a test")
        try:
            assert remote.call(echo("over the socket", 3)) == Echoed(
                "over the socket over the socket over the socket", 3, str(tmp_path)
            )
            with pytest.raises(UsageError, match="'times' must be at most 3"):
                remote.call(echo("x", 4))
        finally:
            remote.close()
    finally:
        holder.stop()


async def test_a_marked_operation_is_an_mcp_tool(tmp_path: Path, echo: Any) -> None:
    tools = Tools(Door(tmp_path))
    [described] = [t for t in tools.definitions() if t.name == "echo"]
    assert described.description == "Say it back, as often as asked."
    assert described.inputSchema["required"] == ["said"]
    answer = await tools.call("echo", {"said": "hi", "times": 2})
    assert answer == {"said": "hi hi", "times": 2, "home": str(tmp_path)}
    with pytest.raises(UsageError, match="'times' must be at most 3"):
        await tools.call("echo", {"said": "hi", "times": 5})


def test_without_it_nothing_serves_it(tmp_path: Path, echo: Any) -> None:
    withdraw(echo)
    assert "Echo" not in OPERATIONS
    assert "echo" not in [t.name for t in Tools(Door(tmp_path)).definitions()]
    with running(Door(tmp_path)) as api, httpx.Client(base_url=api.url, timeout=30) as c:
        assert c.post("/v1/echo/hello", json={}).status_code == 404


@pytest.mark.parametrize(
    "cls",
    [cls for cls in OPERATIONS.values() if cls.declared.tool is not None],
    ids=lambda cls: cls.__name__,
)
def test_mcp_and_http_take_the_same_fields_within_the_same_bounds(cls: type[Op[Any]]) -> None:
    """The tool's input schema is the request's own: HTTP's body schema (or, for a GET, its
    query parameters' schemas) says the same fields, types and limits."""
    tool = input_schema(cls)
    request = schema_of(cls, "validation")
    assert tool["properties"] == request["properties"]
    assert tool.get("required", []) == request.get("required", [])
    d = cls.declared
    described = spec()["paths"][d.path][d.method.lower()]
    if d.method in ("GET", "DELETE"):
        params = {p["name"]: p["schema"] for p in described.get("parameters", [])}
        for name, schema in request["properties"].items():
            documented = {k: v for k, v in params[name].items() if k != "description"}
            assert _plain(documented) == _plain(schema), name
    else:
        assert "requestBody" in described


def _plain(schema: Any) -> Any:
    """A schema without the keys that only describe (title, description, default)."""
    text = json.dumps(schema, sort_keys=True)
    return {k: v for k, v in json.loads(text).items() if k not in ("title", "description", "default")}


def test_every_operation_is_served_where_it_is_declared() -> None:
    paths = spec()["paths"]
    for cls in OPERATIONS.values():
        d = cls.declared
        assert d.method.lower() in paths[d.path], cls.__name__
        assert set(path_fields(d.path)) <= set(cls.__dataclass_fields__), cls.__name__


def test_the_table_imports_without_the_store() -> None:
    """A face imports the table at start (the app's first frame waits on it): the answers'
    shapes, which bring DuckDB and numpy, load when an operation is first used."""
    code = (
        "import sys, sadie_tui.engine.operations as o\n"
        "print([m for m in ('duckdb', 'numpy', 'sadie_tui.engine.store') if m in sys.modules])\n"
        "o.ListConversations.answer\n"
        "print('duckdb' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["[]", "True"]


def test_an_import_may_be_as_large_as_an_export() -> None:
    from sadie_tui.engine.conversations.export_format import MAX_EXPORT_BYTES
    from sadie_tui.engine.operations import ImportConversation

    assert ImportConversation.declared.body_limit == MAX_EXPORT_BYTES
