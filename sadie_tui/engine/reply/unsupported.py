"""Unsupported details: the numbers, times, dates, amounts and names no source holds.

After a model writes a reply, :func:`unsupported` lists every *detail* of the reply that
appears in none of the source texts (the note excerpts shown to the model, their provenance
header lines such as ``episode <uuid> (2026-03-14) Warden retro``, attached context, the
person's soul summary, recent chat messages, the person's own message). Notes say the
marathon took 4:07:33 and the reply says "you finished in 3:15": ``3:15`` is flagged, kind
``time``. :func:`find_details` lists the details themselves; :class:`SourceIndex` holds
the sources read once, for many checks against the same sources (``unsupported`` takes
one in place of the list of sources).

Every :class:`Span` is a slice of the original reply (``text[start:end] == span.text``,
offsets are not of a normalised copy); spans come in order and never overlap. Markdown
emphasis around a detail (``**3:15**``, ``_Ife_``) does not hide it; the span is the
detail itself.

General rules
    Comparison is after squashing whitespace and folding case (``casefold``), and for
    names also accents ("Tomas" matches "Tomás"). Details are matched as whole tokens,
    on word boundaries: "3:15" is not found inside "13:15", "Ife" not inside "Ifeoma".
    Numbers are compared as values: thousands separators removed, "3.50" equals "3.5".
    A detail never continues across a line break ("Kofi" at the end of a line and
    "Mensah" at the start of the next are two names).

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
    ("14/03/2026", "14.03.2026", "14/03/26": day first, or month first when only that
    is a valid date; both readings are kept when both are), and dates with a month
    name: "March 3rd", "Mar 3", "Mar. 3", "March 3, 2026", "March the 3rd", "3 March",
    "3rd of March", "3 March 2026". In a reply a month name must be capitalised
    ("March", "MAR"); in a source any case counts. A date is supported when a source
    holds the same month and day, in any of these forms (ISO dates in header lines
    included), and the same year when both give one ("March 3" is supported by
    "2025-03-03"; "March 3, 2026" is not). A bare month ("in March"), a month and year
    ("March 2026": the year is a number) and a weekday are not dates. A day and month
    in numbers without a year ("14/03") is not read as a date (its numbers are numbers).

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

    - the first word of a sentence (start of the text or of a line, after ``.!?:;…``,
      a double quote or an opening bracket) when it is a common English word from a built-in
      list ("The", "You", "Your", "After", "Yes", "Maybe", "Today", ...) or a word of
      six letters or more ending in "-ing" or "-ed", taken for a verb form
      ("Stretching", "Finished"); a name at the start of a sentence still is one
      ("Tomás said", "Ines was there"). In a Markdown heading ("## Your Recovery Plan")
      or a bold lead-in at the start of a line ("- **Rest Days Matter**:"), which are
      written in Title Case, every word is judged this way;
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
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache

from ..jsonvalue import JSONObject

__all__ = ["KINDS", "SourceIndex", "Span", "find_details", "unsupported", "unsupported_within"]

KINDS = ("number", "time", "date", "amount", "name")


@dataclass(frozen=True)
class Span:
    """One detail of a reply: ``text`` is exactly ``answer[start:end]``."""

    text: str
    start: int
    end: int
    kind: str  # "number" | "time" | "date" | "amount" | "name"

    def as_json(self) -> JSONObject:
        """The span as a turn's ``unsupported`` list holds it."""
        return {"text": self.text, "start": self.start, "end": self.end, "kind": self.kind}


# --------------------------------------------------------------------------- word lists

_MONTH_NUMBERS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4,
    "apr": 4, "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
    "september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11,
    "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip
_WEEKDAYS = (
    "monday mondays mon tuesday tuesdays tue tues wednesday wednesdays wed thursday "
    "thursdays thu thur thurs friday fridays fri saturday saturdays sat sunday sundays sun"
).split()
_TITLES = "mr mrs ms mx dr prof st sr jr".split()
#: Capitalised words that are never names, anywhere (case-folded).
_NEVER = frozenset([*_MONTH_NUMBERS, *_WEEKDAYS, *_TITLES, "i", "ok", "am", "pm", "sadie"])
#: Apostrophe endings that make a word a contraction ("don't", "I'm"), never a name.
_CONTRACTIONS = frozenset(["t", "re", "ve", "ll", "d", "m"])

