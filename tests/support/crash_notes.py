"""The notes the crash cases ingest, in two versions of one folder.

Version 1 is what the existing memory was built from; version 2, what every crash case
ingests: some files changed (their episodes are replaced: old rows deleted in one commit, new
ones written in the next), some new, the rest as they were (those episodes must survive any
crash untouched). Generated from a fixed seed, so every run writes the same bytes.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

WORDS = (
    "river market bread morning letter garden train rain kitchen lamp paper window coffee "
    "bicycle harbour sister meeting deadline promotion marathon knee ferry lisbon porto "
    "pottery class ceramics friday retro release backlog sprint interview apartment lease "
    "landlord plumber sunlight balcony tomatoes basil neighbour dog walk evening quiet tired "
    "glad worried proud slow fast long short cold warm"
).split()
PEOPLE = ("Ines", "Pedro", "Marta", "Tomas", "Joana", "Rui")

FIRST = 28  # files in version 1
CHANGED = range(0, 28, 4)  # their text grows in version 2
NEW = 14  # files only in version 2


def _paragraph(rng: random.Random) -> str:
    sentences = []
    for _ in range(rng.randint(3, 6)):
        words = rng.sample(WORDS, rng.randint(6, 12))
        words.insert(rng.randrange(len(words)), rng.choice(PEOPLE))
        sentences.append(" ".join(words).capitalize() + ".")
    return " ".join(sentences)


def _entry(number: int, version: int) -> str:
    rng = random.Random(number)
    body = "\n\n".join(_paragraph(rng) for _ in range(rng.randint(2, 4)))
    if version == 2 and number in CHANGED:
        body += "\n\n" + _paragraph(random.Random(1000 + number))
    day = 1 + number % 28
    month = 1 + number // 28
    return (
        f"---\ntitle: Day {number}\ndate: 2026-{month:02d}-{day:02d}\nkind: journal\n---\n{body}\n"
    )


def write_notes(folder: Path, version: int) -> Path:
    """Version 1 or 2 of the notes, written into ``folder`` (version 2 over version 1)."""
    journal = folder / "journal"
    journal.mkdir(parents=True, exist_ok=True)
    count = FIRST + (NEW if version == 2 else 0)
    for number in range(count):
        (journal / f"day-{number:03d}.md").write_text(_entry(number, version), encoding="utf-8")
    beliefs = [
        {"statement": "Running keeps me sane", "status": "active", "confidence": 0.8},
        {
            "statement": "I work too late",
            "status": "contested",
            "confidence": {1: 0.6, 2: 0.7}[version],
        },
    ]
    lines = [json.dumps({**b, "evidence": ["journal/day-000.md"]}) for b in beliefs]
    (folder / "beliefs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "soul.md").write_text(soul_text(version) + "\n", encoding="utf-8")
    return folder


def soul_text(version: int) -> str:
    soul = "Maya, 34, backend engineer in Lisbon; runs, worries about work, loves Ines."
    return soul + (" Lately: a new flat, and pottery on Fridays." if version == 2 else "")
