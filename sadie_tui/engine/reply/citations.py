"""Citation policing: turning the reply's citations tail into checked citations.

This module owns what happens to the text the stream filter diverted after the
citations marker:

* **Parsing** (:func:`parse_tail`): the JSON array a small model writes, with the
  unambiguous slips repaired: a code fence around it, prose or a colon before
  it, single-quoted strings, trailing commas, a single object instead of a list,
  ``episode_id`` instead of ``episode``. Truncated JSON keeps the complete
  objects that parse. Nothing here raises, and the prose is never touched.
* **Grounding**: a citation must name an episode that was in the briefing;
  ids are matched ignoring case, surrounding whitespace, braces and an
  ``episode`` prefix, and a unique prefix of at least 8 hex digits is accepted.
  Anything else is dropped.
* **Grading** (:func:`grade`): the spec's table. ``verbatim`` is a guarantee that
  the quote, compared whitespace-squashed and case-folded, is in that episode's
  text; ``inference`` is never checked.

Pure: no I/O and no UI imports.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..jsonvalue import JSON, JSONObject

__all__ = [
    "SUPPORT_LABELS",
    "Citation",
    "PolicedCitations",
    "find_at_words",
    "grade",
    "is_placeholder",
    "normalise",
    "note_span",
    "parse_tail",
    "police",
    "split_trailing_list",
]

SUPPORT_LABELS = ("verbatim", "paraphrase", "inference")

_EPISODE_KEYS = ("episode", "episode_id", "episodeId", "episode id", "id")
# Straight, curly and angle quotation marks a model wraps a quote in.
_QUOTE_CHARS = "\"'\u201c\u201d\u2018\u2019\u00ab\u00bb\u201e"
_MIN_PREFIX_HEX = 8

_DECODER = json.JSONDecoder(strict=False)
_WS = re.compile(r"\s+")
_FENCE = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\r?\n?(.*?)(?:```|\Z)", re.DOTALL)
_HEX = re.compile(r"[0-9a-f-]+")
_EPISODE_PREFIX = re.compile(r"^episode\b[\s:#=-]*", re.IGNORECASE)


@dataclass(frozen=True)
class Citation:
    episode_id: str
    quote: str
    support: str  # final label after re-grading
    claimed: str  # what the model claimed
    # Why the quote does not establish the sentence it backs ("" when it does, or before the
    # check: ``claims``); a doubted citation weighs nothing in the grounding score.
    doubt: str = ""


@dataclass(frozen=True)
class PolicedCitations:
    citations: tuple[Citation, ...]
    dropped: tuple[JSONObject, ...]
    parse_error: str | None


# -- parsing ------------------------------------------------------------------


def parse_tail(tail: str) -> tuple[list[JSONObject], str | None]:
    """Parse the citations tail into raw entries (dicts) and an error, if any."""
    items, error = _parse_items(tail)
    return [item for item in items if isinstance(item, dict)], error


def _parse_items(tail: str) -> tuple[list[JSON], str | None]:
    text = (tail or "").strip()
    if not text:
        return [], None
    fence = _FENCE.search(text)
    if fence is not None and ("[" in fence.group(1) or "{" in fence.group(1)):
        text = fence.group(1)
    starts = [i for i in (text.find("["), text.find("{")) if i >= 0]
    if not starts:
        return [], "no JSON list found after the citations marker"
    text = text[min(starts) :]

    value, ok = _decode(text)
    if not ok:
        value, ok = _decode(_repair(text))
    if ok:
        return _as_items(value)
    salvaged = _salvage(_repair(text))
    if salvaged:
        return salvaged, None
    return [], "could not parse the citations JSON"


def _decode(text: str) -> tuple[JSON, bool]:
    try:
        value: JSON
        value, _ = _DECODER.raw_decode(text)
    except (ValueError, RecursionError):
        return None, False
    return value, True


def _as_items(value: JSON) -> tuple[list[JSON], str | None]:
    if isinstance(value, dict):
        inner = value.get("citations")
        if isinstance(inner, list) and not any(k in value for k in _EPISODE_KEYS):
            return list(inner), None
        return [value], None
    if isinstance(value, list):
        return list(value), None
    return [], "citations JSON is not a list"


def _repair(text: str) -> str:
    """Rewrite single-quoted strings as JSON strings and drop trailing commas."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif ch == "'":
            j = i + 1
            buf: list[str] = []
            while j < n and text[j] != "'":
                c = text[j]
                if c == "\\" and j + 1 < n:
                    nxt = text[j + 1]
                    buf.append("'" if nxt == "'" else c + nxt)
                    j += 2
                    continue
                buf.append('\\"' if c == '"' else c)
                j += 1
            out.append('"' + "".join(buf) + ('"' if j < n else ""))
            i = j + 1
        elif ch == ",":
            k = i + 1
            while k < n and text[k].isspace():
                k += 1
            if k >= n or text[k] not in "]}":
                out.append(ch)
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _salvage(text: str) -> list[JSON]:
    """Objects that are complete and parse, from JSON cut off or broken elsewhere."""
    found: list[JSON] = []
    stack: list[str] = []
    start = -1
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if ch in "[{":
            # Only objects at the top level or directly inside the top list count.
            if ch == "{" and stack in ([], ["["]):
                start = i
            stack.append(ch)
        elif ch in "]}":
            if stack:
                stack.pop()
            if ch == "}" and start >= 0 and stack in ([], ["["]):
                value, ok = _decode(text[start : i + 1])
                if ok and isinstance(value, dict):
                    found.append(value)
                start = -1
        i += 1
    return found


