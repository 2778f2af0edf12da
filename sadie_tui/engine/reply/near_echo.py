"""Near echoes: a sentence of the finished reply that is one of the standing instructions
written back with a few words left out or changed.

The reply guard drops an instruction sentence written back word for word while the reply
streams. A small model also paraphrases them (Gemma-3-270M: "Reply in plain prose, warmly
and concretely, speaking to them as "you"." — the instruction with its middle clause left
out). Once the reply is complete, each sentence of at least ``MIN_WORDS`` words whose words
are, for ``SHARE`` of them and in order, the words of one instruction sentence is taken out.

Linear in the reply: each sentence is compared (through an index of the instructions' words)
with the few instruction sentences that share most of its words, and at most ``MAX_WORDS``
of its words are read. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from .guard import instruction_sentences

__all__ = ["NearEchoes", "sentences"]

MIN_WORDS = 6  # a shorter sentence is never called an echo
MAX_WORDS = 80  # a longer sentence is not one sentence of the instructions
SHARE = 0.7  # of the sentence's words, in order, in one instruction sentence

_WORD = re.compile(r"\w+")
# A sentence ends at . ! ? (and the spaces after) or a line break; the breaks are kept.
_SENTENCE = re.compile(r"[^\n]*?(?:[.!?]+(?=\s|$)|(?=\n)|$)\s*", re.DOTALL)
_BLANKS = re.compile(r"\n{3,}")


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences, each with the spaces and line breaks after it."""
    return [m.group() for m in _SENTENCE.finditer(text) if m.group()]


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def _in_order(short: list[str], long: list[str]) -> int:
    """The length of the longest common subsequence of two word lists."""
    previous = [0] * (len(long) + 1)
    for word in short:
        current = [0]
        for j, other in enumerate(long):
            current.append(previous[j] + 1 if word == other else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


class NearEchoes:
    """The instruction sentences, indexed by word; ``strip`` a finished reply of them."""

    def __init__(self, instructions: Iterable[str]) -> None:
        self._sentences: list[list[str]] = []
        self._index: dict[str, list[int]] = {}
        for sentence in instruction_sentences(instructions):
            words = _words(sentence)[: 4 * MAX_WORDS]
            if len(words) < MIN_WORDS:
                continue
            number = len(self._sentences)
            self._sentences.append(words)
            for word in set(words):
                self._index.setdefault(word, []).append(number)

    def is_echo(self, sentence: str) -> bool:
        words = _words(sentence)
        if not MIN_WORDS <= len(words) <= MAX_WORDS:
            return False
        needed = SHARE * len(words)
        shared: Counter[int] = Counter()
        for word in set(words):
            shared.update(self._index.get(word, ()))
        distinct = len(set(words))
        for number, count in shared.most_common():
            if count < SHARE * distinct:
                break
            if _in_order(words, self._sentences[number]) >= needed:
                return True
        return False

    def strip(self, text: str) -> tuple[str, list[str]]:
        """``text`` without its near-echoed sentences, and those sentences (none: ``text``
        as it was)."""
        if not self._sentences:
            return text, []
        kept: list[str] = []
        echoed: list[str] = []
        for sentence in sentences(text):
            if self.is_echo(sentence):
                echoed.append(sentence.strip())
                if sentence.endswith("\n"):  # keep the line break it ended with
                    kept.append("\n" * min(2, len(sentence) - len(sentence.rstrip("\n"))))
            else:
                kept.append(sentence)
        if not echoed:
            return text, []
        return _BLANKS.sub("\n\n", "".join(kept)).strip(), echoed
