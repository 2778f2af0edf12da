"""Support means the claim: whether a citation establishes the sentence it backs.

A quote that is in its note word for word and shares words with the reply proves nothing by
itself: the right person on another day, a month's figure for "now", a true sentence about a
side issue, a sentence that shares only a name, an event with a reason the model made up
around it. A citation establishes its sentence (``judge``) only when, read against what the
person asked (``Asked``):

* **time**: the question names a time ("in March") and the note is from that time, or the
  quoted sentence itself names a day inside it;
* **now**: the question asks how things are now ("how much have I saved", "these days") and
  the quote does not speak of a past period ("for April", "last year"), and no newer note
  retrieval found (read by the model or not) speaks to the question as well or better;
* **first and last**: the question asks for the first time ("when did I start", "my first
  Saturday session") and no older note retrieval found speaks to it better (a
  training plan made "after the Saturday group run" in June is not the first Saturday, when
  a January note is titled "Maré Runners, first Saturday"); for the last time, no newer one;
* **side**: the note is not of the other side of an event the question names ("four days
  after the marathon" for "the evening before the marathon");
* **people**: every person the question names is in the note (its text or its title);
* **occasion**: when the question names an occasion in three words or more beyond whom it
  names ("by the water cooler the day I cried in the bathroom at work"), the note is not one
  that speaks of it less than half as much as another note retrieval found (Kofi's news over
  lunch in November, for what he said that day in March);
* **polarity**: the quote was not cut out of a negated sentence ("like my manager" from
  "I don't like my manager") unless the reply keeps the negation;
* **done, not planned**: asked what happened ("when did she actually come home", "where
  did Hana take us"), the quote says it was to happen ("She comes home on Saturday.", "she'll
  take us to …") while the sentence says it did; a question about plans, or about what
  someone said, and a sentence that keeps the plan ("she was to come home …") are not held
  to it;
* **another of its kind**: the question names which one ("my halfway split", "the second
  cutover") and the quote speaks of another of the same kind ("30k split 2:51:05.", "the
  first cutover") in the quoted sentence and not of the one asked, nor of another the
  question names ("… like the first"): ordinals, halves, last and final, distances such as
  "30k"; "next" and "previous" are relative (the next cutover may be the second) and name
  none;
* **a part for the whole**: asked how much, the sentence gives an amount the quote adds into a
  total ("2× €1,350 caução + €1,350 first month = €4,050") and not the total, when the
  question names nothing that part is for ("up front" is not "first month");
* **when**: asked when, a sentence that gives no date, time or number says when in words its
  note holds ("the day before the race" is not in a note that says "over breakfast"), or
  in the month of the note's date; one with no word of time at all does not say when;
* **content**: the sentence's answer (its words that are not the question's) is taken from
  the quoted sentence: each number, date, amount or name the sentence adds is in it (or the
  note's title and date), and a reason ("because …", or any sentence answering "why") has
  most of its words there; a sentence with no such detail shares at least a third of its
  answer words with it (or, with the embedding model, is close to it).

A citation that fails says why (``Verdict.reason``); it stays visible with that reason and
weighs nothing in the grounding score. ``doubt`` is the reply-level conclusion: when the
answer's first claim is not established (its first answering sentence, cited or not), or its
opening sentences speak to nothing asked (``speaks_to``), the person reads "Your notes don't
say this directly. The closest they come: …" before the answer, with the shown sentence that
best answers the question.

Pure: no I/O and no UI imports.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from ..retrieval.recency import asks_now, parse_recency
from ..retrieval.timewords import MONTHS, TimeWindow, parse_time_window
from .backing import SENTENCE_BREAK, content_words, declines, sentence_spans, stems
from .citations import find_at_words, normalise
from .unsupported import SourceIndex, Span, find_details

__all__ = [
    "Asked",
    "Note",
    "Verdict",
    "asked",
    "answer_terms",
    "closest",
    "judge",
]

# Words that say where an answer comes from, not what it is.
_FRAMING = frozenset(
    stems(
        "note notes noted wrote written write writes mention mentioned mentions says said "
        "journal entry entries record records recorded excerpt excerpts according seems "
        "appears remember remembered recall recalled describe described talk talked told "
        "tell tells thing things"
    )
)
_KIN = (
    "mum mom mother dad father sister brother niece nephew aunt uncle grandma grandpa "
    "grandmother grandfather wife husband partner boyfriend girlfriend son daughter cousin"
).split()
_NEGATORS = frozenset(
    "not no never nor nothing none neither without hardly barely don't doesn't didn't "
    "isn't aren't wasn't weren't won't wouldn't can't cannot couldn't shouldn't haven't "
    "hasn't hadn't dont doesnt didnt isnt wasnt cant".split()
)
_REASON = re.compile(
    r"\b(?:because(?: of)?|due to|as a result of|owing to|thanks to|so that|"
    r"which (?:is )?why|that(?:'s| is) why|caused by|the reason (?:was|is))\b",
    re.IGNORECASE,
)
_WHY = re.compile(r"^\W*(?:why|how come|what (?:made|caused|led))\b|\bwhy\b", re.IGNORECASE)
_MONTH_WORDS = "|".join(sorted((m for m in MONTHS if len(m) > 3 or m == "may"), key=len))
# A quote that speaks of a past period: "for April", "in 2025", "last month".
_PERIOD = re.compile(
    r"\b(?:(?:in|for|during|over|through|since|by|until|last|of)\s+(?:" + _MONTH_WORDS + r")|"
    r"(?:in|for|during)\s+(?:19|20)\d\d|last (?:week|month|year|spring|summer|autumn|winter)|"
    r"back then|at the time|used to)\b",
    re.IGNORECASE,
)
# Words for saying something: "what did Kofi tell me …" asks what he said (``Asked.quotes``),
# not about telling; "call" only as "call me".
_SAYING = (
    "say said says tell told text texted write wrote ask asked reply replied think thought call "
    "called suggest suggested promise promised mean meant"
)
_SAID = re.compile(
    r"\b(?:"
    + "|".join(w for w in _SAYING.split() if not w.startswith("call"))
    + r"|call(?:ed)? me)\b",
    re.IGNORECASE,
)
# Below this share of the sentence's answer words found in the quote, it does not say it.
MIN_SHARE = 1 / 3
# A sentence whose one unbacked detail sits beside this share of its words from the quoted
# sentence is doubted for that detail only (``Verdict.minor``).
MINOR_SHARE = 0.5
# A sentence whose details are all the note's needs fewer of its words in the quote.
MIN_SHARE_WITH_DETAILS = 0.25
# A reason must have at least half of its words in the quoted sentence.
MIN_REASON_SHARE = 0.5
# The cosine (the embedding model retrieval uses) at which a sentence with no detail of its
# own still counts as saying what the quoted sentence says, in other words.
NEAR_SENTENCE = 0.72


@dataclass(frozen=True)
class Asked:
    """What the person asked about: the question's own words, the people and the time it
    names, whether it asks how things are now, and whether it asks why."""

    text: str
    terms: frozenset[str]
    people: tuple[str, ...]
    window: TimeWindow | None
    now: bool
    why: bool
    quotes: bool = False  # it asks what someone said, wrote, asked or thought
    # The person's own name (their soul summary's opening words): "you" in a reply is often
    # written as the name, which no note of theirs need hold.
    person: str = ""
    # "oldest" for the first time ("when did I start"), "newest" for the last; "" otherwise.
    order: str = ""

    @property
    def factual(self) -> bool:
        """A question about the person's life (not a remark): a sentence that asks."""
        return "?" in self.text or bool(
            re.match(
                r"^\W*(?:what|when|where|who|whom|which|why|how|did|do|does|was|were|is|are|"
                r"have|has|had|can|could|tell me)\b",
                self.text,
                re.IGNORECASE,
            )
        )


