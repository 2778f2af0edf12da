"""`sadie serve` under load: requests/s and latency of /v1/ask, time to the first `delta` of
/v1/chat.

    .venv/bin/python bench/serve.py [--asks 200] [--chats 40] [--concurrency 1,4,16]

Everything real and separate: the server is `sadie serve` (a subprocess) on the demo memory
(built once into bench/out/serve-demo), the model the project's Ollama-protocol server (a
subprocess answering at once), the clients httpx in this process.

1. ``POST /v1/ask`` with the offline reasoner (no model: retrieval, the offline answer and the
   grounding checks are the whole cost): requests/s and p50/p95 latency at each concurrency.
2. ``POST /v1/chat`` (SSE) against the scripted model: p50/p95 from sending the request to
   the first ``delta`` event, and to ``done``, at each concurrency. Each chat is a new
   conversation (two message writes, retrieval, briefing before the model is asked).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
for _key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS"):
    os.environ.setdefault(_key, "1")

from sadie_tui.engine.demo import ensure_demo  # noqa: E402

QUESTIONS = [
    "How did the Lisbon marathon go?",
    "What did Maya say about moving?",
    "How have I been sleeping lately?",
    "What happened with my knee?",
    "Who is Tomás to me?",
    "What did I worry about in March?",
    "When did I last run with Ines?",
    "How was the pottery class?",
]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def demo_home() -> Path:
    home = ROOT / "bench" / "out" / "serve-demo"
    if not (home / "sadie.duckdb").exists():
        print(f"building the demo memory in {home} (once) …", flush=True)
    ensure_demo(home)
    return home


@contextmanager
def process(command: list[str], env: dict[str, str], ready: str) -> Iterator[str]:
    """A subprocess that prints ``ready`` and the rest of the line (its address) first."""
    proc = subprocess.Popen(
        command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if ready in line:
                yield line.split(ready, 1)[1].strip()
                break
        else:
            raise RuntimeError(f"{command[0]} exited with {proc.wait()} before {ready!r}")
    finally:
        proc.terminate()
        proc.wait(timeout=60)


@contextmanager
def sadie_serve(home: Path, config: Path, **extra: str) -> Iterator[str]:
    env = dict(os.environ, SADIE_HOME=str(home), SADIE_CONFIG=str(config), **extra)
    command = [sys.executable, "-m", "sadie_tui.cli", "serve", "--port", "0"]
    with process(command, env, "serving on ") as url:
        with httpx.Client(base_url=url, timeout=120) as c:  # warm: embedder and first turn
            c.post("/v1/ask", json={"question": QUESTIONS[0]}).raise_for_status()
        yield url


async def ask_round(url: str, total: int, concurrency: int) -> tuple[float, list[float]]:
    latencies: list[float] = []
    queue = list(range(total))
    async with httpx.AsyncClient(base_url=url, timeout=300) as client:

        async def worker() -> None:
            while queue:
                i = queue.pop()
                start = time.perf_counter()
                response = await client.post(
                    "/v1/ask", json={"question": QUESTIONS[i % len(QUESTIONS)]}
                )
                response.raise_for_status()
                latencies.append(time.perf_counter() - start)

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - start
    return total / wall, latencies


async def chat_round(url: str, total: int, concurrency: int) -> tuple[list[float], list[float]]:
    first: list[float] = []
    whole: list[float] = []
    queue = list(range(total))
    async with httpx.AsyncClient(base_url=url, timeout=300) as client:

        async def worker() -> None:
            while queue:
                i = queue.pop()
                body = {"message": QUESTIONS[i % len(QUESTIONS)]}
                start = time.perf_counter()
                seen_delta = False
                async with client.stream("POST", "/v1/chat", json=body) as response:
                    response.raise_for_status()
                    async for line in response.aiter_lines():
                        if line == "event: delta" and not seen_delta:
                            seen_delta = True
                            first.append(time.perf_counter() - start)
                        elif line == "event: error":
                            raise RuntimeError("the chat ended in an error event")
                whole.append(time.perf_counter() - start)
                if not seen_delta:
                    raise RuntimeError("a chat streamed no delta")

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return first, whole


def ms(values: list[float]) -> str:
    return f"p50 {pct(values, 0.5) * 1000:7.1f} ms  p95 {pct(values, 0.95) * 1000:7.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--asks", type=int, default=200)
    parser.add_argument("--chats", type=int, default=40)
    parser.add_argument("--concurrency", default="1,4,16")
    args = parser.parse_args()
    levels = [int(x) for x in args.concurrency.split(",")]

    template = demo_home()
    work = ROOT / "bench" / "out" / "serve-run"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(template, work / "home", ignore=shutil.ignore_patterns("sadie.sock"))
    home, config = work / "home", work / "config"

    print(f"sadie serve on the demo memory; {os.cpu_count()} cores", flush=True)
    print(f"\n1. POST /v1/ask, offline reasoner, {args.asks} requests per level")
    with sadie_serve(home, config, SADIE_REASONER="offline") as url:
        for n in levels:
            rate, latencies = asyncio.run(ask_round(url, args.asks, n))
            print(f"  concurrency {n:3d}: {rate:7.1f} req/s  {ms(latencies)}", flush=True)

    print(f"\n2. POST /v1/chat (SSE), scripted model answering at once, {args.chats} chats per level")
    model_command = [sys.executable, "-m", "tests.support.ollama_server", "--port", "0"]
    with process(model_command, dict(os.environ), "listening on ") as model:
        with sadie_serve(home, config, OLLAMA_HOST=model, SADIE_REASONER="ollama") as url:
            for n in levels:
                first, whole = asyncio.run(chat_round(url, args.chats, n))
                print(f"  concurrency {n:3d}: first delta {ms(first)}", flush=True)
                print(f"  {'':16s} done        {ms(whole)}", flush=True)
            with httpx.Client(base_url=url, timeout=60) as c:
                stats = c.get("/v1/stats").json()
    print(f"\nafterwards: {json.dumps(stats.get('counts', {}))}")


if __name__ == "__main__":
    main()
