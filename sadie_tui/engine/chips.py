"""Context chips: things attached to a conversation to ground it, and what they resolve to.

Kinds (spec: "Context chips"): ``wiki`` (a wiki entry), ``source`` (an episode, citable like
an excerpt), ``brief``, ``graph_entity`` (a node of the knowledge graph), ``discourse``
(a Today card) and ``record`` (a connector record, from the ``observations`` table: what a
persona that leaves records out may still be given, ``records_offer``). A chip stores the kind, the thing's id (``ref_id``), a label and a short
snippet; its content is read from the memory each time the briefing is built, so removing a
chip drops it from the next reply.

The SQL, for the ``chips`` table and the look-ups over the six kinds, is ``store.chips``'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from .errors import ConfigError, NotFoundError
from .ingest.entities import entity_key
from .jsonvalue import JSONObject
from .store import chips as repo
from .store.chips import Chip
from .store.conversations import resolve_id
from .store.db import Database
from .store.ids import AmbiguousIdError, new_id, now, resolve_prefix
from .wire import Text, dump

KINDS = ("wiki", "source", "brief", "graph_entity", "discourse", "record")
#: Other words a person may type for a kind.
ALIASES = {
    "episode": "source",
    "note": "source",
    "entity": "graph_entity",
    "graph": "graph_entity",
    "today": "discourse",
    "card": "discourse",
    "today_card": "discourse",
    "observation": "record",
}
SNIPPET_CHARS = 120
TEXT_CAP = 4000
NEIGHBOURS = 8
ENTITY_MENTIONS = 3
LABEL_CHARS = 80


@dataclass(frozen=True)
class _Table:
    table: str
    noun: str


_TABLES = {
    "wiki": _Table("wiki_entries", "wiki entry"),
    "source": _Table("episodes", "source (episode)"),
    "brief": _Table("briefs", "brief"),
    "discourse": _Table("today_cards", "Today card"),
    "record": _Table("observations", "record"),
}


@dataclass(frozen=True)
class Candidate:
    """Something a chip can point at, as ``find_attachable`` offers it."""

    kind: str
    ref_id: str
    label: str
    snippet: str
    date: str | None

    def to_json(self) -> JSONObject:
        """Its JSON (``wire``): `chips find --json` and ``GET /v1/chips/find``."""
        data: JSONObject = dump(self)
        return data


@dataclass(frozen=True)
class NewChip:
    """A chip to attach, as ``add_chip`` takes it: sent with a message (``Session.chat``'s
    ``chips``) it is attached before the turn reads the conversation's chips. Also the body
    of ``POST …/chips`` and an item of a chat request's ``chips``."""

    kind: Text
    ref: Text
    label: str | None = None


@dataclass(frozen=True)
class ChipContent:
    chip: Chip
    title: str
    text: str
    episode_id: str | None  # set for source chips: the episode is citable like an excerpt
    date: str | None


# --------------------------------------------------------------------------- helpers


def normalise_kind(kind: str) -> str:
    """The canonical kind for ``kind`` (aliases such as ``episode`` or ``today`` accepted)."""
    word = (kind or "").strip().lower().replace("-", "_")
    word = ALIASES.get(word, word)
    if word not in KINDS:
        raise ConfigError(f"unknown chip kind {kind!r} (kinds: {', '.join(KINDS)})")
    return word


def _squash(text: str) -> str:
    return " ".join((text or "").split())


def cut(text: str, limit: int) -> str:
    """``text`` on one line, cut at a word boundary to at most ``limit`` characters."""
    flat = _squash(text)
    if len(flat) <= limit:
        return flat
    space = flat.rfind(" ", 0, limit)
    head = flat[:space] if space > limit // 2 else flat[: limit - 1]
    return head.rstrip(" ,;:.-") + "…"


