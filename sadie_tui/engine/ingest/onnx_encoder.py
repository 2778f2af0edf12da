"""all-MiniLM-L6-v2 through ONNX Runtime and the ``tokenizers`` fast tokenizer: no torch.

The same computation as the packaged sentence-transformers pipeline (its ``modules.json``:
Transformer → mean Pooling → Normalize): texts stripped, tokenized with the packaged
``tokenizer.json`` truncated at ``max_seq_length`` (``sentence_bert_config.json``, 256; the
tokenizer file itself says 128 and pads to a fixed 128, which sentence-transformers
overrides), padded to the batch's longest, token embeddings averaged over the attention
mask and L2-normalised.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np


def max_seq_length(model_dir: Path) -> int:
    config = json.loads((model_dir / "sentence_bert_config.json").read_text(encoding="utf-8"))
    return int(config["max_seq_length"])


class OnnxEncoder:
    """Normalised float32 sentence vectors from an exported ONNX file (see ``onnx_export``)."""

    def __init__(self, model_dir: Path, onnx_path: Path) -> None:
        # lazy: ONNX Runtime loads with the model, off the start-up path
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.max_length = max_seq_length(model_dir)
        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=self.max_length)
        pad_id = tokenizer.token_to_id("[PAD]")
        tokenizer.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")
        self._tokenizer = tokenizer
        options = ort.SessionOptions()
        options.log_severity_level = 3  # errors only: nothing printed into a terminal UI
        self._session: ort.InferenceSession = ort.InferenceSession(
            str(onnx_path), options, providers=["CPUExecutionProvider"]
        )
        # ONNX Runtime's CPU arena keeps the largest batch's buffers for good: 64 chunks of
        # 256 tokens leave ~200 MB behind. A batch gives its buffers back when it is done;
        # single queries (the chat path) keep theirs, a few MB, and skip the shrinking.
        self._shrink = ort.RunOptions()
        self._shrink.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        cleaned = [str(t).strip() for t in texts]
        out = np.zeros((len(cleaned), 0), dtype=np.float32)
        # Longest first, so each batch pads little (sentence-transformers sorts the same way).
        order = np.argsort([-len(t) for t in cleaned], kind="stable")
        parts: list[np.ndarray] = []
        for start in range(0, len(order), batch_size):
            parts.append(self._batch([cleaned[i] for i in order[start : start + batch_size]]))
        if not parts:
            return out
        vectors = np.empty((len(cleaned), parts[0].shape[1]), dtype=np.float32)
        vectors[order] = np.concatenate(parts)
        return vectors

    def _batch(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.asarray([e.type_ids for e in encodings], dtype=np.int64)
        (tokens,) = self._session.run(
            None,
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
            self._shrink if len(texts) > 1 else None,
        )
        weights = mask[:, :, None].astype(np.float32)
        summed = (tokens * weights).sum(axis=1)
        pooled = summed / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.clip(norms, 1e-12, None), dtype=np.float32)
