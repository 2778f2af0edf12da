"""All SQL lives in ``sadie_tui/engine/store/``: a grep of the source tree, and the store's own
guarantees (private connection, translated errors, typed records)."""

from __future__ import annotations

import ast
import math
import re
import uuid
from pathlib import Path

import duckdb
import pytest

from sadie_tui.engine import telemetry
from sadie_tui.engine.errors import StorageError
from sadie_tui.engine.store import episodes, schema
from sadie_tui.engine.store.db import Database, open_database

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "sadie_tui"
STORE = PACKAGE / "engine" / "store"

#: Files outside the store that still hold SQL, waiting to move into a repository.
#: Shrink this list; never grow it.
ALLOWED: set[str] = set()
ALLOWED_FOLDERS: tuple[str, ...] = ()
#: The only values written into SQL text, each for a measured reason (store/search.py's
#: docstring): the HNSW LIMIT, which the vss optimiser answers from the index only as a
#: constant, and chunk-id lists, which DuckDB prunes a scan with only as constants. Both are
#: forced through ``int()``. Never grow this.
VALUES_ALLOWED = {
    ("sadie_tui/engine/store/search.py", "int(limit)"),
    ("sadie_tui/engine/store/search.py", "_id_list(ids)"),
}

SQL = re.compile(r"\b(SELECT|INSERT INTO|UPDATE|DELETE FROM|CREATE)\s")
#: Statements of any kind, for the check that no value is formatted into one.
STATEMENT = re.compile(
    r"\b(SELECT|INSERT INTO|UPDATE|DELETE FROM|CREATE|DROP|ALTER|ATTACH|DETACH|COPY|LOAD|"
    r"INSTALL|SET|PRAGMA|EXPORT|IMPORT|CHECKPOINT)\b"
)


def _sources() -> list[tuple[str, ast.AST]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name in ALLOWED or name.startswith(ALLOWED_FOLDERS):
            continue
        found.append((name, ast.parse(path.read_text(encoding="utf-8"), filename=name)))
    return found


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def test_no_sql_outside_the_store() -> None:
    offenders = [
        f"{name}:{line}: {text.strip()[:60]!r}"
        for name, tree in _sources()
        if not name.startswith("sadie_tui/engine/store/")
        for line, text in _strings(tree)
        if SQL.search(text)
    ]
    assert offenders == []


def _name(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Call):
        return _name(expr.func)
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return None


def _fragment(expr: ast.expr) -> bool:
    """An interpolation that is SQL text, not a value: a constant (UPPER_CASE or a literal),
    a fragment named ``*_sql`` (or made by a ``*_sql`` function), a ``params.add(…)``
    placeholder, fragments joined, a choice between two fragments, or a table name checked
    against the schema (``table``)."""
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, str)
    if isinstance(expr, ast.IfExp):
        return _fragment(expr.body) and _fragment(expr.orelse)
    if isinstance(expr, ast.JoinedStr):
        return all(
            _fragment(v.value) for v in expr.values if isinstance(v, ast.FormattedValue)
        )
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        if expr.func.attr == "add" and _name(expr.func.value) == "params":
            return True
        if expr.func.attr == "join" and isinstance(expr.func.value, ast.Constant):
            return all(_fragment(a) for a in expr.args)
    name = _name(expr)
    if name is None:
        return False
    if isinstance(expr, ast.Call):
        return name.endswith("_sql")
    return name.isupper() or name.endswith("_sql") or name == "table"