#: Common English words: not a name when they start a sentence (case-folded).
_COMMON = frozenset(
    """
    a about above absolutely according across actually add added additionally adjust
    after afternoon afterward afterwards again against age ago agree agreed ah aha ahead
    aim air alas all allow almost alone along already alright also alternatively
    although altogether always amazing among amongst an and angry another answer anti
    anxious any anybody anyhow anyone anything anyway anyways anywhere apart apparently
    apply appointment appreciate are area arm around as ask asked asking at ate
    attention available avoid aw aware away awesome aww back bad balance based basically
    be beautiful became because become bed been before beforehand began begin being
    believe believed below benefit beside besides best better between beyond big bike
    birthday body book borrow boss both bottom bought brain brave bravo break breakfast
    breath breathe brief briefly bright brilliant bring brought budget build busy but
    buy by bye calendar call called calm came can cannot car care career careful
    carefully carry case cat catch caught cause celebrate certain certainly chance
    change changed chat cheap check cheers child children choice choose chose city class
    clean clear clearly close club coach coffee cold colleague colleagues come comes
    comfortable coming common company compare complete completely conclusion confident
    congrats congratulations consequently consider considering consistently context
    continue conversation conversely cook cool cost could count couple course cover
    create curious currently cut cycling damn dance dark date day days deadline dear
    decide decided decision deep definitely depending describe despite detail details
    did didn diet difference different difficult dinner directly distance do doctor does
    dog doing don done door down dream drink drive drop drove during each earlier early
    easily easy eat effort eh either else elsewhere email empty end energy enjoy enough
    entire entirely entry episode episodes equally especially essentially even evening
    event eventually ever every everybody everyone everything everywhere evidence
    exactly example excellent except excited exciting exercise exhausted experience
    explain explore extra eye face fact fair fairly fall false familiar family famous
    fantastic far fast feedback feel feeling feels fell felt few fill final finally find
    fine finish finished firm first firstly fix focus follow following food for forget
    forgive forgot fortunately found frankly free fresh friend friends friendship from
    full fully fun funny further furthermore future game garden gave generally gentle
    gently genuinely get gets getting gift give given glad go goal goals goes going gone
    good good-luck goodbye gosh got gotcha grab gradually grateful great greatly group
    grow guess ha habit had haha half hand handle hang happen happened happily happy
    hard hardly has have having he head health healthy hear heard heart heavy held hello
    help helped helpful helps hence her here hers herself hey hi high highlight
    highlights highly hill hills him himself his history hm hmm hold holiday home honest
    honestly hooray hope hoped hopefully hot hour hours house how however huge huh
    hurray i idea ideally ideas if imagine immediately important importantly in include
    including increase increasingly indeed initially injury inside instead interesting
    interestingly intervals into is issue it item its itself job join journal journey
    just keep keeps kept key kick kid kids kind knee knew know large largely last lastly
    late lately later laugh learn learned learnt least leave left leg legs less lesson
    let lie life lift light like liked likely likewise line list listen little live
    lived long look looked looking looks lose lost lot lots loud love loved lovely low
    luckily lucky lunch made main mainly major make makes making manage many marathon
    marathons matter matters maybe me meal mean meaning means meant meanwhile meeting
    memory mention merely message met mid might mile miles mind mine minor minute
    minutes miss missed modern moment money month months mood more moreover morning most
    mostly move moved much music must my myself nah name natural naturally near nearly
    necessarily necessary need needed needs neither nervous never nevertheless new news
    next nice night no nobody non none nonetheless nope nor normal normally not notably
    note noted notes nothing notice noticed now nowhere number obvious obviously
    occasionally odd of off offer office officially often oh ok okay old on once one
    only onto oops open option options or originally other others otherwise ouch our
    ours ourselves out outside over overall overview own pace pack paid pain painful
    parent parents part particularly partly partner party past pause pay people per
    perfect perhaps period person personal personally phew phone photo physically physio
    pick picture place plan plans play played pleasant please plus point poor positive
    possible possibly post potentially powerful practically practice practise pre
    prepare presumably pretty previously primarily priority probably problem progress
    project promotion properly protect proud pull push put question questions quick
    quickly quiet quietly quite race races ran rare rarely rather reach read readily
    ready real realise realize really reason reasonably recall recap recent recently
    recipe record recovering recovery reduce reflect regardless regularly relationship
    relatively relax relaxed relieved remarkably remember remind reminder reminders
    repeat reply report reportedly rest result results return review reward ride right
    rise road role room rough roughly route routine rule run running runs sad sadly safe
    said same sat save saw say says schedule school season second secondly see seem
    seemed seems self sell send sent serious seriously session sessions set several
    shall share shared sharp she shoe shoes short should show showed shows shut sick
    side sign significantly similar similarly simple simply since sing sit situation
    skill skip sleep sleeping slept slight slightly slow slowly small smart smile so
    soft solid some somebody somehow someone something sometimes somewhat somewhere soon
    sore sorry sounds source sources space speak speaking special specific specifically
    speed spend spent spoke sport spring stand start started starts state stay stayed
    steady step steps stick still stood stop stopped story strange streak street
    strength stress stressful stretch stretching strong strongly study success such
    sudden suddenly suggest summary summer super support supposedly sure surely
    surprisingly sweet swim swimming system take takeaway takeaways takes talk talked
    task taste teach team technically tell tempo tender terrible test than thank
    thankfully thanks that the their theirs them themselves then theoretically there
    therefore these they thick thin thing things think thinking third thirdly this
    thoroughly those though thought thoughts through throughout throw thus ticket tight
    time timeline tiny tip tips tired to today together told tomorrow tonight too took
    top totally tough toward towards track train trained training travel treat trick
    tricky trip trouble true truly truth try trying turn turned twice two type typical
    typically ugh uh ultimately um under underneath understand understandably understood
    unfortunately unless unlike until unusual up update upon upset us use used useful
    usual usually various versus very via view virtually visit voice vs wait waited wake
    walk walked walking want wanted warm was wash watch watched water way we weak wear
    weather week weekend weight weird welcome well well-done went were what whatever
    whatsoever when whenever where whereas wherever whether which whichever while who
    whoa whoever whole whom whose why wide wild will win wins winter wise wisely wish
    with within without won wonder wonderful word words wore work worked working workout
    workouts works world worried worry worse worst worth would wow write wrong wrote yay
    yeah year years yep yes yesterday yet you young your yours yourself yourselves yup
    """.split()
)

