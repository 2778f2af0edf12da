"""Checks a command's printed JSON against the schema ``wire`` derives from its shape: every
value fits, and the keys are exactly the shape's (none missing, none extra)."""

from __future__ import annotations

import copy

from jsonschema import Draft202012Validator

from sadie_tui.engine.jsonvalue import JSON, JSONObject
from sadie_tui.engine.wire import schema_of


def _closed(node: JSON) -> None:
    """Every object schema with properties made closed: an extra key is then an error."""
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict):
            node["additionalProperties"] = False
        for value in node.values():
            _closed(value)
    elif isinstance(node, list):
        for value in node:
            _closed(value)


def closed_schema(shape: object) -> JSONObject:
    """The serialization schema of ``shape`` with no room for keys it does not declare."""
    schema: JSONObject = copy.deepcopy(schema_of(shape))
    _closed(schema)
    return schema


def assert_fits(data: JSON, shape: object) -> None:
    """``data`` (parsed JSON) is exactly ``shape``'s form; the first problem says where."""
    errors = sorted(
        Draft202012Validator(closed_schema(shape)).iter_errors(data), key=lambda e: e.path
    )
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:3]]