def asked(question: str, today: datetime, people: Iterable[str] = (), person: str = "") -> Asked:
    """What ``question`` names. ``people``: the memory's people (names the question holds
    are kept; kinship words such as "Mum" always count). ``person``: the person's own name."""
    window = parse_time_window(question, today)
    folded = normalise(question)
    named: list[str] = []
    for name in [*people, *_KIN]:
        key = normalise(name)
        if key and find_at_words(key, folded) >= 0 and name not in named:
            named.append(name)
    now = window is None and asks_now(question)
    recency = parse_recency(question) if window is None else None
    return Asked(
        text=question,
        terms=frozenset(stems(question)),
        people=tuple(named),
        window=window,
        now=now,
        why=bool(_WHY.search(question)),
        quotes=bool(_SAID.search(question)),
        person=person,
        order=recency.order if recency is not None else "",
    )


@dataclass(frozen=True)
class Note:
    """A shown note as the check reads it: its id, date (YYYY-MM-DD), title, the texts shown
    of it, and the asked time it lies outside (retrieval's mark), if any."""

    episode_id: str
    date: str
    title: str
    texts: tuple[str, ...]
    outside: str = ""

    @property
    def header(self) -> str:
        return f"({self.date}) {self.title}"

    @property
    def with_title(self) -> str:
        """Its title and the texts shown of it, as one text."""
        return " ".join([self.title, *self.texts])

    def day(self) -> datetime | None:
        try:
            return datetime.strptime(self.date, "%Y-%m-%d")
        except ValueError:
            return None


@dataclass(frozen=True)
class Verdict:
    """Whether a citation establishes its sentence; ``reason`` says why not ("" when it does)."""

    ok: bool
    reason: str = ""
    # Only a detail beside what the quote does say (a name it adds to a sentence whose words
    # are the quote's): the citation is doubted, the answer as a whole is not.
    minor: bool = False


ESTABLISHED = Verdict(True)