# --------------------------------------------------------------------------- patterns
#
# The scan is split so that the regex engine never tries a long list of alternatives at
# every position: one locator finds the next word or the next character a non-word token
# can start with; words are looked at in Python (a month name, a currency code or a
# word followed by "@", "." or a digit gets one more anchored match), and at a digit or
# sign one anchored match of the alternatives below decides. Every pattern is linear: no
# quantified group repeats characters another quantifier of it can take.

_H = r"[^\S\r\n]"  # horizontal whitespace
_NOT_AFTER_ALNUM = r"(?<![^\W_])"
_NOT_BEFORE_ALNUM = r"(?![^\W_])"
_NUM = r"(?:[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])|[0-9]+)(?:\.[0-9]+)?"
_YEAR = r"(?:1[89]|2[0-9])[0-9]{2}"
_ORDINAL = r"(?:st|nd|rd|th|ST|ND|RD|TH)"
# letters, with combining accents after any of them (each repetition starts with an accent
# and ends with a letter, so a word splits one way only)
_LETTERS = r"[^\W\d_]+(?:[\u0300-\u036f]+[^\W\d_]+)*[\u0300-\u036f]*"
_WORD = rf"{_LETTERS}(?:['’\-]{_LETTERS})*"
_CODES = ("USD", "EUR", "GBP", "CHF", "JPY", "AUD", "CAD", "NZD", "BRL", "INR")
_CODE = "(?:" + "|".join(_CODES) + ")"
_SIGNS = "£€¥₹₩₽"
_UUID = r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}(?![^\W_])"
_SCALE = {
    "k": 1000, "thousand": 1000, "m": 10**6, "million": 10**6, "bn": 10**9,
    "billion": 10**9,
}  # fmt: skip
_PRE_AMOUNT = (
    rf"{_H}?(?P<apn>{_NUM})(?!\.[0-9])"
    rf"(?:{_H}?(?P<apk>k|K|m|M|bn|thousand|million|billion){_NOT_BEFORE_ALNUM})?"
)


