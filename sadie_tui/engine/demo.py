"""The demo memory: built from the shipped ``data/demo/`` into its own home on first use,
never mixed with a person's memory.

Besides the notes, records and the stated beliefs (``beliefs.jsonl``, with their quotes), the
demo ships ``derived_beliefs.jsonl``: what a real ``sadie reflect`` run proposed
(``python -m sadie_tui.eval.demo_beliefs`` made it, README says with which model and slice),
loaded here as derived beliefs with their quotes, so that F5's accept, reject and reword have
something to work on. The ingest leaves that file out (``data/demo/.sadieignore``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from ..paths import db_path, demo_source, keep_private, make_private_folder
from .errors import SadieError

if TYPE_CHECKING:
    from .jsonvalue import JSONObject
    from .memory import Memory

MARKER = ".demo-built"
DERIVED = "derived_beliefs.jsonl"
#: A shipped derived belief's status: as the run left it (the person decides the rest).
DERIVED_STATUSES = ("active", "contested")

Progress = Callable[[str, int, int], None]


def is_built(home: Path) -> bool:
    return (home / MARKER).is_file() and db_path(home).is_file()


def ensure_demo(home: Path, progress: Progress | None = None) -> bool:
    """Ingest the demo memory into ``home`` unless it is already there. True if it was built.

    ``progress(stage, done, total)`` follows the ingest."""
    if is_built(home):
        return False
    source = demo_source()
    if not source.is_dir():
        raise SadieError(f"the demo memory is missing ({source})", fix="reinstall sadie")
    # lazy: DuckDB loads only when the demo memory has to be built
    from .memory import Memory as Opened
    from .retrieval.keyword import keep_current

    make_private_folder(home)
    with Opened.open(home) as memory:
        keep_current(memory)  # the index is saved with the memory: the first search loads it
        memory.ingest([source], progress)
        load_derived(memory, source / DERIVED)
    soul = source / "soul.md"
    if soul.is_file() and not (home / "soul.md").exists():
        (home / "soul.md").write_text(soul.read_text(encoding="utf-8"), encoding="utf-8")
    (home / MARKER).write_text("built from data/demo\n", encoding="utf-8")
    for written in (home / "soul.md", home / MARKER):
        keep_private(written)
    return True


def load_derived(memory: Memory, path: Path) -> int:
    """The derived beliefs of ``path`` (``eval.demo_beliefs`` wrote them) into ``memory``,
    each with the quotes found word for word in their notes, its links (a record by its line,
    another belief by its statement, linked both ways as reflection links them) and the
    history the run wrote; the number loaded. A line with no such quote, or loaded before,
    is passed over."""
    # lazy: the store and the embedder's vectors load only here
    from .ingest.belief_quotes import read_quotes
    from .ingest.jsonl import iter_jsonl
    from .ingest.raw import Unreadable, episode_id
    from .reflect.sameness import fingerprint
    from .store import beliefs as store
    from .store.ids import now
    from .store.vectors import vector_literal

    if not path.is_file():
        return 0
    db = memory.db
    loaded = 0
    links: list[tuple[str, JSONObject]] = []
    for number, obj, _ in iter_jsonl(path):
        statement = str((obj or {}).get("statement") or "").strip()
        status = str((obj or {}).get("status") or "active")
        if obj is None or not statement or status not in DERIVED_STATUSES:
            continue
        try:
            quotes, _left_out = read_quotes(obj.get("quotes"), path.parent)
        except Unreadable:
            continue
        belief_id = episode_id(f"{path.resolve()}#{number}")
        if not quotes or store.get_belief(db, belief_id) is not None:
            continue
        made_by = obj.get("made_by")
        model = str(made_by.get("model") or "") if isinstance(made_by, dict) else ""
        proposed: JSONObject = {"action": "proposed"}
        history = [h for h in _objects(obj.get("history")) if h.get("action")] or [proposed]
        vector = memory.embedder.encode([statement])[0]
        at = now()
        with db.transaction():
            store.insert_derived(
                db,
                id=belief_id,
                statement=statement,
                kind=str(obj.get("kind") or "fact"),
                confidence=float(str(obj.get("confidence") or 0.5)),
                evidence=[],
                fingerprint=fingerprint(statement),
                embedding=vector_literal(vector),
                at=at,
                status=status,
            )
            for q in quotes:
                store.add_evidence(
                    db,
                    belief_id,
                    q.episode_id,
                    q.quote,
                    verbatim=q.verbatim,
                    stance=q.stance,
                    run_id=None,
                    at=at,
                )
            for n, h in enumerate(history):
                store.log_change(
                    db,
                    belief_id,
                    str(h["action"]),
                    reason=str(h.get("reason") or "by sadie reflect; shipped with the demo"),
                    model=model or None,
                    at=at + timedelta(microseconds=n),  # in the run's order (read by time)
                )
        links += [(belief_id, link) for link in _objects(obj.get("links"))]
        loaded += 1
    _link(memory, path, links, episode_id)
    return loaded


def _objects(value: object) -> list[JSONObject]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _link(
    memory: Memory,
    path: Path,
    links: list[tuple[str, JSONObject]],
    episode_id: Callable[[str], str],
) -> None:
    """The loaded beliefs' links, once all of them are in (one may name another)."""
    # lazy: as load_derived
    from .store import beliefs as store
    from .store.ids import now

    db = memory.db
    for belief_id, link in links:
        kind = str(link.get("kind") or "contradicts")
        quote = str(link["quote"]) if link.get("quote") else None
        record = str(link.get("record") or "")
        at = now()
        if record:
            file, _, line = record.partition("#")
            target = episode_id(f"{(path.parent / file).resolve()}#{line}")
            if store.source_of(db, "observations", target) is not None:
                store.add_link(
                    db, belief_id, kind, target, "observation", quote=quote, run_id=None, at=at
                )
            continue
        found = store.belief_id_by_statement(db, str(link.get("belief")))
        if found is not None:
            for one, other in ((belief_id, found), (found, belief_id)):
                store.add_link(db, one, kind, other, "belief", quote=quote, run_id=None, at=at)