# Past forms a reply writes for the question's "did I …" ("felt" for "feel").
_PAST = {
    past: verb
    for verb, forms in {
        "feel": "felt",
        "go": "went gone",
        "bring": "brought",
        "take": "took taken",
        "see": "saw seen",
        "tell": "told",
        "think": "thought",
        "say": "said",
        "make": "made",
        "give": "gave given",
        "get": "got gotten",
        "meet": "met",
        "run": "ran",
        "eat": "ate eaten",
        "drink": "drank drunk",
        "spend": "spent",
        "pay": "paid",
        "buy": "bought",
        "leave": "left",
        "begin": "began begun",
        "write": "wrote written",
        "come": "came",
        "know": "knew known",
        "find": "found",
        "keep": "kept",
        "send": "sent",
        "sleep": "slept",
        "win": "won",
        "lose": "lost",
        "sing": "sang sung",
        "swim": "swam swum",
        "drive": "drove driven",
        "ride": "rode ridden",
        "fly": "flew flown",
        "wear": "wore worn",
        "teach": "taught",
        "catch": "caught",
        "hear": "heard",
        "hold": "held",
        "stand": "stood",
        "sit": "sat",
        "understand": "understood",
        "break": "broke broken",
        "choose": "chose chosen",
        "forget": "forgot forgotten",
        "grow": "grew grown",
        "speak": "spoke spoken",
        "steal": "stole stolen",
        "throw": "threw thrown",
        "wake": "woke woken",
    }.items()
    for past in forms.split()
}


def _topic(text: str) -> set[str]:
    return {_PAST.get(w, w)[:5] for w in content_words(text) if len(w) >= 3 or w.isdigit()}


# How a question asks, not what about: "how much am I on my phone these days" is about the
# phone ("I'm not sure how much time I spend running" does not speak to it).
_ASKING = re.compile(
    r"\bhow (?:much|many|long|often|far|old|soon)\b|\b(?:these|those) days\b|\bnowadays\b|"
    r"\bcompared (?:with|to)\b",
    re.IGNORECASE,
)


def _asked_topic(question: Asked) -> set[str]:
    """What the question is about: its content words less how it asks ("how much", "these
    days"), the time it names ("at the end of February" says when, not what) and the framing
    words."""
    when = _topic(question.window.phrase) if question.window is not None else set()
    return _topic(_ASKING.sub(" ", question.text)) - _FRAMING - when


def speaks_to(question: Asked, sentence: str, notes: Sequence[Note] = ()) -> bool:
    """Whether a sentence of the reply is about what was asked: it shares a content word with
    the question (a past form read as its verb: "felt" for "feel"; the time it names aside),
    gives a number, date, amount or name the question does not hold, or is established by a
    quote from a note about it (``notes``: the notes of the quotes that establish it; "You
    cried at the finish." for "How did my marathon go?", from the note of the race)."""
    topic = _asked_topic(question)
    if topic & _topic(sentence) or _answer_details(sentence, question):
        return True
    return any(topic & _topic(n.with_title) for n in notes)


def answer_terms(sentence: str, question: Asked) -> set[str]:
    """The sentence's own answer: its content stems less the question's and the framing words
    ("your notes say")."""
    return stems(sentence) - question.terms - _FRAMING


def _sentences(text: str) -> list[str]:
    return [p.strip() for p in SENTENCE_BREAK.split(text) if p.strip()]


def _located(quote: str, texts: Sequence[str]) -> tuple[str, int, int] | None:
    """The text holding ``quote`` (whitespace squashed, case folded, on word boundaries) and
    the quote's start and end in that text's folded form."""
    needle = normalise(quote.strip().strip("\"'“”‘’«»").strip())
    for text in texts:
        folded = normalise(text)
        at = find_at_words(needle, folded)
        if at >= 0:
            return folded, at, at + len(needle)
    return None


def _window(quote: str, note: Note, reason: bool) -> tuple[str, str]:
    """(the quoted sentence(s), what comes right before the quote in its sentence): the note's
    sentences the quote overlaps, and for a reason the sentence after them too. A quote not
    in the note word for word stands for the note sentence closest to it."""
    found = _located(quote, note.texts)
    if found is None:
        best = _closest_sentence(quote, note.texts)
        return (best or quote), ""
    folded, start, end = found
    spans = sentence_spans(folded)
    picked = [i for i, (a, b) in enumerate(spans) if a < end and b > start]
    if not picked:
        return folded[start:end], ""
    last = picked[-1] + (1 if reason and picked[-1] + 1 < len(spans) else 0)
    first_start = spans[picked[0]][0]
    before = folded[first_start:start]
    return folded[first_start : spans[last][1]], before


def _closest_sentence(quote: str, texts: Sequence[str]) -> str:
    own = stems(quote)
    best, best_shared = "", 0
    for text in texts:
        for sentence in _sentences(text):
            shared = len(own & stems(sentence))
            if shared > best_shared:
                best, best_shared = sentence, shared
    return best


def _as_written(folded: str, texts: Sequence[str]) -> str:
    """``folded`` (case-folded words of a note) as the note writes them."""
    pattern = r"\s+".join(re.escape(w) for w in folded.split())
    for text in texts:
        m = re.search(pattern, text, re.IGNORECASE)
        if m is not None:
            return m.group(0)
    return folded


