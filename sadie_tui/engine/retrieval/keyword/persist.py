"""The keyword index on disk, in ``<home>/bm25/`` (sealed in ``<home>/bm25.sealed`` for an
encrypted memory: see ``sealed``), and its in-process cache.

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
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ....paths import keep_private, make_private_folder
from ...store.search import chunk_signature, keyword_index_source
from .bm25 import PARAMS, Bm25, Postings, array_bytes, load_array
from .catalogue import Catalogue
from .index import KeywordIndex, build_index
from .manifest import FORMAT, MANIFEST, DamagedIndex, check, consistent, write_manifest
from .sealed import read_sealed, sealed_path, write_sealed
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


def _pack(index: KeywordIndex) -> dict[str, bytes]:
    """The index's files, as bytes by name (the vectors apart: see ``save``)."""
    catalogue, bm25 = index.catalogue, index.bm25
    files = {
        "chunk_ids.npy": array_bytes(catalogue.chunk_ids),
        "episode.npy": array_bytes(catalogue.episode),
        "when.npy": array_bytes(catalogue.when),
        "idf.npy": array_bytes(bm25.idf),
        "salience.npy": array_bytes(catalogue.salience),
    }
    if bm25.retriever is not None:
        files.update(bm25.retriever.to_files())
    episodes = {"ids": catalogue.episode_ids, "titles": catalogue.titles, "kinds": catalogue.kinds}
    files["episodes.json"] = json.dumps(episodes).encode("utf-8")
    meta = {
        "format": FORMAT,
        "count": index.signature[0],
        "max_id": index.signature[1],
        "passage_length": bm25.passage_length,
    }
    files["meta.json"] = json.dumps(meta).encode("utf-8")
    return files


def _vector_bytes(index: KeywordIndex) -> bytes | None:
    if index.vectors is None:
        return None
    return array_bytes(np.asarray(index.vectors, dtype=np.float32))


def save(index: KeywordIndex, folder: Path) -> None:
    """Write ``index`` to ``folder`` (through a sibling temporary folder, then renames)."""
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    make_private_folder(tmp)
    for name, data in _pack(index).items():
        (tmp / name).write_bytes(data)
    vectors = _vector_bytes(index)
    if vectors is not None:
        (tmp / "vectors.npy").write_bytes(vectors)
    write_manifest(tmp, index.size)  # last: a save cut short has no manifest
    for written in tmp.iterdir():
        keep_private(written)  # written with the umask's mode
    # Renames only, so that a process killed at any point leaves the old index whole, no index
    # (rebuilt on the next search) or the new one whole, never a folder half deleted (which
    # would read as damaged).
    old = folder.with_name(folder.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        folder.rename(old)
    tmp.rename(folder)
    shutil.rmtree(old, ignore_errors=True)


def save_sealed(index: KeywordIndex, path: Path, key: bytes) -> None:
    """Write ``index`` sealed into the one file ``path`` (an encrypted memory's)."""
    files = _pack(index)
    vectors = _vector_bytes(index)
    if vectors is not None:
        files["vectors.npy"] = vectors
    write_sealed(path, files, key)


def _unpack(files: Mapping[str, bytes], vectors: np.ndarray | None) -> KeywordIndex:
    try:
        meta = json.loads(files["meta.json"].decode("utf-8"))
        retriever = Postings.from_files(files) if PARAMS in files else None
        episodes = json.loads(files["episodes.json"].decode("utf-8"))
        count = int(meta["count"])
        catalogue = Catalogue(
            load_array(files["chunk_ids.npy"]),
            load_array(files["episode.npy"]),
            load_array(files["when.npy"]),
            episode_ids=list(episodes["ids"]),
            titles=list(episodes["titles"]),
            kinds=list(episodes["kinds"]),
            salience=load_array(files["salience.npy"]),
        )
        bm25 = Bm25(
            retriever, load_array(files["idf.npy"]), float(meta["passage_length"]), catalogue.size
        )
        index = KeywordIndex(catalogue, bm25, (count, int(meta["max_id"])), vectors)
    except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:
        raise DamagedIndex(f"it cannot be read ({type(exc).__name__})") from exc
    consistent(index, count)
    return index


def load(folder: Path) -> KeywordIndex | None:
    """The index saved in ``folder``, or None when it is missing or of an older format;
    ``DamagedIndex`` when it does not match its manifest or its arrays disagree."""
    if check(folder) is not None:
        return None
    try:
        files = {
            p.name: p.read_bytes()
            for p in folder.iterdir()
            if p.is_file() and p.name not in ("vectors.npy", MANIFEST)
        }
        saved = folder / "vectors.npy"
        vectors = np.load(saved, mmap_mode="r") if saved.is_file() else None
    except (OSError, ValueError) as exc:
        raise DamagedIndex(f"it cannot be read ({type(exc).__name__})") from exc
    return _unpack(files, vectors)


def load_sealed(path: Path, key: bytes) -> KeywordIndex | None:
    """The index sealed in ``path``, or None when there is none or it is of an older format;
    ``DamagedIndex`` when it does not open or its arrays disagree."""
    files = read_sealed(path, key)
    if files is None:
        return None
    try:
        if json.loads(files["meta.json"].decode("utf-8")).get("format") != FORMAT:
            return None
        vectors = load_array(files["vectors.npy"]) if "vectors.npy" in files else None
    except (KeyError, ValueError, AttributeError) as exc:
        raise DamagedIndex(f"it cannot be read ({type(exc).__name__})") from exc
    return _unpack(files, vectors)


def _store(index: KeywordIndex, memory: Memory) -> None:
    key = memory.db.files_key
    if key is not None:
        save_sealed(index, sealed_path(memory.home), key)
    else:
        save(index, index_dir(memory.home))


def _stored(memory: Memory) -> KeywordIndex | None:
    key = memory.db.files_key
    if key is not None:
        return load_sealed(sealed_path(memory.home), key)
    return load(index_dir(memory.home))


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
                _store(index, memory)
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
        loaded = _stored(memory)
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
