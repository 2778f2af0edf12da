"""Finding people, places, projects and organisations in chunk text, without a model.

Capitalised name runs that do not start a sentence are candidates; at a sentence start a
name counts only when it is already known (wiki titles, earlier entities). Kinds come from
the wiki's front matter where it names them, else from the words around the name.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping

_NAME = re.compile(
    r"(?<![\w'’])([A-Z][\w'’-]*[a-z\d][\w'’-]*|[A-Z]{2,6})"
    r"((?:\s+(?:of|de|da|do|van|von|la|le|the)?\s*[A-Z][\w'’-]*[a-z][\w'’-]*)*)"
)
_SENTENCE_START = re.compile(r"(^|[.!?…:;\n\"“(\[\]-]\s*|\n\s*[-*•]\s*)$")

STOP = set(
    """
    A An And As At But By For From He Her Hers Him His How I I'd I'll I'm I've If In Into Is It
    Its It's Me My No Not Now Of Oh On Or Our Ours She So That The Their Them Then There These
    They This Those To Too Up Us We What When Where Which While Who Why Will With Yes You Your
    Yeah Okay OK Ok Um Uh Hmm Well Also Just Still Maybe Today Tomorrow Yesterday Tonight Anyway
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May
    June July August September October November December Mon Tue Wed Thu Fri Sat Sun Jan Feb
    Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Morning Evening Night Afternoon Week Weekend Month
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
    """.split()
)
PLACE_CUES = re.compile(r"\b(in|at|to|from|near|around|visit(?:ed|ing)?|flew|drove)\s+$", re.I)
PROJECT_CUES = re.compile(r"\b(project|the|on|ship(?:ped)?|launch(?:ed)?)\s+$", re.I)
ORG_WORDS = re.compile(
    r"\b(Inc|Ltd|LLC|Labs?|Company|Co|Corp|University|College|School|Bank|Clinic|Hospital|"
    r"Foundation|Institute|Club|Council|Agency|Group|Studio|Association)\b"
)
PROJECT_WORDS = re.compile(r"\b(Project|Refactor|Migration|Launch|Plan|App)\b")
KINDS = ("person", "place", "project", "organisation")


def entity_key(name: str) -> str:
    return " ".join(name.casefold().split())


def _clean(name: str) -> str:
    name = re.sub(r"['’]s$", "", name.strip())
    return " ".join(name.split()).strip("-")


def find_names(text: str, known: Mapping[str, str]) -> list[tuple[str, str]]:
    """(name, kind guess) for each mention in ``text``, in order of appearance."""
    out: list[tuple[str, str]] = []
    for match in _NAME.finditer(text):
        name = _clean(match.group(0))
        if not name:
            continue
        words = name.split()
        # Drop leading stop words ("The Warden" → "Warden"; "Ines" kept).
        while words and words[0] in STOP:
            words = words[1:]
        if not words:
            continue
        name = " ".join(words)
        key = entity_key(name)
        before = text[max(0, match.start() - 24) : match.start()]
        at_start = bool(_SENTENCE_START.search(before)) or match.start() == 0
        if key in known:
            out.append((name, known[key] or guess_kind(name, before)))
            continue
        if at_start and words == match.group(0).split():
            continue
        if len(name) < 2 or name.isdigit() or name in STOP:
            continue
        out.append((name, guess_kind(name, before)))
    return out


def guess_kind(name: str, before: str) -> str:
    if ORG_WORDS.search(name):
        return "organisation"
    if PROJECT_WORDS.search(name) or re.search(r"\bproject\s+$", before, re.I):
        return "project"
    if PLACE_CUES.search(before):
        return "place"
    return "person"


class EntityIndex:
    """Accumulates names across chunks so kinds are decided by majority vote."""

    def __init__(self, known: Mapping[str, tuple[str, str]] | None = None) -> None:
        # key -> (display name, fixed kind or "")
        self.known: dict[str, tuple[str, str]] = dict(known or {})
        # key -> fixed kind or "": what find_names looks names up in, kept beside ``known``
        # (made once, not per chunk: a file naming thousands of people stays linear).
        self._lookup: dict[str, str] = {k: v[1] for k, v in self.known.items()}
        self.votes: dict[str, Counter[str]] = {}
        self.names: dict[str, str] = {}

    def learn(self, texts: Iterable[str]) -> None:
        """First pass: names seen mid-sentence anywhere become known at sentence starts too."""
        for text in texts:
            for name, _kind in find_names(text, self._lookup):
                key = entity_key(name)
                if key not in self.known:
                    self.known[key] = (name, "")
                    self._lookup[key] = ""

    def mentions(self, text: str) -> Counter[str]:
        found: Counter[str] = Counter()
        for name, kind in find_names(text, self._lookup):
            key = entity_key(name)
            self.names.setdefault(key, self.known.get(key, (name, ""))[0] or name)
            self.votes.setdefault(key, Counter())[kind] += 1
            found[key] += 1
        return found

    def kind_of(self, key: str) -> str:
        fixed = self.known.get(key, ("", ""))[1]
        if fixed in KINDS:
            return fixed
        votes = self.votes.get(key)
        return votes.most_common(1)[0][0] if votes else "person"


def query_entities(query: str, known: Iterable[str]) -> set[str]:
    """Keys of known entities named in a query (case-insensitive, whole words)."""
    words = re.findall(r"[\w-]+", query.casefold())
    folded = " " + " ".join(words) + " "
    return {key for key in known if f" {key} " in folded}