def _has_negation(text: str, last: int = 0) -> bool:
    """A negating word in ``text`` (only among its ``last`` words, when given)."""
    words = re.findall(r"[\w'’]+", text.replace("’", "'").casefold())[-last:]
    return any(w in _NEGATORS or w.endswith("n't") for w in words)


def _negated(before: str) -> bool:
    """The last few words before the quote, in its own sentence, negate it."""
    return _has_negation(before, last=3)


_PREFIXES = ("un", "dis", "in", "im", "ir", "il", "non")
_WORDS = re.compile(r"[^\W\d_]+")


def _opposite(sentence: str, window_text: str) -> str:
    """A word of the note that is the negated form of a word of the sentence ("unhappy" for
    "happy", "dislike" for "like") that the sentence does not have itself; else ""."""
    mine = {str(w).casefold() for w in _WORDS.findall(sentence)}
    for word in sorted({str(w).casefold() for w in _WORDS.findall(window_text)}):
        for prefix in _PREFIXES:
            base = word[len(prefix) :]
            if word.startswith(prefix) and len(base) >= 4 and base in mine and word not in mine:
                return word
    return ""


def _in_window(window: TimeWindow, day: datetime) -> bool:
    return (window.start is None or day >= window.start) and (
        window.end is None or day < window.end
    )


def _names_a_day_inside(text: str, window: TimeWindow, year: int) -> bool:
    """The quoted text itself names a time inside the asked window ("on 3 March")."""
    for m in re.finditer(r"\b(\d{4})-(\d{2})-(\d{2})\b", text):
        try:
            if _in_window(window, datetime(int(m[1]), int(m[2]), int(m[3]))):
                return True
        except ValueError:
            continue
    for word, month in MONTHS.items():
        if len(word) < 4 and word != "may":
            continue
        if re.search(rf"\b{word}\b", text, re.IGNORECASE):
            try:
                if _in_window(window, datetime(year, month, 15)):
                    return True
            except ValueError:
                continue
    return False


def _names_all(people: Sequence[str], text: str) -> bool:
    """Every one of ``people`` is named in ``text`` (on word boundaries, case folded)."""
    hay = normalise(text)
    return all(find_at_words(normalise(name), hay) >= 0 for name in people)


_SIDE = re.compile(r"\b(before|after)\s+(?:the\s+|my\s+|our\s+)?([^\W\d_]{3,})", re.IGNORECASE)
_OPPOSITE_SIDE = {"before": "after", "after": "before"}


def _other_side(question: str, note: Note) -> str:
    """Why the note is about the other side of the event the question names ("the evening
    before the marathon", a note of "four days after the marathon"): "" when it is not, or
    when the note speaks of both sides."""
    for m in _SIDE.finditer(question):
        side, event = m[1].casefold(), m[2].casefold()
        said = {
            s.casefold() for s, e in _SIDE.findall(" ".join(note.texts)) if e.casefold() == event
        }
        other = _OPPOSITE_SIDE[side]
        if other in said and side not in said:
            return f"this note speaks of {other} the {event}, not {side} it"
    return ""


# A note about what was asked holds at least this share of the occasion's words, and one
# holding under ``OCCASION_SHARE`` of the best one's is about something else.
OCCASION_SHARE = 0.5
OCCASION_WORDS = 3  # a question naming fewer words of an occasion names none


def _occasion(question: Asked) -> set[str]:
    """The words of what the question asks about beyond whom it names, how it asks (said,
    told) and "now", "first" or "last"."""
    return (
        _asked_topic(question)
        - _topic(" ".join([*question.people, question.person, _SAYING]))
        - _NOW_WORDS
    )


def _better_note(question: Asked, note: Note, notes: Sequence[Note]) -> Note | None:
    """Another note that speaks of the occasion the question names at least twice as much as
    ``note`` does (and of half its words or more), or None."""
    terms = _occasion(question)
    if len(terms) < OCCASION_WORDS:
        return None

    def cover(n: Note) -> float:
        return len(terms & _topic(n.with_title)) / len(terms)

    mine = cover(note)
    best, most = None, 0.0
    for other in notes:
        if other.episode_id.lower() == note.episode_id.lower():
            continue
        c = cover(other)
        if c > most:
            best, most = other, c
    if best is not None and most >= OCCASION_SHARE and mine < OCCASION_SHARE * most:
        return best
    return None


def _mentions(note: Note, name: str) -> bool:
    return _names_all([name], note.with_title)


def _answer_details(sentence: str, question: Asked) -> list[Span]:
    """The numbers, dates, amounts and names of ``sentence`` that the question does not hold
    (nor the person's own name)."""
    asked_index = SourceIndex([question.text, question.person])
    return [d for d in find_details(sentence) if not asked_index.supports(d)]


def _share(terms: set[str], source: set[str]) -> float:
    return len(terms & source) / len(terms) if terms else 1.0