def _months(lenient: bool) -> str:
    """A month name, not followed by a letter; only an abbreviation takes a dot."""

    def alternation(names: list[str]) -> str:
        if lenient:
            return "(?i:" + "|".join(names) + ")"
        return "(?:" + "|".join(f"{n.title()}|{n.upper()}" for n in names) + ")"

    names = sorted(_MONTH_NUMBERS, key=len, reverse=True)
    full = [n for n in names if len(n) > 4 or n in ("may", "june", "july")]
    short = [n for n in names if n not in full]
    return rf"(?:{alternation(full)}(?![^\W\d_])|{alternation(short)}(?![^\W\d_])\.?)"


#: Where the next token may start: a word, or a character a non-word token starts with.
_LOCATOR = re.compile(rf"(?P<w>{_NOT_AFTER_ALNUM}{_WORD})|[0-9\[$" + _SIGNS + "]")
_WORDS = re.compile(rf"{_NOT_AFTER_ALNUM}{_WORD}")
#: Anchored at a word that a digit, "@", ".", "+", "-", ":", "/", "$" or "_" follows.
_AT_WORD = re.compile(
    r"(?P<ign>(?:https?://|www\.)[^\s<>()\[\]]+"
    r"|[\w.+-]{1,64}@[\w-]+(?:\.[\w-]+)+"  # bounded: a word followed by "." scans at most 64
    rf"|{_UUID}"
    r"|[^\W_]*[0-9][^\W_]*)"
    rf"|(?P<apre>(?:US|A|C|NZ|HK|R|S)\${_PRE_AMOUNT})"
)
_AT_CODE = re.compile(rf"(?P<apre>{_CODE}(?![A-Za-z]){_PRE_AMOUNT})")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_LIST_MARKER = re.compile(r"[0-9]{1,3}[.)](?=[^\S\n])")


def _month_first(lenient: bool) -> re.Pattern[str]:
    return re.compile(
        rf"(?P<mfm>{_months(lenient)})(?:{_H}+the)?{_H}+"
        rf"(?P<mfd>[0-9]{{1,2}}){_ORDINAL}?{_NOT_BEFORE_ALNUM}(?![:.,][0-9])"
        rf"(?:,?{_H}+(?P<mfy>{_YEAR}){_NOT_BEFORE_ALNUM}(?![.,][0-9]))?"
    )


def _at_sign(lenient: bool) -> re.Pattern[str]:
    """The non-word tokens, anchored at a digit, a currency sign or '['."""
    alternatives = [
        # never checked
        r"(?P<ign>\[/?(?:[a-z#@][^\[\]\n]{0,80})?\]"
        r"|\[\^?[0-9]{1,3}\]"
        rf"|{_NOT_AFTER_ALNUM}{_UUID})",
        # dates
        rf"{_NOT_AFTER_ALNUM}(?P<iso>(?P<iy>[0-9]{{4}})(?P<isep>[-/.])(?P<im>[0-9]{{1,2}})"
        r"(?P=isep)(?P<id>[0-9]{1,2}))(?![0-9]|[.,/-][0-9])",
        rf"{_NOT_AFTER_ALNUM}(?<![0-9][.,])(?P<dmy>(?P<na>[0-9]{{1,2}})(?P<nsep>[/.-])"
        r"(?P<nb>[0-9]{1,2})(?P=nsep)"
        r"(?P<ny>[0-9]{4}|(?<=/)[0-9]{2}))"
        r"(?![0-9]|[.,/-][0-9])",
        rf"{_NOT_AFTER_ALNUM}(?<![0-9][.,])(?P<dmony>(?P<dfd>[0-9]{{1,2}}){_ORDINAL}?"
        rf"(?:{_H}+of)?{_H}+(?P<dfm>{_months(lenient)})"
        rf"(?:,?{_H}+(?P<dfy>{_YEAR}){_NOT_BEFORE_ALNUM}(?![.,][0-9]))?)",
        # times
        rf"(?<![0-9:.]){_NOT_AFTER_ALNUM}(?P<time>(?P<th>[0-9]{{1,3}}):(?P<tm>[0-5][0-9])"
        r"(?::(?P<ts>[0-5][0-9]))?(?![0-9]|[:.][0-9])"
        rf"(?:{_H}?(?P<tap>[AaPp])(?:[Mm]|\.[Mm]\.?){_NOT_BEFORE_ALNUM})?)",
        rf"(?<![0-9:.,]){_NOT_AFTER_ALNUM}(?P<hour>(?P<hh>1[0-2]|0?[1-9]){_H}?"
        rf"(?P<hap>[AaPp])(?:[Mm]|\.[Mm]\.?){_NOT_BEFORE_ALNUM})",
        # amounts
        rf"(?P<apre>[{_SIGNS}$]{_PRE_AMOUNT})",
        rf"{_NOT_AFTER_ALNUM}(?<![0-9]\.)(?P<asuf>(?P<asn>{_NUM})(?!\.[0-9])"
        rf"(?:{_H}?(?P<ask>k|K|thousand|million|bn|billion))?{_H}?"
        rf"(?:[{_SIGNS}$]|{_CODE}(?![A-Za-z])"
        rf"|(?i:euros?|dollars?|pounds?|quid|bucks|cents?|pence|reais|yen){_NOT_BEFORE_ALNUM}))",
        # plain numbers; letters right after the digits are a unit ("18km"), not the span
        rf"{_NOT_AFTER_ALNUM}(?<![0-9]\.)(?P<num>{_NUM}(?!\.[0-9])"
        rf"(?:{_ORDINAL}{_NOT_BEFORE_ALNUM}|{_H}?%)?)(?=[^\W\d_]*{_NOT_BEFORE_ALNUM})",
        # letters and digits mixed, dotted versions: never checked
        rf"{_NOT_AFTER_ALNUM}(?P<ident>[^\W_]+)",
    ]
    return re.compile("|".join(alternatives))


