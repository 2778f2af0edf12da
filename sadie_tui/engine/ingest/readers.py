"""Reading files into raw episodes and derived records; every unreadable file is named and skipped.

Markdown and text (optional YAML front matter: title, date, kind, salience, tags) and JSONL
records become episodes. By name, ``beliefs.jsonl``, ``observations.jsonl``, ``soul.md`` and
files under ``wiki/``, ``briefs/`` and ``today/`` become derived records instead. Obsidian and
Logseq vaults read as they are written: dates (``dates``), links, embeds, tags and properties
(``markup``), person pages, and the folders and templates a vault keeps beside its notes
(``vault``), each left out with its reason in ``ReadResult.ignored``. Calendars, workouts, Day
One exports and mapped CSV files are read by their own modules (``calendar``, ``workouts``,
``dayone``, ``csvmap``); what every reader makes is in ``raw``.
"""

from __future__ import annotations

import errno
import json
import os
import re
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .belief_quotes import read_quotes, source_id
from .dates import date_from_path, mtime, note_date, parse_when
from .markup import property_list, read_markup
from .raw import MAX_BYTES as MAX_BYTES
from .raw import MAX_JSON_DEPTH as MAX_JSON_DEPTH
from .raw import NAMESPACE as NAMESPACE
from .raw import (
    Derived,
    DerivedFields,
    LeftOut,
    RawEpisode,
    ReadResult,
    Skipped,
    Unreadable,
    _is_utf8,
    _os_reason,
    _storable,
    clean_text,
    read_text,
)
from .raw import episode_id as episode_id
from .raw import shown_name as shown_name
from .vault import FolderRules, rules_for, template_reason

if TYPE_CHECKING:
    import yaml

    from ..jsonvalue import JSON, JSONObject
    from .csvmap import CsvMap

TEXT_SUFFIXES = {".md", ".markdown", ".txt", ".text"}
#: Records read by their own modules: calendars, workouts, journal exports, CSV.
RECORD_SUFFIXES = {".ics", ".gpx", ".fit", ".json", ".csv"}
#: Bounds on hostile input: front matter size and YAML aliases (an alias bomb of nine levels
#: fits in 500 bytes and expands to gigabytes), JSON nesting, folders below a given path.
MAX_FRONT_MATTER = 64 * 1024
MAX_ALIASES = 20
MAX_FOLDER_DEPTH = 64

_DATE_IN_NAME = re.compile(r"(?<!\d)(\d{4})[-_.](\d{2})[-_.](\d{2})(?!\d)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
DERIVED_DIRS = {"wiki": "wiki", "briefs": "brief", "today": "today"}
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


def _title_for(path: Path, body: str) -> str:
    heading = _HEADING.search(body[:2000])
    if heading:
        return heading.group(1).strip()
    stem = _DATE_IN_NAME.sub("", path.stem).strip("-_ ")
    stem = stem.replace("-", " ").replace("_", " ").strip()
    if not stem:
        dated = date_from_path(Path(path.name))
        return dated.date().isoformat() if dated else path.stem
    return stem[:1].upper() + stem[1:]


def _salience(value: object, default: float = 0.5) -> float:
    if not isinstance(value, (int, float, str)):
        return default
    try:
        return min(1.0, max(0.0, float(value)))
    except (TypeError, ValueError):
        return default


def _tags(value: JSON) -> list[str]:
    if isinstance(value, str):
        return [t.strip() for t in value.split(",") if t.strip()]
    if isinstance(value, list):
        return [str(t) for t in value if str(t).strip()]
    return []


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
        title=str(meta.get("title") or _title_for(path, body)).strip()[:200],
        occurred_at=note_date(meta, path),
        text=body,
        salience=_salience(meta.get("salience")),
        tags=list(tags.values()),
        page_name=clean_text(path.stem).strip(),
        page_kind=page_kind,
        aliases=aliases if page_kind else [],
        links=[link.page for link in markup.links],
        embeds=markup.embeds,
        properties={k: clean_text(v) for k, v in markup.properties.items()},
    )


