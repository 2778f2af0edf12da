"""What encryption at rest costs (issue 37): the same memory plain and encrypted.

    python bench/at_rest.py [--data ../shared/eval/locomo] [--chunks 10000] [--queries 200]
                            [--notes 200] [--json]

Builds a memory of ``--chunks`` chunks as ``bench/retrieval.py`` does (LoCoMo sessions
replicated through the product's own store), encrypts a copy with ``sadie encrypt``'s engine
(timed), then measures on both:

- open: ``Memory.open`` then close, median of 7 (the encrypted one also stretches nothing:
  the key is unlocked once, as a process does);
- retrieval: ``bench/retrieval.py``'s ``measure`` (the whole ``retrieve()`` plus its telemetry
  write, and the floor: a query embedding and a top-10 vector query), p50 and p95;
- ingest: ``--notes`` Markdown notes (LoCoMo sessions) into a new plain home and a new
  encrypted one, notes and chunks a second (the embedding model's time included, as a person
  meets it).

An encrypted memory keeps no HNSW index (vss cannot store one in an encrypted file), so its
vector channel is an exact scan: the floor shows what that costs at this size.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from retrieval import DEFAULT_DATA, base_sessions, build, measure  # noqa: E402

from sadie_tui.engine.ingest.embedder import shared_embedder  # noqa: E402
from sadie_tui.engine.memory import Memory  # noqa: E402
from sadie_tui.engine.privacy.convert import encrypt  # noqa: E402
from sadie_tui.engine.privacy.unlock import start_encrypted  # noqa: E402
from sadie_tui.eval.locomo import load_conversations  # noqa: E402

PASSPHRASE = "bench passphrase"
OPENS = 7


def open_ms(home: Path) -> float:
    times = []
    for _ in range(OPENS):
        t0 = time.perf_counter()
        Memory.open(home).close()
        times.append((time.perf_counter() - t0) * 1000)
    return round(statistics.median(times), 1)


def write_notes(folder: Path, sessions: list, count: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for n, (conv_id, s, _chunks) in enumerate(sessions[:count]):
        day = s.occurred_at.date().isoformat()
        body = f"---\ntitle: {s.title}\ndate: {day}\n---\n{s.text}\n"
        (folder / f"{conv_id}-{s.number}-{n}.md").write_text(body, encoding="utf-8")
    return folder


def ingest_rate(home: Path, notes: Path) -> dict[str, float]:
    t0 = time.perf_counter()
    with Memory.open(home) as memory:
        report = memory.ingest([notes])
        chunks = int(memory.db.fetchone("SELECT count(*) FROM chunks")[0])
    seconds = time.perf_counter() - t0
    return {
        "notes": report.added,
        "chunks": chunks,
        "seconds": round(seconds, 1),
        "notes_per_s": round(report.added / seconds, 1),
        "chunks_per_s": round(chunks / seconds, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--notes", type=int, default=200)
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

    scratch = Path(tempfile.mkdtemp(prefix="sadie-at-rest-"))
    result: dict[str, object] = {"chunks": args.chunks}
    try:
        plain = scratch / "plain"
        print(f"building a memory of {args.chunks} chunks", file=sys.stderr, flush=True)
        build(plain, sessions, vectors, args.chunks).close()
        sealed = scratch / "encrypted"
        shutil.copytree(plain, sealed)
        t0 = time.perf_counter()
        encrypt(sealed, PASSPHRASE, keyring=False)
        result["encrypt_s"] = round(time.perf_counter() - t0, 1)
        for name, home in (("plain", plain), ("encrypted", sealed)):
            print(f"measuring the {name} memory", file=sys.stderr, flush=True)
            with Memory.open(home) as memory:
                measured = measure(memory, questions, args.queries)
            measured["open_ms"] = open_ms(home)
            measured["bytes"] = (home / "sadie.duckdb").stat().st_size
            result[name] = measured
        notes = write_notes(scratch / "notes", sessions, args.notes)
        print(f"ingesting {args.notes} notes, plain and encrypted", file=sys.stderr, flush=True)
        result["ingest_plain"] = ingest_rate(scratch / "new-plain", notes)
        start_encrypted(scratch / "new-encrypted", PASSPHRASE, keyring=False)
        result["ingest_encrypted"] = ingest_rate(scratch / "new-encrypted", notes)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    plain_r, sealed_r = result["plain"], result["encrypted"]
    assert isinstance(plain_r, dict) and isinstance(sealed_r, dict)
    print(f"{args.chunks} chunks; sadie encrypt took {result['encrypt_s']} s")
    print(f"{'':>10} {'open':>8} {'retrieve p50':>13} {'p95':>8} {'floor p50':>10} {'MB':>6}")
    for name, r in (("plain", plain_r), ("encrypted", sealed_r)):
        print(
            f"{name:>10} {r['open_ms']:>6.0f}ms {r['whole_ms']['p50']:>11.1f}ms"
            f" {r['whole_ms']['p95']:>6.1f}ms {r['floor_ms']['p50']:>8.1f}ms"
            f" {r['bytes'] / 1e6:>6.1f}"
        )
    ratio = sealed_r["whole_ms"]["p50"] / plain_r["whole_ms"]["p50"]
    print(f"retrieval p50, encrypted / plain: {ratio:.2f}x")
    for name in ("ingest_plain", "ingest_encrypted"):
        r = result[name]
        assert isinstance(r, dict)
        print(
            f"{name}: {r['notes']} notes, {r['chunks']} chunks in {r['seconds']} s"
            f" ({r['notes_per_s']} notes/s, {r['chunks_per_s']} chunks/s)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
