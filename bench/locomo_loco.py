"""Fusion settings chosen leave-one-conversation-out (LOCO) on LoCoMo.

    python bench/locomo_loco.py [--data ../shared/eval/locomo] [--persona analyst] [--json]
                                [--spread] [--one-memory] [--k 10]

Why: weights fitted on all six shared conversations score those six well and carry less well
to conversations never seen (issue 14: 0.900 / 0.790 in-sample, 0.887 / 0.773 on four others).
LOCO says what to expect of a setting chosen by the same procedure on unseen conversations.

How: each conversation is ingested ONCE into its own scratch memory, exactly as
``sadie eval locomo`` does (``eval.locomo.ingest_conversations``), and each question's
candidates are gathered once (``eval.locomo.question_candidates``: query preparation and the
three channels). Fusion weights only enter ``pipeline.rank``, except that the graph channel
runs only for a persona with a graph weight, so candidates are gathered twice (with and
without the graph channel) and every setting of the grid re-ranks them with a copy of the
persona (``dataclasses.replace``) holding its weights. ``--spread`` also varies the neighbour
spread (``fusion.FORWARD`` / ``BACKWARD``), by handing ``pipeline.rank`` a ``spread_to_neighbours``
with other defaults for the duration of that setting; the product is not changed.
``--one-memory`` puts all six conversations into one memory first (``sadie eval locomo
--one-memory``: ids prefixed by conversation); the folds still hold one conversation's
questions out.

Criterion: the setting with the best micro-averaged recall@10 over the training questions,
then the best nDCG@10, then the one nearest the persona's current setting. For each held-out
conversation the setting is chosen on the other five and scored on it; the held-out figures
pooled over the six folds (micro-averaged over all 883 questions, like the in-sample ones)
are printed beside the in-sample figures of each fold's chosen setting. The final choice is
the setting chosen in most folds (a tie goes to the best on all six by the same criterion).

The figure for the persona's current setting must equal ``sadie eval locomo``'s (the same
candidates, the same ranking); it did, 0.8200 / 0.9002 / 0.7864 for the analyst. A ranking
pass over the 883 questions takes ~0.1 s without MMR (the analyst), ~1.5 s with it; gathering
~70–110 s here, so the default grid (56 settings) runs in about two minutes and ``--spread``
(1,400) in about five.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import itertools
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sadie_tui.engine.memory import Memory  # noqa: E402
from sadie_tui.engine.personas import Persona, get_persona  # noqa: E402
from sadie_tui.engine.retrieval import fusion, pipeline  # noqa: E402
from sadie_tui.engine.wire import dump  # noqa: E402
from sadie_tui.eval import locomo as ev  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "eval" / "locomo"
METRICS = ("recall@5", "recall@10", "ndcg@10")
# Only ratios matter (``pipeline.channel_weights`` scales the weights to sum 1), so keyword
# stays at the persona's value and the other two move around it.
VECTOR = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4)
GRAPH = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)
FORWARD = (0.4, 0.5, 0.6, 0.7, 0.8)
BACKWARD = (0.1, 0.2, 0.3, 0.4, 0.5)


@dataclass(frozen=True)
class Setting:
    vector: float
    keyword: float
    graph: float
    forward: float = fusion.FORWARD
    backward: float = fusion.BACKWARD

    def label(self) -> str:
        return (
            f"v={self.vector:g} k={self.keyword:g} g={self.graph:g} "
            f"fwd={self.forward:g} back={self.backward:g}"
        )

    def distance(self, other: Setting) -> float:
        return sum(
            abs(a - b)
            for a, b in zip(
                (self.vector, self.graph, self.forward, self.backward),
                (other.vector, other.graph, other.forward, other.backward),
                strict=True,
            )
        )


@dataclass
class Item:
    """One question, its candidates (with and without the graph channel) and its truth."""

    conv: str
    question: ev.Question
    with_graph: pipeline.Candidates | None
    without_graph: pipeline.Candidates | None
    evidence: dict[int, set[str]]
    all_chunks: list[set[str]]
    memory: Memory


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def spread(forward: float, backward: float) -> Iterator[None]:
    """``pipeline.rank`` spreads with these shares while inside (bench only)."""
    original = fusion.spread_to_neighbours
    fusion.spread_to_neighbours = functools.partial(original, forward=forward, backward=backward)
    try:
        yield
    finally:
        fusion.spread_to_neighbours = original


def gather_all(
    convs: Sequence[ev.Conversation], persona: Persona, k: int, stack: contextlib.ExitStack
) -> list[Item]:
    """Ingest each conversation once (memories stay open in ``stack``) and gather every
    question's candidates."""
    items: list[Item] = []
    for conv in convs:
        home = ev.scratch_home(conv.id)
        stack.callback(ev.drop_scratch, home)
        memory = stack.enter_context(Memory.open(home))
        items += gather_memory(memory, [conv], home, persona, k, namespace=False)
    return items


