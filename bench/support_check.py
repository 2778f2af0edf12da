"""Does a second look by the model catch what the mechanical rules let through? (issue 33)

    .venv/bin/python bench/support_check.py ANSWERS.json [--set demo] [--model qwen2.5-coder:1.5b]
        [--host http://127.0.0.1:11555] [--variant quote|claim] [--json OUT]

``ANSWERS.json`` is what ``bench/real_answers.py --json`` wrote: real answers of a real model
to the demo or held-out questions, each labelled right or wrong by its keys, with the
citations sadie showed and the mechanical rules' verdict (grounding score, doubt shown). For
each answer this asks the same model one yes/no question under a two-word grammar (Ollama's
``format``: ``{"verdict": "yes" | "no"}``) about the citation of the answer's first claim:

- ``quote``: does the quoted sentence answer the question? (question and quote only);
- ``claim``: does the quoted sentence say what the answer's sentence claims, as an answer to
  the question? (question, the answer's sentence and the quote).

It prints, beside the mechanical rules on the same answers: of the wrong answers, how many
each would show as supported (the failure issue 33 counts); of the right answers, how many it
would doubt; and what the look cost (prompt tokens, seconds, p50 / p90). Needs the
Ollama-compatible server of ``../shared/realmodel``; never run in CI.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import ollama

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"enum": ["yes", "no"]}},
    "required": ["verdict"],
}
SYSTEM = (
    "You check answers against a person's own notes. You read one question and one sentence "
    "quoted from the notes, and say whether that sentence itself gives the answer. Say no when "
    "it is about another thing, another person, or another time than the question asks."
)


def prompt(variant: str, question: str, claim: str, quote: str, title: str, date: str) -> str:
    where = f" (from the note {title!r}, {date})" if title else ""
    if variant == "quote":
        return (
            f"Question: {question}\n"
            f'Sentence{where}: "{quote}"\n'
            "Does this sentence itself answer the question? Answer yes or no."
        )
    return (
        f"Question: {question}\n"
        f"Answer given: {claim}\n"
        f'Sentence{where}: "{quote}"\n'
        "Does this sentence itself say what the answer gives, as the answer to this question? "
        "Answer yes or no."
    )


def first_citation(answer: dict) -> dict | None:
    cites = [c for c in answer.get("citations") or [] if c.get("quote")]
    return cites[0] if cites else None


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("answers", type=Path)
    parser.add_argument("--set", dest="sets", action="append")
    parser.add_argument("--model", default="qwen2.5-coder:1.5b")
    parser.add_argument("--host", default="http://127.0.0.1:11555")
    parser.add_argument("--variant", choices=("quote", "claim"), default="claim")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    data = json.loads(args.answers.read_text(encoding="utf-8"))
    answers = [a for rows in data["answers"].values() for a in rows]
    if args.sets:
        answers = [a for a in answers if a.get("set") in args.sets]
    client = ollama.Client(host=args.host)
    rows = []
    for n, answer in enumerate(answers, 1):
        cite = first_citation(answer)
        if cite is None or answer.get("abstained"):
            continue
        text = prompt(
            args.variant,
            answer["question"],
            cite.get("backs") or answer["answer"].split(". ")[0],
            cite["quote"],
            cite.get("title") or "",
            cite.get("date") or "",
        )
        t0 = time.perf_counter()
        reply = client.chat(
            model=args.model,
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}],
            format=SCHEMA,
            options={"temperature": 0, "num_predict": 12, "num_ctx": 2048},
        )
        seconds = time.perf_counter() - t0
        try:
            verdict = json.loads(reply.message.content or "{}").get("verdict", "?")
        except json.JSONDecodeError:
            verdict = "?"
        mechanical_supported = (answer.get("score") or 0) >= 0.9 and not answer.get("doubt_shown")
        row = {
            "set": answer.get("set"),
            "question": answer["question"],
            "right": bool(answer["right"]),
            "mechanical_supported": mechanical_supported,
            "model_yes": verdict == "yes",
            "verdict": verdict,
            "prompt_tokens": reply.prompt_eval_count or 0,
            "seconds": round(seconds, 2),
        }
        rows.append(row)
        print(
            f"{n:>3} {'right' if row['right'] else 'WRONG':>5} rules:"
            f"{'supported' if mechanical_supported else 'doubted':>9} model:{verdict:>3}"
            f" {row['prompt_tokens']:>4} tok {seconds:5.1f}s  {answer['question'][:60]}",
            flush=True,
        )

    def summary(rows: list[dict]) -> dict[str, object]:
        wrong = [r for r in rows if not r["right"]]
        right = [r for r in rows if r["right"]]
        both = [r for r in rows if r["mechanical_supported"] and r["model_yes"]]
        return {
            "answers": len(rows),
            "wrong": len(wrong),
            "wrong_supported_rules": sum(r["mechanical_supported"] for r in wrong),
            "wrong_supported_model": sum(r["model_yes"] for r in wrong),
            "wrong_supported_both": sum(r in both for r in wrong),
            "right": len(right),
            "right_doubted_rules": sum(not r["mechanical_supported"] for r in right),
            "right_doubted_model": sum(not r["model_yes"] for r in right),
            "right_doubted_both": sum(r not in both for r in right),
            "prompt_tokens_p50": statistics.median([r["prompt_tokens"] for r in rows] or [0]),
            "seconds_p50": pct([r["seconds"] for r in rows], 0.5),
            "seconds_p90": pct([r["seconds"] for r in rows], 0.9),
        }

    result = {"variant": args.variant, "model": args.model, "sets": {}}
    for name in sorted({r["set"] for r in rows}):
        s = summary([r for r in rows if r["set"] == name])
        result["sets"][name] = s
        print(
            f"\n{name} ({args.variant}): {s['answers']} answers; of {s['wrong']} wrong shown as "
            f"supported: rules {s['wrong_supported_rules']}, model {s['wrong_supported_model']},"
            f" rules and model {s['wrong_supported_both']}; of {s['right']} right doubted: rules "
            f"{s['right_doubted_rules']}, model {s['right_doubted_model']}, rules and model "
            f"{s['right_doubted_both']}; prompt tokens p50 {s['prompt_tokens_p50']}, seconds "
            f"p50 {s['seconds_p50']} (p90 {s['seconds_p90']})"
        )
    if args.json:
        args.json.write_text(json.dumps({"summary": result, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