_AT_SIGN = {False: _at_sign(lenient=False), True: _at_sign(lenient=True)}
_MONTH_FIRST = {False: _month_first(lenient=False), True: _month_first(lenient=True)}
_SIGN_CHARS = re.compile("[0-9$" + _SIGNS + "]")
_AT_WORD_NEXT = frozenset("0123456789@.+-:/$_")
_CODE_SET = frozenset(_CODES)

# A word's sentence starts when the text since the previous token holds one of these.
_SENTENCE_BREAKS = frozenset('.!?:;…\n\r"“«([{¿¡')
_HSPACE = " \t\u00a0\u2009\u202f"
#: A Markdown heading line, or a bold lead-in at the start of a line or list item.
_TITLE = re.compile(
    r"^[^\S\n]*#{1,6}[^\S\n][^\n]*"
    r"|^[^\S\n]*(?:[-*+][^\S\n]+|[0-9]{1,3}[.)][^\S\n]+)?(\*\*|__)[^\n]{1,120}?\1",
    re.MULTILINE,
)
_SCRIPT_MARKS = re.compile("[\u0300-\u036f]")


# --------------------------------------------------------------------------- tokens

# A token: (kind, start, end, value). Kinds: "date" (frozenset of (year|None, month,
# day) readings), "time" ((hour, minute, second|None, "a"|"p"|None)), "amount" and
# "number" (canonical number string), "word" (the matched text), "ign" (never checked).

# (kind, start, end, value). The value's type follows the kind: number/amount a str, date a
# frozenset of (year, month, day), time a (hour, minute, second, half) tuple, word a str.
# mypy cannot narrow such a tuple by its first item, so the few reads of ``value`` right
# after a kind check carry ``type: ignore`` (six, all in this module, each after its check).
Token = tuple[str, int, int, object]


def _canon(number: str, scale: int = 1) -> str:
    return format((Decimal(number.replace(",", "")) * scale).normalize(), "f")


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


def _date_readings(m: re.Match[str], group: str) -> frozenset[tuple[int | None, int, int]] | None:
    if group == "iso":
        month, day = int(m["im"]), int(m["id"])
        return frozenset([(int(m["iy"]), month, day)]) if _valid(month, day) else None
    if group == "dmy":
        a, b, year = int(m["na"]), int(m["nb"]), _year(m["ny"])
        readings = {(year, month, day) for day, month in ((a, b), (b, a)) if _valid(month, day)}
        return frozenset(readings) or None
    name, day_text, year_text = (
        (m["mfm"], m["mfd"], m["mfy"]) if group == "mdy" else (m["dfm"], m["dfd"], m["dfy"])
    )
    month, day = _MONTH_NUMBERS[name.rstrip(".").casefold()], int(day_text)
    return frozenset([(_year(year_text), month, day)]) if _valid(month, day) else None


