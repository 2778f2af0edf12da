"""The engine's own cost per chat turn, and the stream filter's throughput.

    .venv/bin/python bench/engine.py [--scale 30] [--turns 40]

1. On a ~10k-chunk memory (the demo replicated ×30, built once into bench/out/), with the
   project's Ollama-protocol server answering instantly: p50/p95 from calling
   ``Session.chat`` to the request reaching the server — retrieval, chips, policies,
   briefing and the message writes, everything sadie does before the model can start.
   Goal: p50 ≤ 80 ms. Then the same minus retrieval (goal p50 ≤ 50 ms, issue 16), and the
   p50 of each step the turn records (``steps_ms`` in the reply's metadata).
2. The stream filter alone on a realistic 2,000-token reply cut into 3–5 character pieces:
   MB/s (median of 20 runs). Goal: ≥ 5 MB/s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sadie_tui.engine.requests import ChatTurn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
for _key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS"):
    os.environ.setdefault(_key, "1")

from ingest import replicate  # noqa: E402

from sadie_tui.config import load_settings  # noqa: E402
from sadie_tui.engine.memory import Memory  # noqa: E402
from sadie_tui.engine.reply.stream_filter import StreamFilter  # noqa: E402
from sadie_tui.engine.session import Session  # noqa: E402
from tests.support.ollama_server import FakeOllama, Reply  # noqa: E402

QUESTIONS = [
    "How did the Warden cutover go?",
    "What did Henrik say about the promotion?",
    "When did I run with Rui last week?",
    "How was the marathon in October?",
    "What did Funmi say about the baby?",
    "How have I been sleeping lately?",
    "What happened with the flat move in May?",
    "What do I keep worrying about at work?",
    "and the week before?",
    "What did Tomás think of the balcony garden?",
]


def build_home(scale: int) -> Path:
    home = ROOT / "bench" / "out" / f"engine-x{scale}"
    if (home / ".built").is_file():
        return home
    with tempfile.TemporaryDirectory() as tmp:
        replicate(ROOT / "data" / "demo", Path(tmp), scale)
        print(f"building a ×{scale} demo memory in {home} (once) …", flush=True)
        with Memory.open(home) as memory:
            memory.ingest([Path(tmp)])
    (home / ".built").write_text("ok\n")
    return home


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def bench_turns(home: Path, turns: int) -> tuple[list[float], list[dict[str, float]]]:
    """Message → request latencies (ms) and each turn's recorded steps."""
    from sadie_tui.engine import conversations as conv

    arrivals: list[float] = []
    steps: list[dict[str, float]] = []

    def responder(body: dict) -> Reply:
        arrivals.append(time.perf_counter())
        return Reply(["Noted.", "\n@@CITATIONS@@\n[]"])

    latencies: list[float] = []
    with FakeOllama(responder=responder) as server, Memory.open(home) as memory:
        os.environ["OLLAMA_HOST"] = server.url
        companion = Session(memory, load_settings())
        memory.embedder.warm()

        async def one(question: str, conversation: str | None) -> str:
            # Questions repeat here; a person's next message is new text.
            memory.embedder.forget_recent()
            started = time.perf_counter()
            before = len(arrivals)
            cid = conversation
            reply = ""
            async for event in companion.chat(ChatTurn(question, conversation_id=conversation)):
                if getattr(event, "type", "") == "meta":
                    cid, reply = event.conversation_id, event.message_id
            latencies.append((arrivals[before] - started) * 1000)
            stored = conv.get_message(memory.db, reply)
            steps.append(dict((stored.metadata or {}).get("steps_ms") or {}))
            return cid or ""

        async def run() -> None:
            cid = await one("warm-up", None)
            latencies.clear()
            steps.clear()
            for n in range(turns):
                cid = await one(QUESTIONS[n % len(QUESTIONS)], cid if n % 5 else None)

        asyncio.run(run())
    return latencies, steps


def bench_filter(runs: int = 20) -> float:
    words = (
        "You wrote about the Warden cutover twice that week, and both times the worry was the "
        "same: that Henrik would read the rollback as failure. <b>Not</b> what the notes say. "
    ).split(" ")
    reply = "<think>" + "planning the answer " * 50 + "</think>\n\n"
    while len(reply) < 8000:
        reply += " ".join(words) + "\n\n"
    reply += '@@CITATIONS@@\n[{"episode": "x", "quote": "y", "support": "verbatim"}]'
    sizes = [3, 4, 5, 4]
    pieces, i, k = [], 0, 0
    while i < len(reply):
        pieces.append(reply[i : i + sizes[k % 4]])
        i += sizes[k % 4]
        k += 1
    speeds = []
    for _ in range(runs):
        started = time.perf_counter()
        for _ in range(25):
            filt = StreamFilter()
            for piece in pieces:
                filt.feed(piece)
            filt.finish()
        seconds = time.perf_counter() - started
        speeds.append(25 * len(reply.encode()) / seconds / 1e6)
    return statistics.median(speeds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=30)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--home", type=Path, help="an existing memory to use (it is written to)")
    args = parser.parse_args(argv)
    home = args.home or build_home(args.scale)
    with Memory.open(home) as memory:
        chunks = memory.db.fetchone("SELECT count(*) FROM chunks")[0]
    latencies, steps = bench_turns(home, args.turns)
    mbps = bench_filter()
    p50, p95 = statistics.median(latencies), percentile(latencies, 0.95)
    print(f"memory: {chunks} chunks ({args.home or f'demo ×{args.scale}'})")
    print(
        f"message → request at the server: p50 {p50:.1f} ms, p95 {p95:.1f} ms "
        f"over {len(latencies)} turns (goal p50 ≤ 80 ms) {'OK' if p50 <= 80 else 'MISSED'}"
    )
    beyond = [total - s.get("retrieval", 0.0) for total, s in zip(latencies, steps, strict=True)]
    b50 = statistics.median(beyond)
    print(
        f"  beyond retrieval: p50 {b50:.1f} ms, p95 {percentile(beyond, 0.95):.1f} ms "
        f"(goal p50 ≤ 50 ms) {'OK' if b50 <= 50 else 'MISSED'}"
    )
    names = list(dict.fromkeys(name for s in steps for name in s))
    parts = [f"{n} {statistics.median([s.get(n, 0.0) for s in steps]):.1f}" for n in names]
    recorded = statistics.median([sum(s.values()) for s in steps])
    print(f"  steps, p50 ms: {' · '.join(parts)} (their sum {recorded:.1f}; 'send' is the")
    print("  client writing the request; the rest: thread and event hand-offs, the server reading)")
    print(f"stream filter: {mbps:.1f} MB/s (goal ≥ 5 MB/s) {'OK' if mbps >= 5 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
