"""Whether a quote that is not word for word in its note is there in other words.

The spec's table grades a quote that is not found in the cited note as ``paraphrase``. That
label is a claim about the note, so sadie checks it: the quote is compared with each sentence
the note was shown with, by the embedding model retrieval already uses, and a quote close to
none of them (cosine below ``NEAR``) is not a paraphrase of that note. Its citation is
dropped, with the reason "not in the note", and counted like any other dropped citation.

``NEAR`` is measured on the demo memory by ``bench/quotes.py``: hand-written paraphrases of
a note's sentence against invented quotes and paraphrases cited against the wrong note.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ..errors import SadieError
from .backing import SENTENCE_BREAK
from .citations import Citation, PolicedCitations

# The lowest cosine between a quote and one of its note's sentences that still counts as the
# note saying it in other words (bench/quotes.py: README, "Citations and their labels").
NEAR = 0.45
UNFOUND = "not in the note"
MIN_SENTENCE = 12

Encode = Callable[[Sequence[str]], np.ndarray]


def _sentences(texts: Sequence[str]) -> list[str]:
    found: list[str] = []
    for text in texts:
        for line in text.splitlines():
            for sentence in SENTENCE_BREAK.split(line):
                sentence = sentence.strip(" \t-*•#>")
                if len(sentence) >= MIN_SENTENCE and sentence not in found:
                    found.append(sentence)
    if not found:
        found = [t.strip() for t in texts if t.strip()]
    return found


def closeness(quote: str, texts: Sequence[str], encode: Encode) -> float:
    """The highest cosine between ``quote`` and a sentence of ``texts`` (0 when they have
    none)."""
    sentences = _sentences(texts)
    if not sentences or not quote.strip():
        return 0.0
    vectors = np.asarray(encode([quote, *sentences]), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1)
    norms[norms == 0] = 1.0
    unit = vectors / norms[:, None]
    return float(np.max(unit[1:] @ unit[0]))


def drop_unfound(
    policed: PolicedCitations, shown: Mapping[str, Sequence[str]], encode: Encode
) -> PolicedCitations:
    """``policed`` less the paraphrases whose quote is close to no sentence of the cited
    note (each moved to ``dropped`` with the reason ``UNFOUND``). Where the embedding model
    cannot load, the labels stay as graded (retrieval says why it has no vectors)."""
    kept: list[Citation] = []
    dropped = list(policed.dropped)
    for c in policed.citations:
        texts = shown.get(c.episode_id, ())
        if c.support == "paraphrase" and _far(c.quote, texts, encode):
            dropped.append(
                {"episode": c.episode_id, "quote": c.quote, "support": c.claimed, "reason": UNFOUND}
            )
            continue
        kept.append(c)
    if len(kept) == len(policed.citations):
        return policed
    return PolicedCitations(tuple(kept), tuple(dropped), policed.parse_error)


def _far(quote: str, texts: Sequence[str], encode: Encode) -> bool:
    try:
        return closeness(quote, texts, encode) < NEAR
    except SadieError:
        return False
