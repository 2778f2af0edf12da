"""The keyword index on disk, in ``<home>/bm25/``, and its in-process cache.

Loaded lazily on the first search. The index remembers the chunk count and largest chunk id it
was built from, so a missing or stale index (an ingest by another process, a crash before the
rebuild) is rebuilt on the next search instead of answering from old text.

A memory that ``keep_current`` was given rebuilds its index after every write that changed
its notes (an ingest, notes removed), so the next search, here or in the next process, finds
it built.

A damaged index (a file truncated, replaced or gone: see ``manifest``) is rebuilt from the
database and said once (``take_notices``).
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ....paths import keep_private, make_private_folder
from ...store.search import chunk_signature, keyword_index_source
from .bm25 import PARAMS, Bm25, Postings
from .catalogue import Catalogue
from .index import KeywordIndex, build_index
from .manifest import FORMAT, DamagedIndex, check, consistent, write_manifest
from .tokens import keyword_text

if TYPE_CHECKING:
    from ...memory import Memory as Writable
    from .memory_view import MemoryFiles as Memory  # what a search needs of a memory

INDEX_DIR = "bm25"

_cache: dict[str, KeywordIndex] = {}
_cache_lock = threading.Lock()
_build_lock = threading.Lock()
_notices: dict[str, list[str]] = {}


def index_dir(home: Path) -> Path:
    return Path(home) / INDEX_DIR


def _note(home: Path, text: str) -> None:
    with _cache_lock:
        _notices.setdefault(str(home), []).append(text)


def take_notices(home: Path) -> list[str]:
    """What happened to ``home``'s index since last asked (a damaged one rebuilt), once."""
    with _cache_lock:
        return _notices.pop(str(home), [])


def save(index: KeywordIndex, folder: Path) -> None:
    """Write ``index`` to ``folder`` (through a sibling temporary folder, then renames)."""
    catalogue, bm25 = index.catalogue, index.bm25
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    make_private_folder(tmp)
    np.save(tmp / "chunk_ids.npy", catalogue.chunk_ids)
    np.save(tmp / "episode.npy", catalogue.episode)
    np.save(tmp / "when.npy", catalogue.when)
    np.save(tmp / "idf.npy", bm25.idf)
    if bm25.retriever is not None:
        bm25.retriever.save(tmp)
    np.save(tmp / "salience.npy", catalogue.salience)
    if index.vectors is not None:
        np.save(tmp / "vectors.npy", np.asarray(index.vectors, dtype=np.float32))
    episodes = {"ids": catalogue.episode_ids, "titles": catalogue.titles, "kinds": catalogue.kinds}
    (tmp / "episodes.json").write_text(json.dumps(episodes), encoding="utf-8")
    meta = {
        "format": FORMAT,
        "count": index.signature[0],
        "max_id": index.signature[1],
        "passage_length": bm25.passage_length,
    }
    (tmp / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    write_manifest(tmp, index.size)  # last: a save cut short has no manifest
    for written in tmp.iterdir():
        keep_private(written)  # numpy and bm25s write with the umask's mode
    # Renames only, so that a process killed at any point leaves the old index whole, no index
    # (rebuilt on the next search) or the new one whole, never a folder half deleted (which
    # would read as damaged).
    old = folder.with_name(folder.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        folder.rename(old)
    tmp.rename(folder)
    shutil.rmtree(old, ignore_errors=True)


def load(folder: Path) -> KeywordIndex | None:
    """The index saved in ``folder``, or None when it is missing or of an older format;
    ``DamagedIndex`` when it does not match its manifest or its arrays disagree."""
    if check(folder) is not None:
        return None
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        retriever = None
        if (folder / PARAMS).is_file():
            retriever = Postings.load(folder)
        episodes = json.loads((folder / "episodes.json").read_text(encoding="utf-8"))
        saved = folder / "vectors.npy"
        vectors = np.load(saved, mmap_mode="r") if saved.is_file() else None
        count = int(meta["count"])
        catalogue = Catalogue(
            np.load(folder / "chunk_ids.npy"),
            np.load(folder / "episode.npy"),
            np.load(folder / "when.npy"),
            episode_ids=list(episodes["ids"]),
            titles=list(episodes["titles"]),
            kinds=list(episodes["kinds"]),
            salience=np.load(folder / "salience.npy"),
        )
        bm25 = Bm25(
            retriever, np.load(folder / "idf.npy"), float(meta["passage_length"]), catalogue.size
        )
        index = KeywordIndex(catalogue, bm25, (count, int(meta["max_id"])), vectors)
    except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:
        raise DamagedIndex(f"it cannot be read ({type(exc).__name__})") from exc
    consistent(index, count)
    return index


def rebuild_keyword_index(memory: Memory) -> KeywordIndex:
    """Build the index from every chunk and persist it (best effort on a read-only home)."""
    with _build_lock:
        source = keyword_index_source(memory.db)
        details = zip(source.episodes, source.titles, source.kinds, source.salience, strict=True)
        texts = [
            keyword_text(text, title, kind)
            for text, title, kind in zip(source.texts, source.titles, source.kinds, strict=True)
        ]
        index = build_index(
            source.chunk_ids,
            texts,
            source.episodes,
            source.occurred_at,
            {episode: (title, kind, salience) for episode, title, kind, salience in details},
            vectors=source.embeddings,
        )
        if not memory.db.read_only:
            try:
                save(index, index_dir(memory.home))
            except OSError:
                pass  # the in-memory index still serves; the next process rebuilds it
        with _cache_lock:
            _cache[str(memory.home)] = index
    return index


def keep_current(memory: Writable) -> None:
    """Rebuild ``memory``'s index after each of its writes (``Memory.after_write``)."""
    memory.after_write(rebuild_keyword_index)


def keyword_index(memory: Memory, signature: tuple[int, int] | None = None) -> KeywordIndex:
    """The current index for ``memory``: cached, else loaded, else rebuilt if stale or missing.

    ``signature``: the chunks' ``store.search.chunk_signature`` when the caller just read it."""
    signature = signature or chunk_signature(memory.db)
    key = str(memory.home)
    with _cache_lock:
        cached = _cache.get(key)
    if cached is not None and cached.signature == signature:
        return cached
    try:
        loaded = load(index_dir(memory.home))
    except DamagedIndex as exc:
        loaded = None
        _note(memory.home, f"the keyword index was damaged ({exc}): rebuilt it from the memory")
    if loaded is not None and loaded.signature == signature:
        with _cache_lock:
            _cache[key] = loaded
        return loaded
    return rebuild_keyword_index(memory)


def forget_cached(home: Path) -> None:
    """Drop the in-process copy (tests, and a home that was deleted)."""
    with _cache_lock:
        _cache.pop(str(home), None)