def _reason_part(sentence: str, question: Asked) -> str:
    """The reason a sentence gives: what follows "because" (and its kin), or the whole
    sentence when it answers "why"; "" when it gives none."""
    m = _REASON.search(sentence)
    if m is not None:
        return sentence[m.end() :]
    return sentence if question.why else ""


def judge(
    question: Asked,
    sentence: str,
    quote: str,
    note: Note,
    shown: Sequence[Note] = (),
    *,
    near: Callable[[str, str], float] | None = None,
) -> Verdict:
    """Whether ``quote`` (from ``note``) establishes ``sentence`` of the reply, for
    ``question`` (module rules). ``shown``: every note the model was shown (a newer one can
    make a "now" answer stale). ``near``: the cosine of two texts by the embedding model, for
    a sentence that says what the quote says in other words."""
    reason = _reason_part(sentence, question)
    window_text, before = _window(quote, note, bool(reason))
    day = note.day()
    # time
    if question.window is not None and day is not None:
        year = day.year
        inside = _in_window(question.window, day)
        if not inside and not _names_a_day_inside(window_text, question.window, year):
            return Verdict(False, f"this note is from {note.date}, not {question.window.phrase}")
    elif note.outside:
        return Verdict(False, f"this note is from {note.date}, outside {note.outside}")
    other_side = _other_side(question.text, note)
    if other_side:
        return Verdict(False, other_side)
    # people: what someone said, wrote or thought must come from a note that has them in it
    # (a record of a dinner need not name who came)
    for name in question.people if question.quotes else ():
        if not _mentions(note, name):
            return Verdict(False, f"this note does not mention {name}")
    # occasion: the note of what was asked, not another day with the same person
    other = _better_note(question, note, shown)
    if other is not None:
        return Verdict(False, f"another note ({other.date}, {other.title}) is about what was asked")
    # polarity
    if before and _negated(before) and not _has_negation(quote) and not _has_negation(sentence):
        return Verdict(False, "the note says the opposite: it is negated there")
    flipped = _opposite(sentence, window_text)
    if flipped:
        return Verdict(False, f"the note says the opposite: “{flipped}”")
    # now
    if question.now:
        period = _PERIOD.search(window_text)
        if period is not None and not _PERIOD.search(sentence):
            said = _as_written(period.group(0).strip(), note.texts)
            return Verdict(False, f"this speaks of {said}, not of now")
    if question.now or question.order:
        later = question.order != "oldest"
        other = _beyond(question, note, window_text, shown, later=later)
        if other is not None:
            which = "a newer" if later else "an older"
            return Verdict(False, f"{which} note ({other.date}, {other.title}) speaks to this")
    planned = _only_planned(question, sentence, window_text)
    if planned:
        return Verdict(False, planned)
    part = _part_of_total(question, sentence, window_text)
    if part:
        return Verdict(False, part)
    # The quoted sentence alone (a reason's window holds the sentence after it too).
    quoted = _window(quote, note, False)[0] if reason else window_text
    another = _another_of_kind(question.text, quoted)
    if another:
        return Verdict(False, another)
    # content: the details the sentence adds are in the note (its title and date too); its
    # words, in the quoted sentence
    source = stems(window_text) | stems(note.header)
    details = _answer_details(sentence, question)
    held = SourceIndex([*note.texts, note.header])
    missing = [d.text for d in details if not held.supports(d)]
    if missing:
        rest = answer_terms(sentence, question) - stems(" ".join(missing))
        beside = len(missing) == 1 and bool(rest) and _share(rest, source) >= MINOR_SHARE
        return Verdict(False, f"“{missing[0]}” is not in this note", minor=beside)
    unsaid = _when_unsaid(question, sentence, note)
    if unsaid:
        return Verdict(False, unsaid)
    if reason:
        terms = answer_terms(reason, question)
        if terms and _share(terms, source) < MIN_REASON_SHARE:
            return Verdict(False, "the quote does not give this reason")
        return ESTABLISHED
    terms = answer_terms(sentence, question)
    if not terms or _share(terms, source) >= MIN_SHARE:
        return ESTABLISHED
    if details and _share(terms, source) >= MIN_SHARE_WITH_DETAILS:
        # Its numbers and names are the note's, and some of its words are the quote's.
        return ESTABLISHED
    if near is not None and terms & source and near(sentence, window_text) >= NEAR_SENTENCE:
        # Other words may say the same thing, but a sentence that shares not one of its
        # answer words with the quote says something else about it ("it felt like a big
        # moment for Lena" for "Lena said in front of everyone …").
        return ESTABLISHED
    return Verdict(False, "the quote does not say what this sentence says")


_HOW_MUCH = re.compile(r"\bhow (?:much|many)\b", re.IGNORECASE)
_WHEN = re.compile(
    r"^\W*(?:when|what (?:day|date|time|year|month)|which (?:day|date|year|month))\b",
    re.IGNORECASE,
)
# The words a sentence says when in, beside dates and times (``find_details``).
_TIME_WORD = re.compile(
    r"\b(?:"
    + _MONTH_WORDS
    + r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|spring|summer|autumn|"
    r"winter|morning|afternoon|evening|night|midnight|noon|day|week|month|year|yesterday|today|"
    r"tonight|tomorrow|before|after|ago|later|earlier|christmas|easter|birthday)s?\b",
    re.IGNORECASE,
)


