"""Whether two wordings can be one belief: the model-free part of "one belief per idea".

Sentence embeddings put a belief and its opposite as close as two wordings of it ("I run
four times a week" / "I run twice a week": cosine 0.90), so closeness alone never merges.
Three rules, measured on ``bench/data/belief_pairs.jsonl`` by ``bench/belief_merge.py``:

* ``fingerprint``: the statement folded (case, punctuation, spaces): equal fingerprints are
  the same belief, whatever else.
* ``SAME``: below this cosine two wordings are never one belief; at or above it they may be,
  and the model is asked (``reflect.judge``, verdict ``same``).
* ``AUTO``: at or above this cosine, with no ``conflict`` between them (a negation on one side
  only, or different numbers or frequencies), they are merged without asking.
"""

from __future__ import annotations

import hashlib
import re

# bench/belief_merge.py on 30 paraphrase, 30 same-topic and 16 opposite pairs: 29 of the 30
# paraphrases are at or above 0.70 and 1 of the 30 different pairs is (0.72, "I value honesty
# in my friends" / "I value my friends"); 14 of the 16 opposites are too, which is why the
# model is asked. At 0.93 and above: 3 paraphrases and 3 opposites, all three opposites
# caught by ``conflict`` (a negation, "twice" / "four times", "worse" / "better").
SAME = 0.70
AUTO = 0.93

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_NEGATIONS = frozenset(
    "not no never nothing nobody none nowhere neither nor barely hardly rarely seldom "
    "without cannot can't won't don't doesn't didn't isn't aren't wasn't weren't haven't "
    "hasn't hadn't shouldn't wouldn't couldn't mustn't".split()
)
_QUANTITIES = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty "
    "forty fifty hundred once twice thrice daily nightly weekly fortnightly monthly yearly "
    "annually fortnight half double".split()
)


# Words whose swap turns a belief into its opposite; a word against its own negative prefix
# ("accurate" / "inaccurate", "happy" / "unhappy") counts too.
_OPPOSITES = {
    frozenset(p.split("/"))
    for p in (
        "better/worse best/worst good/bad more/less most/least like/dislike love/hate "
        "easy/hard early/late morning/night mornings/nights morning/evening mornings/evenings "
        "always/never often/rarely high/low up/down happy/sad calm/anxious ready/unready "
        "supports/resents support/resent helps/hurts help/hurt enjoy/hate enjoys/hates"
    ).split()
}
_PREFIXES = ("in", "un", "im", "dis", "ir", "il", "non")


def fingerprint(statement: str) -> str:
    """The statement with case, punctuation and spacing folded away, hashed."""
    words = " ".join(w.casefold().replace("’", "'") for w in _WORD.findall(statement))
    return hashlib.md5(words.encode("utf-8")).hexdigest()


def _words(statement: str) -> list[str]:
    return [w.casefold().replace("’", "'") for w in _WORD.findall(statement)]


def conflict(a: str, b: str) -> bool:
    """Whether two close wordings may say opposite things: a negation on one side only,
    numbers or frequencies that differ, or a word swapped for its opposite."""
    wa, wb = _words(a), _words(b)
    neg_a = sum(w in _NEGATIONS or w.endswith("n't") for w in wa) % 2
    neg_b = sum(w in _NEGATIONS or w.endswith("n't") for w in wb) % 2
    if neg_a != neg_b:
        return True
    qa = {w for w in wa if w in _QUANTITIES or any(c.isdigit() for c in w)}
    qb = {w for w in wb if w in _QUANTITIES or any(c.isdigit() for c in w)}
    if (qa or qb) and qa != qb:
        return True
    only_a, only_b = set(wa) - set(wb), set(wb) - set(wa)
    for x in only_a:
        for y in only_b:
            if frozenset((x, y)) in _OPPOSITES:
                return True
            if any(y == p + x or x == p + y for p in _PREFIXES):
                return True
    return False


def merges_alone(similarity: float, a: str, b: str) -> bool:
    """Merged without asking the model: the same fingerprint, or ``AUTO`` close and no
    conflict."""
    if fingerprint(a) == fingerprint(b):
        return True
    return similarity >= AUTO and not conflict(a, b)
