"""The embedding model, ONNX Runtime against sentence-transformers, each in a fresh process:
launch → ready, RSS after ready (and peak), p50/p95 of one query embedding, and ingest
throughput on every chunk of the demo memory (batches of 64, as ingest sends them).

    .venv/bin/python bench/embedder.py [--runs 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, os, sys, time
started = float(sys.argv[2])
from sadie_tui.engine.ingest.embedder import Embedder
embedder = Embedder(backend=sys.argv[1])
t = time.perf_counter()
embedder.warm()
embedder.encode_one("warm up the first run")
ready = time.time() - started
warm = time.perf_counter() - t

def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) / 1024
rss_ready = status("VmRSS:")
queries = [f"what did I write about the {w} in week {i}?" for i, w in
           enumerate(["marathon", "promotion", "garden", "sister", "knee", "retro"] * 10)]
times = []
for q in queries:
    t = time.perf_counter()
    embedder.encode_one(q)
    times.append((time.perf_counter() - t) * 1000)
times.sort()
from sadie_tui.engine.ingest.chunker import chunk_text
from sadie_tui.engine.ingest.readers import read_all
from sadie_tui.paths import demo_source
texts = [c for ep in read_all([demo_source()]).episodes for c in chunk_text(ep.text)]
order = sorted(texts, key=len, reverse=True)
t = time.perf_counter()
for i in range(0, len(order), 256):
    embedder.encode(order[i:i + 256])
ingest = time.perf_counter() - t
print(json.dumps({
    "backend": embedder.running, "ready_s": ready, "warm_s": warm, "rss_ready_mib": rss_ready,
    "p50_ms": times[len(times) // 2], "p95_ms": times[int(len(times) * 0.95)],
    "chunks": len(texts), "ingest_s": ingest, "rss_peak_mib": status("VmHWM:"),
    "torch_loaded": "torch" in sys.modules,
}))
"""


def run(backend: str) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, backend, repr(time.time())],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    run("onnx")  # make sure the ONNX file exists, so no run below pays for the export
    results: dict[str, list[dict]] = {"onnx": [], "torch": []}
    for _ in range(args.runs):  # interleaved, so load changes hit both alike
        for backend in results:
            results[backend].append(run(backend))
    summary = {
        backend: {
            key: round(statistics.median(r[key] for r in runs), 3)
            for key in runs[0]
            if isinstance(runs[0][key], float)
        }
        | {"chunks": runs[0]["chunks"], "torch_loaded": runs[0]["torch_loaded"]}
        for backend, runs in results.items()
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(f"medians of {args.runs} interleaved fresh processes")
    for backend, s in summary.items():
        print(
            f"{backend:5}  ready {s['ready_s']:.2f} s (load {s['warm_s']:.2f} s)  "
            f"RSS {s['rss_ready_mib']:.0f} MiB (peak {s['rss_peak_mib']:.0f})  "
            f"query p50 {s['p50_ms']:.1f} ms p95 {s['p95_ms']:.1f} ms  "
            f"{s['chunks']} demo chunks in {s['ingest_s']:.1f} s  torch loaded: {s['torch_loaded']}"
        )


if __name__ == "__main__":
    main()
