"""The install step: the embedding model made ready before the first launch needs it.

``python -m sadie_tui.engine.ingest.prepare_model`` (``make install`` runs it) exports the
ONNX file (``onnx_export``) and embeds the emotion registers' fixed sentences through the
embedder (``Embedder.encode_fixed``). It sits above both, so the exporter never imports
the embedder that uses it.
"""

from __future__ import annotations

from pathlib import Path

from ..emotions import EmotionClassifier
from .embedder import Embedder, model_path
from .onnx_export import OnnxFile


def main() -> None:
    """``python -m sadie_tui.engine.ingest.prepare_model``: export now (``make install`` runs it,
    so the first launch does not pay for it); a valid file is left alone. The emotion
    registers' sentence vectors are embedded and kept too (``Embedder.encode_fixed``), so the
    first launch does not spend a second and ~30 MB of buffers on them either."""
    model_dir = Path(model_path())
    target = OnnxFile.for_model(model_dir)
    state = "up to date" if target.valid() else "exported"
    target.ensure(model_dir)
    print(f"embedding model for ONNX Runtime {state}: {target.path}")
    EmotionClassifier(Embedder(backend="onnx")).warm()


if __name__ == "__main__":
    main()