# -- grading ------------------------------------------------------------------


def normalise(text: str) -> str:
    """Whitespace squashed to single spaces, stripped, case-folded."""
    return _WS.sub(" ", text).strip().casefold()


def _clean_quote(quote: str) -> str:
    previous = None
    q = quote
    while q != previous:
        previous = q
        q = q.strip().strip(_QUOTE_CHARS)
        for ellipsis in ("...", "…"):
            q = q.removeprefix(ellipsis).removesuffix(ellipsis)
    return q


def _claim_label(claimed: JSON) -> str:
    label = claimed.strip().lower() if isinstance(claimed, str) else ""
    return label if label in SUPPORT_LABELS else "paraphrase"


def grade(claimed: str, quote: str, texts: Sequence[str]) -> str:
    """Final support label for a quote from an episode whose texts are given."""
    if _claim_label(claimed) == "inference":
        return "inference"
    found = _found(normalise(_clean_quote(quote)), _normalised_texts(texts))
    return "verbatim" if found else "paraphrase"


def _normalised_texts(texts: Sequence[str] | str) -> list[str]:
    if isinstance(texts, str):
        texts = [texts]
    return [normalise(t) for t in texts if isinstance(t, str)]


def _found(needle: str, haystacks: Sequence[str]) -> bool:
    return bool(needle) and any(find_at_words(needle, hay) >= 0 for hay in haystacks)


_APOSTROPHES = "'\u2019"


def _inside_word(text: str, i: int) -> bool:
    """Whether ``text[i]`` is a letter or digit of a word, or an apostrophe between two
    (the ``'`` of "don't")."""
    if not 0 <= i < len(text):
        return False
    ch = text[i]
    if ch.isalnum():
        return True
    return ch in _APOSTROPHES and _inside_word(text, i - 1) and _inside_word(text, i + 1)


def find_at_words(needle: str, hay: str, start: int = 0) -> int:
    """Where ``needle`` occurs in ``hay`` starting and ending on word boundaries, or -1.

    "happy with my job" is not in "I am unhappy with my job": a quote cut mid-word changes
    what the note says, so it is never verbatim. A needle that begins (ends) with a mark
    rather than a letter needs no boundary on that side."""
    if not needle:
        return -1
    head, tail = needle[0].isalnum(), needle[-1].isalnum()
    at = hay.find(needle, start)
    while at >= 0:
        end = at + len(needle)
        before = head and (_inside_word(hay, at - 1) or (at > 0 and hay[at - 1] in _APOSTROPHES))
        after = tail and (
            _inside_word(hay, end)
            or (end < len(hay) and hay[end] in _APOSTROPHES and _inside_word(hay, end + 1))
        )
        if not before and not after:
            return at
        at = hay.find(needle, at + 1)
    return -1


def _folded_with_offsets(text: str) -> tuple[str, list[int]]:
    """``text`` as :func:`normalise` folds it (before the strip), with, for each folded
    character, the offset in ``text`` of the character it came from."""
    out: list[str] = []
    at: list[int] = []
    in_space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            if not in_space:
                out.append(" ")
                at.append(i)
            in_space = True
            continue
        in_space = False
        for folded in ch.casefold():
            out.append(folded)
            at.append(i)
    return "".join(out), at


