"""The keyword index's manifest: written last by a save, it lists every file with its size
and sha256, so a file truncated, replaced or gone since is found on load (and by doctor).

``check`` compares the folder with its manifest; ``consistent`` checks what a manifest cannot
vouch for, that the loaded arrays agree with each other.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .index import KeywordIndex

FORMAT = 9  # bump when tokenisation or the catalogue change: older indexes then rebuild
MANIFEST = "manifest.json"


class DamagedIndex(Exception):
    """The saved index does not match its manifest; the message says which file and how."""


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            sha.update(block)
    return sha.hexdigest()


def write_manifest(folder: Path, rows: int) -> None:
    """List every file in ``folder`` (call it after the last one is written)."""
    files = {
        p.name: {"bytes": p.stat().st_size, "sha256": _digest(p)}
        for p in sorted(folder.iterdir())
        if p.is_file()
    }
    manifest = {"format": FORMAT, "rows": rows, "files": files}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")


def check(folder: Path) -> str | None:
    """Whether the index saved in ``folder`` can be loaded: None when it is sound, "missing"
    or "outdated" (of an older format); raises ``DamagedIndex`` when a file is gone,
    truncated or changed since it was written."""
    if not folder.is_dir():
        return "missing"
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT:
            return "outdated"
    except (OSError, ValueError, AttributeError):
        pass  # the manifest says what is wrong with it
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        files = {
            str(name): (int(f["bytes"]), str(f["sha256"])) for name, f in manifest["files"].items()
        }
        int(manifest["rows"])
    except FileNotFoundError as exc:
        raise DamagedIndex("its manifest is missing") from exc
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DamagedIndex("its manifest is unreadable") from exc
    for name, (length, digest) in sorted(files.items()):
        if Path(name).name != name:
            raise DamagedIndex(f"its manifest names {name!r}, outside the index")
        path = folder / name
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise DamagedIndex(f"{name} is missing") from exc
        if size != length:
            raise DamagedIndex(f"{name} has {size} bytes, not {length}")
        if _digest(path) != digest:
            raise DamagedIndex(f"{name} has changed since it was written")
    return None


def consistent(index: KeywordIndex, rows: int) -> None:
    """Rows and episodes agree across the arrays (a manifest cannot vouch for a bug)."""
    catalogue = index.catalogue
    sizes = {len(catalogue.chunk_ids), len(catalogue.episode), len(catalogue.when), rows}
    if index.vectors is not None:
        sizes.add(index.vectors.shape[0])
    episodes = {
        len(catalogue.episode_ids),
        len(catalogue.titles),
        len(catalogue.kinds),
        len(catalogue.salience),
    }
    top = int(catalogue.episode.max()) + 1 if len(catalogue.episode) else 0
    if len(sizes) != 1 or len(episodes) != 1 or top > min(episodes):
        raise DamagedIndex("its arrays disagree on the number of chunks or episodes")
    retriever, idf = index.bm25.retriever, index.bm25.idf
    if retriever is not None:
        # bm25s keeps one more token, "", with no column of its own.
        ids = [i for token, i in retriever.vocab_dict.items() if token]
        if len(retriever.indptr) != len(idf) + 1 or max(ids, default=-1) >= len(idf):
            raise DamagedIndex("its vocabulary and scores disagree")