def _text(node: ast.expr) -> str:
    """The literal SQL text of a string expression (its constant parts)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_text(v) for v in node.values if isinstance(v, ast.Constant))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        return _text(node.left) + _text(node.right)
    return ""


def _sql_builders(tree: ast.AST) -> set[ast.AST]:
    """String expressions that build SQL without a keyword of their own: the value of a
    ``*_sql`` name and what a ``*_sql`` function returns."""
    found: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id.endswith("_sql") for t in node.targets
        ):
            found.add(node.value)
        elif isinstance(node, ast.FunctionDef) and node.name.endswith("_sql"):
            found.update(n.value for n in ast.walk(node) if isinstance(n, ast.Return) and n.value)
    return found


def _formatted_values(name: str, tree: ast.AST) -> list[str]:
    """Every value formatted into SQL text in one module: f-string fields, ``+`` operands,
    ``%`` and ``.format()`` on statement text."""
    builders = _sql_builders(tree)
    found: list[tuple[int, str]] = []

    def flag(node: ast.expr, expr: ast.expr) -> None:
        shown = ast.unparse(expr)
        if not _fragment(expr) and (name, shown) not in VALUES_ALLOWED:
            found.append((node.lineno, shown))

    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and (STATEMENT.search(_text(node)) or node in builders):
            for value in node.values:
                if isinstance(value, ast.FormattedValue):
                    flag(node, value.value)
        elif isinstance(node, ast.BinOp) and STATEMENT.search(_text(node)):
            if isinstance(node.op, ast.Mod):
                found.append((node.lineno, "% formatting"))
            elif isinstance(node.op, ast.Add):
                for side in (node.left, node.right):
                    if not isinstance(side, ast.Constant | ast.JoinedStr | ast.BinOp):
                        flag(node, side)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
            and STATEMENT.search(_text(node.func.value))
        ):
            found.append((node.lineno, ".format()"))
    return [f"{name}:{line}: {what}" for line, what in sorted(found)]


def test_no_value_is_formatted_into_sql() -> None:
    """Values are bound parameters everywhere in sadie_tui: the person's text, numbers from a
    persona file (a NaN weight once reached SQL as ``column "nan"``), paths. Only SQL
    fragments are written into statements, and the two measured exceptions above."""
    offenders = [hit for name, tree in _sources() for hit in _formatted_values(name, tree)]
    assert offenders == []


def test_the_value_check_catches_each_way_of_formatting() -> None:
    bad = """
def f(db, weight, ids, path, limit):
    db.execute(f"SELECT s * {weight} FROM t")
    db.execute("SELECT * FROM t WHERE id IN " + str(ids))
    db.execute("SELECT * FROM t LIMIT %d" % limit)
    db.execute("ATTACH '{}' AS old".format(path))
    where_sql = f"x > {weight}"
"""
    found = _formatted_values("sadie_tui/x.py", ast.parse(bad))
    assert [hit.split(": ", 1)[1] for hit in found] == [
        "weight",
        "str(ids)",
        "% formatting",
        ".format()",
        "weight",
    ]
    fine = """
def g(db, params, table, cond_sql):
    db.execute(f"SELECT * FROM {table} WHERE {cond_sql} AND v = {params.add(3)}")
"""
    assert _formatted_values("sadie_tui/x.py", ast.parse(fine)) == []


def test_the_embedding_width_is_written_once() -> None:
    """No number 384 and no ``[384]`` type in code outside ``store/schema.py`` (prose that
    mentions the width is fine, and so is a file mode written ``0o600``)."""
    sites = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == STORE / "schema.py":
            continue
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.Constant):
                continue
            # The segment only for a 384 (it re-splits the file's lines at every call).
            number = type(node.value) is int and node.value == 384
            if (number and ast.get_source_segment(source, node) == "384") or (
                isinstance(node.value, str) and "[384]" in node.value
            ):
                sites.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert sites == []
    assert schema.VECTOR_TYPE == f"FLOAT[{schema.EMBEDDING_DIM}]"


def test_db_and_migrations_do_not_import_each_other_back() -> None:
    migrations = (STORE / "migrations.py").read_text(encoding="utf-8")
    assert not re.search(
        r"^\s*(from \.db|from sadie_tui\.engine\.store\.db) import", migrations, re.M
    )


# --------------------------------------------------------------------------- the Database


def test_the_connection_is_private(tmp_path: Path) -> None:
    with open_database(tmp_path / "sadie.duckdb") as db:
        assert not hasattr(db, "con")


class _FailingCommit:
    """A connection whose COMMIT fails, as a write conflict or a full disk makes it."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def execute(self, sql: str, params: object = None) -> _FailingCommit:
        self.ran.append(sql)
        if sql == "COMMIT":
            raise duckdb.TransactionException("TransactionContext Error: Failed to commit")
        if sql == "ROLLBACK":
            raise duckdb.TransactionException("cannot rollback - no transaction is active")
        return self

    def close(self) -> None:
        pass


