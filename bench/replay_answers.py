"""A real model's recorded answers, checked again by today's code: no model needed.

    .venv/bin/python bench/replay_answers.py [--recorded ~/.cache/sadie-realmodel/bridge.jsonl]
        -- [bench/real_answers.py's arguments: --model, --set, --only, --json …]

``../shared/realmodel``'s bridge logs every request with the model's raw output. This serves
those outputs again over the Ollama protocol (``tests/support/ollama_server.py``'s server,
answering each ``/api/chat`` with what the model wrote for the same messages and ``format``)
and runs ``bench/real_answers.py`` against it. Retrieval and the briefing are deterministic, so
a question whose briefing has not changed since the recording gets the real draft and the
real citation pass, and everything after them (the citation checks, the doubt, the score, the
label right / partial / wrong) is today's code: a change to the checks is measured on real
drafts in a minute instead of a model run. A request with no recording (the briefing changed)
is answered empty and counted as a miss on stderr; its question's figures are not the model's,
so ``real_answers`` leaves it out of the summary (``unrecorded``: how many).
Times printed are the recording's. Never run in CI.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.ollama_server import FakeOllama, Reply  # noqa: E402

DEFAULT_RECORDED = (
    Path(os.environ.get("RM", Path.home() / ".cache" / "sadie-realmodel")) / "bridge.jsonl"
)
KEPT = ("format", "raw_output", "prompt_tokens", "eval_count", "ttft_s", "total_s")


def key(messages: list[dict], structured: bool) -> str:
    said = json.dumps([[m.get("role"), m.get("content")] for m in messages], ensure_ascii=False)
    return hashlib.sha1(said.encode() + (b"F" if structured else b"")).hexdigest()


def recordings(path: Path) -> dict[str, dict]:
    found: dict[str, dict] = {}
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("error") or record.get("raw_output") is None:
                continue
            found[key(record.get("messages") or [], bool(record.get("format")))] = record
    return found


def main() -> int:
    argv = sys.argv[1:]
    rest = argv[argv.index("--") + 1 :] if "--" in argv else []
    own = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recorded", type=Path, default=DEFAULT_RECORDED)
    args = parser.parse_args(own)

    recorded = recordings(args.recorded)
    lock = threading.Lock()
    counts = {"hits": 0, "misses": 0}
    log = args.recorded.with_name("replay.jsonl")
    log.write_text("", encoding="utf-8")

    def respond(body: dict) -> Reply:
        structured = bool(body.get("format"))
        record = recorded.get(key(body.get("messages") or [], structured))
        with lock:
            counts["hits" if record else "misses"] += 1
            line = (
                {k: record.get(k) for k in KEPT}
                if record
                else {"format": body.get("format"), "unrecorded": True}
            )
            with log.open("a", encoding="utf-8") as out:
                out.write(json.dumps(line) + "\n")
        if record is None:
            return Reply(content="{}" if structured else "")
        return Reply(content=str(record["raw_output"]))

    models = sorted({str(r.get("model")) for r in recorded.values() if r.get("model")})
    with FakeOllama(models=models or ["qwen2.5-coder:1.5b"], responder=respond) as server:
        code = subprocess.call(
            [
                sys.executable,
                str(ROOT / "bench" / "real_answers.py"),
                "--host",
                server.url,
                "--log",
                str(log),
                *rest,
            ],
            cwd=ROOT,
        )
    print(
        f"replayed {counts['hits']} requests; {counts['misses']} had no recording", file=sys.stderr
    )
    return code


if __name__ == "__main__":
    raise SystemExit(main())