def gather_one_memory(
    convs: Sequence[ev.Conversation], persona: Persona, k: int, stack: contextlib.ExitStack
) -> list[Item]:
    """Every conversation in one memory, as ``sadie eval locomo --one-memory`` does."""
    home = ev.scratch_home("one")
    stack.callback(ev.drop_scratch, home)
    memory = stack.enter_context(Memory.open(home))
    return gather_memory(
        memory, [ev.namespaced(c) for c in convs], home, persona, k, namespace=True
    )


def gather_memory(
    memory: Memory,
    convs: Sequence[ev.Conversation],
    home: Path,
    persona: Persona,
    k: int,
    *,
    namespace: bool,
) -> list[Item]:
    with_graph = replace(persona, weights={**persona.weights, "graph": 0.2}, graph=True)
    without_graph = replace(persona, weights={**persona.weights, "graph": 0.0})
    started = time.perf_counter()
    evidence = ev.ingest_conversations(
        memory, convs, home / "sessions", ev.Report(), namespace=namespace
    )
    ingested = time.perf_counter()
    all_chunks = list(evidence.values())
    items: list[Item] = []
    for conv in convs:
        now = ev.session_now(conv)
        for q in conv.questions:
            items.append(
                Item(
                    conv.id,
                    q,
                    ev.question_candidates(memory, q, with_graph, now, k),
                    ev.question_candidates(memory, q, without_graph, now, k),
                    evidence,
                    all_chunks,
                    memory,
                )
            )
    log(
        f"conversations {', '.join(c.id for c in convs)}: {len(evidence)} chunks, "
        f"{sum(len(c.questions) for c in convs)} questions; ingest {ingested - started:.1f} s, "
        f"candidates {time.perf_counter() - ingested:.1f} s"
    )
    return items


def score(items: Sequence[Item], persona: Persona, setting: Setting, k: int) -> np.ndarray:
    """(questions × METRICS) of the fused selection under ``setting``."""
    p = replace(
        persona,
        weights={"vector": setting.vector, "keyword": setting.keyword, "graph": setting.graph},
        graph=persona.graph and setting.graph > 0,
    )
    out = np.zeros((len(items), len(METRICS)))
    with spread(setting.forward, setting.backward):
        for i, item in enumerate(items):
            cands = item.with_graph if setting.graph > 0 else item.without_graph
            ranked = ev.rankings(item.memory, cands, p, item.evidence, k)["fused"]
            m = ev.question_metrics(item.question.evidence, ranked, item.all_chunks)
            out[i] = [m[name] for name in METRICS]
    return out


def channel_report(items: Sequence[Item], persona: Persona, k: int) -> dict[str, Any]:
    """The in-sample report of the persona's own setting, as ``sadie eval locomo`` builds it."""
    report = ev.Report()
    for item in items:
        cands = item.with_graph if persona.weights.get("graph", 0) > 0 else item.without_graph
        ranked = ev.rankings(item.memory, cands, persona, item.evidence, k)
        report.add(item.conv, item.question, ranked, item.all_chunks, k)
    return dump(report.result())


def best(scores: dict[Setting, np.ndarray], mask: np.ndarray, current: Setting) -> Setting:
    """recall@10, then nDCG@10 (micro means over the masked questions), then nearness."""
    r, n = METRICS.index("recall@10"), METRICS.index("ndcg@10")

    def key(s: Setting) -> tuple[float, float, float]:
        m = scores[s][mask].mean(axis=0)
        return (round(float(m[r]), 9), round(float(m[n]), 9), -s.distance(current))

    return max(scores, key=key)


