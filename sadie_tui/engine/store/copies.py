"""What a whole copy of the memory is checked by: every table's row count, read the same way
from the memory, a converted copy and a backup's manifest."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .db import Database


def table_counts(db: Database) -> dict[str, int]:
    """Rows by table, for every table of the memory (its own database, not attached ones)."""
    names = db.fetchall(
        "SELECT table_name FROM duckdb_tables()"
        " WHERE database_name = current_database() AND schema_name = 'main'"
        " ORDER BY table_name"
    )
    counts: dict[str, int] = {}
    for (name,) in names:
        table_sql = '"' + str(name).replace('"', '""') + '"'  # a name the catalogue gave
        row = db.fetchone(f"SELECT count(*) FROM {table_sql}")
        counts[str(name)] = int(row[0]) if row else 0
    return counts
