"""Regenerate ``data/demo/derived_beliefs.jsonl``: the derived beliefs the demo ships, made by a
real ``sadie reflect`` run, so that a person trying ``sadie --demo`` has proposals to accept,
reject and reword in F5 (issue 36, item 4).

    OLLAMA_HOST=http://127.0.0.1:11555 python -m sadie_tui.eval.demo_beliefs \\
        --model qwen2.5-coder:1.5b --since 2026-11-01 --budget 35

The demo memory (its notes, records and stated beliefs) is built in a temporary home, the
reflection runs there on the notes dated ``--since`` or later (bounded by ``--budget``
minutes, batch by batch, as ``sadie reflect`` is), and every derived belief it left that is
not rejected is written out with its quotes: the file each quote is in (relative to
``data/demo``), the quote, its stance (``for`` / ``against``) and whether the model wrote it
word for word, its links (a record that contradicts it by its line, another belief by its
statement) and its history. Nothing is written by hand: a belief the run did not make is not
in the file. Each line also says how it was made (``made_by``: model, slice, notes read,
batches, seconds, why it stopped). ``--keep HOME`` keeps the run's memory; ``--from-home HOME``
writes such a kept memory out again without reflecting.

``engine.demo`` loads the file into the demo home after the ingest; ``data/demo/.sadieignore``
keeps the ingest itself from reading it as records.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine.jsonvalue import JSON, JSONObject
from ..engine.operations import ListBeliefs, ShowBelief
from ..engine.requests import ReflectJob
from ..engine.store.beliefs import source_of
from ..engine.store.reflection import last_run
from ..paths import demo_source

if TYPE_CHECKING:
    from ..engine.reflect.beliefs import Link
    from ..engine.session import Session

FILE = "derived_beliefs.jsonl"


def relative_source(source_key: str, root: Path) -> str:
    """An episode's source key (an absolute path, ``#line`` for a record) as the demo names
    it: ``journal/2026-11-02.md``, ``records/runs.jsonl#31``."""
    path, sep, line = source_key.partition("#")
    rel = Path(path).resolve().relative_to(root.resolve()).as_posix()
    return f"{rel}#{line}" if sep else rel


def _links(session: Session, links: Sequence[Link], root: Path) -> list[JSON]:
    """A belief's links as the file keeps them: a record by its line (``observations.jsonl#51``),
    another belief by its statement (found again by it when the demo is built)."""
    kept: list[JSON] = []
    for link in links:
        item: JSONObject = {"kind": link.kind, "quote": link.quote}
        if link.target_kind == "observation":
            source = source_of(session.db, "observations", link.target_id)
            if source is None:
                continue
            item["record"] = relative_source(source, root)
        else:
            item["belief"] = link.text
        kept.append(item)
    return kept


def export(session: Session, root: Path, made_by: JSONObject) -> list[JSONObject]:
    """Every derived belief of ``session``'s memory not rejected, as the file's lines: its
    quotes, its links and its history as the run wrote them."""
    lines: list[JSONObject] = []
    for belief in session.call(ListBeliefs(origin="derived")):
        if belief.status == "rejected":
            continue
        detail = session.call(ShowBelief(belief.id))
        quotes: list[JSON] = []
        for e in detail.evidence:
            source = source_of(session.db, "episodes", e.episode_id)
            if source is None or not e.quote:
                continue
            quotes.append(
                {
                    "source": relative_source(source, root),
                    "quote": e.quote,
                    "stance": "for" if e.stance == "supports" else "against",
                    "verbatim": e.verbatim,
                }
            )
        if not quotes:
            continue
        history: list[JSON] = [{"action": c.action, "reason": c.reason} for c in detail.changes]
        lines.append(
            {
                "statement": belief.statement,
                "status": belief.status,
                "kind": belief.kind,
                "confidence": belief.confidence,
                "quotes": quotes,
                "links": _links(session, detail.links, root),
                "history": history,
                "made_by": made_by,
            }
        )
    return lines


def made_by_of(session: Session, since: date) -> JSONObject:
    """How the memory's last reflection run was made: model, slice, notes read, seconds."""
    run = last_run(session.db)
    if run is None:
        raise SystemExit("no reflection run in that memory")
    model, made_on, counts = run
    return {
        "model": model,
        "since": since.isoformat(),
        "notes_read": counts.get("episodes"),
        "batches": counts.get("batches"),
        "seconds": round(float(str(counts.get("elapsed") or 0))),
        "stopped": counts.get("stopped"),
        "made_on": made_on,
    }


def generate(
    model: str,
    since: date,
    budget: float | None,
    out: Path,
    keep: Path | None = None,
    from_home: Path | None = None,
) -> list[JSONObject]:
    """Build the demo in a temporary home (or ``keep``), reflect with ``model`` on the notes
    since ``since``, write ``out``; the lines written. ``from_home``: a home such a run was
    kept in, written out again without reflecting."""
    # lazy: DuckDB, the embedder and the model clients load only when a run is asked for
    from ..config import load_settings
    from ..engine.memory import Memory
    from ..engine.session import Session

    settings = load_settings()
    settings.model = model
    source = demo_source()
    scratch = Path(tempfile.mkdtemp(prefix="sadie-demo-beliefs-"))
    home = from_home or keep or scratch / "home"
    try:
        memory = Memory.open(home)
        session = Session(memory, settings)
        try:
            if from_home is None:
                print(f"building the demo memory in {home}", file=sys.stderr)
                memory.ingest([source])
                print(f"reflecting on the notes since {since} with {model}", file=sys.stderr)
                report = session.reflect(
                    ReflectJob(
                        since=since,
                        budget_minutes=budget,
                        progress=lambda stage, done, total: print(
                            f"{stage} {done}/{total}", file=sys.stderr, flush=True
                        ),
                    )
                )
                print(json.dumps(report.as_dict()), file=sys.stderr)
            lines = export(session, source, made_by_of(session, since))
        finally:
            session.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    out.write_text(
        "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sadie_tui.eval.demo_beliefs")
    parser.add_argument("--model", required=True, help="the model reflect runs with")
    parser.add_argument("--since", required=True, help="reflect on the notes dated this or later")
    parser.add_argument("--budget", type=float, default=None, help="minutes, as sadie reflect's")
    parser.add_argument("--out", type=Path, default=None, help=f"default: data/demo/{FILE}")
    parser.add_argument("--keep", type=Path, default=None, help="build the memory here, keep it")
    parser.add_argument(
        "--from-home", type=Path, default=None, help="write out a kept run's home, no reflecting"
    )
    args = parser.parse_args(argv)
    since = datetime.strptime(args.since, "%Y-%m-%d").date()
    out = args.out or demo_source() / FILE
    lines = generate(args.model, since, args.budget, out, args.keep, args.from_home)
    print(f"{len(lines)} derived beliefs written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
