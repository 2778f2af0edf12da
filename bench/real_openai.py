"""The real-model answers bench (``bench/real_answers.py``) through an OpenAI-compatible
server: the same questions, the same checks, the same summary, with sadie's OpenAI reasoner.

    ~/.cache/sadie-realmodel/venv/bin/python -m llama_cpp.server \\
        --model ~/.cache/sadie-realmodel/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf \\
        --model_alias qwen2.5-coder:1.5b --n_ctx 8192 --n_threads 2 --port 8090 &
    .venv/bin/python bench/real_openai.py --base-url http://127.0.0.1:8090/v1 \\
        --model qwen2.5-coder:1.5b [--only 2,6,17,...] [--json OUT]

llama-cpp-python's server keeps no log like the bridge's, so the reasoner itself records
each request (time to the first piece, the whole time, the raw text, whether it carried a
``response_format``) in the bridge log's shape, and ``real_answers.ask_one`` reads that.
Prompt tokens are not known (the server sends no usage while streaming): the briefings are
byte for byte the ones the Ollama-protocol run sends. Never run in CI.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
for _key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS"):
    os.environ.setdefault(_key, "1")

from bench.real_answers import QUESTIONS, ask_one, summarise  # noqa: E402
from sadie_tui.commands.demo import ensure_demo  # noqa: E402
from sadie_tui.config import load_settings  # noqa: E402
from sadie_tui.engine.memory import Memory  # noqa: E402
from sadie_tui.engine.reasoners.base import Piece  # noqa: E402
from sadie_tui.engine.reasoners.choose import make_reasoner  # noqa: E402
from sadie_tui.engine.reasoners.openai import OpenAIReasoner  # noqa: E402
from sadie_tui.engine.reasoners.rates import RATES_FILE, Rates  # noqa: E402
from sadie_tui.engine.session import Session  # noqa: E402
from sadie_tui.paths import resolve_home  # noqa: E402


class Recording(OpenAIReasoner):
    """The OpenAI reasoner, each request written to ``log`` as the bridge logs it."""

    log: Path

    def _write(self, entry: dict[str, Any]) -> None:
        with self.log.open("a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")

    async def stream(
        self, briefing: Any, query: str = "", messages: Any = None, *, sent: Any = None
    ) -> AsyncIterator[Piece]:  # type: ignore[override]
        started, first, parts = time.perf_counter(), None, []
        try:
            async for piece in super().stream(briefing, query, messages, sent=sent):
                first = first or time.perf_counter()
                if piece.kind == "content":
                    parts.append(piece.text)
                yield piece
        finally:
            end = time.perf_counter()
            self._write(
                {
                    "format": None,
                    "raw_output": "".join(parts),
                    "ttft_s": round((first or end) - started, 2),
                    "total_s": round(end - started, 2),
                    "eval_count": self.last_eval_count,
                }
            )

    async def structured(self, briefing: Any, messages: Any, schema: Any, **kw: Any) -> str:  # type: ignore[override]
        started = time.perf_counter()
        text = ""
        try:
            text = await super().structured(briefing, messages, schema, **kw)
            return text
        finally:
            mode = self.rates.feature(self._key).get("structured", "json_schema")
            self._write(
                {
                    "format": mode,
                    "raw_output": text,
                    "total_s": round(time.perf_counter() - started, 2),
                    "eval_count": self.last_eval_count,
                }
            )


def each_model(
    models: list[str], base_url: str, log: Path
) -> Iterator[tuple[str, Memory, Session]]:
    """As ``demo_models.each_model``, with the companion's reasoner an OpenAI one."""
    os.environ["OPENAI_BASE_URL"] = base_url
    os.environ["SADIE_REASONER"] = "openai"
    demo = resolve_home(demo=True)
    ensure_demo(demo, quiet=True)
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            home = Path(tmp) / model.replace(":", "_")
            shutil.copytree(demo, home)
            os.environ["SADIE_MODEL"] = model
            settings = load_settings()
            with Memory.open(home) as memory:
                made = make_reasoner(settings, model, Rates(memory.home / RATES_FILE))
                assert isinstance(made, OpenAIReasoner)
                made.__class__ = Recording  # the same reasoner, its requests logged
                made.log = log  # type: ignore[attr-defined]
                yield model, memory, Session(memory, settings, reasoner=made)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--base-url", default=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8090/v1")
    )
    parser.add_argument("--model", action="append", dest="models")
    parser.add_argument("--only", default="", help="1-based question numbers, comma-separated")
    parser.add_argument("--json", type=Path, default=None, help="write every answer here")
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines()]
    if args.only:
        rows = [rows[int(x) - 1] for x in args.only.split(",") if x.strip()]
    log = Path(tempfile.mkstemp(prefix="sadie-openai-", suffix=".jsonl")[1])
    summaries = []
    for model, memory, companion in each_model(
        args.models or ["qwen2.5-coder:1.5b"], args.base_url, log
    ):
        records = []
        for row in rows:
            record = asyncio.run(ask_one(companion, memory, row, log))
            records.append(record)
            print(
                f"{model} · {row['question'][:44]:44} "
                f"{'right' if record['right'] else 'wrong':5} "
                f"{'abst' if record['abstained'] else '    '} "
                f"{'LOST' if record['right_draft_lost'] else '    '} "
                f"cited={'y' if record['cited'] else 'n'} first={record['first_token_s'] or 0:5.1f}s "
                f"pass={record['pass_s']:5.1f}s turn={record['total_s']:6.1f}s {record['miss']}",
                flush=True,
            )
            if args.json:
                args.json.write_text(
                    json.dumps({"summaries": [summarise(model, records)], "answers": records})
                )
        summaries.append(summarise(model, records))
    print()
    for s in summaries:
        print(json.dumps(s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