def means(rows: np.ndarray) -> dict[str, float]:
    m = rows.mean(axis=0)
    return {name: round(float(v), 4) for name, v in zip(METRICS, m, strict=True)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--persona", default="analyst")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--spread", action="store_true", help="Also vary FORWARD / BACKWARD.")
    parser.add_argument(
        "--one-memory",
        action="store_true",
        help="Every conversation in one memory (the folds still hold one conversation out).",
    )
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args(argv)

    persona = get_persona(args.persona)
    current = Setting(
        float(persona.weights.get("vector", 0.0)),
        float(persona.weights.get("keyword", 0.0)),
        float(persona.weights.get("graph", 0.0)) if persona.graph else 0.0,
    )
    spreads = (
        list(itertools.product(FORWARD, BACKWARD))
        if args.spread
        else [(fusion.FORWARD, fusion.BACKWARD)]
    )
    grid = [
        Setting(v, current.keyword, g, f, b)
        for (f, b) in spreads
        for v in VECTOR
        for g in (GRAPH if persona.graph else (0.0,))
    ]
    if current not in grid:
        grid.append(current)
    convs = ev.load_conversations(args.data)

    with contextlib.ExitStack() as stack:
        started = time.perf_counter()
        gather = gather_one_memory if args.one_memory else gather_all
        items = gather(convs, persona, args.k, stack)
        log(f"{len(items)} questions gathered in {time.perf_counter() - started:.1f} s")
        t0 = time.perf_counter()
        scores = {current: score(items, persona, current, args.k)}
        log(f"one ranking pass: {time.perf_counter() - t0:.2f} s; {len(grid)} settings")
        for i, setting in enumerate(grid):
            if setting not in scores:
                scores[setting] = score(items, persona, setting, args.k)
            if (i + 1) % 50 == 0:
                log(f"  {i + 1}/{len(grid)} settings, {time.perf_counter() - t0:.0f} s")
        conv_of = np.array([item.conv for item in items])
        everything = np.ones(len(items), dtype=bool)
        channels = channel_report(items, persona, args.k)

    folds: list[dict[str, Any]] = []
    held_out = np.zeros((len(items), len(METRICS)))
    for conv in convs:
        test = conv_of == conv.id
        chosen = best(scores, ~test, current)
        held_out[test] = scores[chosen][test]
        folds.append(
            {
                "held_out": conv.id,
                "questions": int(test.sum()),
                "chosen": chosen.__dict__,
                "train": means(scores[chosen][~test]),
                "held_out_figures": means(scores[chosen][test]),
                "current_on_held_out": means(scores[current][test]),
            }
        )
    votes = Counter(Setting(**f["chosen"]) for f in folds)
    top = max(votes.values())
    tied = [s for s, n in votes.items() if n == top]
    final = tied[0] if len(tied) == 1 else best({s: scores[s] for s in tied}, everything, current)
    best_all = best(scores, everything, current)
    result = {
        "persona": persona.name,
        "one_memory": args.one_memory,
        "grid": len(grid),
        "criterion": "train recall@10, then nDCG@10, then nearest the current setting",
        "current": {"setting": current.__dict__, "in_sample": means(scores[current])},
        "folds": folds,
        "loco_held_out": means(held_out),
        "in_sample_of_chosen": {s.label(): means(scores[s]) for s in votes},
        "final": {
            "setting": final.__dict__,
            "votes": top,
            "in_sample": means(scores[final]),
        },
        "best_on_all_six": {"setting": best_all.__dict__, "in_sample": means(scores[best_all])},
        "channels_current": channels["overall"],
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    where = "one memory" if args.one_memory else "a memory each"
    print(
        f"LOCO over {len(convs)} conversations ({where}), {len(items)} questions, "
        f"{len(grid)} settings"
    )
    print(f"criterion: {result['criterion']}")
    print(f"current   {current.label()}: in-sample {fmt(scores[current])}")
    for f in folds:
        s = Setting(**f["chosen"])
        print(
            f"held out {f['held_out']:>3} ({f['questions']:>3} q): chose {s.label()}  "
            f"held-out {fmt(scores[s][conv_of == f['held_out']])}  "
            f"(current there {fmt(scores[current][conv_of == f['held_out']])})"
        )
    print(f"LOCO held-out, pooled: {fmt(held_out)}")
    for s, n in votes.most_common():
        print(f"chosen in {n} fold(s): {s.label()}  in-sample {fmt(scores[s])}")
    print(f"final     {final.label()}: in-sample {fmt(scores[final])}")
    print(f"best on all six: {best_all.label()}: in-sample {fmt(scores[best_all])}")
    return 0


def fmt(rows: np.ndarray) -> str:
    m = means(rows)
    return " ".join(f"{name} {m[name]:.4f}" for name in METRICS)


if __name__ == "__main__":
    raise SystemExit(main())
