"""Crash consistency, many cases: `sadie ingest`, `chat` and `serve` on a new and on an
existing memory, each killed with SIGKILL at a seeded random instant, the memory reopened and
checked (tests/support/crash.py says how; the test suite runs a few of the same cases).

    .venv/bin/python bench/crash.py [--cases 200] [--first-seed 0] [--scale 1.0]
    .venv/bin/python bench/crash.py --seed 17 --scenario chat --memory existing   # one case

Prints one line per case and a summary such as ``200/200 reopened, 0 lost``; exits 1 when a
case failed (its description says what, with its seed and delay). ``--scale`` stretches the
kill window on a slower machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
for _key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS"):
    os.environ.setdefault(_key, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from sadie_tui.engine.ingest.embedder import shared_embedder  # noqa: E402
from tests.support.crash import MEMORIES, SCENARIOS, Case, Outcome, cases, run_case  # noqa: E402
from tests.support.crash import workspace as crash_workspace  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--seed", type=int, help="run this one case (with --scenario, --memory)")
    parser.add_argument("--scenario", choices=SCENARIOS, default="ingest")
    parser.add_argument("--memory", choices=MEMORIES, default="new")
    parser.add_argument("--scale", type=float, default=1.0, help="stretch the kill window")
    parser.add_argument("--keep", action="store_true", help="keep every case's home")
    args = parser.parse_args()
    todo = (
        [Case(args.scenario, args.memory, args.seed)]
        if args.seed is not None
        else cases(args.cases, args.first_seed)
    )
    root = Path(tempfile.mkdtemp(prefix="sadie-crash-"))
    embedder = shared_embedder()
    embedder.warm()
    started = time.monotonic()
    outcomes: list[Outcome] = []
    with crash_workspace(root / "workspace", embedder) as ws:
        print(f"workspace ready in {time.monotonic() - started:.1f} s ({root})", flush=True)
        for number, case in enumerate(todo, 1):
            workdir = root / str(case)
            outcome = run_case(ws, case, workdir, args.scale)
            outcomes.append(outcome)
            verdict = "ok" if not outcome.problems else "FAILED"
            how = "killed" if outcome.killed else "ended first"
            print(
                f"{number:4d} {str(case):24s} +{outcome.delay:5.2f} s {how:11s} after {outcome.ran:5.2f} s"
                f" {outcome.reported.summary():40s} {verdict}",
                flush=True,
            )
            if outcome.problems:
                print(outcome.describe(), flush=True)
            elif not args.keep:
                shutil.rmtree(workdir, ignore_errors=True)
    failed = [o for o in outcomes if o.problems]
    reopened = sum(o.reopened for o in outcomes)
    lost = sum(o.lost for o in outcomes)
    killed = sum(o.killed for o in outcomes)
    print(
        f"{reopened}/{len(outcomes)} reopened, {lost} lost"
        f" ({killed} killed mid-run, {len(outcomes) - killed} ended first;"
        f" {len(failed)} with any problem) in {time.monotonic() - started:.0f} s"
    )
    if not failed and not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
