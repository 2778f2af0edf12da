"""Where a quote that is not word for word in its note stops being a paraphrase.

    .venv/bin/python bench/quotes.py [--cross 3]

A citation whose quote is not found in the cited note is graded ``paraphrase`` by the spec's
table; sadie checks that label (``engine/reply/closeness.py``): the quote must be close in
meaning to one of the note's sentences, or the citation is dropped as "not in this note".
This measures "close" on the demo memory, both ways, with the labelled quotes in
``bench/data/quotes_demo.jsonl``:

- quotes that ARE in the note in other words (hand-written paraphrases of a sentence): how
  many a threshold would wrongly call "not in this note";
- quotes that are NOT in the note: invented ones, on the note's own topic or not (hand
  written), and each paraphrase cited against ``--cross`` other notes (the model naming the
  wrong note): how many a threshold would wrongly let through as a paraphrase.

For each candidate threshold it prints both error rates; the closeness is the highest cosine
between the quote and a sentence of the note, with sadie's own embedding model (the one
retrieval uses). No model server is needed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
for _key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS"):
    os.environ.setdefault(_key, "1")

from sadie_tui.engine.ingest.embedder import shared_embedder  # noqa: E402
from sadie_tui.engine.prompt import strip_front_matter  # noqa: E402
from sadie_tui.engine.reply.closeness import NEAR, closeness  # noqa: E402

DEMO = ROOT / "data" / "demo"
LABELS = ROOT / "bench" / "data" / "quotes_demo.jsonl"
THRESHOLDS = [0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7]


def note_text(name: str) -> str:
    return strip_front_matter((DEMO / name).read_text(encoding="utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cross", type=int, default=3, help="other notes per paraphrase")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rows = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines()]
    notes = sorted({r["note"] for r in rows})
    encode = shared_embedder().encode
    rng = random.Random(args.seed)

    def score(quote: str, note: str) -> float:
        return closeness(quote, [note_text(note)], encode)

    paraphrases = [score(r["quote"], r["note"]) for r in rows if r["in_note"]]
    invented = [score(r["quote"], r["note"]) for r in rows if not r["in_note"]]
    crossed = []
    for r in rows:
        if r["in_note"]:
            others = [n for n in notes if n != r["note"]]
            for other in rng.sample(others, min(args.cross, len(others))):
                crossed.append(score(r["quote"], other))

    def below(values: list[float], t: float) -> str:
        return f"{sum(1 for v in values if v < t)}/{len(values)}"

    def above(values: list[float], t: float) -> str:
        return f"{sum(1 for v in values if v >= t)}/{len(values)}"

    print(
        f"paraphrases in their note: {len(paraphrases)}; invented quotes: {len(invented)}; "
        f"paraphrases cited against another note: {len(crossed)}"
    )
    for name, values in (
        ("paraphrase", paraphrases),
        ("invented", invented),
        ("wrong note", crossed),
    ):
        ordered = sorted(values)
        print(
            f"  {name:<11} min {ordered[0]:.2f}  p10 {ordered[len(ordered) // 10]:.2f}  "
            f"p50 {ordered[len(ordered) // 2]:.2f}  max {ordered[-1]:.2f}"
        )
    print(
        "threshold  paraphrases called 'not in this note'  invented let through  wrong note let through"
    )
    for t in THRESHOLDS:
        mark = "  <- NEAR" if abs(t - NEAR) < 1e-9 else ""
        print(
            f"  {t:.2f}     {below(paraphrases, t):>8}"
            f"                         {above(invented, t):>6}"
            f"              {above(crossed, t):>7}{mark}"
        )


if __name__ == "__main__":
    main()