def _amount(m: re.Match[str]) -> Token:
    if m["apre"] is not None:
        scale = _SCALE[m["apk"].lower()] if m["apk"] else 1
        return "amount", *m.span("apre"), _canon(m["apn"], scale)
    scale = _SCALE[m["ask"].lower()] if m["ask"] else 1
    return "amount", *m.span("asuf"), _canon(m["asn"], scale)


def _month_token(m: re.Match[str]) -> Token:
    readings = _date_readings(m, "mdy")
    if readings is None:  # "March 45": the number is still a number
        return "number", m.start("mfd"), m.end("mfd"), _canon(m["mfd"])
    return "date", m.start(), m.end(), readings


def _sign_token(m: re.Match[str]) -> Token:
    group = m.lastgroup
    if group in ("iso", "dmy", "dmony"):
        readings = _date_readings(m, group)
        if readings is not None:
            return "date", *m.span(group), readings
        if group == "dmony":
            return "number", m.start("dfd"), m.end("dfd"), _canon(m["dfd"])
        return "ign", m.start(), m.end(), None
    if group == "time":
        ap = m["tap"].lower() if m["tap"] else None
        second = int(m["ts"]) if m["ts"] else None
        return "time", *m.span(group), (int(m["th"]), int(m["tm"]), second, ap)
    if group == "hour":
        return "time", *m.span(group), (int(m["hh"]), 0, None, m["hap"].lower())
    if group in ("apre", "asuf"):
        return _amount(m)
    if group == "num":
        digits = m[group].rstrip("%stndrhSTNDRH \t\u00a0\u2009\u202f")
        return "number", *m.span(group), _canon(digits)
    return "ign", m.start(), m.end(), None


def _at_line_start(text: str, pos: int) -> bool:
    """Whether only spaces and a bullet stand between the line's start and ``pos``."""
    line = text.rfind("\n", 0, pos) + 1
    return text[line:pos].strip(" \t-*+") == ""


def _without_escapes(text: str) -> str:
    """``text`` with ANSI escape sequences blanked out (same length, so same offsets)."""
    if "\x1b" not in text:
        return text
    return _ANSI.sub(lambda m: "\x00" * len(m.group()), text)


def _tokens(text: str, lenient: bool = False) -> list[Token]:
    """The tokens of ``text`` in order; a month name must be capitalised unless lenient."""
    text = _without_escapes(text)
    at_sign = _AT_SIGN[lenient].match
    month_first = _MONTH_FIRST[lenient].match
    search = _LOCATOR.search
    out: list[Token] = []
    append = out.append
    pos = 0
    while (m := search(text, pos)) is not None:
        start = m.start()
        if m.lastgroup == "w":
            end = m.end()
            word = m.group()
            token: Token | None = None
            if word.casefold() in _MONTH_NUMBERS:
                if lenient or word[0].isupper():
                    d = month_first(text, start)
                    if d is not None:
                        token = _month_token(d)
            elif word in _CODE_SET:
                d = _AT_CODE.match(text, start)
                if d is not None:
                    token = _amount(d)
            if token is None and text[end : end + 1] in _AT_WORD_NEXT:
                d = _AT_WORD.match(text, start)
                if d is not None:
                    token = _amount(d) if d["apre"] is not None else ("ign", *d.span(), None)
            if token is None:
                token = ("word", start, end, word)
        else:
            d = None
            if text[start].isdigit() and _at_line_start(text, start):
                d = _LIST_MARKER.match(text, start)
            if d is not None:
                token = ("ign", *d.span(), None)
            else:
                d = at_sign(text, start)
                if d is None:
                    pos = start + 1
                    continue
                token = _sign_token(d)
        append(token)
        pos = max(token[2], start + 1)
    return out


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


