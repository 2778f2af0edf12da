"""Vault markup in a note's body: wiki links, embeds, ``#tags`` and Logseq ``key:: value`` lines.

Obsidian and Logseq link pages with ``[[Page]]``, ``[[Page|alias]]``, ``[[Page#heading]]`` and
``[[Page#^block]]``; Logseq also with ``#[[multi word]]``. A link names a page: its key is the
file stem it points to, case-folded (``page_key``), which is how the linked note is found.
Embeds (``![[image.png]]``, ``![alt](file.png)``) are recorded and taken out of the text: an
image is not words. Logseq writes page properties as ``key:: value`` lines at the top of a page
(``alias::``, ``tags::``, ``type::``) and block properties (``id::``, ``collapsed::``) below;
the first become metadata, and none of them stays in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: ``[[target#heading|alias]]``, optionally embedded (``!``); no brackets or newline inside.
WIKI_LINK = re.compile(r"(!?)\[\[([^\[\]\n]{1,300}?)\]\]")
_MD_EMBED = re.compile(r"!\[[^\]\n]{0,300}\]\(([^)\n]{1,500})\)")
#: ``#tag`` (letters, digits, ``_ - /``; not all digits) or Logseq's ``#[[multi word]]``, at
#: the start of a line or after a space or bracket: never a heading (``# Title``) or a URL part.
TAG = re.compile(
    r"(?<![^\s(\[,;])#(?:\[\[([^\[\]\n]{1,200})\]\]|([^\W\d][\w/-]*|\d+[^\W\d][\w/-]*))"
)
_PROPERTY = re.compile(r"^[ \t]*(?:[-*][ \t]+)?([A-Za-z][\w-]*)::[ \t]*(.*?)[ \t]*$")
_BLOCK_PROPERTY = re.compile(r"^[ \t]*(?:[-*][ \t]+)?[a-z][\w-]*::(?:[ \t].*)?(?:\n|\Z)", re.M)
_CODE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|`[^`\n]*`", re.S)
_BLANK_LINES = re.compile(r"\n{3,}")


@dataclass(frozen=True)
class Link:
    """One wiki link: the page it names (as written), its key, the heading or block, the alias."""

    page: str
    key: str
    section: str = ""
    alias: str = ""


@dataclass
class Markup:
    """What a note's body says besides its text."""

    body: str
    links: list[Link] = field(default_factory=list)
    embeds: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)


def page_key(name: str) -> str:
    """The key of a page name or link target: the last path part, no ``.md``, case-folded,
    spaces squashed (``People/Ana Ribeiro.md`` → ``ana ribeiro``)."""
    name = name.replace("\\", "/").rsplit("/", 1)[-1].strip()
    if name.lower().endswith((".md", ".markdown")):
        name = name.rsplit(".", 1)[0]
    return " ".join(name.casefold().split())


def parse_link(inner: str) -> Link | None:
    """The parts of ``[[inner]]``: ``Page#heading|alias`` → Link; None when it names no page
    (``[[#heading]]``, a link inside the same note)."""
    target, _, alias = inner.partition("|")
    page, _, section = target.partition("#")
    page = page.strip()
    if page.lower().endswith((".md", ".markdown")):
        page = page.rsplit(".", 1)[0]
    shown = page.replace("\\", "/").rsplit("/", 1)[-1].strip()
    key = page_key(page)
    if not key:
        return None
    return Link(shown, key, section.strip().lstrip("^"), alias.strip())


def links_in(text: str) -> list[tuple[int, int, Link]]:
    """(start, end, link) of each wiki link and ``#[[tag link]]`` in ``text``, embeds left out."""
    found: list[tuple[int, int, Link]] = []
    for match in WIKI_LINK.finditer(text):
        if match.group(1):
            continue
        start = match.start()
        if start > 0 and text[start - 1] == "#":
            start -= 1  # Logseq's #[[multi word]]: the tag is part of the link
        link = parse_link(match.group(2))
        if link is not None:
            found.append((start, match.end(), link))
    return found


def tags_in(text: str) -> list[str]:
    """Inline ``#tags`` in order, without ``#``, each once (code spans and blocks left out)."""
    seen: dict[str, None] = {}
    for match in TAG.finditer(_CODE.sub(" ", text)):
        tag = (match.group(1) or match.group(2) or "").strip().rstrip("/-")
        if tag:
            seen.setdefault(tag, None)
    return list(seen)


def split_properties(body: str) -> tuple[dict[str, str], str]:
    """Logseq page properties (``key:: value`` lines at the top) and the body without them or
    any block property line further down."""
    props: dict[str, str] = {}
    lines = body.split("\n")
    first = 0
    while first < len(lines):
        match = _PROPERTY.match(lines[first])
        if not match:
            break
        props.setdefault(match.group(1).casefold(), match.group(2))
        first += 1
    rest = "\n".join(lines[first:])
    rest = _BLOCK_PROPERTY.sub("", rest)
    return props, rest


def property_list(value: str) -> list[str]:
    """A property value as a list: ``Ana, [[A.R.]], #friend`` → ``["Ana", "A.R.", "friend"]``."""
    out: list[str] = []
    for part in re.split(r",(?![^\[]*\]\])", value):
        part = part.strip().removeprefix("#").strip()
        if part.startswith("[[") and part.endswith("]]"):
            part = part[2:-2].strip()
        if part:
            out.append(part)
    return out


def read_markup(body: str) -> Markup:
    """Links, embeds, tags and Logseq properties of ``body``; the body without embeds and
    property lines (blank runs the removal leaves squashed)."""
    props, body = split_properties(body)
    embeds: list[str] = []

    def embed(match: re.Match[str]) -> str:
        target = match.group(2) if match.re is WIKI_LINK else match.group(1)
        target = target.split("|", 1)[0].strip()
        if target and target not in embeds:
            embeds.append(target)
        return ""

    body = WIKI_LINK.sub(lambda m: embed(m) if m.group(1) else m.group(0), body)
    body = _MD_EMBED.sub(embed, body)
    body = _BLANK_LINES.sub("\n\n", body).strip()
    code_free = _CODE.sub(" ", body)
    links: list[Link] = []
    seen: set[tuple[str, str]] = set()
    for _start, _end, link in links_in(code_free):
        if (link.key, link.section) not in seen:
            seen.add((link.key, link.section))
            links.append(link)
    return Markup(body, links, embeds, tags_in(body), props)
