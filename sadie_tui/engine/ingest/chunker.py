"""Splitting an episode's text into chunks of at most 1600 characters.

Paragraphs first, then sentences, then words; a word longer than the cap is hard-cut.
Deterministic, and never an empty chunk.
"""

from __future__ import annotations

import re

MAX_CHARS = 1600

_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"(?<=[.!?…。！？])\s+")


def _pieces(text: str, limit: int) -> list[tuple[str, str]]:
    """Units no longer than ``limit`` with the separator that joins them to the previous one."""
    out: list[tuple[str, str]] = []
    for para in _PARAGRAPH.split(text):
        para = para.strip()
        if not para:
            continue
        if len(para) <= limit:
            out.append(("\n\n", para))
            continue
        sep = "\n\n"
        for sentence in _SENTENCE.split(para):
            sentence = sentence.strip()
            if not sentence:
                continue
            parts = [sentence] if len(sentence) <= limit else _split_words(sentence, limit)
            for part in parts:
                out.append((sep, part))
                sep = " "
    return out


def _split_words(text: str, limit: int) -> list[str]:
    out: list[str] = []
    current = ""
    for word in text.split():
        while len(word) > limit:
            if current:
                out.append(current)
                current = ""
            out.append(word[:limit])
            word = word[limit:]
        if not word:
            continue
        candidate = f"{current} {word}" if current else word
        if len(candidate) <= limit:
            current = candidate
        else:
            out.append(current)
            current = word
    if current:
        out.append(current)
    return out


def chunk_text(text: str, limit: int = MAX_CHARS) -> list[str]:
    """Greedy packing of pieces into chunks; paragraphs rejoin with a blank line."""
    chunks: list[str] = []
    current = ""
    for joiner, piece in _pieces(text, limit):
        sep = joiner if current else ""
        if len(current) + len(sep) + len(piece) <= limit:
            current = current + sep + piece
        else:
            if current:
                chunks.append(current)
            current = piece
    if current:
        chunks.append(current)
    return chunks