def test_a_failing_commit_is_a_storage_error(tmp_path: Path) -> None:
    con = _FailingCommit()
    db = Database(con, tmp_path / "x.duckdb", read_only=False)  # type: ignore[arg-type]
    with pytest.raises(StorageError, match="database error: TransactionContext"):
        with db.transaction():
            db.execute("SELECT 1")
    assert con.ran == ["BEGIN TRANSACTION", "SELECT 1", "COMMIT", "ROLLBACK"]


def test_a_failing_statement_rolls_back_and_is_a_storage_error(tmp_path: Path) -> None:
    with open_database(tmp_path / "sadie.duckdb") as db:
        with pytest.raises(StorageError, match="database error"):
            with db.transaction():
                db.execute("INSERT INTO soul (id, text) VALUES (1, 'kept?')")
                db.execute("INSERT INTO soul (id, text) VALUES (1, 'duplicate')")
        assert db.fetchall("SELECT text FROM soul") == []


def test_read_only_open_does_not_migrate(tmp_path: Path) -> None:
    path = tmp_path / "sadie.duckdb"
    open_database(path).close()
    with open_database(path, read_only=True) as db:
        assert db.read_only
        assert db.fetchone("SELECT count(*) FROM schema_migrations")[0] > 0


# --------------------------------------------------------------------------- repositories


def test_get_episode_reads_one_episode(tmp_path: Path) -> None:
    episode_id = str(uuid.uuid4())
    with open_database(tmp_path / "sadie.duckdb") as db:
        db.execute(
            "INSERT INTO episodes (id, kind, title, source, source_key, occurred_at,"
            " content_hash, text) VALUES (?, 'journal', 'Warden retro', 'notes/a.md', 'a',"
            " TIMESTAMP '2026-03-14 09:30:00', 'h', 'Shipped the auth refactor.')",
            [episode_id],
        )
        found = episodes.get_episode(db, episode_id)
        assert found is not None
        assert (found.title, found.date, found.kind, found.source, found.text) == (
            "Warden retro",
            "2026-03-14",
            "journal",
            "notes/a.md",
            "Shipped the auth refactor.",
        )
        assert found.id == episode_id
        assert episodes.get_episode(db, str(uuid.uuid4())) is None
        assert episodes.get_episode(db, "not-a-uuid") is None


def test_policy_events_and_turns_go_through_telemetry(tmp_path: Path) -> None:
    from types import SimpleNamespace

    with open_database(tmp_path / "sadie.duckdb") as db:
        conversation, message = str(uuid.uuid4()), str(uuid.uuid4())
        telemetry.add_policy_event(db, conversation, message, "no-advice", "block", "x" * 600)
        row = db.fetchone(
            "SELECT CAST(conversation_id AS VARCHAR), CAST(message_id AS VARCHAR), policy,"
            " action, length(match) FROM policy_events"
        )
        assert row == (conversation, message, "no-advice", "block", 500)

        chunk = SimpleNamespace(
            chunk_id=7,
            episode_id=uuid.uuid4(),
            rank=1,
            scores={"vector": 0.5, "keyword": math.nan},
            fused=0.25,
            final=math.inf,
        )
        turn = telemetry.record_turn(
            db,
            kind="ask",
            query="q",
            model=None,
            persona="analyst",
            prompt_version="v1",
            grounding=1.0,
            abstained=False,
            latency_ms=3.0,
            chunks=[chunk, SimpleNamespace(**{**chunk.__dict__, "chunk_id": 8, "rank": 2})],
            cited_chunk_ids=[8],
            cut="length",
        )
        rows = db.fetchall(
            "SELECT chunk_id, rank, vector_score, keyword_score, graph_score, fused_score,"
            " final_score, cited FROM retrievals WHERE turn_id = ? ORDER BY rank",
            [turn],
        )
        assert rows == [
            (7, 1, 0.5, None, None, 0.25, None, False),
            (8, 2, 0.5, None, None, 0.25, None, True),
        ]
        assert telemetry.mark_cited(db, turn, [7, 7, 99]) == 1
        assert db.fetchone("SELECT cut FROM turns WHERE id = ?", [turn]) == ("length",)
