"""Finding people, places, projects and organisations in chunk text, without a model.

Wiki links (``[[Ana Ribeiro]]``, ``[[Ana Ribeiro|Ana]]``) name a page: each is a mention of
it. Otherwise capitalised name runs that do not start a sentence or a heading are candidates;
at a sentence start a name counts only when it is already known (wiki titles, vault pages and
their aliases, earlier entities). Weekdays, months, honorifics, languages, holidays, headings
and a word the notes also write in lower case ("Writing", "Mood", "Ran") are not names unless
the words around them say so; nor is a past tense opening a line or sentence ("Ran 10k",
"Called Diogo": the name after it still counts), and a name never runs across a line break; holidays and languages are names of things (``other``). Kinds come from the wiki or the page where they name them, else
from the words around the name: "said", "with" or "Sr." make a person, "in", "to" or "along the"
a place, and a name with no such cue at all is kept for the graph as ``other``, never guessed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping

from .dates import parse_when
from .markup import TAG, links_in

# A name's words stay on one line: "Biscuit\nRan 5k" is a name and a verb, not "Biscuit Ran".
_NAME = re.compile(
    r"(?<![\w'’])([A-Z][\w'’-]*[a-z\d][\w'’-]*|[A-Z]{2,6}(?![\w'’]))"
    r"((?:[ \t]+(?:of|de|da|do|dos|das|van|von|la|le|the)?[ \t]*[A-Z][\w'’-]*[a-z][\w'’-]*)*)"
)
# What may come just before a sentence's first word: an end of sentence, a line start, a
# bullet, a numbered item, a heading mark, a quote, a table cell, a time ("09:00 Ran 5k").
_SENTENCE_START = re.compile(
    r"(^|[.!?…:;\n\"“(\[\]|—–-]\s*|\n\s*(?:[-*•>]|\d+[.)]|#{1,6})\s*|^#{1,6}\s*|\*\*\s*"
    r"|(?:^|\n)\s*\d{1,2}[:.h]\d{2}\s*)$"
)
_HONORIFIC_BEFORE = re.compile(r"\b(?:Dr|Dra|Sr|Sra|Srta|Mr|Mrs|Ms|Mx|Prof|Eng|St)\.?\s+$")

STOP = set(
    """
    A An And As At But By For From He Her Hers Him His How I I'd I'll I'm I've If In Into Is It
    Its It's Me My No Not Now Of Oh On Or Our Ours She So That The Their Them Then There These
    They This Those To Too Up Us We What When Where Which While Who Why Will With Yes You Your
    Yeah Okay OK Ok Um Uh Hmm Well Also Just Still Maybe Today Tomorrow Yesterday Tonight Anyway
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May
    June July August September October November December Mon Tue Wed Thu Fri Sat Sun Jan Feb
    Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Morning Evening Night Afternoon Week Weekend Month
    Mondays Tuesdays Wednesdays Thursdays Fridays Saturdays Sundays Weekends Mornings Evenings
    Year Note Notes Action Actions Items Item Decision Decisions Attendees Agenda Summary TODO
    Done Next Last First Second Third Some Any All Every Each Other Another Much Many More Most
    Good Great Bad Nice Thanks Thank Please Sorry Hi Hey Hello Dear Love Lol Wow Ah Ha Haha
    Did Do Does Had Has Have Was Were Are Be Been Being Can Could Should Would Might Must Shall
    Let Lets Let's Got Get Went Go Going Came Come Made Make Said Say Told Tell Felt Feel Think
    Thought Know Knew Really Very Actually Probably Definitely Honestly Basically Because Since
    After Before During Until Though Although However Again Here Whatever Nothing Something
    Everything Everyone Someone Anyone Nobody One Two Three Four Five Six Seven Eight Nine Ten
    Mom Mum Dad Mother Father Sister Brother Grandma Grandpa Auntie Uncle Cousin Baby Team
    AM PM OK TV PR UI API CEO CTO IT UK US USA EU PDF URL ID AI
    Dr Dra Sr Sra Srta Mr Mrs Ms Mx Prof Eng St Jr God Lord Amen
    """.split()
)
#: Past tenses that open a daily note's line ("Ran 10k with Ana", "Met Diogo"): never a name
#: there. Regular ones are told by their "-ed" (``_past_tense``), less the names in NAMES_ED.
IRREGULAR_PAST = frozenset(
    """
    Ran Met Read Wrote Ate Drank Slept Woke Drove Rode Swam Took Gave Saw Bought Brought Left
    Spent Sat Stood Began Kept Paid Sent Built Caught Taught Fought Found Lost Heard Held Hit
    Lent Meant Put Quit Set Shut Sold Sang Spoke Threw Won Wore Flew Forgot Grew Hung Led Lay
    Rang Shook Shot Sold Split Spread Struck Swept Swung Tore Understood Upset Woke
    """.split()
)
NAMES_ED = frozenset(
    """
    Ted Fred Ned Jed Ed Reed Jared Alfred Manfred Winifred Mildred Ahmed Mohammed Muhammed
    Mehmed Hamed Saeed Sayed Zed Creed Swed Ned Red Ted
    """.split()
)


def _past_tense(word: str) -> bool:
    """A capitalised past tense ("Called", "Walked", "Ran"), not a name ending in -ed."""
    if word in IRREGULAR_PAST:
        return True
    return len(word) >= 5 and word.endswith("ed") and word not in NAMES_ED


#: Names of things that are neither people nor places: holidays, languages, nationalities.
#: Kept for the graph ("what did we do at Christmas?") as ``other``, never guessed a person.
NAMED_THINGS = set(
    """
    Christmas Easter Halloween Thanksgiving Ramadan Eid Diwali Hanukkah Carnival Carnaval Xmas
    English Portuguese Spanish French German Italian Dutch Danish Swedish Norwegian Finnish
    Polish Russian Ukrainian Greek Turkish Arabic Hebrew Hindi Urdu Bengali Chinese Mandarin
    Cantonese Japanese Korean Thai Vietnamese Indonesian Yoruba Igbo Hausa Swahili Zulu Irish
    Scottish Welsh British American Canadian Australian Brazilian Mexican European African Asian
    Belgian Swiss Austrian Catalan Galician Basque Latin
    """.split()
)
PLACE_WORDS = re.compile(
    r"^(?:Rua|Avenida|Av|Praça|Largo|Jardim|Parque|Mercado|Estação|Cais|Campo|Praia|Serra|"
    r"Ponte|Castelo|Quinta|Lake|Mount|Port|Fort)\b|\b(?:Street|St|Road|Rd|Avenue|Ave|Lane|"
    r"Square|Park|Station|Airport|Beach|River|Bay|Island|Bridge|Castle|Valley|Hill|Coast|"
    r"Forest|Market|Gardens?)$"
)
# Words just before a name that say what it is: "with Ines", "talked to Ines", "my friend
# Ines", "Sr. Vidal" (a person); "in Lisbon", "along the Tagus" (a place); "worked on Warden".
# Looked up as the last words before the name (sets, not regexes: this runs for every name).
PERSON_WORDS_BEFORE = frozenset(
    "with met meet meeting told tell asked ask called call texted text emailed messaged thanked"
    " hugged kissed visiting dear hi hey thanks invited".split()
)
PERSON_VERBS_TO = frozenset(
    "talked spoke speaking talking wrote writing said explained complained apologised"
    " apologized replied listened waved introduced lent gave sent handed showed messaged"
    " next".split()
)
RELATIONS = frozenset(
    "friend partner manager boss colleague sister brother mum mom dad cousin wife husband son"
    " daughter aunt uncle niece nephew neighbour neighbor doctor therapist coach teacher mentor"
    " landlord landlady grandmother grandfather grandma grandpa girlfriend boyfriend".split()
)
HONORIFICS = frozenset("dr dra sr sra srta mr mrs ms mx prof eng".split())
PLACE_WORDS_BEFORE = frozenset(
    "in at to from near around visit visited visiting flew drove walked moved back into toward"
    " towards across along past through via outside inside leaving reached arrived trip"
    " holiday".split()
)
PROJECT_WORDS_BEFORE = frozenset(
    "project ship shipped shipping launch launched launching built building".split()
)
_TAIL = re.compile(r"[\w.'’]+")
PERSON_AFTER = re.compile(
    r"^(?:['’]s\s+(?:mum|mom|dad|wife|husband|partner|sister|brother|son|daughter|birthday|"
    r"friend|boss|baby|family|parents|kids|girlfriend|boyfriend)\b|,?\s+(?:who|she|he)\b|"
    r"\s+and\s+I\b|\s+(?:said|says|told|tells|asked|asks|thinks|thought|wants|wanted|called|"
    r"calls|texted|texts|emailed|wrote|writes|sent|laughed|laughs|smiled|cried|came|went|"
    r"arrived|looked|knows|knew|loves|loved|likes|liked|hates|felt|feels|agreed|replied|"
    r"mentioned|suggested|promised|apologi[sz]ed|helped|brought|gave|met|joined|invited|"
    r"hugged|cooked|pinged|messaged|sighed|shrugged|nodded|admitted|explained|insisted|"
    r"noticed|offered|showed|decided|signed|paced|ran|walked|drove|sat|stood|answered|"
    r"shouted|whispered|won|lost|hosted|organi[sz]ed|recommended|reminded|warned|"
    r"is\s+(?:my|our|a|the)|was\s+(?:my|our))\b)",
    re.I,
)
ORG_WORDS = re.compile(
    r"\b(Inc|Ltd|LLC|Labs?|Company|Co|Corp|University|College|School|Escola|Bank|Clinic|"
    r"Hospital|Foundation|Institute|Club|Council|Câmara|Ministry|Ministério|Municipality|Agency|"
    r"Group|Studio|Association)\b"
)
PROJECT_WORDS = re.compile(r"\b(Project|Refactor|Migration|Launch|Plan|App)\b")
KINDS = ("person", "place", "project", "organisation")
#: The kind of a name nothing around it explains: kept for the graph, never called a person.
OTHER = "other"
_LOWER_WORD = re.compile(r"(?<![\w'’])[a-z][a-z'’-]*")
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")


def entity_key(name: str) -> str:
    return " ".join(name.casefold().split())


def _clean(name: str) -> str:
    name = re.sub(r"['’]s$", "", name.strip())
    return " ".join(name.split()).strip("-")


def _blank(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with each span replaced by spaces (offsets kept, words not joined)."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def find_names(
    text: str,
    known: Mapping[str, str],
    common: Iterable[str] | None = None,
) -> list[tuple[str, str]]:
    """(name, kind guess or "") for each name mentioned in ``text``, in order of appearance.

    ``known``: entity key → fixed kind ("" when only known, not fixed). ``common``: words the
    notes also write in lower case; a name made of them needs a cue to count."""
    lowered = common if isinstance(common, (set, frozenset, dict)) else set(common or ())
    out: list[tuple[str, str]] = []
    for match in _NAME.finditer(text):
        raw = match.group(0)
        name = _clean(raw) if raw[-1] in "sS’'- " else raw
        if not name:
            continue
        all_words = name.split()
        words = all_words
        # Drop leading stop words ("The Warden" → "Warden"; "Ines" kept).
        while words and words[0] in STOP:
            words = words[1:]
        if not words:
            continue
        begin = match.start()
        before = text[max(0, begin - 32) : begin]
        honorific = _cue_before(before) == "person" and bool(_HONORIFIC_BEFORE.search(before))
        at_start = begin == 0 or (not honorific and bool(_SENTENCE_START.search(before[-16:])))
        if (
            at_start
            and len(words) > 1
            and (words[0].casefold() in lowered or _past_tense(words[0]))
        ):
            words = words[1:]  # "Later Mark said", "Called Diogo": a first word, then a name
            while len(words) > 1 and words[0].islower():
                words = words[1:]  # "Finished the Aurora review": "Aurora", not "the Aurora"
        if len(words) < len(all_words):  # the cues before are those before the name itself
            starts = [m.start() for m in re.finditer(r"\S+", raw)]
            begin += starts[min(len(all_words) - len(words), len(starts) - 1)]
            before = text[max(0, begin - 32) : begin]
        name = " ".join(words)
        key = entity_key(name)
        fixed = known.get(key)
        if not fixed and _is_heading(text, match.start(), key):
            continue  # a heading that is only this name is a section label ("## Mood")
        if fixed:
            out.append((name, fixed))
            continue
        if len(words) == 1 and (name in IRREGULAR_PAST or at_start and _past_tense(name)):
            continue  # "Ran ten kilometres", "Woke early, Ran 8k": what was done, not who
        if key not in known:
            if at_start and words == raw.split():
                continue
            if sum(c.isalpha() for c in name) < 2 or name in STOP or name.split("-")[0] in STOP:
                continue  # "B12", "T2", "March-ish" are not names either
        after = text[match.end() : match.end() + 40]
        guess = OTHER if words[0] in NAMED_THINGS else guess_kind(name, before, after)
        if _weak(name, words, guess, lowered):
            continue
        out.append((name, guess))
    return out


def _is_heading(text: str, pos: int, key: str) -> bool:
    """Whether the line holding ``pos`` is a Markdown heading whose whole text is ``key``."""
    start = text.rfind("\n", 0, pos) + 1
    if text[start : start + 4].lstrip()[:1] != "#":
        return False
    heading = _HEADING_LINE.match(_line_of(text, pos))
    return heading is not None and entity_key(heading.group(1)) == key


def _line_of(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return text[start : end if end != -1 else len(text)]


def _weak(name: str, words: list[str], guess: str, common: Iterable[str]) -> bool:
    """A name that is no name without a cue: words the notes also write in lower case
    ("Writing", "Staff Engineer", "SLEEP") without a person or organisation cue."""
    if common and all(w.casefold() in common for w in words):
        return guess not in ("person", "organisation", OTHER) and not PLACE_WORDS.search(name)
    return False


def guess_kind(name: str, before: str, after: str = "") -> str:
    """The kind the words in and around ``name`` point to, or "" when nothing does."""
    if ORG_WORDS.search(name):
        return "organisation"
    if PROJECT_WORDS.search(name):
        return "project"
    if PLACE_WORDS.search(name):
        return "place"
    cue = _cue_before(before)
    if cue == "person" or (cue != "project" and PERSON_AFTER.match(after)):
        return "person"
    return cue


def _cue_before(before: str) -> str:
    """What the last words before a name say it is (see the word sets above), or ""."""
    if not before or not before[-1].isspace():
        return ""  # "Ines'", "(Ines", "x-Ines": nothing to go on
    words = [w.casefold() for w in _TAIL.findall(before[-32:])[-3:]]
    if not words:
        return ""
    last = words[-1]
    prev = words[-2] if len(words) > 1 else ""
    bare = last.rstrip(".")
    if bare in HONORIFICS or last in PERSON_WORDS_BEFORE:
        return "person"
    if last == "to" and prev in PERSON_VERBS_TO:
        return "person"
    if prev == "my" and last in RELATIONS:
        return "person"
    if "." in last or "'" in last or "’" in last:
        return ""  # "in." ends a sentence; "Ines's" is no cue
    if last == "project":
        return "project"
    if last == "the":
        last, prev = prev, (words[-3] if len(words) > 2 else "")
    if last in PLACE_WORDS_BEFORE:
        return "place"
    if last in PROJECT_WORDS_BEFORE or (
        last == "on" and prev in ("work", "worked", "working", "works")
    ):
        return "project"
    return ""


def _link_target_is_date(page: str) -> bool:
    return parse_when(page) is not None


class EntityIndex:
    """Accumulates names across chunks so kinds are decided by majority vote of their cues.

    ``known``: entity key → (display name, fixed kind or ""); ``aliases``: alias key → the key
    of the entity it names (a person page's ``aliases``)."""

    def __init__(
        self,
        known: Mapping[str, tuple[str, str]] | None = None,
        aliases: Mapping[str, str] | None = None,
    ) -> None:
        # key -> (display name, fixed kind or "")
        self.known: dict[str, tuple[str, str]] = dict(known or {})
        self.aliases: dict[str, str] = {}
        # key -> fixed kind or "": what find_names looks names up in, kept beside ``known``
        # (made once, not per chunk: a file naming thousands of people stays linear).
        self._lookup: dict[str, str] = {k: v[1] for k, v in self.known.items()}
        for alias, key in (aliases or {}).items():
            self.add_alias(alias, key)
        self.votes: dict[str, Counter[str]] = {}
        self.names: dict[str, str] = {}
        self.common: set[str] = set()

    def add_page(self, name: str, kind: str, aliases: Iterable[str] = ()) -> str:
        """A vault page that is an entity (a person's page): its kind fixed, its aliases
        mapped to it. Returns its key."""
        key = entity_key(name)
        self.known[key] = (name, kind)
        self._lookup[key] = kind
        self.names[key] = name
        for alias in aliases:
            self.add_alias(entity_key(alias), key)
        return key

    def add_alias(self, alias: str, key: str) -> None:
        """``alias`` (a key) names the entity ``key`` from now on."""
        if not alias or alias == key:
            return
        self.aliases[alias] = key
        self._lookup.setdefault(alias, self.known.get(key, ("", ""))[1])

    def resolve(self, key: str) -> str:
        """The entity a key names: itself, or the entity it is an alias of."""
        return self.aliases.get(key, key)

    def learn(self, texts: Iterable[str]) -> None:
        """First pass: names seen mid-sentence anywhere become known at sentence starts too,
        and the words the notes write in lower case are counted (a name needs a cue when it
        is one of them)."""
        texts = list(texts)
        for text in texts:
            self.common.update(w.casefold() for w in _LOWER_WORD.findall(text))
        for text in texts:
            for name, _kind in find_names(_plain(text), self._lookup, self.common):
                key = entity_key(name)
                if key not in self.known and key not in self.aliases:
                    self.known[key] = (name, "")
                    self._lookup[key] = ""

    def mentions(self, text: str) -> Counter[str]:
        """Entity key → mentions in ``text``: its wiki links, then the names in the rest."""
        found: Counter[str] = Counter()
        for start, _end, link in links_in(text) if "[[" in text else ():
            if _link_target_is_date(link.page):
                continue  # a link to a day's journal page is a date, not an entity
            key = self.resolve(entity_key(link.page))
            before = text[max(0, start - 40) : start]
            fixed = self.known.get(key, ("", ""))[1]
            self._count(found, key, link.page, fixed or guess_kind(link.page, before))
        for name, kind in find_names(_plain(text), self._lookup, self.common):
            key = self.resolve(entity_key(name))
            self._count(found, key, name, kind)
        return found

    def _count(self, found: Counter[str], key: str, name: str, kind: str) -> None:
        self.names.setdefault(key, self.known.get(key, (name, ""))[0] or name)
        self.votes.setdefault(key, Counter())[kind] += 1
        found[key] += 1

    def kind_of(self, key: str) -> str:
        """The fixed kind, else the kind most of its cued mentions point to, else ``other``."""
        fixed = self.known.get(key, ("", ""))[1]
        if fixed in KINDS:
            return fixed
        votes = self.votes.get(key, Counter())
        cued = [(n, -KINDS.index(k), k) for k, n in votes.items() if k in KINDS]
        if votes.get(OTHER, 0) > sum(n for n, _, _ in cued):
            return OTHER  # a language or a holiday, whatever preposition comes before it
        return max(cued)[2] if cued else OTHER


def _plain(text: str) -> str:
    """``text`` with wiki links and ``#tags`` blanked: what the name finder reads."""
    if "#" not in text and "[[" not in text:
        return text
    spans = [(s, e) for s, e, _link in links_in(text)]
    spans += [m.span() for m in TAG.finditer(text)]
    return _blank(text, spans) if spans else text


def query_entities(query: str, known: Iterable[str]) -> set[str]:
    """Keys of known entities named in a query (case-insensitive, whole words)."""
    words = re.findall(r"[\w-]+", query.casefold())
    folded = " " + " ".join(words) + " "
    return {key for key in known if f" {key} " in folded}
