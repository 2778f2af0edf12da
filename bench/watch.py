"""From a saved note to a search that finds it, under `sadie ingest --watch`.

    .venv/bin/python bench/watch.py [--notes 5]

Starts `sadie ingest --watch` on a new notes folder with a private home, then, one note at a
time, writes a note holding a word found nowhere else and runs `sadie search WORD --json` in
a second process (a client of the watcher, through the home's socket) until a chunk of that
note comes back. Prints each note's seconds from the write to the first search that found
it (which includes the searching process's own start-up, ~1 s), and p50 / max. Then it edits
one note and deletes another and times those the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SADIE = [sys.executable, "-m", "sadie_tui.cli"]
WORDS = ["quokka", "axolotl", "pangolin", "narwhal", "okapi", "tapir", "caracal", "dugong"]


def search(env: dict[str, str], word: str) -> list[dict]:
    done = subprocess.run(
        [*SADIE, "search", word, "--json", "-k", "3"], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        return []
    chunks = json.loads(done.stdout).get("chunks", [])
    return [c for c in chunks if word in c.get("text", "").lower()]


def until(predicate, limit: float = 120.0) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    while not predicate():
        if time.perf_counter() - started > limit:
            return float("inf")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home, notes = Path(tmp, "home"), Path(tmp, "notes")
        notes.mkdir()
        (notes / "seed.md").write_text("# Seed\nA first note so the memory is not empty.\n")
        env = {**os.environ, "SADIE_HOME": str(home), "SADIE_REASONER": "offline"}
        env.setdefault("HF_HUB_OFFLINE", "1")
        watcher = subprocess.Popen(
            [*SADIE, "ingest", "--watch", "--quiet", str(notes)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=ROOT,
        )
        assert watcher.stdout is not None
        for line in watcher.stdout:
            if line.startswith("watching"):
                break
        try:
            added = []
            for n in range(args.notes):
                word = WORDS[n % len(WORDS)]
                (notes / f"note-{n}.md").write_text(
                    f"# Note {n}\nToday I saw a {word} at the zoo.\n"
                )
                added.append(until(lambda w=word: bool(search(env, w))))
                print(f"new note {n}: found after {added[-1]:.1f} s", flush=True)
            (notes / "note-0.md").write_text("# Note 0\nToday I saw a wombat at the zoo.\n")
            edited = until(lambda: bool(search(env, "wombat")))
            (notes / "note-1.md").unlink()
            gone = until(lambda: not search(env, WORDS[1]))
        finally:
            watcher.terminate()
            watcher.wait(30)
    print(f"new notes: p50 {statistics.median(added):.1f} s, max {max(added):.1f} s")
    print(f"an edit found after {edited:.1f} s; a deleted note gone after {gone:.1f} s")


if __name__ == "__main__":
    main()
