"""Where a briefing's tokens go, on the demo memory's 40 questions.

    .venv/bin/python bench/briefing.py [--persona analyst] [--mode ask|chat]

Prompt tokens are the bill on a CPU (every one is read before the first word), so this
splits each briefing into its parts and prints, per part, the characters and estimated
tokens (characters / 3.5; the real-model bench reports the server's own counts) at p50 and
p90 over the questions:

- instructions: the standing prompt, the citation rules, the opinion rule, the persona's
  voice, the tone line, the block headings;
- headers: each excerpt's provenance line, and within them the ids (as briefed now, and
  as whole UUIDs, the way sadie-brief-3 wrote them);
- soul: the soul summary; excerpts: the notes' own words; beliefs and observations;
  attached: chips and the wiki pages of people named.

No model is needed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
for _key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS"):
    os.environ.setdefault(_key, "1")

from sadie_tui.commands.demo import ensure_demo  # noqa: E402
from sadie_tui.config import load_settings  # noqa: E402
from sadie_tui.engine.memory import Memory  # noqa: E402
from sadie_tui.engine.prompt import (  # noqa: E402
    CITATION_RULES,
    OPINION_RULE,
    STANDING,
    TONE,
    build_briefing,
    render_beliefs,
    render_observations,
    strip_front_matter,
)
from sadie_tui.engine.retrieval import retrieve  # noqa: E402
from sadie_tui.engine.session import Session  # noqa: E402
from sadie_tui.engine.turns.ask import ask_briefing  # noqa: E402
from sadie_tui.engine.turns.steps import persona_for  # noqa: E402
from sadie_tui.paths import resolve_home  # noqa: E402

QUESTIONS = ROOT / "tests" / "data" / "demo_questions.jsonl"
CHARS_PER_TOKEN = 3.5


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else 0.0


def parts_of(companion: Session, question: str, persona_name: str, mode: str) -> dict:
    memory = companion.memory
    persona = persona_for(persona_name, persona_name)
    emotion = companion.context.emotions.choose(question).value
    result = retrieve(memory, question, persona, now=datetime.now())
    soul = memory.soul()
    tone = TONE.get(emotion, "")
    briefing = ask_briefing(memory, question, question, persona, result, emotion)
    if mode == "chat":
        briefing = build_briefing(
            message=question,
            excerpts=briefing.excerpts,
            beliefs=result.beliefs,
            observations=result.observations,
            soul=soul,
            voice=persona.voice,
            tone=tone,
            attached=briefing.attached,
        )
    headers = [e.header() for e in briefing.excerpts]
    ids_now = sum(len(e.ref or e.episode_id) for e in briefing.excerpts)
    ids_whole = sum(len(e.episode_id) for e in briefing.excerpts)
    instructions = [STANDING, CITATION_RULES, persona.voice, tone]
    if mode == "ask":
        instructions.append(OPINION_RULE)
    beliefs = render_beliefs(result.beliefs)
    observations = render_observations(result.observations, persona.observation_weight > 1.0)
    excerpt_text = sum(len(e.text[:1600].strip()) for e in briefing.excerpts)
    total = briefing.chars
    known = {
        "instructions": sum(len(t) for t in instructions if t),
        "headers": sum(len(h) for h in headers),
        "ids": ids_now,
        "ids_as_whole_uuids": ids_whole,
        "soul": len(strip_front_matter(soul).strip()),
        "excerpts": excerpt_text,
        "beliefs_observations": len(beliefs) + len(observations),
        "question": len(question),
    }
    known["attached_and_rest"] = total - sum(
        v for k, v in known.items() if k not in ("ids", "ids_as_whole_uuids")
    )
    known["total"] = total
    return known


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--persona", default="analyst")
    parser.add_argument("--mode", choices=("ask", "chat"), default="ask")
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines()]
    demo = resolve_home(demo=True)
    ensure_demo(demo, quiet=True)
    with Memory.open(demo, read_only=True) as memory:
        companion = Session(memory, load_settings())
        measured = [parts_of(companion, r["question"], args.persona, args.mode) for r in rows]
    print(f"{len(measured)} briefings ({args.mode}, persona {args.persona}); chars and ~tokens")
    print(f"{'part':22} {'p50 chars':>10} {'p90 chars':>10} {'p50 ~tok':>9} {'share':>6}")
    total50 = pct([m["total"] for m in measured], 0.5)
    for part in measured[0]:
        values = [m[part] for m in measured]
        p50, p90 = pct(values, 0.5), pct(values, 0.9)
        print(
            f"{part:22} {p50:10.0f} {p90:10.0f} {p50 / CHARS_PER_TOKEN:9.0f} "
            f"{100 * p50 / total50:5.1f}%"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
