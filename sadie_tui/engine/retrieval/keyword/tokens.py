"""Tokens for the keyword channel: one function for documents and queries.

Tokens are lower-cased words of two or more characters, English stop words removed, stemmed
with PyStemmer's English (Snowball) stemmer.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_WORD = re.compile(r"(?u)\b\w\w+\b")
_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+")
# A word (as ``_WORD``: runs of two or more word characters) or a sentence break.
WORD_OR_BREAK = re.compile(r"(?u)\w\w+|(?<=[.!?…])\s|\n")

# Function words that carry no topic. Wider than Lucene's 33-word list: pronouns and auxiliaries
# dominate conversational notes and only add noise to BM25.
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are aren as at be because been before
    being below between both but by can cannot could couldn did didn do does doesn doing don
    down during each few for from further had hadn has hasn have haven having he her here hers
    herself him himself his how if in into is isn it its itself let me more most mustn my myself
    no nor not of off on once only or other ought our ours ourselves out over own same shan she
    should shouldn so some such than that the their theirs them themselves then there these they
    this those through to too under until up very was wasn we were weren what when where which
    while who whom why will with won would wouldn you your yours yourself yourselves ll ve re
    im ive id youre thats dont doesnt didnt isnt wasnt cant wont shes hes theyre weve youve
    theyve youll theyll arent werent hasnt havent hadnt wouldnt couldnt shouldnt
    """.split()
)


# Words that frame a question rather than name its subject ("what kind of", "how long",
# "would she likely"): dropped from queries only, since in notes they can carry meaning.
QUESTION_FRAME = frozenset("kind type sort many much long often likely might would ever".split())


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")


_POSSESSIVE = re.compile(r"['’]s\b")
_APOSTROPHE = re.compile(r"['’]")


def fold(text: str) -> str:
    """Lower case; "Ines's" → "ines", "don't" → "dont"."""
    return _APOSTROPHE.sub("", _POSSESSIVE.sub("", text.lower()))


def tokenize(text: str) -> list[str]:
    """Stemmed content words of ``text`` (the same function for documents and queries)."""
    text = fold(text)
    words = [w for w in _WORD.findall(text) if w not in STOPWORDS]
    return list(_stemmer().stemWords(words)) if words else []


def query_tokens(text: str) -> list[str]:
    """``tokenize`` for a question: its framing words dropped too."""
    text = fold(text)
    words = [w for w in _WORD.findall(text) if w not in STOPWORDS and w not in QUESTION_FRAME]
    return list(_stemmer().stemWords(words)) if words else []


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(text) if s.strip()]


# Stems of single words, kept across calls (``best_passage`` stems word by word).
stems: dict[str, str] = {}


def stem(word: str) -> str:
    found = stems.get(word)
    if found is None:
        if len(stems) > 200_000:
            stems.clear()
        found = stems[word] = _stemmer().stemWord(word)
    return found
