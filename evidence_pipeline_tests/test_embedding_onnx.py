"""The ONNX Runtime backends against sentence-transformers, on the texts the pipeline embeds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evidence_pipeline import embedding_onnx
from evidence_pipeline.embedding import Embedder, resolve_model
from evidence_pipeline.embedding_onnx import META_FILE, MODEL_FILE, ModelLayout, ensure_exported, export_dir
from evidence_pipeline.errors import SettingsError
from evidence_pipeline.settings import EMBED_BACKENDS, EmbeddingSettings
from evidence_pipeline_tests.onnx_models import VARIANTS, torch_vectors_of

REPO = Path(__file__).resolve().parents[1]


def _embedder(backend: str, cache: Path | None = None) -> Embedder:
    return Embedder(EmbeddingSettings(backend=backend, cache_dir=str(cache) if cache else None))


def test_onnx_fp32_vectors_agree_with_torch(onnx_cache, sample_texts):
    assert len(sample_texts) > 20
    torch_vectors = torch_vectors_of(sample_texts)
    onnx_vectors = _embedder("onnx", onnx_cache).embed(sample_texts)
    assert onnx_vectors.shape == torch_vectors.shape and onnx_vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(onnx_vectors, axis=1), 1.0, atol=1e-5)
    assert float(np.min(np.sum(onnx_vectors * torch_vectors, axis=1))) >= 0.999


def test_batches_do_not_change_a_vector(onnx_cache, sample_texts):
    """Padding to the batch's longest text must not move a text's vector (attention mask, pooling)."""
    encoder = _embedder("onnx", onnx_cache).model
    alone = np.stack([encoder.encode([t])[0] for t in sample_texts[:6]])
    together = encoder.encode(sample_texts[:6], batch_size=3)
    assert np.allclose(alone, together, atol=1e-5)


def test_batches_are_cut_by_word_pieces_not_characters(onnx_cache, sample_texts):
    """Texts are batched by their word-piece count, so a batch is padded only to the longest of
    texts of nearly equal length: the padded positions the session sees are the fewest possible
    for the batch size, and the vectors come back in the order given."""
    encoder = _embedder("onnx", onnx_cache).model
    widths: list[tuple[int, int]] = []
    run = encoder.session.run

    class Recording:
        def run(self, names, feeds):
            widths.append(feeds["input_ids"].shape)
            return run(names, feeds)

    texts = sample_texts[::-1]
    lengths = sorted((len(e.ids) for e in encoder.tokenizer.encode_batch(texts)), reverse=True)
    encoder.session = Recording()
    try:
        vectors = encoder.encode(texts, batch_size=8)
    finally:
        encoder.session = run.__self__
    fewest = sum(len(lengths[i : i + 8]) * lengths[i] for i in range(0, len(lengths), 8))
    assert sum(rows * width for rows, width in widths) == fewest
    # Cut by characters (sentence-transformers' order), the same batches pad more.
    pieces = [len(e.ids) for e in encoder.tokenizer.encode_batch(texts)]
    by_chars = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    padded_by_chars = sum(len(b) * max(pieces[i] for i in b) for b in (by_chars[i : i + 8] for i in range(0, len(texts), 8)))
    assert fewest < padded_by_chars
    alone = np.stack([encoder.encode([t])[0] for t in texts[:5]])
    assert np.allclose(vectors[:5], alone, atol=1e-5)


def test_pooling_follows_the_model_folder():
    layout = ModelLayout.read(resolve_model(None))
    assert (layout.pooling, layout.normalize, layout.max_seq_length, layout.dim) == ("mean", True, 256, 384)


def test_export_is_reused_and_never_half_visible(onnx_cache, monkeypatch):
    model = resolve_model(None)
    folder = export_dir(model, "onnx", onnx_cache)
    assert sorted(p.name for p in folder.iterdir()) == [META_FILE, MODEL_FILE]
    assert json.loads((folder / META_FILE).read_text())["variant"] == "onnx"
    # Nothing but whole exports in the cache: the temporary folders were renamed or removed.
    assert sorted(p.name for p in onnx_cache.iterdir()) == sorted(export_dir(model, v, onnx_cache).name for v in VARIANTS)

    def no_export(*_args, **_kw):
        raise AssertionError("exported again")

    monkeypatch.setattr(embedding_onnx, "_export_fp32", no_export)
    monkeypatch.setattr(embedding_onnx, "quantize_per_token", no_export)
    mtime = (folder / MODEL_FILE).stat().st_mtime_ns
    int8 = export_dir(model, "onnx-int8-token", onnx_cache)
    assert ensure_exported(model, "onnx-int8-token", onnx_cache) == int8
    assert (folder / MODEL_FILE).stat().st_mtime_ns == mtime
    # The int8 variant keeps no fp32 graph of its own: it was quantized from one in its temporary folder.
    assert sorted(p.name for p in int8.iterdir()) == [META_FILE, MODEL_FILE]


def test_one_variant_is_one_export_in_one_line(tmp_path, monkeypatch, capfd):
    """The int8 default exports once (the fp32 graph it is quantized from lives in the temporary
    folder only), saying so in one line, with no progress bar of the libraries it uses."""
    from evidence_pipeline.work import WORK

    lines: list[str] = []
    fp32_exports: list[Path] = []
    export = embedding_onnx._export_fp32

    def counted(model_dir, target: Path) -> None:
        fp32_exports.append(target)
        export(model_dir, target)

    monkeypatch.setattr(embedding_onnx, "_export_fp32", counted)
    with WORK.delta() as work:
        folder = ensure_exported(resolve_model(None), "onnx-int8-token", tmp_path, log=lines.append)
    assert work["embed.model_exports"] == 1 and len(fp32_exports) == 1
    assert fp32_exports[0].parent.name.startswith(".")  # inside the temporary folder
    assert len(lines) == 1 and lines[0].startswith("preparing the embedding model") and str(folder) in lines[0]
    assert capfd.readouterr().err == ""  # no "Loading weights" bar, no exporter chatter
    assert sorted(p.name for p in tmp_path.iterdir()) == [folder.name]


def test_a_failed_export_leaves_nothing_behind(tmp_path, monkeypatch):
    def broken(_model, target: Path):
        target.write_bytes(b"half a model")
        raise RuntimeError("killed mid-export")

    monkeypatch.setattr(embedding_onnx, "_export_fp32", broken)
    with pytest.raises(RuntimeError, match="killed mid-export"):
        ensure_exported(resolve_model(None), "onnx", tmp_path, log=lambda _: None)
    assert list(tmp_path.iterdir()) == []


def test_bad_backend_setting_is_one_line(monkeypatch):
    monkeypatch.setenv("EVIDENCE_EMBED_BACKEND", "tensorrt")
    with pytest.raises(SettingsError) as err:
        EmbeddingSettings.from_env()
    assert str(err.value) == f"EVIDENCE_EMBED_BACKEND='tensorrt': expected one of {', '.join(EMBED_BACKENDS)}"
    assert sorted(EMBED_BACKENDS) == sorted(VARIANTS)  # torch is no choice: the fallback where ONNX cannot run
    monkeypatch.setenv("EVIDENCE_EMBED_BACKEND", "torch")
    with pytest.raises(SettingsError):
        EmbeddingSettings.from_env()
    monkeypatch.setenv("EVIDENCE_EMBED_BACKEND", "onnx")
    assert EmbeddingSettings.from_env().backend == "onnx"


def test_bad_backend_on_the_command_line(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO), "EVIDENCE_EMBED_BACKEND": "gpu", "EVIDENCE_STORE_PATH": str(tmp_path / "store")}
    out = subprocess.run(
        [sys.executable, "-m", "evidence_pipeline.cli", "search", "flow rate"], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode != 0
    assert out.stderr.strip().splitlines() == [f"error: EVIDENCE_EMBED_BACKEND='gpu': expected one of {', '.join(EMBED_BACKENDS)}"]


def test_cache_ids_keep_backends_apart():
    ids = {b: _embedder(b).cache_id for b in VARIANTS}
    assert len(set(ids.values())) == len(ids) and all(i != _embedder(b).model_id for b, i in ids.items())
    assert len({_embedder(b).model_id for b in ids}) == 1  # one model: a store is searchable with any backend
    from evidence_pipeline.embedding_onnx import EXPORT_VERSION

    assert ids["onnx-int8-token"].endswith(f"@onnx-int8-token.{EXPORT_VERSION}")  # another quantization, other vectors


def test_a_model_folder_onnx_cannot_run_falls_back_to_torch_in_one_line(tmp_path, capsys, sample_texts):
    """A folder without sentence-transformers' modules.json: the ONNX path cannot know its
    pooling, so torch embeds (sentence-transformers' default: mean pooling), said once on stderr."""
    packaged = Path(resolve_model(None))
    folder = tmp_path / "plain-bert"
    folder.mkdir()
    for item in packaged.iterdir():
        if item.name != "modules.json":
            (folder / item.name).symlink_to(item)
    embedder = Embedder(EmbeddingSettings(model=str(folder), backend="onnx", cache_dir=str(tmp_path / "models")))
    vectors = embedder.embed(sample_texts[:4])
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"warning: embedding backend onnx unavailable ({folder}: no modules.json (not a sentence-transformers folder)); using torch"
    ]
    assert embedder.running_backend == "torch" and embedder.cache_id == embedder.model_id
    reference = torch_vectors_of(sample_texts[:4])
    assert float(np.min(np.sum(vectors * reference, axis=1))) >= 0.999
    assert not (tmp_path / "models").exists()


def test_search_with_onnx_imports_no_torch(onnx_cache, sample_store):
    """A cold search (with a token budget: word pieces counted too) without torch, transformers or Docling."""
    code = (
        "import json, sys\n"
        "from evidence_pipeline.cli import main\n"
        "code = main(['search', 'What is the maximum flow rate?', '--k', '2', '--token-budget', '5000', '--json'])\n"
        "print(json.dumps({'code': code, 'loaded': sorted(m for m in ('torch', 'sentence_transformers', 'docling', 'transformers')"
        " if m in sys.modules)}))\n"
    )
    for backend in VARIANTS:
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "EVIDENCE_EMBED_BACKEND": backend,
            "EVIDENCE_MODEL_CACHE": str(onnx_cache),
            "EVIDENCE_STORE_PATH": sample_store.settings.path,
        }
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=180)
        assert out.returncode == 0, out.stderr
        hits_json, _, status = out.stdout.rpartition("\n{")
        status = json.loads("{" + status)
        assert status == {"code": 0, "loaded": []}
        hits = json.loads(hits_json)
        assert len(hits) == 2 and hits[0]["doc_id"] in {"SOP-8812", "SOP-MFG-231"}