def _when_unsaid(question: Asked, sentence: str, note: Note) -> str:
    """Why the sentence does not say when from its note, asked when (module rules), or "".
    Dates, times and numbers are details, checked as the others are."""
    if not _WHEN.search(question.text):
        return ""
    if any(d.kind in ("date", "time", "number") for d in find_details(sentence)):
        return ""
    asked_words = {w.casefold() for w in _TIME_WORD.findall(question.text)}
    said = [w.casefold() for w in _TIME_WORD.findall(sentence)]
    said = [w for w in dict.fromkeys(said) if w not in asked_words]
    if not said:
        return "this does not say when"
    day = note.day()
    month = f"{day:%B}".casefold() if day is not None else ""
    held = normalise(note.with_title)
    for word in said:
        if word != month and find_at_words(word, held) < 0:
            return f"this note does not say when: “{word}” is not in it"
    return ""


_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
# A sentence saying something is to happen: the future, a plan, or a present tense with a
# day ahead ("She comes home on Saturday.").
_PLANNED = re.compile(
    r"\b(?:will|shall|going to|gonna|(?:plan|plans|planning|intend|intends|hope|hopes) to|"
    r"tomorrow|next (?:week|weekend|month|year|time|" + _WEEKDAY + r"))\b|\w'll\b|"
    r"\b(?:comes|arrives|leaves|starts|moves|flies|lands|begins|opens|goes)\b[^.!?]*?"
    r"\b(?:on|this|next) " + _WEEKDAY + r"\b",
    re.IGNORECASE,
)
# A question about what was to happen (or what someone said) is answered by a plan.
_ASKS_PLAN = re.compile(
    r"\b(?:will|would|going to|gonna|plan\w*|intend\w*|hope\w*|want\w*|meant to|"
    r"supposed to|expect\w*|schedul\w*|promis\w*|\w+'ll|\w+'d)\b",
    re.IGNORECASE,
)
_PAST_ASKED = re.compile(r"\b(?:did|was|were|had)\b", re.IGNORECASE)


def _only_planned(question: Asked, sentence: str, window_text: str) -> str:
    """Why the quote gives as a plan what the sentence gives as done, asked what happened
    (module rules), or "". The planning sentence holds a word of what was asked beyond whom
    it names."""
    if question.quotes or not _PAST_ASKED.search(question.text):
        return ""
    if _ASKS_PLAN.search(question.text) or _PLANNED.search(sentence):
        return ""
    # The plan must be of what was asked ("Committee tomorrow." in the notes of a one-to-one
    # plans the committee, not the one-to-one the answer dates).
    topic = question.terms - stems(" ".join(question.people))
    for planned in _sentences(window_text):
        if _PLANNED.search(planned) and stems(planned) & topic:
            return "the note says it was to happen, not that it did"
    return ""


# Words that say which one of a kind ("the halfway split", "the second cutover", "my 30k
# split"); those in one group say the same.
_WHICH_GROUPS = (
    ("first", "1st"),
    ("second", "2nd"),
    ("third", "3rd"),
    ("fourth", "4th"),
    ("fifth", "5th"),
    ("last", "final"),
    ("half", "halfway"),
)
_WHICH_GROUP = {word: group[0] for group in _WHICH_GROUPS for word in group}
_DISTANCE = r"\d+(?:[.,]\d+)?\s?(?:k|km)"
_WHICH = "|".join(_WHICH_GROUP) + "|" + _DISTANCE
_WHICH_WORD = re.compile(rf"\b(?:{_WHICH})\b", re.IGNORECASE)
# A which-one word and the one or two words of its kind after it.
_WHICH_ONE = re.compile(rf"\b({_WHICH})\s+([^\W\d_]{{3,}}(?:\s+[^\W\d_]{{3,}})?)\b", re.IGNORECASE)


def _which(word: str) -> str:
    """The group of a which-one word ("halfway" is "half", "30 km" is "30k")."""
    folded = word.casefold()
    if folded in _WHICH_GROUP:
        return _WHICH_GROUP[folded]
    return re.sub(r"\s|m$", "", folded.replace(",", "."))


def _another_of_kind(question: str, window_text: str) -> str:
    """Why the quote speaks of another one of the kind the question names (module rules),
    or "". The kind is the one or two words after the which-one word ("second Warden
    cutover" is of the kind of "first cutover"), compared by stem."""
    # Every which-one the question names: one that compares two ("the second cutover …
    # instead of at 6am like the first") is answered by a quote about either.
    named = {_which(m.group(0)) for m in _WHICH_WORD.finditer(question)}
    for asked in _WHICH_ONE.finditer(question):
        kind = stems(asked.group(2))
        if not kind:
            continue
        said = [m for m in _WHICH_ONE.finditer(window_text) if stems(m.group(2)) & kind]
        if said and all(_which(m.group(1)) not in named for m in said):
            other = said[0]
            return (
                f"the note speaks of “{_named(other, kind)}”, not "
                f"“{_named(asked, stems(other.group(2)))}”: another of the same kind"
            )
    return ""


