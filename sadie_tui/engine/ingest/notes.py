"""Markdown and text notes: front matter (title, date, kind, salience, tags, aliases), the
vault's markup (links, embeds, tags, Logseq properties: ``markup``), the date by the rules of
``dates.note_date``, the kind from the folders it sits in, and person pages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .dates import date_from_path, note_date
from .markup import property_list, read_markup
from .raw import LeftOut, RawEpisode, ReadResult, Unreadable, clean_text, read_text
from .reader import Reader, ReadOptions
from .vault import template_reason

if TYPE_CHECKING:
    import yaml

TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".text"})
#: Bounds on hostile input: front matter size and YAML aliases (an alias bomb of nine levels
#: fits in 500 bytes and expands to gigabytes).
MAX_FRONT_MATTER = 64 * 1024
MAX_ALIASES = 20

_DATE_IN_NAME = re.compile(r"(?<!\d)(\d{4})[-_.](\d{2})[-_.](\d{2})(?!\d)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
KIND_BY_FOLDER = (
    ("journal", "journal"),
    ("daily", "journal"),
    ("meeting", "meeting"),
    ("voice", "voice_memo"),
    ("memo", "voice_memo"),
    ("record", "record"),
)
_FOLDER_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")  # "VoiceMemos" → Voice, Memos
#: A page under one of these folders is a person's page.
PEOPLE_FOLDERS = {"people", "persons", "person", "contacts", "contact"}
#: What a page may declare itself to be (``type:: person``, ``kind: place``).
PAGE_KINDS = {
    "person": "person",
    "place": "place",
    "project": "project",
    "organisation": "organisation",
    "organization": "organisation",
}


def split_front_matter(text: str) -> tuple[dict[str, object], str]:
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 3)  # 3: an empty block ("---\n---") closes at once
    if end == -1:
        raise Unreadable("front matter is not closed with ---")
    # lazy: yaml loads only when split_front_matter runs, off the start-up path
    import yaml

    block = text[4:end]
    if len(block) > MAX_FRONT_MATTER:
        raise Unreadable(
            f"front matter too long ({len(block) // 1024} KB; the limit is"
            f" {MAX_FRONT_MATTER // 1024} KB)"
        )
    rest = text[end + 4 :]
    rest = rest[rest.find("\n") + 1 :] if "\n" in rest else ""
    # libyaml's safe loader when built in: same results, several times faster.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        _check_aliases(block, loader)
        meta = yaml.load(block, Loader=loader)
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        raise Unreadable(f"bad front matter{where}: {first}") from exc
    except (ValueError, TypeError) as exc:  # e.g. "date: 2026-13-45" fails in the constructor
        raise Unreadable(f"bad front matter: {exc}") from exc
    if meta is None:
        return {}, rest
    if not isinstance(meta, dict):
        raise Unreadable("bad front matter: expected key: value pairs")
    return meta, rest


def _check_aliases(block: str, loader: type[yaml.SafeLoader] | type[yaml.CSafeLoader]) -> None:
    """Refuse front matter with more than ``MAX_ALIASES`` aliases before building it: each
    alias may repeat a whole structure, so a few levels of them multiply into gigabytes."""
    # lazy: yaml loads only when _check_aliases runs, off the start-up path
    import yaml

    aliases = 0
    for event in yaml.parse(block, Loader=loader):
        if isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise Unreadable(f"bad front matter: more than {MAX_ALIASES} YAML aliases (*name)")


def _kind_for(path: Path) -> str:
    # Whole words of the nearest folders first ("Memories/" is not a memo, "meetings/" is).
    for folder in reversed(path.parts[:-1][-3:]):
        words = {w.lower().removesuffix("s") for w in _FOLDER_WORD.findall(folder)}
        for needle, kind in KIND_BY_FOLDER:
            if needle in words:
                return kind
    return "note"


def title_for(path: Path, body: str) -> str:
    heading = _HEADING.search(body[:2000])
    if heading:
        return heading.group(1).strip()
    stem = _DATE_IN_NAME.sub("", path.stem).strip("-_ ")
    stem = stem.replace("-", " ").replace("_", " ").strip()
    if not stem:
        dated = date_from_path(Path(path.name))
        return dated.date().isoformat() if dated else path.stem
    return stem[:1].upper() + stem[1:]


def salience(value: object, default: float = 0.5) -> float:
    if not isinstance(value, (int, float, str)):
        return default
    try:
        return min(1.0, max(0.0, float(value)))
    except (TypeError, ValueError):
        return default


def _names(value: object) -> list[str]:
    """Front matter ``aliases``/``tags`` as clean strings: a list, ``a, b``, ``[[a]]``, ``#a``."""
    items = (
        value if isinstance(value, list) else property_list(value) if isinstance(value, str) else []
    )
    out: dict[str, str] = {}
    for item in items:
        text = clean_text(str(item)).strip().removeprefix("#").strip()
        if text.startswith("[[") and text.endswith("]]"):
            text = text[2:-2].strip()
        if text and len(text) <= 200:
            out.setdefault(text.casefold(), text)
    return list(out.values())


def _page_kind(path: Path, meta: Mapping[str, object], tags: list[str]) -> str:
    """What entity a page is: the kind it declares (``type``/``kind``/``category``), else a
    person when it sits in a people folder, has aliases, or is tagged ``person``."""
    for field_name in ("type", "kind", "category"):
        declared = str(meta.get(field_name) or "").strip().strip("[]#").strip().casefold()
        if declared in PAGE_KINDS:
            return PAGE_KINDS[declared]
    folders = {part.casefold() for part in path.parts[:-1][-3:]}
    if folders & PEOPLE_FOLDERS or meta.get("aliases") or meta.get("alias"):
        return "person"
    if "person" in {t.casefold() for t in tags}:
        return "person"
    return ""


def read_document(path: Path, key: str) -> RawEpisode:
    """A Markdown or text note as an episode: front matter and Logseq properties, the vault
    markup (links, embeds, tags) and the date by the rules of ``dates.note_date``."""
    front, body = split_front_matter(read_text(path))
    markup = read_markup(body)
    body = markup.body
    if not body:
        raise Unreadable("empty file" if not markup.embeds else "no text, only embeds")
    reason = template_reason(body)
    if reason:
        raise LeftOut(reason)
    meta: dict[str, object] = {
        **markup.properties,
        **{str(k).casefold(): v for k, v in front.items()},
    }
    tags: dict[str, str] = {}
    for tag in [*_names(meta.get("tags")), *markup.tags]:
        tags.setdefault(tag.casefold(), tag)
    page_kind = _page_kind(path, meta, list(tags.values()))
    declared_kind = str(meta.get("kind") or "").strip()
    kind = declared_kind if declared_kind and declared_kind.casefold() not in PAGE_KINDS else ""
    aliases = _names(meta.get("aliases") or meta.get("alias"))
    return RawEpisode(
        source_key=key,
        source=str(path),
        kind=kind or _kind_for(path),
        title=str(meta.get("title") or title_for(path, body)).strip()[:200],
        occurred_at=note_date(meta, path),
        text=body,
        salience=salience(meta.get("salience")),
        tags=list(tags.values()),
        page_name=clean_text(path.stem).strip(),
        page_kind=page_kind,
        aliases=aliases if page_kind else [],
        links=[link.page for link in markup.links],
        embeds=markup.embeds,
        properties={k: clean_text(v) for k, v in markup.properties.items()},
    )


def _read(path: Path, key: str, result: ReadResult, options: ReadOptions) -> None:
    result.episodes.append(read_document(path, key))


READER = Reader("note", TEXT_SUFFIXES, _read)
