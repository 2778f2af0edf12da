"""How close two wordings of one belief are, against two different beliefs on the same topic
and a belief against its opposite: the thresholds of ``reflect.sameness`` (SAME, AUTO) and
what its conflict rule sets aside.

    .venv/bin/python bench/belief_merge.py [--json]

Pairs: ``bench/data/belief_pairs.jsonl`` (``a``, ``b``, ``label`` same | different |
opposite), written by hand around the demo memory's 27 beliefs: a paraphrase of each, a
different belief about the same thing, and an opposite. Cosines by the embedding model
retrieval uses.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sadie_tui.engine.ingest.embedder import shared_embedder  # noqa: E402
from sadie_tui.engine.reflect.sameness import AUTO, SAME, conflict, merges_alone  # noqa: E402

PAIRS = ROOT / "bench" / "data" / "belief_pairs.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines() if line]
    embedder = shared_embedder()
    a = np.asarray(embedder.encode([r["a"] for r in rows]), dtype=np.float32)
    b = np.asarray(embedder.encode([r["b"] for r in rows]), dtype=np.float32)
    a /= np.linalg.norm(a, axis=1)[:, None]
    b /= np.linalg.norm(b, axis=1)[:, None]
    cosines = (a * b).sum(axis=1)
    out: dict[str, dict] = {}
    for label in ("same", "different", "opposite"):
        picked = [(float(c), r) for c, r in zip(cosines, rows, strict=True) if r["label"] == label]
        values = sorted(c for c, _ in picked)
        out[label] = {
            "pairs": len(values),
            "min": round(values[0], 3),
            "median": round(float(np.median(values)), 3),
            "max": round(values[-1], 3),
            f"at or above SAME {SAME}": sum(c >= SAME for c in values),
            f"at or above AUTO {AUTO}": sum(c >= AUTO for c in values),
            "conflict": sum(conflict(r["a"], r["b"]) for _, r in picked),
            "merged without the model": sum(merges_alone(c, r["a"], r["b"]) for c, r in picked),
        }
    best = max(
        (round(t, 2) for t in np.arange(0.5, 0.95, 0.01)),
        key=lambda t: sum(
            (c >= t) == (r["label"] == "same")
            for c, r in zip(cosines, rows, strict=True)
            if r["label"] != "opposite"
        ),
    )
    out["threshold separating same from different best"] = {"cosine": best}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    for label, block in out.items():
        print(label, block)


if __name__ == "__main__":
    main()