def _folded_texts(texts: Sequence[str]) -> list[tuple[str, str, list[int]]]:
    """Each text with its folded form and offsets (``_folded_with_offsets``)."""
    return [(t, *_folded_with_offsets(t)) for t in texts if isinstance(t, str)]


def _span_in(needle: str, folded: Sequence[tuple[str, str, list[int]]]) -> str | None:
    """The note's own words that the normalised ``needle`` matches, or None."""
    if not needle:
        return None
    for text, folded_text, at in folded:
        start = find_at_words(needle, folded_text)
        if start >= 0:
            end = start + len(needle) - 1
            # The note's own characters; a line break inside is a space in a one-line quote.
            return " ".join(text[at[start] : at[end] + 1].split())
    return None


def note_span(quote: str, texts: Sequence[str]) -> str | None:
    """The words of the note that ``quote`` matches (whitespace squashed, case folded), as
    the note writes them: a verbatim quote is shown in the note's case and spacing, not the
    model's ("I'm a marathoner", never "I'M A MARATHONER")."""
    return _span_in(normalise(_clean_quote(quote)), _folded_texts(texts))


# -- grounding ----------------------------------------------------------------


def _clean_id(raw: str) -> str:
    s = raw.strip().strip(_QUOTE_CHARS + "{}[]<>()").strip()
    s = _EPISODE_PREFIX.sub("", s)
    s = s.strip().strip("{}[]<>()").strip()
    for ellipsis in ("...", "…"):
        s = s.removesuffix(ellipsis)
    return s.strip().lower()


def _resolve(raw: str, ids: Mapping[str, str]) -> tuple[str | None, str]:
    """Map a cited id onto a shown episode id, or say why it cannot be."""
    cleaned = _clean_id(raw)
    if cleaned in ids:
        return ids[cleaned], ""
    hex_digits = cleaned.replace("-", "")
    if _HEX.fullmatch(cleaned) and len(hex_digits) >= _MIN_PREFIX_HEX:
        # Compared without hyphens: a small model drops or truncates them too.
        matches = [key for key in ids if key.replace("-", "").startswith(hex_digits)]
        if len(matches) == 1:
            return ids[matches[0]], ""
        if len(matches) > 1:
            return None, "ambiguous episode"
    return None, "unknown episode"


# -- placeholders ---------------------------------------------------------------

# Words of the prompt's example and of the usual "fill this in" templates: a quote made of
# them was copied from the instruction, not from a note.
_PLACEHOLDER_WORDS = frozenset(
    "words copied exactly from that the this excerpt excerpts quote quoted exact text here "
    "your note notes verbatim paraphrase inference episode id uuid handle insert put write "
    "copy a an of from".split()
)
_BRACKETED = re.compile(r"^\s*[<\[{(].*[>\]})]\s*$", re.DOTALL)


def is_placeholder(quote: str) -> bool:
    """An empty quote, a bracketed template (``<…>``, ``[…]``) or one made only of the
    example's own words (``exact words from that excerpt``)."""
    q = _clean_quote(quote or "")
    if not q.strip(" .…-_*"):
        return True
    if _BRACKETED.match(q):
        return True
    words = re.findall(r"[\w']+", q.casefold())
    return bool(words) and all(w in _PLACEHOLDER_WORDS for w in words)


# -- a citation list with no marker ----------------------------------------------

_LIST_HEADING = re.compile(
    r"(?:^|\n)[ \t]*(?:[#>*_ \t]*)(?:@@\s*)?(?:citations?|sources?|references?)"
    r"(?:\s*@@)?[*_ \t]*:?[*_ \t]*\r?\n?[ \t]*\Z",
    re.IGNORECASE,
)


# What _repair changes: without a single quote or a trailing comma it is the identity, and
# skipping it keeps 200 tries on a reply ending in brackets to 200 scans in C.
_REPAIRABLE = re.compile(r"'|,\s*(?:[\]}]|\Z)")


