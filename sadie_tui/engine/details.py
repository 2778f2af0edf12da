"""Unsupported details: the numbers, times, dates, amounts and names in a reply that no source holds.

After a model writes a reply, :func:`unsupported` lists every *detail* of the reply that
appears in none of the source texts (the note excerpts shown to the model, their provenance
header lines such as ``episode <uuid> (2026-03-14) Warden retro``, attached context, the
person's soul summary, recent chat messages, the person's own message). Notes say the
marathon took 4:07:33 and the reply says "you finished in 3:15": ``3:15`` is flagged, kind
``time``. :func:`find_details` lists the details themselves; :class:`SourceIndex` holds
the sources read once, for many checks against the same sources.

Every :class:`Span` is a slice of the original reply (``text[start:end] == span.text``,
offsets are not of a normalised copy); spans come in order and never overlap. Markdown
emphasis around a detail (``**3:15**``, ``_Ife_``) does not hide it; the span is the
detail itself.

General rules
    Comparison is after squashing whitespace and folding case (``casefold``), and for
    names also accents ("Tomas" matches "Tomás"). Details are matched as whole tokens,
    on word boundaries: "3:15" is not found inside "13:15", "Ife" not inside "Ifeoma".
    Numbers are compared as values: thousands separators removed, "3.50" equals "3.5".

time
    ``H:MM`` or ``H:MM:SS`` ("4:07:33", "7:30", "07:30"), optionally followed by am/pm
    ("7:30pm", "7:30 p.m."), and an hour with am/pm ("7pm", "7 a.m."). Supported when a
    source holds the same time: same minutes; same seconds when the reply gives
    seconds (a reply "4:07" is supported by "4:07:33", not the other way round); same
    hour, where am/pm is matched against the 24-hour clock ("7pm" is supported by
    "19:00", "7:00pm" and "7:00") and a side without am/pm accepts either half.

amount
    A number with a currency sign or code before or after it: "£1,200", "$40", "€3.50",
    "US$5", "EUR 30", "1,200 EUR", "40 dollars", "40 euros", "40 pounds", "40 quid",
    "5 cents", optionally scaled ("£40k", "$3m", "$3 million", "2 billion euros").
    Supported when the number (thousands separators removed, the scale applied) appears
    as a number in a source, *whatever the currency*: "£1,200" is supported by "1200",
    "1,200", "£1200" or "1200 EUR". The currency is not compared.

date
    ISO dates ("2026-03-14", also with ``/`` or ``.``), day/month/year numbers
    ("14/03/2026", "14.03.2026", "14/03/26", read day first, or month first when only that is a valid
    date; both readings are kept when both are), and dates with a month name: "March 3rd",
    "Mar 3", "Mar. 3", "March 3, 2026", "March the 3rd", "3 March", "3rd of March",
    "3 March 2026". In a reply a month name must be capitalised ("March", "MAR"); in a
    source any case counts. A date is supported when a source holds the same month and
    day, in any of these forms (ISO dates in header lines included), and the same year
    when both give one ("March 3" is supported by "2025-03-03"; "March 3, 2026" is not).
    A bare month ("in March"), a month and year ("March 2026": the year is a number) and
    a weekday are not dates. A day and month without a year in numbers ("14/03") is not
    read as a date (its numbers are numbers).

number
    Any other run of digits, with decimals, percentages and ordinals: "18", "5.5",
    "40%", "3rd", "1993", "1,200"; a unit written right after the digits ("18km", "5k")
    is not part of the span. Supported when the same number appears as a number in a
    source: a plain number, the number of an amount, or the day or year of a date ("the
    11th" and "2026" are supported by "2026-10-11"), ordinal suffix and percent sign
    ignored. The parts of a time are not numbers of a source ("33" is not supported by
    "4:07:33"). Numbers that are part of a time, date or amount are not reported again.
    Spelled-out numbers ("three", "twice") are not details.

name
    A capitalised word (Unicode-aware: "Tomás", "Zoë", "O'Brien", "Jean-Luc") or a run
    of capitalised words separated only by spaces ("Lisbon Marathon", "Kofi Mensah").
    A possessive "'s"/"’s" is not part of the span ("Ife's" gives "Ife"). Of a word like
    "Lisbon-based" only the capitalised leading part is a name. Not names:

    - the first word of a sentence (start of the text or of a line, after ``.!?:;`` or
      an opening quote or bracket) when it is a common English word from a built-in
      list ("The", "You", "Your", "After", "Yes", "Maybe", "Today", ...) or a word of
      six letters or more ending in "-ing" or "-ed", taken for a verb form
      ("Stretching", "Finished"); a name at the start of a sentence still is one
      ("Tomás said", "Ines was there");
    - a capitalised word that appears in lowercase elsewhere in the reply or in any
      source ("Running" at the start of a sentence when the notes say "running"), and
      a run whose every word is such a word or a common word ("Long Run By The River");
    - month and weekday names and their abbreviations, "I" and its contractions
      ("I'm", "I've", "I'd", "I'll"), other contractions ("Don't"), "OK", "AM"/"PM",
      titles ("Dr", "Mr", "Mrs", "Ms", "St", ...), the assistant's own name "Sadie",
      single letters ("A", "X"), and all-capitals common words ("GREAT");
    - words in scripts without letter case (Chinese, Japanese, ...). Words of other
      cased scripts (Cyrillic, Greek) follow the same rules as Latin ones.

    A name is supported when every word of it appears as a word in the sources (case-
    and accent-folded); otherwise the whole run is flagged ("Tiago Silva" is flagged
    when the notes know Tiago but not Silva).

Never checked
    URLs, e-mail addresses, UUIDs, words mixing letters and digits ("B12", "3f2a1b"),
    dotted version numbers ("1.2.3"), list markers at the start of a line ("1. "),
    footnote markers ("[1]", "[^2]"), Rich markup tags ("[bold]", "[/]") and ANSI escape
    sequences ("\\x1b[31m").

Pure: standard library only, no I/O and no UI imports.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache

__all__ = ["KINDS", "SourceIndex", "Span", "find_details", "unsupported"]

KINDS = ("number", "time", "date", "amount", "name")


@dataclass(frozen=True)
class Span:
    """One detail of a reply: ``text`` is exactly ``answer[start:end]``."""

    text: str
    start: int
    end: int
    kind: str  # "number" | "time" | "date" | "amount" | "name"

    def as_json(self) -> dict:
        return {"text": self.text, "start": self.start, "end": self.end, "kind": self.kind}


# --------------------------------------------------------------------------- word lists

_MONTH_NUMBERS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4,
    "apr": 4, "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
    "september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11,
    "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip
_WEEKDAYS = (
    "monday mon tuesday tue tues wednesday wed thursday thu thur thurs friday fri "
    "saturday sat sunday sun"
).split()
_TITLES = "mr mrs ms mx dr prof st sr jr".split()
#: Capitalised words that are never names, anywhere (case-folded).
_NEVER = frozenset([*_MONTH_NUMBERS, *_WEEKDAYS, *_TITLES, "i", "ok", "am", "pm", "sadie"])
#: Apostrophe endings that make a word a contraction ("don't", "I'm"), never a name.
_CONTRACTIONS = frozenset(["t", "re", "ve", "ll", "d", "m"])

#: Common English words: not a name when they start a sentence (case-folded).
_COMMON = frozenset(
    """
    a about above absolutely according across actually add after afternoon afterwards
    again against ago agreed ah ahead aim all almost alone along already alright also
    although always amazing an and another answer any anyone anything anyway anyways
    apart apparently are around as ask asking at avoid away awesome back based be
    because been before begin being below best better between beyond big both brilliant
    but by call can cannot careful certainly check cheers clearly come coming
    congratulations congrats consider considering could curious currently day days dear
    definitely depending despite did didn different do does doing done don down during
    each earlier early easy either else enjoy enough especially even evening eventually
    ever every everyone everything exactly example except excellent fair fantastic far
    feel feeling few finally fine first following for fortunately from fun further
    generally get getting give given glad go going gone good got great had half happy
    hard has have having he hello her here hers hey hi him his honestly hope hopefully
    how however hmm i if imagine important in including indeed instead interesting into
    is it its just keep kind know last later lately least less let like likely listen
    little long look looking looks lots love lovely luckily made main make making many
    maybe me mean meanwhile mine more morning most mostly much must my myself naturally
    near nearly need never nevertheless new next nice night no nobody none nor not note
    nothing now obviously of off often oh okay old on once one only oops or other others
    otherwise our ours out over overall perfect perhaps personally please plus possibly
    pretty probably quick quite rather ready really recently remember right same say
    second see seems seriously several shall she should similarly simply since so
    some someone something sometimes soon sorry sounds speaking start still such super
    sure take tell than thank thanks that the their theirs them then there therefore
    these they thing things think third this those though thus to today together
    tomorrow tonight too top totally true try trying two ugh under unfortunately unless
    until up upon us use usually very wait want was we well were what whatever when
    whenever where whether which while who whoever whole why will wish with within
    without won wonderful worth would wow yay yeah yes yesterday yet you your yours
    yourself
    week weekend month year time race run running runs ran training train trained
    rest recovery recovering sleep sleeping stretching stretch walking walk cycling
    swimming strength easy slow fast steady pace distance goal goals plan plans
    progress session sessions workout workouts physio knee pain injury stress work
    family friends home dinner lunch breakfast coffee water food health mood energy
    tips tip step steps option options idea ideas reminder reminders summary notes note
    journal entry source sources question questions reply answer context update
    post pre mid non anti self well-done good-luck
    """.split()
)

# --------------------------------------------------------------------------- patterns

_H = r"[^\S\r\n]"  # horizontal whitespace
_NOT_AFTER_ALNUM = r"(?<![^\W_])"
_NOT_BEFORE_ALNUM = r"(?![^\W_])"
_NUM = r"(?:[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])|[0-9]+)(?:\.[0-9]+)?"
_YEAR = r"(?:1[89]|2[0-9])[0-9]{2}"
_LETTER = r"(?:[^\W\d_]|[\u0300-\u036f])"
_CURRENCY_CODES = r"(?:USD|EUR|GBP|CHF|JPY|AUD|CAD|NZD|BRL|INR)"
_CURRENCY_SIGNS = r"[£€¥₹₩₽]"
_SCALE = {
    "k": 1000, "thousand": 1000, "m": 10**6, "million": 10**6, "bn": 10**9,
    "billion": 10**9,
}  # fmt: skip


def _month_alternation(lenient: bool) -> str:
    names = sorted(_MONTH_NUMBERS, key=len, reverse=True)
    if lenient:
        return "(?i:" + "|".join(names) + ")"
    return "(?:" + "|".join(f"{n.title()}|{n.upper()}" for n in names) + ")"


def _pattern(lenient: bool) -> re.Pattern[str]:
    month = _month_alternation(lenient)
    ordinal = r"(?:st|nd|rd|th|ST|ND|RD|TH)"
    alternatives = [
        # never checked
        r"(?P<ign>\x1b\[[0-9;?]*[ -/]*[@-~]"
        r"|\[/?(?:[a-z#@][^\[\]\n]{0,80})?\]"
        r"|\[\^?[0-9]{1,3}\]"
        r"|(?:https?://|www\.)[^\s<>()\[\]]+"
        r"|(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
        rf"|{_NOT_AFTER_ALNUM}[0-9a-fA-F]{{8}}(?:-[0-9a-fA-F]{{4}}){{3}}-[0-9a-fA-F]{{12}}"
        rf"{_NOT_BEFORE_ALNUM}"
        rf"|(?:\A|(?<=\n)){_H}*(?:[-*+]{_H}+)?[0-9]{{1,3}}[.)](?={_H}))",
        # dates
        rf"{_NOT_AFTER_ALNUM}(?P<iso>(?P<iy>[0-9]{{4}})(?P<isep>[-/.])(?P<im>[0-9]{{1,2}})"
        r"(?P=isep)(?P<id>[0-9]{1,2}))(?![0-9])",
        rf"{_NOT_AFTER_ALNUM}(?<![0-9][.,])(?P<dmy>(?P<na>[0-9]{{1,2}})(?P<nsep>[/.-])"
        r"(?P<nb>[0-9]{1,2})(?P=nsep)(?P<ny>[0-9]{4}|(?<=/[0-9])[0-9]{2}|(?<=/[0-9]{2})[0-9]{2}))"
        r"(?![0-9]|[.,/-][0-9])",
        rf"{_NOT_AFTER_ALNUM}(?P<mdy>(?P<mfm>{month})(?![^\W\d_])\.?(?:{_H}+the)?{_H}+"
        rf"(?P<mfd>[0-9]{{1,2}}){ordinal}?{_NOT_BEFORE_ALNUM}(?![:.,][0-9])"
        rf"(?:,?{_H}+(?P<mfy>{_YEAR}){_NOT_BEFORE_ALNUM}(?![.,][0-9]))?)",
        rf"{_NOT_AFTER_ALNUM}(?<![0-9][.,])(?P<dmony>(?P<dfd>[0-9]{{1,2}}){ordinal}?"
        rf"(?:{_H}+of)?{_H}+(?P<dfm>{month})(?![^\W\d_])\.?"
        rf"(?:,?{_H}+(?P<dfy>{_YEAR}){_NOT_BEFORE_ALNUM}(?![.,][0-9]))?)",
        # times
        r"(?<![0-9:.])(?<![^\W_])(?P<time>(?P<th>[0-9]{1,3}):(?P<tm>[0-5][0-9])"
        r"(?::(?P<ts>[0-5][0-9]))?(?![0-9]|[:.][0-9])"
        rf"(?:{_H}?(?P<tap>[AaPp])(?:[Mm]|\.[Mm]\.?){_NOT_BEFORE_ALNUM})?)",
        rf"(?<![0-9:.,]){_NOT_AFTER_ALNUM}(?P<hour>(?P<hh>1[0-2]|0?[1-9]){_H}?"
        rf"(?P<hap>[AaPp])(?:[Mm]|\.[Mm]\.?){_NOT_BEFORE_ALNUM})",
        # amounts
        rf"(?P<apre>(?:{_NOT_AFTER_ALNUM}(?:US|A|C|NZ|HK|R|S)?\$|{_CURRENCY_SIGNS}"
        rf"|{_NOT_AFTER_ALNUM}{_CURRENCY_CODES}(?![A-Za-z])){_H}?(?P<apn>{_NUM})(?!\.[0-9])"
        rf"(?:{_H}?(?P<apk>k|K|m|M|bn|thousand|million|billion){_NOT_BEFORE_ALNUM})?)",
        rf"{_NOT_AFTER_ALNUM}(?<![0-9]\.)(?P<asuf>(?P<asn>{_NUM})(?!\.[0-9])"
        rf"(?:{_H}?(?P<ask>k|K|thousand|million|bn|billion))?{_H}?"
        rf"(?:{_CURRENCY_SIGNS}|\$|{_CURRENCY_CODES}(?![A-Za-z])"
        rf"|(?i:euros?|dollars?|pounds?|quid|bucks|cents?|pence|reais|yen){_NOT_BEFORE_ALNUM}))",
        # plain numbers; letters right after the digits are a unit ("18km"), not the span
        rf"{_NOT_AFTER_ALNUM}(?<![0-9]\.)(?P<num>{_NUM}(?!\.[0-9])"
        rf"(?:{ordinal}{_NOT_BEFORE_ALNUM}|{_H}?%)?)(?=[^\W\d_]*{_NOT_BEFORE_ALNUM})",
        # letters and digits mixed: identifiers, never checked
        rf"{_NOT_AFTER_ALNUM}(?P<ident>(?=[^\W_]*\d)[^\W_]+)",
        # words
        rf"{_NOT_AFTER_ALNUM}(?P<word>{_LETTER}+(?:['’\-]{_LETTER}+)*)",
    ]
    return re.compile("|".join(alternatives))


_STRICT = _pattern(lenient=False)
_LENIENT = _pattern(lenient=True)

# A word's sentence starts when the text since the previous token holds one of these.
_SENTENCE_BREAKS = frozenset(".!?:;…\n\r\"“«([{¿¡")
_HSPACE = " \t\u00a0\u2009\u202f"
_SCRIPT_MARKS = re.compile("[\u0300-\u036f]")


# --------------------------------------------------------------------------- tokens

# A token: (kind, start, end, value). Kinds: "date" (frozenset of (year|None, month,
# day)), "time" ((hour, minute, second|None, "a"|"p"|None)), "amount" and "number"
# (canonical number string), "word" (the matched text), "ign".


def _canon(number: str, scale: int = 1) -> str | None:
    try:
        value = Decimal(number.replace(",", "")) * scale
    except InvalidOperation:  # pragma: no cover - the patterns only give digits
        return None
    return format(value.normalize(), "f")


def _fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.replace("’", "'"))
    return unicodedata.normalize("NFC", _SCRIPT_MARKS.sub("", decomposed)).casefold()


def _valid(month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= 31


def _year(text: str | None) -> int | None:
    if not text:
        return None
    year = int(text)
    return year + 2000 if len(text) == 2 else year


def _date_readings(m: re.Match[str]) -> frozenset[tuple[int | None, int, int]] | None:
    group = m.lastgroup
    if group == "iso":
        month, day = int(m["im"]), int(m["id"])
        return frozenset([(int(m["iy"]), month, day)]) if _valid(month, day) else None
    if group == "dmy":
        a, b, year = int(m["na"]), int(m["nb"]), _year(m["ny"])
        readings = {(year, month, day) for day, month in ((a, b), (b, a)) if _valid(month, day)}
        return frozenset(readings) or None
    if group == "mdy":
        month, day, year = _MONTH_NUMBERS[m["mfm"].casefold()], int(m["mfd"]), m["mfy"]
    else:
        month, day, year = _MONTH_NUMBERS[m["dfm"].casefold()], int(m["dfd"]), m["dfy"]
    return frozenset([(_year(year), month, day)]) if _valid(month, day) else None


def _tokens(text: str, pattern: re.Pattern[str]) -> Iterator[tuple[str, int, int, object]]:
    for m in pattern.finditer(text):
        group = m.lastgroup
        if group in ("iso", "dmy", "mdy", "dmony"):
            readings = _date_readings(m)
            start, end = m.span(group)
            if readings is not None:
                yield "date", start, end, readings
            elif group in ("mdy", "dmony"):  # "March 45": the number is still a number
                day = "mfd" if group == "mdy" else "dfd"
                yield "number", m.start(day), m.end(day), _canon(m[day])
        elif group == "time":
            ap = m["tap"].lower() if m["tap"] else None
            second = int(m["ts"]) if m["ts"] else None
            yield "time", *m.span(group), (int(m["th"]), int(m["tm"]), second, ap)
        elif group == "hour":
            yield "time", *m.span(group), (int(m["hh"]), 0, None, m["hap"].lower())
        elif group == "apre":
            scale = _SCALE[m["apk"].lower()] if m["apk"] else 1
            yield "amount", *m.span(group), _canon(m["apn"], scale)
        elif group == "asuf":
            scale = _SCALE[m["ask"].lower()] if m["ask"] else 1
            yield "amount", *m.span(group), _canon(m["asn"], scale)
        elif group == "num":
            digits = re.match(_NUM, m[group])
            assert digits is not None
            yield "number", *m.span(group), _canon(digits[0])
        elif group == "word":
            yield "word", *m.span(group), m[group]
        else:
            yield "ign", m.start(), m.end(), None


def _split_word(word: str) -> tuple[str, bool]:
    """The word without a possessive ending, and whether it is a contraction."""
    plain = word.replace("’", "'")
    cut = plain.rfind("'")
    if cut > 0:
        tail = plain[cut + 1 :].casefold()
        if tail == "s":
            return word[:cut], False
        if tail in _CONTRACTIONS:
            return word, True
    return word, False


def _is_cap(word: str) -> bool:
    first = word[0]
    return first.isupper() or first.istitle()


def _lower_forms(word: str) -> Iterator[str]:
    base, _ = _split_word(word)
    yield _fold(base)
    if "-" in base:
        for part in base.split("-"):
            if part:
                yield _fold(part)


# --------------------------------------------------------------------------- sources


@dataclass(frozen=True)
class _SourceFacts:
    words: frozenset[str]
    lower: frozenset[str]
    numbers: frozenset[str]
    dates: frozenset[tuple[int | None, int, int]]
    times: frozenset[tuple[int, int, int | None, str | None]]


@lru_cache(maxsize=512)
def _source_facts(source: str) -> _SourceFacts:
    words: set[str] = set()
    lower: set[str] = set()
    numbers: set[str] = set()
    dates: set[tuple[int | None, int, int]] = set()
    times: set[tuple[int, int, int | None, str | None]] = set()
    for kind, _, _, value in _tokens(source, _LENIENT):
        if kind == "word":
            assert isinstance(value, str)
            forms = set(_lower_forms(value))
            forms.add(_fold(value))
            words.update(forms)
            if not _is_cap(value):
                lower.update(forms)
        elif kind in ("number", "amount"):
            if value is not None:
                numbers.add(value)  # type: ignore[arg-type]
        elif kind == "date":
            for year, month, day in value:  # type: ignore[attr-defined]
                dates.add((year, month, day))
                numbers.add(str(day))
                if year is not None:
                    numbers.add(str(year))
        elif kind == "time":
            times.add(value)  # type: ignore[arg-type]
    return _SourceFacts(
        frozenset(words), frozenset(lower), frozenset(numbers), frozenset(dates),
        frozenset(times),
    )  # fmt: skip


def _to_24(hour: int, ap: str) -> int:
    return hour % 12 + (12 if ap == "p" else 0)


def _same_time(
    reply: tuple[int, int, int | None, str | None],
    source: tuple[int, int, int | None, str | None],
) -> bool:
    rh, rm, rs, rap = reply
    sh, sm, ss, sap = source
    if rm != sm or (rs is not None and rs != ss):
        return False
    if rap and sap:
        return _to_24(rh, rap) == _to_24(sh, sap)
    if rap:
        return sh in (rh, _to_24(rh, rap))
    if sap:
        return rh in (sh, _to_24(sh, sap))
    return rh == sh


class SourceIndex:
    """The sources of one reply, read once: what :meth:`supports` checks a span against."""

    def __init__(self, sources: Sequence[str]) -> None:
        facts = [_source_facts(s) for s in sources if isinstance(s, str) and s]
        self._words: frozenset[str] = frozenset().union(*(f.words for f in facts))
        #: Words written in lowercase somewhere in the sources (case-folded).
        self.lower_words: frozenset[str] = frozenset().union(*(f.lower for f in facts))
        self._numbers: frozenset[str] = frozenset().union(*(f.numbers for f in facts))
        self._dates: dict[tuple[int, int], set[int | None]] = {}
        for f in facts:
            for year, month, day in f.dates:
                self._dates.setdefault((month, day), set()).add(year)
        self._times: dict[int, list[tuple[int, int, int | None, str | None]]] = {}
        for f in facts:
            for t in f.times:
                self._times.setdefault(t[1], []).append(t)

    def supports(self, span: Span) -> bool:
        """Whether some source holds the detail ``span`` names (see the module rules)."""
        if span.kind == "name":
            return self._supports("name", span.text)
        for kind, _, _, value in _tokens(span.text, _LENIENT):
            if kind == span.kind and value is not None:
                return self._supports(kind, value)
        return False

    def _supports(self, kind: str, value: object) -> bool:
        if kind in ("number", "amount"):
            return value in self._numbers
        if kind == "time":
            assert isinstance(value, tuple)
            return any(_same_time(value, t) for t in self._times.get(value[1], ()))
        if kind == "date":
            for year, month, day in value:  # type: ignore[attr-defined]
                years = self._dates.get((month, day))
                if years and (year is None or year in years or None in years):
                    return True
            return False
        assert isinstance(value, str)
        return all(self._has_word(w) for w in value.split())

    def _has_word(self, word: str) -> bool:
        base, _ = _split_word(word)
        folded = _fold(base)
        if folded in self._words:
            return True
        parts = [p for p in folded.split("-") if p]
        return len(parts) > 1 and all(p in self._words for p in parts)


# --------------------------------------------------------------------------- replies


def _name_part(word: str) -> str | None:
    """The part of a word that can be (part of) a name, or None."""
    base, contraction = _split_word(word)
    if contraction or not _is_cap(base):
        return None
    if "-" in base:
        parts = base.split("-")
        if not all(p and _is_cap(p) for p in parts):
            base = parts[0]
    folded = _fold(base)
    if len(base) < 2 or folded in _NEVER:
        return None
    if base.isupper() and folded in _COMMON:
        return None
    return base


def _ordinary_starter(folded: str, lower: set[str]) -> bool:
    """Whether a capitalised first word of a sentence is an ordinary word."""
    if folded in _COMMON or folded in lower:
        return True
    # verb forms: "Rested", "Stretching" (not "Ahmed", "Mohammed", "Ming")
    return len(folded) >= 6 and folded.endswith(("ing", "ed")) and not folded.endswith("mmed")


def _details(text: str, lower_words: frozenset[str]) -> list[tuple[Span, object]]:
    if not isinstance(text, str) or not text:
        return []
    tokens = list(_tokens(text, _STRICT))
    lower = set(lower_words)
    for kind, _, _, value in tokens:
        if kind == "word" and not _is_cap(value):  # type: ignore[arg-type]
            lower.update(_lower_forms(value))  # type: ignore[arg-type]

    found: list[tuple[Span, object]] = []
    run: list[tuple[int, int, str]] = []  # (start, end, folded) of the current name run
    run_at_start = False
    run_open = False  # the last token was a name word that a next one may continue

    def flush() -> None:
        nonlocal run
        words = run
        run = []
        if words and run_at_start and _ordinary_starter(words[0][2], lower):
            words = words[1:]
        if not words:
            return
        if len(words) == 1:
            if words[0][2] in lower:
                return
        elif all(w[2] in lower or w[2] in _COMMON for w in words):
            return
        start, end = words[0][0], words[-1][1]
        found.append((Span(text[start:end], start, end, "name"), text[start:end]))

    at_start = True
    prev_end = 0
    for kind, start, end, value in tokens:
        gap = text[prev_end:start]
        if any(c in _SENTENCE_BREAKS for c in gap):
            at_start = True
        prev_end = end
        if kind == "ign":
            if run:
                flush()
            run_open = False
            continue
        if kind == "word":
            assert isinstance(value, str)
            part = _name_part(value)
            if part is None:
                if run:
                    flush()
                run_open = False
            else:
                joined = run_open and gap != "" and gap.strip(_HSPACE) == ""
                if run and not joined:
                    flush()
                if not run:
                    run_at_start = at_start
                run.append((start, start + len(part), _fold(part)))
                # a possessive or a cut hyphenated word ends the run
                run_open = len(part) == len(value)
        else:
            if run:
                flush()
            run_open = False
            found.append((Span(text[start:end], start, end, kind), value))
        at_start = False
    if run:
        flush()
    found.sort(key=lambda item: item[0].start)
    return found


def find_details(text: str) -> list[Span]:
    """Every checkable detail of ``text``, in order and non-overlapping (module rules).

    Without sources, a capitalised word is an ordinary word only when the text itself
    also has it in lowercase; :func:`unsupported` also looks at the sources for that.
    """
    return [span for span, _ in _details(text, frozenset())]


def unsupported(text: str, sources: Sequence[str] | SourceIndex) -> list[Span]:
    """The details of ``text`` that no source supports (module rules), in order.

    ``sources`` is the source texts, or a :class:`SourceIndex` already built from them.
    """
    index = sources if isinstance(sources, SourceIndex) else SourceIndex(sources)
    return [
        span
        for span, value in _details(text, index.lower_words)
        if value is None or not index._supports(span.kind, value)
    ]