def _named(which: re.Match[str], kind: set[str]) -> str:
    """The which-one word and its words up to the first of ``kind`` ("first cutover" of
    "first cutover was")."""
    words = which.group(2).split()
    for at, word in enumerate(words):
        if stems(word) & kind:
            return " ".join([which.group(1), *words[: at + 1]])
    return which.group(0)


def _part_of_total(question: Asked, sentence: str, window_text: str) -> str:
    """Why the sentence gives a part of the quote's total for "how much" (module rules), or
    "" when it does not. Amounts are compared by value (``SourceIndex``: "€4,050" is "4050
    euros")."""
    if not _HOW_MUCH.search(question.text):
        return ""
    given = [d for d in find_details(sentence) if d.kind == "amount"]
    if not given:
        return ""
    for line in _sentences(window_text):
        left, equals, right = line.partition("=")
        after = [d for d in find_details(right.lstrip()) if d.kind == "amount"]
        if not equals or not after or after[0].start > 0:
            continue
        total = after[0]
        if SourceIndex([sentence]).supports(total):
            return ""
        on_left = find_details(left)
        parts = SourceIndex([" ".join(d.text for d in on_left if d.kind == "amount")])
        if not any(parts.supports(d) for d in given):
            continue
        # What the parts are for: the words of the left side (not its amounts and names).
        for_what = stems(left) - stems(" ".join(d.text for d in on_left))
        if (set(question.terms) - _FRAMING) & for_what:
            return ""
        return f"this is part of a total: the note gives {total.text}"
    return ""


def _coverage(question: Asked, text: str) -> float:
    """The share of the question's content stems a text holds."""
    terms = set(question.terms) - _FRAMING
    return _share(terms, stems(text)) if terms else 0.0


# Words that say "now", "the latest" or "the first", not what is asked about.
_NOW_WORDS = frozenset(
    stems(
        "now currently current these days moment most recent recently latest last still anymore "
        "first earliest start started begin began time"
    )
)


def _beyond(
    question: Asked, note: Note, window_text: str, shown: Sequence[Note], *, later: bool = True
) -> Note | None:
    """A note dated after ``note`` (before it, when not ``later``) with a sentence that speaks
    to the question at least as well as the quoted one (better, for the first or last time
    rather than "now"), and to at least half of its words. A note's title counts with each of
    its sentences ("Therapy — Carla (first monthly)": "First monthly session."), and the
    question's words for "now", "last" and "first" do not."""
    terms = set(question.terms) - _FRAMING - _NOW_WORDS
    if not note.date or not terms:
        return None

    # What is asked of the people it names: a sentence that only names them says nothing new.
    asked_of = terms - stems(" ".join(question.people))

    def cover(title: str, text: str) -> float:
        held = stems(title) | stems(text)
        return _share(terms, held) if not asked_of or asked_of & held else 0.0

    mine = cover(note.title, window_text)
    # For the first or last time (not "now"), a note that only mentions it as well ("teeth
    # ground to dust, the dentist said" in a year's review) is no other time: it must speak
    # to it better.
    strict = not question.now
    best: Note | None = None
    for other in shown:
        if other.episode_id == note.episode_id or not other.date:
            continue
        if (other.date <= note.date) if later else (other.date >= note.date):
            continue
        for text in other.texts:
            for sentence in _sentences(text):
                if not _names_all(question.people, f"{other.title} {sentence}"):
                    continue  # a newer word on what was asked names whom it was asked of
                found = cover(other.title, sentence)
                if found < 0.5 or found < mine or (strict and found == mine):
                    continue
                if best is None or (other.date > best.date if later else other.date < best.date):
                    best = other
    return best


def closest(question: Asked, notes: Sequence[Note]) -> tuple[Note, str] | None:
    """The shown sentence that speaks most to the question (its content words, the newest
    first for "now" and "the last time", the oldest for "the first"), for "The closest they
    come: …"; None when none shares a word."""
    best: tuple[float, int, Note, str] | None = None
    for note in notes:
        day = note.day()
        tie = day.toordinal() if day is not None and (question.now or question.order) else 0
        if question.order == "oldest":
            tie = -tie
        for text in note.texts:
            for sentence in _sentences(text):
                if len(sentence) < 12:
                    continue
                cover = _coverage(question, sentence)
                if cover <= 0:
                    continue
                key = (cover, tie)
                if best is None or key > (best[0], best[1]):
                    best = (cover, tie, note, sentence[:300])
    return (best[2], best[3]) if best is not None else None


# -- the reply as a whole ------------------------------------------------------------------

DOUBT = "Your notes don't say this directly."
CLOSEST = "The closest they come: “{sentence}” ({date}, {title})."
FROM_QUOTE = "Your notes say, on {date} in “{title}”: “{sentence}”"
_OPINION_LINE = re.compile(r"^\s*OPINION:", re.MULTILINE)