def split_trailing_list(text: str) -> tuple[str, str] | None:
    """A JSON citation list at the very end of a reply that has no marker: ``(prose, list)``.

    Only a list (or ``{"citations": […]}``) whose every entry is an object naming an
    episode or a quote counts, so prose that merely ends in brackets is never hidden. A
    heading right before it (``Citations:``, ``**Sources**``, ``@@ citations @@``) goes
    with the list.
    """
    body = text.rstrip()
    fence = re.search(r"```[A-Za-z0-9_+-]*[ \t]*\r?\n(.*?)```\Z", body, re.DOTALL)
    end_block = fence.group(1).strip() if fence else body
    if not end_block.endswith(("]", "}")):
        return None
    opener = "[" if end_block.endswith("]") else "{"
    # Try each opener from the last line backwards; the first that parses to the end wins.
    search_in = end_block
    pos = len(search_in)
    for _ in range(200):
        pos = search_in.rfind(opener, 0, pos)
        if pos < 0:
            return None
        candidate = search_in[pos:]
        value, ok = _decode_whole(candidate)
        if not ok and _REPAIRABLE.search(candidate):
            value, ok = _decode_whole(_repair(candidate))
        if ok and _is_citation_list(value):
            cut = (fence.start() if fence else 0) + (0 if fence else pos)
            if fence:
                prose = body[: fence.start()]
            else:
                prose = body[:cut]
            heading = _LIST_HEADING.search(prose)
            if heading is not None:
                prose = prose[: heading.start()]
            return prose.rstrip(), candidate
    return None


def _decode_whole(text: str) -> tuple[JSON, bool]:
    try:
        value: JSON
        value, end = _DECODER.raw_decode(text)
    except (ValueError, RecursionError):
        return None, False
    return value, not text[end:].strip()


def _is_citation_list(value: JSON) -> bool:
    if isinstance(value, dict):
        if isinstance(value.get("citations"), list):
            value = value["citations"]
        else:
            value = [value]
    if not isinstance(value, list) or not value:
        return False
    keys = (*_EPISODE_KEYS, "quote")
    return all(isinstance(v, dict) and any(k in v for k in keys) for v in value)


# -- policing -----------------------------------------------------------------

_RANK = {"verbatim": 0, "paraphrase": 1, "inference": 2}


def police(tail: str, shown: Mapping[str, Sequence[str]]) -> PolicedCitations:
    """Parse, ground and re-grade the citations of one reply."""
    items, error = _parse_items(tail)
    ids = {_clean_id(key): key for key in shown}
    folded: dict[str, list[tuple[str, str, list[int]]]] = {}
    dropped: list[JSONObject] = []
    kept: list[Citation] = []
    index: dict[tuple[str, str], int] = {}

    for item in items:
        if not isinstance(item, dict):
            dropped.append({"entry": item, "reason": "malformed entry"})
            continue
        raw_id = next((item[k] for k in _EPISODE_KEYS if k in item), None)
        quote = item.get("quote", "")
        if quote is None:
            quote = ""
        if not isinstance(raw_id, str) or not isinstance(quote, str):
            dropped.append({**item, "reason": "malformed entry"})
            continue
        episode, reason = _resolve(raw_id, ids)
        if episode is None:
            dropped.append({**item, "reason": reason})
            continue
        if is_placeholder(quote):
            # An empty quote or one copied from the instruction's example grounds nothing.
            dropped.append(
                {**item, "reason": "empty quote" if not quote.strip() else "placeholder"}
            )
            continue

        claimed_raw = item.get("support")
        claimed = claimed_raw.strip().lower() if isinstance(claimed_raw, str) else ""
        cleaned = _clean_quote(quote)
        if _claim_label(claimed) == "inference":
            support = "inference"
        else:
            if episode not in folded:
                folded[episode] = _folded_texts(shown[episode])
            # Found whitespace-squashed and case-folded; shown as the note writes it.
            span = _span_in(normalise(cleaned), folded[episode])
            support = "verbatim" if span is not None else "paraphrase"
            cleaned = span if span is not None else cleaned
        citation = Citation(episode_id=episode, quote=cleaned, support=support, claimed=claimed)

        key = (episode, normalise(cleaned))
        if key in index:
            at = index[key]
            if _RANK[support] < _RANK[kept[at].support]:
                kept[at] = citation
            dropped.append({**item, "reason": "duplicate"})
            continue
        index[key] = len(kept)
        kept.append(citation)

    return PolicedCitations(citations=tuple(kept), dropped=tuple(dropped), parse_error=error)
