"""JSON as a type: what ``json.loads`` returns, for parsed model output, config and persona
files, jsonl rows and imported files. Code that reads one narrows it with ``isinstance``
where it reads it, instead of trusting an ``Any``."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias, Union

if TYPE_CHECKING:
    #: Any JSON value (recursive).
    JSON: TypeAlias = Union[str, int, float, bool, None, list["JSON"], dict[str, "JSON"]]  # noqa: UP007
else:
    # pydantic follows a recursive alias only as a TypeAliasType (Python 3.11 has no `type`
    # statement), so a shape's field may be JSON; mypy reads the plain alias above.
    from typing_extensions import TypeAliasType

    JSON = TypeAliasType(
        "JSON",
        Union[str, int, float, bool, None, list["JSON"], dict[str, "JSON"]],  # noqa: UP007
    )

#: A JSON object: a config file, a persona, a jsonl row, a metadata column.
JSONObject: TypeAlias = dict[str, JSON]


def objects(value: JSON) -> list[JSONObject]:
    """The JSON objects of a list (a column's spans, say); none for anything else."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def as_object(value: JSON) -> JSONObject | None:
    """``value`` if it is a JSON object, else None (a row that should be one but is not)."""
    return value if isinstance(value, dict) else None
