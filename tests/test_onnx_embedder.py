"""The ONNX embedder: the same vectors as sentence-transformers on the demo memory's real
chunks, a damaged file exported again, a missing onnxruntime falling back with one notice."""

from __future__ import annotations

import builtins
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from sadie_tui.engine.ingest.chunker import chunk_text
from sadie_tui.engine.ingest.embedder import Embedder, model_path
from sadie_tui.engine.ingest.onnx_export import OnnxFile
from sadie_tui.engine.ingest.readers import read_all
from sadie_tui.paths import demo_source


@pytest.fixture(scope="module")
def exported(embedder, onnx_cache: Path) -> Path:
    """The session's cache, holding a real export from the packaged weights."""
    assert embedder.running == "onnx"
    return onnx_cache


def demo_texts() -> list[str]:
    """Every text ingest embeds from the demo memory: episode chunks, beliefs, observations."""
    result = read_all([demo_source()])
    texts = [chunk for ep in result.episodes for chunk in chunk_text(ep.text)]
    for item in result.derived:
        if item.table in ("beliefs", "observations"):
            texts.append(item.fields.get("statement") or item.fields["text"])
    return texts


def test_onnx_matches_sentence_transformers_on_every_demo_chunk(exported: Path, embedder):
    texts = demo_texts()
    assert len(texts) > 300
    onnx = Embedder(backend="onnx", cache=exported).encode(texts)
    reference = Embedder(backend="torch").encode(texts)
    cosines = np.sum(onnx * reference, axis=1)
    worst = int(np.argmin(cosines))
    assert cosines.min() >= 0.999, (cosines.min(), texts[worst][:80])
    assert np.allclose(np.linalg.norm(onnx, axis=1), 1.0, atol=1e-5)


def test_long_text_is_cut_where_sentence_transformers_cuts(exported: Path):
    """256 tokens (the packaged sentence_bert_config), not the tokenizer file's 128."""
    words = " ".join(f"word{i}" for i in range(600))
    onnx = Embedder(backend="onnx", cache=exported)
    torch_side = Embedder(backend="torch")
    a, b = onnx.encode_one(words), torch_side.encode_one(words)
    assert float(a @ b) >= 0.999
    # and batches mixing lengths pad without changing any vector
    batch = onnx.encode(["short one", words, "  padded   "])
    assert float(batch[0] @ onnx._encode(["short one"], 1)[0]) >= 0.99999
    assert float(batch[2] @ torch_side.encode_one("padded")) >= 0.999


@pytest.mark.parametrize("damage", ["truncate", "flip", "stale", "no-record"])
def test_a_damaged_or_stale_file_is_exported_again(exported: Path, tmp_path: Path, damage):
    cache = tmp_path / "cache"
    shutil.copytree(exported, cache)
    target = OnnxFile.for_model(Path(model_path()), cache)
    assert target.valid()
    if damage == "truncate":
        with target.path.open("r+b") as f:
            f.truncate(target.path.stat().st_size // 3)
    elif damage == "flip":
        with target.path.open("r+b") as f:
            f.seek(target.path.stat().st_size // 2)
            byte = f.read(1)
            f.seek(-1, 1)
            f.write(bytes([byte[0] ^ 0xFF]))
    elif damage == "stale":
        meta = json.loads(target.meta.read_text())
        meta["source"] = "format 0; an older exporter"
        target.meta.write_text(json.dumps(meta))
    else:
        target.meta.unlink()
    assert not target.valid()
    embedder = Embedder(backend="onnx", cache=cache)
    vector = embedder.encode_one("Finished the Lisbon marathon in 3:58.")
    assert embedder.running == "onnx"
    assert target.valid()
    reference = Embedder(backend="onnx", cache=exported).encode_one(
        "Finished the Lisbon marathon in 3:58."
    )
    assert float(vector @ reference) >= 0.99999
    assert not list(cache.glob("models/.*.tmp"))  # no temporary file left behind


def test_a_file_onnxruntime_refuses_is_exported_again(exported: Path, tmp_path: Path):
    """Garbage with a matching record (as if the record were written by a buggy exporter)."""
    import hashlib

    cache = tmp_path / "cache"
    shutil.copytree(exported, cache)
    target = OnnxFile.for_model(Path(model_path()), cache)
    target.path.write_bytes(b"not an onnx model")
    meta = json.loads(target.meta.read_text())
    meta.update(size=17, sha256=hashlib.sha256(b"not an onnx model").hexdigest())
    target.meta.write_text(json.dumps(meta))
    assert target.valid()
    embedder = Embedder(backend="onnx", cache=cache)
    embedder.warm()
    assert embedder.running == "onnx"
    assert target.path.stat().st_size > 1_000_000


def test_missing_onnxruntime_falls_back_with_one_notice(
    exported: Path, monkeypatch: pytest.MonkeyPatch, embedder
):
    real_import = builtins.__import__

    def refuse(name, *args, **kwargs):
        if name == "onnxruntime" or name.startswith("onnxruntime."):
            raise ModuleNotFoundError("No module named 'onnxruntime'", name="onnxruntime")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse)
    notices: list[str] = []
    fallback = Embedder(cache=exported, on_notice=notices.append)
    vector = fallback.encode_one("Ran 18 km along the Tagus with Ines.")
    assert fallback.running == "sentence-transformers"
    assert notices == [fallback.notice]
    assert notices[0].startswith("onnxruntime is not installed; embedding with sentence")
    assert "\n" not in notices[0]
    assert vector.shape == (384,)


def test_an_export_that_fails_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder):
    from sadie_tui.engine.ingest import onnx_export

    def broken(model_dir, target):
        raise OSError("No space left on device")

    monkeypatch.setattr(onnx_export, "export", broken)
    notices: list[str] = []
    fallback = Embedder(cache=tmp_path / "cache", on_notice=notices.append)
    fallback.warm()
    assert fallback.running == "sentence-transformers"
    assert len(notices) == 1 and "No space left on device" in notices[0]


def test_the_default_notice_is_one_stderr_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, embedder
):
    from sadie_tui.engine.ingest import onnx_export

    monkeypatch.setattr(onnx_export, "export", lambda *a: (_ for _ in ()).throw(OSError("full")))
    Embedder(cache=tmp_path / "cache").warm()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("sadie: the ONNX model could not be made")


def test_the_install_step_leaves_a_valid_file_alone(exported: Path, capsys) -> None:
    """`make install` runs ``python -m sadie_tui.engine.ingest.onnx_export``."""
    from sadie_tui.engine.ingest import onnx_export

    before = OnnxFile.for_model(Path(model_path()), exported).path.stat().st_mtime_ns
    onnx_export.main()
    out = capsys.readouterr().out
    assert out.startswith("embedding model for ONNX Runtime up to date: ")
    assert str(exported) in out
    assert OnnxFile.for_model(Path(model_path()), exported).path.stat().st_mtime_ns == before