def _word_forms(word: str) -> set[str]:
    """A word as the sources know it: folded, without a possessive, and its hyphen parts."""
    base, _ = _split_word(word)
    forms = {_fold(word), _fold(base)}
    if "-" in base:
        for part in base.split("-"):
            if part:
                forms.add(_fold(part))
                forms.add(_fold(_split_word(part)[0]))
    return forms


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
    source = _without_escapes(source)
    words: set[str] = set()
    lower: set[str] = set()
    for word in set(_WORDS.findall(source)):
        forms = _word_forms(word)
        words |= forms
        if not _is_cap(word):
            lower |= forms
        if "'" in word or "’" in word:  # "O'Brien" also knows "Brien"
            words.update(_fold(part) for part in re.split("['’-]", word) if part)
    numbers: set[str] = set()
    dates: set[tuple[int | None, int, int]] = set()
    times: set[tuple[int, int, int | None, str | None]] = set()

    def add(token: Token) -> None:
        kind, _, _, value = token
        if kind in ("number", "amount"):
            numbers.add(value)  # type: ignore[arg-type]
        elif kind == "date":
            for year, month, day in value:  # type: ignore[attr-defined]
                dates.add((year, month, day))
                numbers.add(str(day))
                if year is not None:
                    numbers.add(str(year))
        elif kind == "time":
            times.add(value)  # type: ignore[arg-type]

    # Sources need no offsets, so the scan only stops where a detail can start: digits
    # and currency signs, and month names (searched in a lowercased copy).
    at_sign = _AT_SIGN[True].match
    search = _SIGN_CHARS.search
    pos = 0
    while (m := search(source, pos)) is not None:
        start = m.start()
        d = at_sign(source, start)
        if d is None:
            pos = start + 1
            continue
        token = _sign_token(d)
        add(token)
        pos = max(token[2], start + 1)
    for m in _CODE_AMOUNTS.finditer(source):
        add(_amount(m))
    month_first = _MONTH_FIRST[True].match
    lowered = source.lower()
    if len(lowered) == len(source):
        for m in _MONTH_START.finditer(lowered):
            start = m.start()
            if start and lowered[start - 1].isalnum():
                continue
            d = month_first(source, start)
            if d is not None:
                add(_month_token(d))
    else:  # lowercasing changed offsets (rare letters): take the slow, exact path
        for token in _tokens(source, lenient=True):
            if token[0] == "date":
                add(token)
    return _SourceFacts(
        frozenset(words), frozenset(lower), frozenset(numbers), frozenset(dates),
        frozenset(times),
    )  # fmt: skip


_CODE_AMOUNTS = re.compile(rf"(?<![A-Za-z])(?P<apre>{_CODE}(?![A-Za-z]){_PRE_AMOUNT})")
_MONTH_START = re.compile("|".join(sorted(_MONTH_NUMBERS, key=len, reverse=True)))


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
        self._lower: frozenset[str] = frozenset().union(*(f.lower for f in facts))
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
        for kind, _, _, value in _tokens(span.text, lenient=True):
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
            base, contraction = _split_word(parts[0])
            if contraction:
                return None
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
    tokens = _tokens(text)
    lower = set(lower_words)
    for kind, _, _, value in tokens:
        if kind == "word" and not _is_cap(value):  # type: ignore[arg-type]
            lower.update(_word_forms(value))  # type: ignore[arg-type]

    # Headings and bold lead-ins are in Title Case: there, every word is judged as if it
    # started a sentence.
    marked = "#" in text or "**" in text or "__" in text
    titles = [m.span() for m in _TITLE.finditer(text)] if marked else []
    title = 0

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
            while title < len(titles) and titles[title][1] <= start:
                title += 1
            if (
                part is not None
                and title < len(titles)
                and titles[title][0] <= start
                and _ordinary_starter(_fold(part), lower)
            ):
                part = None
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
        for span, value in _details(text, index._lower)
        if value is None or not index._supports(span.kind, value)
    ]


def unsupported_within(
    text: str,
    sources: Sequence[str] | SourceIndex,
    narrow: Sequence[tuple[int, int, Sequence[str]]],
) -> list[Span]:
    """:func:`unsupported`, where a detail inside one of the ``narrow`` ranges ``(start, end,
    texts)`` of ``text`` must be held by that range's own texts (a reply sentence and the
    excerpts it cites), not merely by some source. Which words are details is decided
    against all ``sources``, as :func:`unsupported` does."""
    index = sources if isinstance(sources, SourceIndex) else SourceIndex(sources)
    ranges = [(start, end, SourceIndex(texts)) for start, end, texts in narrow]
    found = []
    for span, value in _details(text, index._lower):
        own = next((i for s, e, i in ranges if s <= span.start and span.end <= e), index)
        if value is None or not own._supports(span.kind, value):
            found.append(span)
    return found
