"""The ONNX embedder: the same vectors as sentence-transformers on the demo memory's real
chunks, a damaged file exported again, a missing onnxruntime falling back with one notice."""

from __future__ import annotations

import builtins
import json
import os
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


@pytest.mark.parametrize(
    "damage",
    ["truncate", "flip", "truncate-weights", "flip-weights", "no-weights", "stale", "no-record"],
)
def test_a_damaged_or_stale_file_is_exported_again(exported: Path, tmp_path: Path, damage):
    cache = tmp_path / "cache"
    shutil.copytree(exported, cache)
    target = OnnxFile.for_model(Path(model_path()), cache)
    assert target.valid()
    file = target.data if damage.endswith("-weights") else target.path
    if damage.startswith("truncate"):
        with file.open("r+b") as f:
            f.truncate(file.stat().st_size // 3)
    elif damage.startswith("flip"):
        with file.open("r+b") as f:
            f.seek(file.stat().st_size // 2)
            byte = f.read(1)
            f.seek(-1, 1)
            f.write(bytes([byte[0] ^ 0xFF]))
    elif damage == "no-weights":
        target.data.unlink()
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
    assert not list(cache.glob("models/.*.tmp"))  # no temporary file or folder left behind


def test_an_untouched_file_is_not_hashed_at_every_launch(
    exported: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from sadie_tui.engine.ingest import onnx_export

    cache = tmp_path / "cache"
    shutil.copytree(exported, cache)  # copy2 keeps the modification times
    target = OnnxFile.for_model(Path(model_path()), cache)
    hashed: list[str] = []
    real = onnx_export._sha256
    monkeypatch.setattr(onnx_export, "_sha256", lambda p: hashed.append(p.name) or real(p))
    assert target.valid() and hashed == []
    os.utime(target.data)  # touched: its bytes are checked again
    assert target.valid() and hashed == [target.data.name]


def test_the_weights_are_a_file_of_their_own(exported: Path):
    """The graph names its weights by file name; ONNX Runtime maps them instead of copying
    them into its own buffers (~75 MB less resident)."""
    import onnx

    target = OnnxFile.for_model(Path(model_path()), exported)
    assert target.path.stat().st_size < 1_000_000 < 80_000_000 < target.data.stat().st_size
    graph = onnx.load(str(target.path), load_external_data=False)
    locations = {
        entry.value
        for tensor in graph.graph.initializer
        for entry in tensor.external_data
        if entry.key == "location"
    }
    assert locations == {target.data.name}
    meta = json.loads(target.meta.read_text())
    assert set(meta["files"]) == {target.path.name, target.data.name}


def test_a_file_onnxruntime_refuses_is_exported_again(exported: Path, tmp_path: Path):
    """Garbage with a matching record (as if the record were written by a buggy exporter)."""
    import hashlib

    cache = tmp_path / "cache"
    shutil.copytree(exported, cache)
    target = OnnxFile.for_model(Path(model_path()), cache)
    target.path.write_bytes(b"not an onnx model")
    meta = json.loads(target.meta.read_text())
    meta["files"][target.path.name] = {
        "size": 17,
        "sha256": hashlib.sha256(b"not an onnx model").hexdigest(),
    }
    target.meta.write_text(json.dumps(meta))
    assert target.valid()
    embedder = Embedder(backend="onnx", cache=cache)
    embedder.warm()
    assert embedder.running == "onnx"
    assert target.valid() and target.data.stat().st_size > 80_000_000


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
    """`make install` runs ``python -m sadie_tui.engine.ingest.prepare_model``."""
    from sadie_tui.engine.ingest import prepare_model

    before = OnnxFile.for_model(Path(model_path()), exported).path.stat().st_mtime_ns
    prepare_model.main()
    out = capsys.readouterr().out
    assert out.startswith("embedding model for ONNX Runtime up to date: ")
    assert str(exported) in out
    assert OnnxFile.for_model(Path(model_path()), exported).path.stat().st_mtime_ns == before
    # and the emotion registers' vectors are kept, so the first launch does not embed them
    assert list((exported / "vectors").glob("emotions-*.npy"))


def test_fixed_texts_are_embedded_once_and_read_back(exported: Path, tmp_path: Path):
    """The emotion registers' sentences: computed at the first start, read from the cache at
    every later one without running the model; a damaged file is computed again."""
    cache = tmp_path / "cache"
    shutil.copytree(exported, cache)
    shutil.rmtree(cache / "vectors", ignore_errors=True)  # other tests' kept vectors
    texts = ["I can't stop worrying about the move.", "We finally did it!"]
    first = Embedder(backend="onnx", cache=cache)
    vectors = first.encode_fixed(texts, "test")
    (kept,) = list((cache / "vectors").glob("test-*.npy"))
    assert np.allclose(vectors, first.encode(texts), atol=1e-6)

    later = Embedder(backend="onnx", cache=cache)
    assert np.array_equal(later.encode_fixed(texts, "test"), vectors)
    assert not later.loaded  # read back, the model never ran

    other = later.encode_fixed([*texts, "A third sentence."], "test")  # other texts, other file
    assert other.shape == (3, 384) and len(list((cache / "vectors").glob("test-*.npy"))) == 2

    kept.write_bytes(b"damaged")
    again = Embedder(backend="onnx", cache=cache).encode_fixed(texts, "test")
    assert np.allclose(again, vectors, atol=1e-6)
    assert np.array_equal(np.load(kept), again)
    assert not list((cache / "vectors").glob(".*.tmp"))


def test_fixed_texts_without_a_writable_cache_are_still_embedded(exported: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    shutil.copytree(exported, cache)
    shutil.rmtree(cache / "vectors", ignore_errors=True)  # other tests' kept vectors
    (cache / "vectors").write_text("a file where the folder should be")
    vectors = Embedder(backend="onnx", cache=cache).encode_fixed(["hello"], "test")
    assert vectors.shape == (1, 384)