def iter_jsonl(path: Path) -> Iterator[tuple[int, JSONObject | None, str]]:
    """(line number, object or None, error) for every non-blank line."""
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = _storable(json.loads(line))
        except json.JSONDecodeError as exc:
            yield number, None, f"invalid JSON ({exc.msg})"
            continue
        except RecursionError:  # deeper than the decoder's own limit
            yield number, None, f"invalid JSON (nested more than {MAX_JSON_DEPTH} levels deep)"
            continue
        except ValueError as exc:
            yield number, None, f"invalid JSON ({exc})"
            continue
        if not isinstance(obj, dict):
            yield number, None, "not a JSON object"
            continue
        yield number, obj, ""


def read_records(path: Path, key: str, result: ReadResult) -> None:
    fallback = date_from_path(path) or mtime(path)
    for number, obj, error in iter_jsonl(path):
        name = f"{path}#{number}"
        if obj is None:
            result.skipped.append(Skipped(name, error))
            continue
        text = clean_text(str(obj.get("text") or obj.get("content") or "")).strip()
        if not text:
            result.skipped.append(Skipped(name, "record has no text"))
            continue
        when = parse_when(obj.get("date") or obj.get("occurred_at")) or fallback
        result.episodes.append(
            RawEpisode(
                source_key=f"{key}#{number}",
                source=name,
                kind=str(obj.get("kind") or "record"),
                title=clean_text(str(obj.get("title") or text.split("\n")[0][:60])).strip(),
                occurred_at=when,
                text=text,
                salience=_salience(obj.get("salience")),
                tags=_tags(obj.get("tags")),
            )
        )


def _evidence_ids(values: JSON, base: Path) -> list[str]:
    ids: list[str] = []
    for ref in values if isinstance(values, list) else []:
        ref = str(ref)
        try:
            uuid.UUID(ref)
            ids.append(ref.lower())
            continue
        except ValueError:
            pass
        ids.append(source_id(ref, base))
    return ids


def read_beliefs(path: Path, key: str, result: ReadResult) -> None:
    """The person's beliefs, each with the files it rests on and the quotes of them it gives
    (``belief_quotes``: a quote not found word for word is left out, named in ``skipped``)."""
    for number, obj, error in iter_jsonl(path):
        name = f"{path}#{number}"
        if obj is None or not str(obj.get("statement") or "").strip():
            result.skipped.append(Skipped(name, error or "belief has no statement"))
            continue
        status = str(obj.get("status") or "active").lower()
        if status not in {"active", "contested", "retired"}:
            result.skipped.append(Skipped(name, f"unknown belief status {status!r}"))
            continue
        try:
            evidence = _evidence_ids(obj.get("evidence"), path.parent)
            quotes, left_out = read_quotes(obj.get("quotes"), path.parent)
        except Unreadable as exc:
            result.skipped.append(Skipped(name, str(exc)))
            continue
        result.skipped.extend(Skipped(name, why) for why in left_out)
        result.derived.append(
            Derived(
                "beliefs",
                f"{key}#{number}",
                {
                    "statement": clean_text(str(obj["statement"])).strip(),
                    "status": status,
                    "confidence": _salience(obj.get("confidence"), 0.5),
                    "evidence": evidence,
                    "quotes": quotes,
                },
            )
        )


def read_observations(path: Path, key: str, result: ReadResult) -> None:
    for number, obj, error in iter_jsonl(path):
        name = f"{path}#{number}"
        text = clean_text(str((obj or {}).get("text") or "")).strip()
        when = parse_when((obj or {}).get("observed_at") or (obj or {}).get("date"))
        if obj is None or not text or when is None:
            result.skipped.append(Skipped(name, error or "observation needs text and observed_at"))
            continue
        result.derived.append(
            Derived(
                "observations",
                f"{key}#{number}",
                {"source": str(obj.get("source") or "record"), "observed_at": when, "text": text},
            )
        )


