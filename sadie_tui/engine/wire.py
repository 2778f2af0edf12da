"""The wire: one codec for every shape sadie prints, serves or reads back as JSON.

A shape is declared once, as the frozen dataclass the engine already hands around (a
conversation, a message, a chip, a citation, an event, an ask's result, a search, and the
server's own requests and answers). pydantic reads the dataclass's fields and derives from
them the JSON (``dump``), the decoding (``load``) and the JSON Schema (``schema_of``, and
``components`` for the OpenAPI document). Adding a field to a shape is one edit: the field.

A value derived from the others (a citation's ``label``, a conversation's ``archived``) is a
``@computed_field`` property: printed and documented, ignored when read back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, TypeAdapter, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import ErrorDetails, core_schema

from .errors import UsageError

T = TypeVar("T")
Mode = Literal["validation", "serialization"]
REF_TEMPLATE = "#/components/schemas/{model}"


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("is empty")
    return value


#: Text that must hold more than whitespace (a question, a title, a chip's kind and ref).
Text = Annotated[str, AfterValidator(_not_blank)]


class ShapeError(UsageError):
    """JSON that does not fit its shape, said in one line (``'question' is required``)."""


#: A shape: any type expression pydantic reads (a dataclass, ``list[X]``, a union, a Literal).
Shape = Any  # Any: no type names "a type expression" (``type[T]`` takes only classes)

#: One adapter per shape, each over a type of its own. Any: pydantic's TypeAdapter generic
_ADAPTERS: dict[object, TypeAdapter[Any]] = {}  # Any: (above)


# Any: a shape is any type expression pydantic reads (a dataclass, list[X], a union)
def adapter(shape: Any) -> TypeAdapter[Any]:
    """The pydantic adapter for ``shape`` (a dataclass, or a type over dataclasses such as
    ``list[Conversation]``), built once: building one reads every nested shape."""
    found = _ADAPTERS.get(shape)
    if found is None:
        found = _ADAPTERS[shape] = TypeAdapter(shape)
    return found


# Any: pydantic's dump_python; the caller knows what it dumped (an object, a list)
def dump(value: object) -> Any:
    """``value`` (a shape's instance) as JSON-ready Python (dicts, lists, strings, numbers):
    fields in declaration order, derived ones after them, datetimes as ISO text."""
    return adapter(type(value)).dump_python(value, mode="json")


# Any: ``shape`` may be a type expression (``list[X]``, a union) that ``type[T]`` cannot name
def load(shape: type[T] | Any, data: object) -> T:
    """``data`` (parsed JSON) read as ``shape``; unknown keys are ignored. Raises
    ``ShapeError`` naming the first field that does not fit."""
    try:
        value: T = adapter(shape).validate_python(data)
    except ValidationError as exc:
        raise ShapeError(problem(exc)) from None
    return value


_WHAT = {
    "string_type": "must be a string",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "dict_type": "must be an object",
    "dataclass_type": "must be an object",
    "dataclass_args_type": "must be an object",
    "model_type": "must be an object",
}


_BOUNDS = {  # a bound's error kind: its words, and its key in the error's context
    "less_than_equal": ("at most", "le"),
    "greater_than_equal": ("at least", "ge"),
    "less_than": ("less than", "lt"),
    "greater_than": ("more than", "gt"),
}


def _where(loc: Iterable[int | str]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def problem(exc: ValidationError) -> str:
    """The first error of ``exc`` in one line, in the API's words: ``'chips[0].kind' is
    required``, ``'regenerate' must be true or false``, ``'title' is empty``."""
    error: ErrorDetails = exc.errors(include_url=False)[0]
    kind = error["type"]
    where = _where(error["loc"])
    if kind == "missing":
        said = "is required"
    elif kind == "value_error":
        said = str((error.get("ctx") or {}).get("error") or error["msg"])
    elif kind in _BOUNDS:
        words, key = _BOUNDS[kind]
        said = f"must be {words} {(error.get('ctx') or {}).get(key)}"
    elif kind == "literal_error":
        said = f"must be {(error.get('ctx') or {}).get('expected', 'one of the listed values')}"
    else:
        said = _WHAT.get(kind, error["msg"][:1].lower() + error["msg"][1:])
    return f"{where!r} {said}" if where else f"the body {said}"


#: What pydantic asks a title for (its own ``CoreSchemaOrField``, which is private).
CoreSchemaOrField = (
    core_schema.CoreSchema
    | core_schema.ModelField
    | core_schema.DataclassField
    | core_schema.TypedDictField
    | core_schema.ComputedField
)


class WireSchema(GenerateJsonSchema):
    """JSON Schema as the OpenAPI document shows it: no generated per-field titles, and every
    field of an answer required (``dump`` always writes every field, defaults included)."""

    def field_title_should_be_set(self, schema: CoreSchemaOrField) -> bool:
        return False

    def field_is_required(
        self,
        field: core_schema.ModelField | core_schema.DataclassField | core_schema.TypedDictField,
        total: bool,
    ) -> bool:
        if self.mode == "serialization":
            return True
        return super().field_is_required(field, total)


def schema_of(shape: object, mode: Mode = "serialization") -> JsonSchemaValue:
    """The JSON Schema of one shape on its own (its nested shapes under ``$defs``)."""
    return adapter(shape).json_schema(mode=mode, schema_generator=WireSchema)


def components(
    shapes: Iterable[tuple[object, Mode]],
) -> tuple[dict[tuple[object, Mode], JsonSchemaValue], dict[str, JsonSchemaValue]]:
    """The schemas of many shapes at once, for an OpenAPI document: each (shape, mode) →
    its schema (a ``$ref`` into ``#/components/schemas`` for a dataclass), and those
    components by name."""
    keys = list(dict.fromkeys(shapes))
    found, defs = TypeAdapter.json_schemas(
        [(shape, mode, adapter(shape)) for shape, mode in keys],
        ref_template=REF_TEMPLATE,
        schema_generator=WireSchema,
    )
    return dict(found), dict(defs.get("$defs", {}))


# Any: as ``dump``'s
def dump_as(shape: Any, value: object) -> Any:
    """``value`` as JSON-ready Python, written as ``shape`` says (a ``list[Conversation]``
    with each conversation's derived fields, which a bare list's own type does not know)."""
    return adapter(shape).dump_python(value, mode="json")


def dump_each(values: Iterable[object]) -> list[Any]:  # Any: as ``dump``'s
    """``dump`` of each value of a list (each knows its own shape)."""
    return [dump(value) for value in values]