def _cap(text: str, limit: int = TEXT_CAP) -> str:
    """Keep paragraphs, but no more than ``limit`` characters."""
    text = (text or "").strip()
    if len(text) <= limit:
        return text
    space = text.rfind(" ", 0, limit)
    return text[: space if space > limit // 2 else limit].rstrip() + " …"


def _date(value: object) -> str | None:
    if isinstance(value, datetime):
        return value.date().isoformat()
    return str(value)[:10] if value else None


def _looks_like_id(ref: str) -> bool:
    return len(ref) >= 4 and re.fullmatch(r"[0-9a-fA-F-]+", ref) is not None


def parse_entity_id(ref: str) -> int | None:
    """The entity id ``ref`` spells, else ``None`` (then it is a name): ASCII digits only
    (``"²".isdigit()`` is true, yet ``int("²")`` fails), and few enough for a 64-bit id."""
    if ref.isascii() and ref.isdigit() and len(ref) <= 18:
        return int(ref)
    return None


def _get_chip(db: Database, chip_id: str) -> Chip:
    chip = repo.get_chip(db, chip_id)
    if chip is None:
        raise NotFoundError(f"no chip {chip_id!r}")
    return chip


# --------------------------------------------------------------------------- looking things up


def _lookup(db: Database, kind: str, ref: str) -> tuple[str, str, str]:
    """(ref_id, title, text) of the thing ``ref`` names, or NotFoundError."""
    ref = (ref or "").strip()
    if kind == "graph_entity":
        return _lookup_entity(db, ref)
    spec = _TABLES[kind]
    if _looks_like_id(ref):
        try:
            full = resolve_prefix(db, spec.table, ref, spec.noun)
        except NotFoundError:  # an ambiguous prefix still raises
            pass
        else:
            row = repo.thing(db, spec.table, full)
            if row is not None:
                return full, row[1], row[2]
    # Not an id: an exact title, compared case-insensitively, if only one thing has it.
    rows = repo.things_titled(db, spec.table, ref, ignore_case=True)
    if len(rows) == 1:
        return rows[0][0], rows[0][1], rows[0][2]
    if len(rows) > 1:
        raise AmbiguousIdError(
            f"more than one {spec.noun} is titled {ref!r}", fix="use its id from `sadie chips find`"
        )
    raise NotFoundError(f"no {spec.noun} {ref!r}", fix="look it up with `sadie chips find`")


def _lookup_entity(db: Database, ref: str) -> tuple[str, str, str]:
    row = None
    number = parse_entity_id(ref)
    if number is not None:
        row = repo.entity_by_id(db, number)
    if row is None and ref:
        row = repo.entity_by_key(db, entity_key(ref))
    if row is None:
        raise NotFoundError(f"no entity {ref!r}", fix="look it up with `sadie chips find`")
    return str(row[0]), row[1], _entity_line(db, int(row[0]), row[1], row[2])


def _entity_line(db: Database, entity_id: int, name: str, kind: str) -> str:
    count = repo.entity_episode_count(db, entity_id)
    return f"{name}, {kind}, mentioned in {count} episode{'s' if count != 1 else ''}"


# --------------------------------------------------------------------------- chips


def add_chip(
    db: Database,
    conversation_id: str,
    kind: str,
    ref: str,
    *,
    label: str | None = None,
    added_by: str = "you",
) -> Chip:
    """Attach the thing ``ref`` names (an id, a unique id prefix, an exact title, or for
    ``graph_entity`` an entity's name) to the conversation. Attaching it again returns the
    chip it already has."""
    cid = resolve_id(db, conversation_id)
    kind = normalise_kind(kind)
    ref_id, title, text = _lookup(db, kind, ref)
    found = repo.find_chip(db, cid, kind, ref_id)
    if found is not None:
        return found
    chosen = cut(label, LABEL_CHARS) if label and label.strip() else cut(title, LABEL_CHARS)
    snippet = cut(text, SNIPPET_CHARS) or None
    chip_id = new_id()
    repo.insert_chip(
        db,
        chip_id,
        cid,
        kind=kind,
        ref_id=ref_id,
        label=chosen or ref_id,
        snippet=snippet,
        created_at=now(),
        added_by=added_by,
    )
    return _get_chip(db, chip_id)


def list_chips(db: Database, conversation_id: str) -> list[Chip]:
    """The conversation's chips, in the order they were attached."""
    return repo.chips_of(db, resolve_id(db, conversation_id))


def remove_chip(db: Database, conversation_id: str, chip_id: str) -> Chip:
    """Detach a chip (by id or unique prefix) and return it."""
    cid = resolve_id(db, conversation_id)
    full = resolve_prefix(
        db,
        "chips",
        chip_id,
        "chip on this conversation",
        conversation_id=cid,
    )
    chip = _get_chip(db, full)
    repo.delete_chip(db, full)
    return chip


def remove_last_chip(db: Database, conversation_id: str) -> Chip | None:
    """Detach the most recently attached chip; ``None`` when there is none."""
    chips = list_chips(db, conversation_id)
    if not chips:
        return None
    repo.delete_chip(db, chips[-1].id)
    return chips[-1]


# --------------------------------------------------------------------------- finding


def find_attachable(
    db: Database, text: str, *, kind: str | None = None, limit: int = 20
) -> list[Candidate]:
    """What could be attached, for a picker or ``sadie chips find``.

    Every word of ``text`` must appear (case-insensitively) in a thing's title or text (for
    entities: the name). Title matches rank before text matches, then the most recent (for
    entities: the most mentioned). Empty text lists the most recent (most mentioned) of each
    kind, taking turns between kinds. An id prefix finds the thing it names.
    """
    kinds = [normalise_kind(kind)] if kind else list(KINDS)
    words = _squash(text).lower().split()
    if limit <= 0:
        return []
    per_kind: list[list[tuple[int, float, Candidate]]] = []
    for name in kinds:
        if name == "graph_entity":
            per_kind.append(_find_entities(db, words, limit))
        else:
            per_kind.append(_find_rows(db, name, words, limit))
    if not words:
        merged: list[Candidate] = []
        for rank in range(limit):
            for found in per_kind:
                if rank < len(found):
                    merged.append(found[rank][2])
        return merged[:limit]
    everything = [item for found in per_kind for item in found]
    everything.sort(key=lambda item: (-item[0], -item[1]))
    return [item[2] for item in everything[:limit]]


def _find_rows(
    db: Database, kind: str, words: list[str], limit: int
) -> list[tuple[int, float, Candidate]]:
    phrase = " ".join(words)
    id_guess = phrase if words and _looks_like_id(phrase) else "\x00"
    rows = repo.search_things(db, _TABLES[kind].table, words, id_guess, limit)
    found = []
    for ref_id, title, body, day, rank in rows:
        snippet = _context(body, words) if rank == 1 else cut(body, SNIPPET_CHARS)
        stamp = day.timestamp() if isinstance(day, datetime) else 0.0
        found.append((int(rank), stamp, Candidate(kind, ref_id, title, snippet, _date(day))))
    return found


def _context(text: str, words: list[str]) -> str:
    """A snippet of ``text`` around the first place one of ``words`` appears."""
    flat = _squash(text)
    lowered = flat.lower()
    positions = [p for p in (lowered.find(w) for w in words) if p >= 0]
    if not positions:
        return cut(flat, SNIPPET_CHARS)
    start = max(0, min(positions) - SNIPPET_CHARS // 3)
    if start:
        space = flat.find(" ", start)
        start = space + 1 if 0 <= space < min(positions) else start
    piece = cut(flat[start:], SNIPPET_CHARS - (1 if start else 0))
    return ("…" + piece) if start else piece


def _find_entities(
    db: Database, words: list[str], limit: int
) -> list[tuple[int, float, Candidate]]:
    rows = repo.search_entities(db, words, limit)
    found = []
    for entity_id, name, kind, count, last, rank in rows:
        snippet = f"{kind}, mentioned in {count} episode{'s' if count != 1 else ''}"
        candidate = Candidate("graph_entity", str(entity_id), name, snippet, _date(last))
        found.append((int(rank), float(count), candidate))
    return found


# --------------------------------------------------------------------------- resolving


def resolve(db: Database, chip: Chip) -> ChipContent:
    """The content a chip puts into the briefing's "Attached context" block.

    The thing is read by id; if it is gone (a re-ingest gives derived records new ids) the one
    thing with the chip's label as its title is used instead; else ``NotFoundError``.
    """
    if chip.kind == "graph_entity":
        return _resolve_entity(db, chip)
    spec = _TABLES.get(chip.kind)
    if spec is None:
        raise NotFoundError(f"chip {chip.label!r} has an unknown kind {chip.kind!r}")
    row = repo.thing(db, spec.table, chip.ref_id)
    if row is None:
        rows = repo.things_titled(db, spec.table, chip.label)
        row = rows[0] if len(rows) == 1 else None
    if row is None:
        raise NotFoundError(f"the {spec.noun} of chip {chip.label!r} is no longer in the memory")
    ref_id, title, text, day = row
    return ChipContent(
        chip=chip,
        title=title,
        text=_cap(text),
        episode_id=ref_id if chip.kind == "source" else None,
        date=_date(day),
    )


def _resolve_entity(db: Database, chip: Chip) -> ChipContent:
    row = None
    number = parse_entity_id(chip.ref_id)
    if number is not None:
        row = repo.entity_by_id(db, number)
    if row is None:
        row = repo.entity_by_key(db, entity_key(chip.label))
    if row is None:
        raise NotFoundError(f"the entity of chip {chip.label!r} is no longer in the memory")
    entity_id, name, kind = row
    neighbours = repo.entity_neighbours(db, entity_id, NEIGHBOURS)
    mentions = repo.entity_mentions(db, entity_id, ENTITY_MENTIONS)
    lines = [f"{name} ({kind}), a node of the knowledge graph."]
    if neighbours:
        linked = ", ".join(f"{n} ({k}, {int(w)})" for n, k, w in neighbours)
        lines.append(f"Often mentioned together with: {linked}.")
    if mentions:
        lines.append("Most recent mentions:")
        for day, title, text in mentions:
            lines.append(f"- {_date(day)} {title}: {_context(text, [name.lower()])}")
    last = _date(mentions[0][0]) if mentions else None
    return ChipContent(chip=chip, title=name, text="\n".join(lines), episode_id=None, date=last)


def resolve_all(db: Database, conversation_id: str) -> tuple[list[ChipContent], list[Chip]]:
    """Every chip of the conversation resolved, and the chips whose thing is gone."""
    contents: list[ChipContent] = []
    missing: list[Chip] = []
    for chip in list_chips(db, conversation_id):
        try:
            contents.append(resolve(db, chip))
        except NotFoundError:
            missing.append(chip)
    return contents, missing