@dataclass(frozen=True)
class Judged:
    """A citation as the reply check sees it: where its sentence is in the reply, the note it
    quotes, the quote, its support label and its verdict."""

    span: tuple[int, int]
    episode_id: str
    quote: str
    support: str
    verdict: Verdict


@dataclass(frozen=True)
class Assessment:
    """What the person reads about the reply as a whole: ``doubt``, the line before the answer
    when its claim is not established ("" when it is); ``answer``, the reply answered from its
    own quote when it said the notes do not say while citing the sentence that does ("" when
    the reply stands)."""

    doubt: str = ""
    answer: str = ""
    answered_by: tuple[str, str] | None = None  # (episode id, quote) the answer came from


def answer_spans(reply: str, question: Asked) -> list[tuple[int, int]]:
    """The sentences of the reply that answer: words of their own beyond the question's, not
    a question back, not a refusal, before any OPINION: part."""
    cut = _OPINION_LINE.search(reply)
    end = cut.start() if cut is not None else len(reply)
    found = []
    for a, b in sentence_spans(reply[:end]):
        sentence = reply[a:b]
        if sentence.rstrip().endswith("?") or declines(sentence):
            continue
        if answer_terms(sentence, question) or _answer_details(sentence, question):
            found.append((a, b))
    return found


def _closest_line(question: Asked, notes: Sequence[Note]) -> str:
    found = closest(question, notes)
    if found is None:
        return ""
    note, sentence = found
    title = " ".join(note.title.split()) or "untitled"
    return CLOSEST.format(sentence=" ".join(sentence.split()), date=note.date, title=title)


def doubt_line(question: Asked, notes: Sequence[Note]) -> str:
    """ "Your notes don't say this directly. The closest they come: …"."""
    closest_line = _closest_line(question, notes)
    return f"{DOUBT} {closest_line}" if closest_line else DOUBT


def _answers(question: Asked, quote: str, note: Note) -> str:
    """The quoted sentence when it answers the question (at least half of the question's
    words, and words of its own beyond them); else ""."""
    sentence, _ = _window(quote, note, False)
    original = _closest_sentence(sentence, note.texts) or sentence
    if _coverage(question, original) >= 0.5 and answer_terms(original, question):
        return " ".join(original.split())
    return ""


def assess(
    question: Asked,
    reply: str,
    judged: Sequence[Judged],
    notes: Sequence[Note],
    found: Sequence[Note] = (),
) -> Assessment:
    """The reply-level conclusion (module docstring): for a question about the person's
    life, doubt when the reply's answer is not established by what it cites; and a reply
    that declines while it cites the sentence that answers is answered from that sentence.
    ``found``: every note retrieval found, read by the model or not: for "now", the doubt's
    closest sentence is looked for there (a newer note the model did not read)."""
    if not question.factual:
        return Assessment()
    by_id = {n.episode_id.lower(): n for n in notes}
    if declines(reply):
        for j in judged:
            note = by_id.get(j.episode_id.lower())
            if note is None or j.support == "inference":
                continue
            sentence = _answers(question, j.quote, note)
            if sentence:
                title = " ".join(note.title.split()) or "untitled"
                return Assessment(
                    answer=FROM_QUOTE.format(date=note.date, title=title, sentence=sentence),
                    answered_by=(j.episode_id, j.quote),
                )
        # Its sentences that do answer are checked as any reply's: an apology copied from a
        # note ("I'm sorry if it came across that way.") is no abstention.
    spans = answer_spans(reply, question)
    if not spans:
        return Assessment()
    if not judged and not any(_answer_details(reply[a:b], question) for a, b in spans):
        # Nothing cited and no detail claimed (a remark, a question back): nothing to doubt.
        return Assessment()
    backing: dict[tuple[int, int], list[Note]] = {}
    for j in judged:
        note = by_id.get(j.episode_id.lower())
        if note is not None and (j.verdict.ok or j.verdict.minor):
            backing.setdefault(j.span, []).append(note)
    if not any(speaks_to(question, reply[a:b], backing.get((a, b), ())) for a, b in spans[:2]):
        # It opens with a true sentence of a note about something else ("The non-apology,
        # classic edition." for "What went wrong on my long run?"): verbatim, and no answer.
        return Assessment(doubt=doubt_line(question, notes))
    established = {
        j.span for j in judged if (j.verdict.ok or j.verdict.minor) and j.support != "inference"
    }
    cited = [j.span for j in sorted(judged, key=lambda j: j.span) if j.span in spans]
    if (
        not established & set(spans)
        or (cited and cited[0] not in established)
        or spans[0] not in established
    ):
        # For "now" (and the first or last time), the closest may be a newer (older) note the
        # model did not read; otherwise it is among what the model read (and the person can
        # open in the sources).
        timed = question.now or question.order
        return Assessment(doubt=doubt_line(question, found if timed and found else notes))
    return Assessment()
