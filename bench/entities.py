"""Is the entity list worth a graph? Precision of the demo memory's top entities, graph recall.

    .venv/bin/python bench/entities.py [--source data/demo] [--top 50] [--list]
        [--labels bench/data/entities_demo.jsonl] [--locomo ../shared/eval/locomo]
        [--code DIR] [--json]

Ingests the demo memory into a temporary home (the product's own ``Memory.ingest``), lists
its ``--top`` entities by mentions (the sum of ``entity_mentions.count``) and scores them
against hand labels, one JSON object a line: ``{"name": "Tomás", "kind": "person"}``, the
kind one of person, place, project, organisation, other (the name of something else: a
holiday, a language, an app) or ``"not an entity"`` (a common word, a heading, a title).

  entity precision  share of the top N that are entities at all
  kind precision    share of the top N whose kind is the labelled one (the headline)
  people precision  share of the top N called "person" that are people

A name with no label is counted as wrong and listed, so the figure never flatters: label it
and run again. ``--code DIR`` imports ``sadie_tui`` from another checkout (the figures
"before": ``git archive <commit> | tar -x -C /tmp/before``, then ``--code /tmp/before``).
``--locomo PATH`` also runs ``sadie eval locomo PATH`` and prints the graph channel's recall.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_LABELS = ROOT / "bench" / "data" / "entities_demo.jsonl"
NOT_ENTITY = "not an entity"

for _key, _value in (
    ("HF_HUB_OFFLINE", "1"),
    ("TRANSFORMERS_OFFLINE", "1"),
    ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
    ("TOKENIZERS_PARALLELISM", "false"),
):
    os.environ.setdefault(_key, _value)


def key_of(name: str) -> str:
    """The labels' key for a name: case-folded, spaces squashed (as ``entities.entity_key``)."""
    return " ".join(name.casefold().split())


def load_labels(path: Path) -> dict[str, str]:
    """Entity key → labelled kind (or ``"not an entity"``)."""
    labels: dict[str, str] = {}
    if not path.exists():
        return labels
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            labels[key_of(row["name"])] = str(row["kind"])
    return labels


def top_entities(source: Path, top: int) -> tuple[list[tuple[str, str, int]], float]:
    """(name, kind, mentions) of the ``top`` most mentioned entities after ingesting
    ``source`` into a scratch home; and the ingest's seconds."""
    from sadie_tui.engine.memory import Memory

    with tempfile.TemporaryDirectory(prefix="sadie-entities-") as tmp:
        with Memory.open(Path(tmp) / "home") as memory:
            started = time.perf_counter()
            memory.ingest([source])
            elapsed = time.perf_counter() - started
            rows = memory.db.fetchall(
                "SELECT e.name, e.kind, sum(m.count)::INTEGER AS n FROM entities e"
                " JOIN entity_mentions m ON m.entity_id = e.id GROUP BY e.name, e.kind"
                " ORDER BY n DESC, e.name LIMIT ?",
                [top],
            )
    return [(str(n), str(k), int(c)) for n, k, c in rows], elapsed


def score(rows: list[tuple[str, str, int]], labels: dict[str, str]) -> dict[str, Any]:
    """The three precisions of ``rows`` against ``labels``, and the names with no label."""
    n = len(rows) or 1
    truth = [labels.get(key_of(name)) for name, _kind, _n in rows]
    entity = sum(1 for t in truth if t is not None and t != NOT_ENTITY)
    kind = sum(1 for (_, k, _), t in zip(rows, truth, strict=True) if t == k)
    said_person = [t for (_, k, _), t in zip(rows, truth, strict=True) if k == "person"]
    return {
        "entities": len(rows),
        "entity_precision": round(entity / n, 3),
        "kind_precision": round(kind / n, 3),
        "people_precision": round(
            sum(1 for t in said_person if t == "person") / (len(said_person) or 1), 3
        ),
        "called_person": len(said_person),
        "unlabelled": [name for (name, _, _), t in zip(rows, truth, strict=True) if t is None],
    }


def graph_recall(path: Path) -> dict[str, Any]:
    """The graph channel's figures on LoCoMo (``sadie eval locomo PATH``, analyst persona),
    and the fused ones beside them (what a person gets)."""
    from sadie_tui.eval.locomo import run_locomo

    report = run_locomo(path, progress=lambda m: print(f"  {m}", file=sys.stderr, flush=True))
    return {
        "questions": report.questions,
        "graph": report.overall["graph"].means(),
        "fused": report.overall["fused"].means(),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the measurement and print it (a table, or ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=ROOT / "data" / "demo")
    parser.add_argument("--top", type=int, default=50)
    parser.add_argument("--labels", type=Path, default=DEFAULT_LABELS)
    parser.add_argument("--locomo", type=Path, default=None)
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout to import sadie_tui from")
    parser.add_argument("--list", action="store_true", help="print every entity with its label")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.code.resolve()))

    rows, elapsed = top_entities(args.source, args.top)
    labels = load_labels(args.labels)
    out: dict[str, Any] = {"code": str(args.code.resolve()), "ingest_s": round(elapsed, 1)}
    out |= score(rows, labels)
    out["top"] = [
        {"name": name, "kind": kind, "mentions": n, "label": labels.get(key_of(name))}
        for name, kind, n in rows
    ]
    if args.locomo is not None:
        out["locomo_graph"] = graph_recall(args.locomo)
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    if args.list:
        for row in out["top"]:
            mark = "ok" if row["label"] == row["kind"] else (row["label"] or "UNLABELLED")
            print(f"{row['mentions']:5d}  {row['name']:<28} {row['kind']:<13} {mark}")
    print(
        f"top {out['entities']} entities of {args.source} ({out['code']}): entity precision"
        f" {out['entity_precision']:.3f}, kind precision {out['kind_precision']:.3f}, people"
        f" precision {out['people_precision']:.3f} ({out['called_person']} called person)"
    )
    if out["unlabelled"]:
        print(f"unlabelled (counted wrong): {', '.join(out['unlabelled'])}")
    if "locomo_graph" in out:
        g = out["locomo_graph"]
        for channel in ("graph", "fused"):
            figures = ", ".join(f"{k} {v:.4f}" for k, v in g[channel].items())
            print(f"LoCoMo {channel} ({g['questions']} questions): {figures}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
