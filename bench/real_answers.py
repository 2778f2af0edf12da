"""Answers with real models, end to end: right, abstained, lost, cited, and what it cost.

    .venv/bin/python bench/real_answers.py --model qwen2.5-coder:1.5b [--only 33,36,...]
        [--host http://127.0.0.1:11555] [--log ~/.cache/sadie-realmodel/bridge.jsonl]
        [--json OUT]

Needs the Ollama-compatible llama.cpp server of ``../shared/realmodel`` (its ``bridge.py``
logs every request, with the raw output, prompt tokens and time to first token: this bench
reads that log to see each stage the way the server did). Never run in CI.

Two question sets, reported separately: ``tests/data/demo_questions.jsonl`` (the bench's own
40, which earlier rounds looked at while tuning) and ``bench/data/heldout_questions.jsonl``
(40 written from the demo notes before issue 33's tuning and never tuned on); a third,
``bench/data/dev_questions.jsonl`` (40 more, written for its fourth round to tune on) and
``bench/data/dev2_questions.jsonl`` (40 more again, for its fifth), are given as paths
(``--set bench/data/dev_questions.jsonl``). Each question is asked headless
(``sadie --ask``'s turn, or with ``--mode chat`` a new chat conversation) on a private copy of
the demo memory. A reply is **right** when its own prose holds one of the
question's ``key`` strings (case and accents folded); **partial** when only the doubt line
sadie put before it ("The closest they come: …") does; **wrong** otherwise. Per question it
records:

- right, partial, abstained on an answerable question, and a **right draft lost** (the
  model's first reply held the key, the answer shown does not);
- **wrong shown as supported**: a wrong answer with grounding score ≥ 0.9 and no doubt
  shown before it (the failure issue 33 is about);
- at least one policed citation; verbatim citations on a wrong answer;
- prompt tokens of the draft, its first token (the server's), the whole turn; in chat the
  first word as the person sees it (the first ``token`` event);
- for a miss, which half failed: **retrieval missed** (no retrieved excerpt holds the key),
  **model ignored the evidence** (an excerpt did, the draft did not), **policing dropped it**
  (the draft did, the answer does not).

It prints one line per question and a summary per set with p50 / p90. Works on older
checkouts of sadie too (it reads only what every version's ask result has), so before/after
figures come from the same script.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import unicodedata
from pathlib import Path

from sadie_tui.engine.requests import ChatTurn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
for _key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS"):
    os.environ.setdefault(_key, "1")

from bench.demo_models import each_model  # noqa: E402
from sadie_tui.engine.memory import Memory  # noqa: E402
from sadie_tui.engine.retrieval import retrieve  # noqa: E402
from sadie_tui.engine.session import Session  # noqa: E402
from sadie_tui.engine.turns.steps import persona_for  # noqa: E402
from sadie_tui.engine.wire import dump  # noqa: E402

QUESTIONS = ROOT / "tests" / "data" / "demo_questions.jsonl"
HELDOUT = ROOT / "bench" / "data" / "heldout_questions.jsonl"
SETS = {"demo": QUESTIONS, "heldout": HELDOUT}
DOUBT = "Your notes don't say this directly."
DEFAULT_LOG = (
    Path(os.environ.get("RM", Path.home() / ".cache" / "sadie-realmodel")) / "bridge.jsonl"
)


def fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.replace("’", "'"))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def holds(text: str, keys: list[str]) -> bool:
    folded = " ".join(fold(text).split())
    return any(fold(k) in folded for k in keys)


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return round(values[min(len(values) - 1, int(round(q * (len(values) - 1))))], 1)


def log_lines(path: Path, start: int) -> tuple[list[dict], int]:
    try:
        with path.open("rb") as f:
            f.seek(start)
            data = f.read()
    except OSError:
        return [], start
    lines = []
    for raw in data.splitlines():
        try:
            lines.append(json.loads(raw))
        except ValueError:
            continue
    return lines, start + len(data)


def split_doubt(answer: str) -> tuple[str, str]:
    """(the doubt line sadie put before the answer, the answer's own prose)."""
    if answer.startswith(DOUBT):
        head, _, rest = answer.partition("\n\n")
        return head, rest
    return "", answer


def judged(
    row: dict, answer: str, draft_text: str, abstained: bool, score: float, in_excerpts: bool
) -> dict:
    """right / partial / wrong, shown as supported, a right draft lost, and the miss's class."""
    keys = row["key"]
    doubt, prose = split_doubt(answer)
    right = holds(prose, keys) and not abstained
    partial = not right and holds(doubt, keys)
    right_draft = holds(draft_text, keys)
    miss = ""
    if not right:
        if right_draft:
            miss = "policing dropped it"
        elif in_excerpts:
            miss = "model ignored the evidence"
        else:
            miss = "retrieval missed"
    return {
        "right": right,
        "partial": partial,
        "doubt_shown": bool(doubt),
        "wrong_shown_supported": not right
        and not partial
        and not abstained
        and score >= 0.9
        and not doubt,
        "right_draft_lost": right_draft and not right,
        "miss": miss,
    }


def excerpts_hold(companion: Session, memory: Memory, row: dict, persona_name: str) -> bool:
    persona = persona_for(None, persona_name)
    chunks = retrieve(memory, row["question"], persona).chunks
    # An excerpt as the model saw it: its date and title (the header) and its text.
    return any(holds(f"{c.occurred_at:%Y-%m-%d} {c.title}\n{c.text}", row["key"]) for c in chunks)


async def ask_one(companion: Session, memory: Memory, row: dict, log: Path) -> dict:
    in_excerpts = excerpts_hold(companion, memory, row, companion.settings.ask_persona)
    offset = log.stat().st_size if log.exists() else 0
    started = time.perf_counter()
    result = await companion.ask(row["question"])
    total = time.perf_counter() - started
    calls, _ = log_lines(log, offset)
    drafts = [c for c in calls if not c.get("format")]
    passes = [c for c in calls if c.get("format")]
    draft = drafts[0] if drafts else {}
    draft_text = str(draft.get("raw_output") or "")
    score = float(result.grounding.get("score") or 0.0)
    verdict = judged(row, result.answer, draft_text, result.abstained, score, in_excerpts)
    verbatim = sum(1 for c in result.citations if c.support == "verbatim")
    stages = {s.name: s.ms / 1000 for s in result.stages}
    return {
        "question": row["question"],
        "kind": row.get("kind", ""),
        "answer": result.answer,
        "draft": draft_text,
        "citations": [c.as_json() for c in result.citations],
        **verdict,
        "abstained": result.abstained,
        "score": score,
        "cited": bool(result.citations),
        "verbatim_on_wrong": 0 if verdict["right"] else verbatim,
        "prompt_tokens": int(draft.get("prompt_tokens") or 0),
        "first_token_s": draft.get("ttft_s"),
        "first_word_s": None,
        "pass_s": stages.get("citation_pass", 0.0),
        "revise_s": stages.get("revise", 0.0),
        "calls": len(calls),
        "unrecorded": any(c.get("unrecorded") for c in calls),
        "pass_calls": len(passes),
        "pass_tokens": sum(int(c.get("eval_count") or 0) for c in passes),
        "draft_s": float(draft.get("total_s") or 0.0),
        "total_s": round(total, 1),
        "stages": [dump(s) for s in result.stages],
    }


async def chat_one(companion: Session, memory: Memory, row: dict, log: Path) -> dict:
    """The question as the first message of a new chat: the first word as the person sees it
    (the first token event), the kept text (a replace, else the tokens), its citations."""
    in_excerpts = excerpts_hold(companion, memory, row, companion.settings.chat_persona)
    offset = log.stat().st_size if log.exists() else 0
    started = time.perf_counter()
    first_word: float | None = None
    tokens: list[str] = []
    replaced: str | None = None
    citations: list = []
    error = ""
    message_id = ""
    async for event in companion.chat(ChatTurn(row["question"], new=True)):
        kind = getattr(event, "type", "")
        if kind == "token":
            if first_word is None and event.value.strip():
                first_word = time.perf_counter() - started
            tokens.append(event.value)
        elif kind == "replace":
            replaced = event.value
        elif kind == "citations":
            citations = list(event.value)
        elif kind == "error":
            error = event.message
        elif kind == "done":
            message_id = event.message_id
    total = time.perf_counter() - started
    calls, _ = log_lines(log, offset)
    drafts = [c for c in calls if not c.get("format")]
    draft = drafts[0] if drafts else {}
    draft_text = str(draft.get("raw_output") or "")
    text = replaced if replaced is not None else "".join(tokens)
    score = 0.0
    turn = memory.db.fetchone(
        "SELECT grounding FROM turns WHERE message_id::VARCHAR = ?", [message_id or "-"]
    )
    if turn is not None and turn[0] is not None:
        score = float(turn[0])
    verdict = judged(row, text, draft_text, bool(error), score, in_excerpts)
    return {
        "question": row["question"],
        "kind": row.get("kind", ""),
        "answer": text,
        "draft": draft_text,
        "citations": [c.as_json() for c in citations if hasattr(c, "as_json")],
        **verdict,
        "abstained": bool(error),
        "error": error,
        "score": score,
        "cited": bool(citations),
        "verbatim_on_wrong": 0
        if verdict["right"]
        else sum(1 for c in citations if getattr(c, "support", "") == "verbatim"),
        "prompt_tokens": int(draft.get("prompt_tokens") or 0),
        "first_token_s": draft.get("ttft_s"),
        "first_word_s": round(first_word, 1) if first_word is not None else None,
        "pass_s": 0.0,
        "revise_s": 0.0,
        "calls": len(calls),
        "unrecorded": any(c.get("unrecorded") for c in calls),
        "pass_calls": len([c for c in calls if c.get("format")]),
        "pass_tokens": 0,
        "draft_s": float(draft.get("total_s") or 0.0),
        "total_s": round(total, 1),
        "stages": [],
    }


def reclassify(path: Path, rows: list[dict]) -> int:
    """Sort the misses of a saved run again, against the excerpts retrieval gives now."""
    saved = json.loads(path.read_text(encoding="utf-8"))
    answers = saved["answers"]  # a list while the run goes, by model once it has ended
    records = answers if isinstance(answers, list) else next(iter(answers.values()))
    by_question = {r["question"]: r for r in rows}
    for _model, memory, companion in each_model(["offline"], "http://127.0.0.1:9"):
        persona = persona_for(None, companion.settings.ask_persona)
        for record in records:
            if record["right"]:
                continue
            keys = by_question[record["question"]]["key"]
            chunks = retrieve(memory, record["question"], persona).chunks
            seen = any(holds(f"{c.occurred_at:%Y-%m-%d} {c.title}\n{c.text}", keys) for c in chunks)
            record["miss"] = (
                "policing dropped it"
                if record["right_draft_lost"]
                else "model ignored the evidence"
                if seen
                else "retrieval missed"
            )
    saved["summaries"] = by_set(saved["summaries"][0]["model"], records)
    path.write_text(json.dumps(saved), encoding="utf-8")
    for summary in saved["summaries"]:
        print(json.dumps(summary))
    return 0


def summarise(model: str, records: list[dict], label: str = "") -> dict:
    # A replayed question some request of which had no recording (its briefing changed) is
    # answered by no model: its figures are left out, and counted.
    everything, records = records, [r for r in records if not r.get("unrecorded")]
    n = len(records)
    firsts = [r["first_token_s"] for r in records if r["first_token_s"]]
    words = [r["first_word_s"] for r in records if r.get("first_word_s")]
    passes = [r["pass_s"] for r in records if r["pass_s"]]
    shares = [r["pass_s"] / r["draft_s"] for r in records if r["pass_s"] and r["draft_s"]]
    misses: dict[str, int] = {}
    for r in records:
        if r["miss"]:
            misses[r["miss"]] = misses.get(r["miss"], 0) + 1
    right = sum(r["right"] for r in records)
    partial = sum(r.get("partial", False) for r in records)
    wrong = n - right - partial
    shown = sum(r.get("wrong_shown_supported", False) for r in records)
    return {
        "model": model,
        "set": label,
        "questions": n,
        "unrecorded": len(everything) - n,
        "right": right,
        "partial": partial,
        "wrong": wrong,
        "wrong_shown_as_supported": shown,
        "doubt_shown": sum(r.get("doubt_shown", False) for r in records),
        "abstained": sum(r["abstained"] for r in records),
        "right_draft_lost": sum(r["right_draft_lost"] for r in records),
        "with_citation": sum(r["cited"] for r in records),
        "verbatim_citations_on_wrong_answers": sum(r["verbatim_on_wrong"] for r in records),
        "misses": misses,
        "prompt_tokens_p50": pct([r["prompt_tokens"] for r in records], 0.5),
        "prompt_tokens_p90": pct([r["prompt_tokens"] for r in records], 0.9),
        "first_token_p50_s": pct(firsts, 0.5),
        "first_token_p90_s": pct(firsts, 0.9),
        "first_word_p50_s": pct(words, 0.5),
        "first_word_p90_s": pct(words, 0.9),
        "pass_p50_s": pct(passes, 0.5),
        "pass_p90_s": pct(passes, 0.9),
        "pass_share_of_draft_p50": pct(shares, 0.5),
        "turn_p50_s": pct([r["total_s"] for r in records], 0.5),
        "turn_p90_s": pct([r["total_s"] for r in records], 0.9),
    }


def load_rows(sets: list[str], only: str) -> list[tuple[str, dict]]:
    rows: list[tuple[str, dict]] = []
    for name in sets:
        path = SETS.get(name, Path(name))
        lines = path.read_text(encoding="utf-8").splitlines()
        rows.extend((name, json.loads(line)) for line in lines if line.strip())
    if only:
        wanted = [int(x) for x in only.split(",") if x.strip()]
        rows = [rows[i - 1] for i in wanted]
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default=os.environ.get("OLLAMA_HOST", "http://127.0.0.1:11555"))
    parser.add_argument("--model", action="append", dest="models")
    parser.add_argument("--mode", choices=["ask", "chat"], default="ask")
    parser.add_argument(
        "--set",
        action="append",
        dest="sets",
        help="demo | heldout | a path (repeatable; default: demo and heldout, each reported)",
    )
    parser.add_argument("--only", default="", help="1-based question numbers, comma-separated")
    parser.add_argument("--log", type=Path, default=DEFAULT_LOG, help="the bridge's JSONL log")
    parser.add_argument("--json", type=Path, default=None, help="write every answer here")
    parser.add_argument(
        "--reclassify",
        type=Path,
        default=None,
        help="only sort the misses of a saved --json run again (no model needed)",
    )
    args = parser.parse_args(argv)
    sets = args.sets or ["demo", "heldout"]
    if args.reclassify:
        return reclassify(args.reclassify, [r for _, r in load_rows(sets, "")])
    rows = load_rows(sets, args.only)
    one = chat_one if args.mode == "chat" else ask_one

    summaries, everything = [], {}
    for model, memory, companion in each_model(args.models or ["qwen2.5-coder:1.5b"], args.host):
        records: list[dict] = []
        for name, row in rows:
            record = asyncio.run(one(companion, memory, row, args.log))
            record["set"] = name
            records.append(record)
            verdict = "right" if record["right"] else "part" if record["partial"] else "wrong"
            print(
                f"{model} {name:7} · {row['question'][:44]:44} {verdict:5} "
                f"{'SUPP' if record['wrong_shown_supported'] else '    '} "
                f"{'doubt' if record['doubt_shown'] else '     '} "
                f"{'abst' if record['abstained'] else '    '} "
                f"{'LOST' if record['right_draft_lost'] else '    '} "
                f"score={record['score']:.2f} prompt={record['prompt_tokens']:5} "
                f"ttft={record['first_token_s'] or 0:5.1f}s turn={record['total_s']:6.1f}s "
                f"{record['miss']}",
                flush=True,
            )
            if args.json:  # kept as it goes: a long run stopped early still has its figures
                args.json.write_text(
                    json.dumps({"summaries": by_set(model, records), "answers": records})
                )
        summaries.extend(by_set(model, records))
        everything[model] = records
    print()
    for s in summaries:
        print(json.dumps(s))
    if args.json:
        args.json.write_text(json.dumps({"summaries": summaries, "answers": everything}, indent=1))
    return 0


def by_set(model: str, records: list[dict]) -> list[dict]:
    names = list(dict.fromkeys(r["set"] for r in records))
    return [summarise(model, [r for r in records if r["set"] == n], n) for n in names]


if __name__ == "__main__":
    sys.exit(main())