def read_derived_document(path: Path, key: str, folder: str, result: ReadResult) -> None:
    meta, body = split_front_matter(read_text(path))
    body = body.strip()
    if not body:
        raise Unreadable("empty file")
    title = str(meta.get("title") or _title_for(path, body)).strip()
    fields: DerivedFields = {"title": title, "text": body}
    if folder == "wiki":
        fields["kind"] = str(meta.get("kind") or "note").lower()
        table = "wiki_entries"
    else:
        fields["occurred_at"] = parse_when(meta.get("date")) or date_from_path(path) or mtime(path)
        table = "briefs" if folder == "brief" else "today_cards"
    result.derived.append(Derived(table, key, fields))


def read_record_file(
    path: Path, key: str, result: ReadResult, csv_map: CsvMap | None = None
) -> None:
    """A calendar, workout, journal export or CSV file (by ``csv_map``), by its own module
    (imported here: they import this one)."""
    suffix = path.suffix.lower()
    if suffix == ".ics":
        # lazy: it imports raw, which this module reads; loaded only for its files
        from .calendar import read_calendar

        read_calendar(path, key, result)
    elif suffix == ".gpx":
        # lazy: it imports raw, which this module reads; loaded only for its files
        from .workouts import read_gpx

        read_gpx(path, key, result)
    elif suffix == ".fit":
        # lazy: it imports raw, which this module reads; loaded only for its files
        from .workouts import read_fit

        read_fit(path, key, result)
    elif suffix == ".json":
        # lazy: it imports raw, which this module reads; loaded only for its files
        from .dayone import read_dayone

        read_dayone(path, key, result)
    elif suffix == ".csv":
        # lazy: it imports raw, which this module reads; loaded only for its files
        from .csvmap import read_csv

        read_csv(path, key, result, csv_map)
    else:
        raise Unreadable(f"unsupported file type ({suffix})")


def read_path(path: Path, result: ReadResult, csv_map: CsvMap | None = None) -> None:
    """Read one file into ``result``; failures become a ``Skipped`` naming the file. CSV files
    are read by ``csv_map`` (``csvmap``), and skipped without one."""
    key = str(path.resolve())
    name = path.name.lower()
    parent = path.parent.name.lower()
    try:
        if name == "beliefs.jsonl":
            read_beliefs(path, key, result)
        elif name == "observations.jsonl":
            read_observations(path, key, result)
        elif name == "soul.md":
            meta, body = split_front_matter(read_text(path))
            if not body.strip():
                raise Unreadable("empty file")
            result.derived.append(Derived("soul", key, {"text": body.strip()}))
        elif parent in DERIVED_DIRS and path.suffix.lower() in TEXT_SUFFIXES:
            read_derived_document(path, key, DERIVED_DIRS[parent], result)
        elif path.suffix.lower() == ".jsonl":
            read_records(path, key, result)
        elif path.suffix.lower() in TEXT_SUFFIXES:
            result.episodes.append(read_document(path, key))
        elif path.suffix.lower() in RECORD_SUFFIXES:
            read_record_file(path, key, result, csv_map)
        else:
            raise Unreadable(f"unsupported file type ({path.suffix or 'no extension'})")
        result.files += 1
    except Unreadable as exc:
        result.skipped.append(Skipped(str(path), str(exc)))
    except LeftOut as exc:
        result.ignored.append(Skipped(str(path), str(exc)))
    except RecursionError:  # a parser's own recursion on input the bounds above missed
        result.skipped.append(Skipped(str(path), "nested too deeply to read"))


