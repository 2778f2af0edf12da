"""Grounding with real models: sadie's engine against small real models on the demo memory.

    make bench-real        # or:
    .venv/bin/python bench/real_model.py [--host http://127.0.0.1:11555] [--model NAME]...
        [--mode chat|ask] [--questions 20] [--persona friend] [--json OUT]

Needs the Ollama-compatible llama.cpp server of ``../shared/realmodel`` (read its README:
``setup.sh`` builds it once, then start ``bridge.py --port 11555``). Never run in CI.

For each model, it asks the questions below on a private copy of the demo memory (chat: each
question in a new conversation; ask: the headless one-shot) and prints:
- replies whose own citations tail was usable, and those whose citations came from the
  citation pass (structured outputs);
- replies that end with at least one policed citation, from either (the goal is ≥ 80 %);
- citations kept / dropped / verbatim, and "found by sadie" matches;
- unsupported details flagged, and how many of the planted-fact questions had their wrong
  figure flagged (the reply states a number/name that no note holds);
- abstentions (ask), replies cut (loops, caps);
- leaks: a citations marker, a think tag or an excerpt header in shown text (must be 0);
  and any cited id that was not shown (must be 0);
- time to the first shown token and the whole turn, p50 / max.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import time
from pathlib import Path

from sadie_tui.engine.requests import ChatTurn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
for _key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS"):
    os.environ.setdefault(_key, "1")

from bench.demo_models import each_model  # noqa: E402
from sadie_tui.engine.events import (  # noqa: E402
    CitationsEvent,
    ContextBudget,
    Done,
    ErrorEvent,
    Replace,
    Token,
)
from sadie_tui.engine.memory import Memory  # noqa: E402
from sadie_tui.engine.session import Session  # noqa: E402

QUESTIONS = [
    "When was my niece Ife born?",
    "How long did the marathon take me?",
    "Who is Tomás to me?",
    "What happened with my knee?",
    "How did the Warden cutover go?",
    "What did Henrik say about the promotion?",
    "How have I been sleeping lately?",
    "What is Bolacha?",
    "What did Kofi say to me after I cried in the bathroom at work?",
    "How did I feel at kilometre 35 of the marathon?",
    "What does my therapist Carla help me with?",
    "Why did I take leave in April?",
    "What is my iron situation?",
    "What did Dad say to Ife through the incubator?",
    "Where do I live in Lisbon?",
    "What did Ines bring me when I was ill?",
    "How is my Portuguese going?",
    "What is Estuary?",
    "How much do I spend on takeaways?",
    "Who is Joana?",
]

LEAKS = re.compile(
    r"@@|CITATIONS@@|</?think>|^\s*episode\s+[0-9a-f]{8}-[0-9a-f]{4}", re.IGNORECASE | re.M
)


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


async def chat_once(companion: Session, question: str, persona: str | None) -> dict:
    started = time.perf_counter()
    first: float | None = None
    shown, final = "", None
    record: dict = {"question": question}
    async for event in companion.chat(ChatTurn(question, persona=persona, new=True)):
        if isinstance(event, Token):
            if first is None:
                first = time.perf_counter() - started
            shown += event.value
        elif isinstance(event, ContextBudget):
            record["chunks"] = event.chunks
        elif isinstance(event, CitationsEvent):
            record.update(
                citations=[c.as_json() for c in event.value],
                found=[c.as_json() for c in event.found],
                unsupported=list(event.unsupported),
                repaired=event.repaired,
                tail=event.tail,
                note=event.note,
            )
        elif isinstance(event, Replace):
            final = event.value
        elif isinstance(event, Done):
            record["cut"] = event.cut
            row = companion.memory.db.fetchone(
                "SELECT metadata FROM messages WHERE id = ?::UUID", [event.message_id]
            )
            meta = json.loads(row[0]) if row and row[0] else {}
            record["dropped"] = int(meta.get("dropped_citations") or 0)
            record["echoes"] = int(meta.get("echoes_hidden") or 0)
        elif isinstance(event, ErrorEvent):
            record["error"] = event.message
    record.update(
        shown=shown,
        final=final if final is not None else shown,
        first_token_s=first,
        total_s=time.perf_counter() - started,
    )
    return record


async def ask_once(companion: Session, question: str, persona: str | None) -> dict:
    started = time.perf_counter()
    result = await companion.ask(question, persona=persona)
    g = result.grounding
    return {
        "question": question,
        "shown": result.answer,
        "final": result.answer,
        "citations": [c.as_json() for c in result.citations],
        "found": [c.as_json() for c in result.found_by_sadie],
        "unsupported": g.get("unsupported") or [],
        "repaired": bool(g.get("repaired")),
        "tail": g.get("tail"),
        "note": g.get("citation_pass") or "",
        "cut": g.get("cut"),
        "dropped": int(g.get("dropped") or 0),
        "abstained": result.abstained,
        "first_token_s": None,
        "total_s": time.perf_counter() - started,
        "stages": [s.name for s in result.stages],
    }


def shown_ids(memory: Memory) -> set[str]:
    return {r[0] for r in memory.db.fetchall("SELECT id::VARCHAR FROM episodes")}


def summarise(model: str, records: list[dict], known_ids: set[str]) -> dict:
    n = len(records)
    usable_tail = sum(1 for r in records if r.get("tail") == "ok")
    repaired = sum(1 for r in records if r.get("repaired"))
    with_citations = sum(1 for r in records if r.get("citations"))
    cites = [c for r in records for c in r.get("citations", [])]
    leaks = sum(1 for r in records if LEAKS.search(r["shown"]) or LEAKS.search(r["final"]))
    fabricated = sum(1 for c in cites if c["episode_id"] not in known_ids)
    firsts = [r["first_token_s"] for r in records if r.get("first_token_s")]
    totals = [r["total_s"] for r in records]
    return {
        "model": model,
        "replies": n,
        "usable_tail": usable_tail,
        "from_citation_pass": repaired,
        "with_citations": with_citations,
        "with_citations_pct": round(100 * with_citations / n, 1) if n else 0.0,
        "citations_kept": len(cites),
        "citations_verbatim": sum(1 for c in cites if c["support"] == "verbatim"),
        "citations_dropped": sum(r.get("dropped", 0) for r in records),
        "found_by_sadie": sum(len(r.get("found", [])) for r in records),
        "unsupported_flagged": sum(len(r.get("unsupported", [])) for r in records),
        "replies_with_unsupported": sum(1 for r in records if r.get("unsupported")),
        "abstained": sum(1 for r in records if r.get("abstained")),
        "cut": sum(1 for r in records if r.get("cut")),
        "errors": sum(1 for r in records if r.get("error")),
        "echoes_hidden": sum(r.get("echoes", 0) for r in records),
        "replies_hiding_echoes": sum(1 for r in records if r.get("echoes")),
        "echoes_only": sum(1 for r in records if "instructions back" in (r.get("error") or "")),
        "leaks": leaks,
        "fabricated_ids_shown": fabricated,
        "first_token_p50_s": round(pct(firsts, 0.5), 1),
        "first_token_max_s": round(max(firsts), 1) if firsts else 0.0,
        "total_p50_s": round(pct(totals, 0.5), 1),
        "total_max_s": round(max(totals), 1) if totals else 0.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default=os.environ.get("OLLAMA_HOST", "http://127.0.0.1:11555"))
    parser.add_argument("--model", action="append", dest="models")
    parser.add_argument("--mode", choices=("chat", "ask"), default="chat")
    parser.add_argument("--questions", type=int, default=len(QUESTIONS))
    parser.add_argument("--persona", default=None)
    parser.add_argument("--json", type=Path, default=None, help="write every reply here")
    args = parser.parse_args(argv)
    models = args.models or ["smollm2:135m", "gemma3:270m"]

    summaries, everything = [], {}
    for model, memory, companion in each_model(models, args.host):
        known = shown_ids(memory)
        records = []
        for question in QUESTIONS[: args.questions]:
            once = chat_once if args.mode == "chat" else ask_once
            record = asyncio.run(once(companion, question, args.persona))
            records.append(record)
            print(
                f"{model} · {question[:48]:48} tail={record.get('tail')!s:8} "
                f"pass={'yes' if record.get('repaired') else 'no ':3} "
                f"cites={len(record.get('citations', [])):2} "
                f"flagged={len(record.get('unsupported', [])):2} "
                f"{record['total_s']:6.1f}s",
                flush=True,
            )
        summary = summarise(model, records, known)
        summaries.append(summary)
        everything[model] = records
    print()
    for s in summaries:
        print(json.dumps(s))
    if args.json:
        args.json.write_text(json.dumps({"summaries": summaries, "replies": everything}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
