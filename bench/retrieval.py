"""Retrieval speed on large memories: a whole retrieval against its floor.

    python bench/retrieval.py [--data ../shared/eval/locomo] [--sizes 10000,100000]
                              [--queries 200] [--cache DIR] [--json]

Builds memories of about 10k and 100k chunks by replicating the LoCoMo sessions (the unique
chunk texts are embedded once; each copy's vectors are that embedding plus a little noise,
renormalised, so the HNSW index does not collapse duplicates), inserted through the product's
own store (``ingest.pipeline._store_episodes``: episodes, chunks, entities, graph) and keyword
index. Then, for LoCoMo questions:

- whole: ``retrieve()`` with the analyst persona (query embedding, the three channels,
  fusion, neighbours, window, adjustment, rerank, beliefs/observations) plus the telemetry write
  (``record_turn``), as ``sadie search`` does;
- floor: embedding the query plus one HNSW top-10 query.

Prints p50/p95 of both and their ratio. ``--cache DIR`` keeps the built memories for re-runs.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sadie_tui.engine.ingest.chunker import chunk_text  # noqa: E402
from sadie_tui.engine.ingest.embedder import shared_embedder  # noqa: E402
from sadie_tui.engine.ingest.entities import EntityIndex  # noqa: E402
from sadie_tui.engine.ingest.pipeline import _known_entities, _store_episodes  # noqa: E402
from sadie_tui.engine.ingest.readers import RawEpisode  # noqa: E402
from sadie_tui.engine.memory import Memory  # noqa: E402
from sadie_tui.engine.personas import get_persona  # noqa: E402
from sadie_tui.engine.retrieval import retrieve  # noqa: E402
from sadie_tui.engine.retrieval.keyword import rebuild_keyword_index  # noqa: E402
from sadie_tui.engine.retrieval.vector import vector_search  # noqa: E402
from sadie_tui.engine.telemetry import record_turn  # noqa: E402
from sadie_tui.eval.locomo import load_conversations  # noqa: E402

NOISE = 0.02
COPIES_PER_BATCH = 10
DEFAULT_DATA = ROOT.parent / "shared" / "eval" / "locomo"


def base_sessions(data: Path) -> list[tuple[str, object, list[str]]]:
    """(conversation id, session, chunk texts) for every LoCoMo session."""
    out = []
    for conv in load_conversations(data):
        for s in conv.sessions:
            out.append((conv.id, s, chunk_text(s.text)))
    return out


def build(home: Path, sessions: list, vectors: dict[str, np.ndarray], size: int) -> Memory:
    memory = Memory.open(home)
    base_chunks = sum(len(chunks) for _c, _s, chunks in sessions)
    copies = math.ceil(size / base_chunks)
    rng = np.random.default_rng(7)
    done = 0
    for first in range(0, copies, COPIES_PER_BATCH):
        todo, pieces, vecs = [], [], []
        for copy in range(first, min(copies, first + COPIES_PER_BATCH)):
            for conv_id, s, chunks in sessions:
                if done >= size:
                    break
                ep = RawEpisode(
                    source_key=f"bench/{copy}/{conv_id}/{s.number}",
                    source=f"bench copy {copy}",
                    kind="conversation",
                    title=f"{s.title} (copy {copy})",
                    occurred_at=s.occurred_at + timedelta(days=3 * copy),
                    text=s.text,
                )
                todo.append(ep)
                for ordinal, text in enumerate(chunks):
                    pieces.append((ep.id, ordinal, text))
                    vecs.append(vectors[text])
                    done += 1
        if not todo:
            break
        matrix = np.stack(vecs) + rng.normal(0, NOISE, (len(vecs), vecs[0].shape[0]))
        matrix = (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)
        index = EntityIndex(_known_entities(memory.db))
        index.learn(p[2] for p in pieces)
        mentions = [index.mentions(p[2]) for p in pieces]
        _store_episodes(memory.db, todo, [], pieces, matrix, mentions, index)
        print(f"  {done} chunks", file=sys.stderr, flush=True)
    # Batched writes grow the file (the HNSW index); compact it as a person's `sadie compact` would.
    memory.compact()
    rebuild_keyword_index(memory)
    return memory


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"p50": round(statistics.median(ordered), 2), "p95": round(p95, 2)}


def measure(memory: Memory, questions: list[str], queries: int) -> dict[str, object]:
    persona = get_persona("analyst")
    embedder = memory.embedder
    for q in questions[:5]:  # warm caches: model, keyword index, entity catalogue
        retrieve(memory, q, persona)
        vector_search(memory.db, embedder.encode_one(q), 10)
    whole, floor, inner = [], [], []
    for q in questions[:queries]:
        # Each part embeds the question itself (the embedder remembers recent texts).
        embedder.forget_recent()
        t0 = time.perf_counter()
        vector_search(memory.db, embedder.encode_one(q), 10)
        floor.append((time.perf_counter() - t0) * 1000)
        embedder.forget_recent()
        t0 = time.perf_counter()
        result = retrieve(memory, q, persona)
        record_turn(
            memory.db,
            kind="search",
            query=q,
            model=None,
            persona=persona.name,
            prompt_version=None,
            grounding=None,
            abstained=None,
            latency_ms=result.elapsed_ms,
            chunks=result.chunks,
        )
        whole.append((time.perf_counter() - t0) * 1000)
        inner.append(result.elapsed_ms)
    w, f = percentiles(whole), percentiles(floor)
    return {
        "chunks": int(memory.db.fetchone("SELECT count(*) FROM chunks")[0]),
        "queries": len(whole),
        "whole_ms": w,
        "retrieve_ms": percentiles(inner),
        "floor_ms": f,
        "ratio_p50": round(w["p50"] / f["p50"], 2) if f["p50"] else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--cache", type=Path, default=None, help="keep built memories here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    sessions = base_sessions(args.data)
    texts = sorted({t for _c, _s, chunks in sessions for t in chunks})
    embedder = shared_embedder()
    print(f"embedding {len(texts)} unique chunk texts", file=sys.stderr, flush=True)
    vectors = dict(zip(texts, embedder.encode(texts), strict=True))
    questions = [q.text for conv in load_conversations(args.data) for q in conv.questions]
    rng = np.random.default_rng(11)
    questions = [questions[i] for i in rng.permutation(len(questions))]

    results = []
    scratch = None if args.cache else Path(tempfile.mkdtemp(prefix="sadie-bench-"))
    try:
        for size in (int(s) for s in args.sizes.split(",") if s.strip()):
            home = (args.cache or scratch) / f"chunks-{size}"  # type: ignore[operator]
            if home.exists() and (home / "sadie.duckdb").exists():
                memory = Memory.open(home)
            else:
                print(f"building a memory of {size} chunks", file=sys.stderr, flush=True)
                memory = build(home, sessions, vectors, size)
            with memory:
                results.append(measure(memory, questions, args.queries))
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)

    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(
        f"{'chunks':>8} {'queries':>7} {'whole p50':>10} {'whole p95':>10} "
        f"{'floor p50':>10} {'floor p95':>10} {'ratio':>6}"
    )
    for r in results:
        w, f = r["whole_ms"], r["floor_ms"]
        print(
            f"{r['chunks']:>8} {r['queries']:>7} {w['p50']:>8.1f}ms {w['p95']:>8.1f}ms "
            f"{f['p50']:>8.1f}ms {f['p95']:>8.1f}ms {r['ratio_p50']:>6.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
