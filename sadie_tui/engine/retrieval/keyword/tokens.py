"""Tokens for the keyword channel: one function for documents and queries.

Tokens are lower-cased words of two or more characters, English stop words removed, stemmed
with PyStemmer's English (Snowball) stemmer; the spellings of a one-to-one meeting ("1:1",
"1-on-1", "one on one") are one token.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import Stemmer

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
QUESTION_FRAME = frozenset(
    "kind type sort many much long often likely might would ever happen happened happening".split()
)


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    # lazy: the stemmer's C extension loads with the first text to stem
    import Stemmer

    return Stemmer.Stemmer("english")


_POSSESSIVE = re.compile(r"['’]s\b")
_APOSTROPHE = re.compile(r"['’]")


# A meeting of two written five ways ("1:1", "1-on-1", "1on1", "one-on-one", "one to one"):
# one token, so a question in one spelling finds notes titled in another. "1:1" next to other
# digits or colons is a time or a score ("1:15:40", "11:15"), not a meeting.
_ONE_ON_ONE = re.compile(
    r"(?<![\w:.])(?:1\s*:\s*1|1\s*-?\s*on\s*-?\s*1|one[\s-]+(?:on|to)[\s-]+one)s?(?![\w:-])"
    r"(?!\s+(?:hundred|thousand|million)(?![\w]))"  # "from one to one hundred"
)


def fold(text: str) -> str:
    """Lower case; "Ines's" → "ines", "don't" → "dont", "one-to-one" and "1:1" → "1on1"."""
    text = _APOSTROPHE.sub("", _POSSESSIVE.sub("", text.lower()))
    return _ONE_ON_ONE.sub("1on1", text) if "1" in text or "one" in text else text


def keyword_text(text: str, title: str, kind: str) -> str:
    """The text the keyword channel indexes for a chunk: a record's title joins its text.

    A record (a line of ``runs.jsonl``, ``purchases.jsonl``…) is a title naming what it is
    ("Flights to Leeds — Christmas") over a terse detail ("TAP LIS–MAN, 2 passengers, €624"):
    without the title the words a question uses are often nowhere in it. Notes and
    conversations are prose that names its own subject; their titles stay out."""
    if kind != "record" or not title:
        return text
    return f"{title}.\n{text}"


def tokenize(text: str) -> list[str]:
    """Stemmed content words of ``text`` (the same function for documents and queries)."""
    text = fold(text)
    words = [w for w in _WORD.findall(text) if w not in STOPWORDS]
    return list(_stemmer().stemWords(words)) if words else []


# Irregular verbs the stemmer cannot join ("ran" is not "run"): a question's verb also looks
# for its other forms ("when did I last run" finds "Ines ran next to me").
_IRREGULAR = (
    "run ran|go went gone|see saw seen|meet met|eat ate eaten|buy bought|bring brought|"
    "think thought|teach taught|catch caught|fight fought|feel felt|leave left|lose lost|"
    "keep kept|sleep slept|sell sold|tell told|find found|make made|take took taken|"
    "give gave given|get got gotten|write wrote written|drive drove driven|ride rode ridden|"
    "swim swam swum|sing sang sung|begin began begun|drink drank drunk|fall fell fallen|"
    "fly flew flown|grow grew grown|know knew known|speak spoke spoken|break broke broken|"
    "choose chose chosen|wear wore worn|win won|sit sat|stand stood|hold held|hear heard|"
    "pay paid|say said|spend spent|send sent|build built|lend lent|come came|become became|"
    "forget forgot forgotten|understand understood|cry cried|quit quitted"
)
_FORMS = {
    word: tuple(w for w in group.split() if w != word)
    for group in _IRREGULAR.split("|")
    for word in group.split()
}


def query_tokens(text: str, *, forms: bool = False) -> list[str]:
    """``tokenize`` for a question: its framing words dropped too; with ``forms``, irregular
    verbs joined by their other forms ("run" also looks for "ran")."""
    text = fold(text)
    words = [w for w in _WORD.findall(text) if w not in STOPWORDS and w not in QUESTION_FRAME]
    if not words:
        return []
    stemmed = list(_stemmer().stemWords(words))
    if forms:
        others = [o for w in words for o in _FORMS.get(w, ()) if o not in STOPWORDS]
        stemmed += [o for o in dict.fromkeys(_stemmer().stemWords(others)) if o not in stemmed]
    return stemmed


def query_concepts(text: str) -> list[tuple[str, ...]]:
    """The question's words as ``query_tokens`` reads them, one tuple each: its stem, then the
    stems of its other forms ("run" → ``("run", "ran")``). A note holds a word when it holds
    any of them."""
    words = [w for w in _WORD.findall(fold(text)) if w not in STOPWORDS and w not in QUESTION_FRAME]
    concepts: dict[str, tuple[str, ...]] = {}
    for word in words:
        forms = [word, *(o for o in _FORMS.get(word, ()) if o not in STOPWORDS)]
        stems = tuple(dict.fromkeys(_stemmer().stemWords(forms)))
        concepts.setdefault(stems[0], stems)
    return list(concepts.values())


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
