"""A reply's grounding score, and an answer's grounding report: what a score of 1.0 means
(every citation establishes the sentence it backs, every checkable detail is in a source)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..jsonvalue import JSONObject
    from .citations import PolicedCitations
    from .unsupported import Span

SUPPORT_WEIGHTS = {"verbatim": 1.0, "paraphrase": 0.6, "inference": 0.3}
# The most a reply scores when its answer is not established by what it cites.
DOUBTED = 0.5


def grounding_score(
    policed: PolicedCitations, unsupported: int = 0, details: int = 0, *, doubt: bool = False
) -> float:
    """Weighted share of the model's citations that establish the sentence they back —
    verbatim 1, paraphrase 0.6, inference 0.3; a citation the claim check doubts
    (``claims``) and a dropped one 0; 0 when the model cited nothing — times the share of
    the reply's checkable details (numbers, times, dates, amounts, names) found in a
    source; at most ``DOUBTED`` when the answer's claim is not established (``doubt``: the
    person reads that before the answer)."""
    total = len(policed.citations) + len(policed.dropped)
    if total == 0:
        return 0.0
    score = (
        sum(SUPPORT_WEIGHTS.get(c.support, 0.0) for c in policed.citations if not c.doubt) / total
    )
    if details > 0:
        score *= 1 - min(unsupported, details) / details
    if doubt:
        score = min(score, DOUBTED)
    return round(score, 3)


def grounding_report(
    policed: PolicedCitations, spans: Sequence[Span] = (), details: int = 0, doubt: str = ""
) -> JSONObject:
    """An answer's grounding as ``--ask --json`` and ``POST /v1/ask`` report it."""
    counts = {"verbatim": 0, "paraphrase": 0, "inference": 0}
    for c in policed.citations:
        counts[c.support] = counts.get(c.support, 0) + 1
    return {
        "score": grounding_score(policed, len(spans), details, doubt=bool(doubt)),
        "doubt": doubt,
        "doubted": sum(1 for c in policed.citations if c.doubt),
        "unsupported": [sp.as_json() for sp in spans],
        "counts": {support: n for support, n in counts.items()},
        "dropped": len(policed.dropped),
        "dropped_reasons": [d.get("reason", "") for d in policed.dropped],
        "parse_error": policed.parse_error,
    }