def discover(paths: list[Path], result: ReadResult) -> list[Path]:
    """Every file under ``paths``, in name order: symlinks followed once, loops, missing
    paths and folders nested more than ``MAX_FOLDER_DEPTH`` deep reported. A folder given
    brings its own rules (``vault.rules_for``): what they leave out goes to ``result.ignored``."""
    found: list[Path] = []
    seen: set[str] = set()
    # Depth first without recursion (a folder may nest thousands deep): (path, depth, rules)
    # triples, each folder's entries pushed in reverse so they come off in name order.
    todo: list[tuple[Path, int, FolderRules | None]] = [
        (Path(p).expanduser(), 0, None) for p in reversed(paths)
    ]
    while todo:
        path, depth, rules = todo.pop()
        real = _real_path(path, result)
        if real is None:
            continue
        if not (_is_utf8(str(path)) and _is_utf8(real)):
            # Its episode would be keyed and shown by a name that is not text: named, skipped.
            what = "folder" if os.path.isdir(real) else "file"
            result.skipped.append(Skipped(str(path), f"the {what} name is not UTF-8"))
            continue
        if real in seen:
            if path.is_symlink():
                result.skipped.append(Skipped(str(path), "symlink loop (already visited)"))
            continue
        seen.add(real)
        if os.path.isdir(real):
            if depth >= MAX_FOLDER_DEPTH:
                result.skipped.append(
                    Skipped(str(path), f"folders nested more than {MAX_FOLDER_DEPTH} deep")
                )
                continue
            if rules is None:
                rules = rules_for(path)
                for problem in rules.problems:
                    result.skipped.append(Skipped(str(path / ".sadieignore"), problem))
            children = _folder_entries(path, result, rules)
            todo.extend((child, depth + 1, rules) for child in reversed(children))
        elif os.path.isfile(real):
            found.append(path)
        else:
            result.skipped.append(Skipped(str(path), "not a regular file"))
    return found


def _real_path(path: Path, result: ReadResult) -> str | None:
    """Where ``path`` leads, or None (and a reason in ``result``) when it leads nowhere."""
    try:
        return os.path.realpath(path, strict=True)
    except (OSError, RuntimeError, ValueError) as exc:
        if getattr(exc, "errno", None) == errno.ELOOP or "loop" in str(exc).lower():
            reason = "symlink loop"
        elif isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
            reason = "path too long"
        elif path.is_symlink():
            reason = "broken symlink (its target does not exist)"
        else:
            reason = "no such file or directory"
        result.skipped.append(Skipped(str(path), reason))
        return None


def _folder_entries(folder: Path, result: ReadResult, rules: FolderRules) -> list[Path]:
    """The folder's notes and subfolders by name; what ``rules`` leave out is reported in
    ``result.ignored``, other files in ``result.skipped``, once each."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        result.skipped.append(Skipped(str(folder), _os_reason(exc)))
        return []
    children: list[Path] = []
    for entry in entries:
        child = Path(entry.path)
        try:
            is_dir = entry.is_dir()
        except OSError:  # a symlink loop: discover() names it
            is_dir = False
        reason = rules.folder_reason(child) if is_dir else rules.file_reason(child)
        if reason is not None:
            result.ignored.append(Skipped(str(child), reason))
            continue
        if entry.name.startswith("."):
            continue
        suffix = child.suffix.lower()
        if (
            not entry.is_dir(follow_symlinks=False)
            and not entry.is_symlink()
            and suffix not in TEXT_SUFFIXES | RECORD_SUFFIXES | {".jsonl"}
        ):
            # Inside a folder, other kinds of file are not notes: say so once each (in a
            # vault, an attachment is left out without being called unreadable).
            attachment = rules.attachment_reason(child)
            if attachment is not None:
                result.ignored.append(Skipped(str(child), attachment))
                continue
            result.skipped.append(
                Skipped(str(child), f"unsupported file type ({suffix or 'no extension'})")
            )
            continue
        children.append(child)
    return children


def read_all(paths: list[Path], csv_map: CsvMap | None = None) -> ReadResult:
    """Every file under ``paths`` read (CSV files by ``csv_map``), with what was skipped."""
    result = ReadResult()
    for path in discover(paths, result):
        read_path(path, result, csv_map)
    return result
