"""The embedding model on ONNX Runtime: exported once from the local model folder, then
run without torch.

Why: on 2 CPU cores the model is the wall of ingest, and importing torch plus loading the
sentence-transformers model is most of a cold ``evidence-pipeline search``. ONNX Runtime
with the ``tokenizers`` fast tokenizer imports in a fraction of a second, and the int8
variants run the encoder faster still: ``onnx-int8`` / ``onnx-int8-mixed`` by ORT's dynamic
quantization (one activation scale per batch), ``onnx-int8-token`` by ``embedding_quant``
(one activation scale per token, so a text's vector does not depend on its batch).

What is exported: the transformer alone (token embeddings). Pooling and normalisation
are done here in numpy, read from the model's own ``modules.json`` and pooling config,
exactly as sentence-transformers does them (mean over the attention mask, then L2), so
the vectors agree with the torch backend (cosine >= 0.999 for fp32; see the tests).

The export is written into ``<cache>/<model>-<variant>-<fingerprint>/`` through a
temporary folder renamed into place: a concurrent process sees the whole model or none,
and two that export at once keep the first one's. The fingerprint covers the model's
config and weight files and ``EXPORT_VERSION``, so a changed model exports again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from evidence_pipeline.embedding_quant import quantize_per_token

# Bumped when what is exported (graph inputs/outputs, opset, quantization) changes.
EXPORT_VERSION = "2"  # 2: uint8 weights, no int16 saturation on AVX2 (embedding_quant)
# onnx: fp32. onnx-int8: every MatMul int8. onnx-int8-mixed: int8 but for the feed-forward
# down-projections (the MatMuls that narrow, intermediate -> hidden), which stay fp32.
# onnx-int8-token: every MatMul with a constant weight int8, with one activation scale per token
# (embedding_quant), so a text's vector does not depend on the texts batched with it.
ONNX_VARIANTS = ("onnx", "onnx-int8", "onnx-int8-mixed", "onnx-int8-token")
MODEL_FILE = "model.onnx"
META_FILE = "export.json"  # written last inside the temporary folder: its presence marks a whole export
OPSET = 17
# Texts per session run: with batches cut by word-piece count, small batches pad least and keep
# activations in cache; 8 was the fastest of 4-128 tried on the eval corpora's children.
# `python -m evidence_pipeline.benchmark.embedding_backends <parsed folder>` prints the speed
# at this size against raw fp32 encode.
BATCH_SIZE = 8


class OnnxExportError(RuntimeError):
    pass


@dataclass(frozen=True)
class ModelLayout:
    """What the sentence-transformers folder says about the modules around the transformer."""

    transformer_dir: Path
    pooling: str  # "mean", "cls" or "max"
    normalize: bool
    max_seq_length: int
    dim: int

    @classmethod
    def read(cls, model_dir: str | Path) -> "ModelLayout":
        root = Path(model_dir)
        modules_file = root / "modules.json"
        if not modules_file.is_file():
            raise OnnxExportError(f"{root}: no modules.json (not a sentence-transformers folder)")
        modules = json.loads(modules_file.read_text())
        kinds = {m["type"].rsplit(".", 1)[-1]: m for m in modules}
        if "Transformer" not in kinds or "Pooling" not in kinds:
            raise OnnxExportError(f"{root}: modules {sorted(kinds)} are not Transformer + Pooling")
        unknown = set(kinds) - {"Transformer", "Pooling", "Normalize"}
        if unknown:
            raise OnnxExportError(f"{root}: module(s) {sorted(unknown)} have no ONNX path here")
        pool_cfg = json.loads((root / kinds["Pooling"]["path"] / "config.json").read_text())
        modes = [m for m in ("cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens") if pool_cfg.get(f"pooling_mode_{m}")]
        if len(modes) != 1 or modes[0] == "mean_sqrt_len_tokens":
            raise OnnxExportError(f"{root}: pooling {modes} has no ONNX path here")
        st_cfg = root / kinds["Transformer"]["path"] / "sentence_bert_config.json"
        max_len = json.loads(st_cfg.read_text()).get("max_seq_length", 256) if st_cfg.is_file() else 256
        return cls(
            transformer_dir=root / kinds["Transformer"]["path"],
            pooling={"cls_token": "cls", "mean_tokens": "mean", "max_tokens": "max"}[modes[0]],
            normalize="Normalize" in kinds,
            max_seq_length=int(max_len),
            dim=int(pool_cfg["word_embedding_dimension"]),
        )


def fingerprint(model_dir: str | Path) -> str:
    """Short hash of the model's config files and its weight files' names and sizes."""
    root = Path(model_dir)
    h = hashlib.sha256(EXPORT_VERSION.encode())
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = str(path.relative_to(root))
        if path.suffix == ".json":
            h.update(rel.encode() + path.read_bytes())
        elif path.suffix in {".safetensors", ".bin"}:
            h.update(f"{rel}:{path.stat().st_size}".encode())
    return h.hexdigest()[:12]


def export_dir(model_dir: str | Path, variant: str, cache_dir: str | Path) -> Path:
    """``<cache>/<package>-<folder>-<variant>-<fingerprint>`` (a packaged model's folder is just "model")."""
    root = Path(model_dir).resolve()
    name = re.sub(r"[^A-Za-z0-9_.+-]", "_", f"{root.parent.name}-{root.name}")
    return Path(cache_dir) / f"{name}-{variant}-{fingerprint(root)}"


def is_exported(folder: Path) -> bool:
    return (folder / META_FILE).is_file() and (folder / MODEL_FILE).is_file()


def ensure_exported(model_dir: str | Path, variant: str, cache_dir: str | Path, log=None) -> Path:
    """The folder of ``variant``'s ONNX model, exported now if the cache lacks it (needs torch then)."""
    if variant not in ONNX_VARIANTS:
        raise ValueError(f"unknown ONNX variant {variant!r}")
    final = export_dir(model_dir, variant, cache_dir)
    if is_exported(final):
        return final
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    log(f"exporting the embedding model to ONNX ({variant}), once, into {final}")
    source = ensure_exported(model_dir, "onnx", cache_dir, log) if variant != "onnx" else None
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".{final.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        if source is None:
            _export_fp32(model_dir, tmp / MODEL_FILE)
        elif variant == "onnx-int8-token":
            try:
                quantize_per_token(source / MODEL_FILE, tmp / MODEL_FILE)
            except ValueError as exc:
                raise OnnxExportError(str(exc)) from None
        else:
            _quantize_int8(source / MODEL_FILE, tmp / MODEL_FILE, keep_down_projections=variant == "onnx-int8-mixed")
        meta = {"model": Path(model_dir).name, "variant": variant, "fingerprint": fingerprint(model_dir), "export_version": EXPORT_VERSION}
        (tmp / META_FILE).write_text(json.dumps(meta, indent=2))
        try:
            os.rename(tmp, final)  # atomic on one file system; fails if another process got there first
        except OSError:
            if not is_exported(final):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def _export_fp32(model_dir: str | Path, target: Path) -> None:
    import torch
    from transformers import AutoModel

    layout = ModelLayout.read(model_dir)
    # Eager attention exports as plain MatMul/Softmax, which quantizes per channel; the SDPA
    # path was no faster here and traces a padding check as a constant.
    model = AutoModel.from_pretrained(str(layout.transformer_dir), attn_implementation="eager").eval()

    class TokenEmbeddings(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state

    ids = torch.ones((2, 8), dtype=torch.long)
    mask = torch.ones_like(ids)
    mask[1, 5:] = 0  # trace a padded batch, as encode() runs them
    axes = {0: "batch", 1: "tokens"}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer notes about Python-level branches; the tests check the vectors
        torch.onnx.export(
            TokenEmbeddings(model),
            (ids, mask, torch.zeros_like(ids)),
            str(target),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["token_embeddings"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes, "token_embeddings": axes},
            opset_version=OPSET,
            do_constant_folding=True,
            dynamo=False,  # the TorchScript exporter: no onnxscript needed, one self-contained file
        )


def _quantize_int8(source: Path, target: Path, keep_down_projections: bool = False) -> None:
    """Dynamic quantization: int8 weights, activations quantized per batch at run time.

    Per channel: measured on the packaged MiniLM, per-tensor weights gave cosine 0.96 to the
    fp32 vectors, per-channel 0.990-0.993, at the same speed. Fusing attention first
    (onnxruntime.transformers.optimizer) was slower, and leaving the first or last layer, the
    attention projections or the attention scores in fp32 gained < 0.002.

    ``keep_down_projections``: the feed-forward down-projections (``output.dense``: 1536 -> 384,
    whose input is the GELU output, the widest-ranged activations of the layer) stay fp32.
    ``benchmark.embedding_backends`` on 400 children of the eval corpora: cosine to fp32 torch
    min / mean 0.994 / 0.996 (all int8: 0.988 / 0.993), 1.88x raw fp32 encode (all int8: 2.21x).
    """
    import logging

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    exclude = _down_projections(onnx.load(str(source), load_external_data=False)) if keep_down_projections else []
    quiet = logging.getLogger()
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # "consider pre-processing" advice on the root logger
    try:
        # uint8 weights: a u8 x s8 GEMM saturates on CPUs without AVX-512 VNNI (embedding_quant)
        quantize_dynamic(str(source), str(target), weight_type=QuantType.QUInt8, per_channel=True, nodes_to_exclude=exclude)
    finally:
        quiet.setLevel(level)


def _down_projections(model) -> list[str]:
    """MatMuls whose weight narrows its input (rows > columns): in a BERT encoder, the
    feed-forward output projections, read from the graph rather than from node names."""
    shapes = {t.name: tuple(t.dims) for t in model.graph.initializer}
    names = []
    for node in model.graph.node:
        if node.op_type != "MatMul":
            continue
        weight = next((shapes[i] for i in node.input if i in shapes), None)
        if weight is not None and len(weight) == 2 and weight[0] > weight[1]:
            names.append(node.name)
    return names


class OnnxEncoder:
    """Tokenize (``tokenizers``), run the exported transformer (ONNX Runtime), pool, normalise."""

    def __init__(self, model_dir: str | Path, variant: str, cache_dir: str | Path, log=None, threads: int | None = None):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.layout = ModelLayout.read(model_dir)
        self.folder = ensure_exported(model_dir, variant, cache_dir, log)
        self.variant = variant
        tokenizer_file = self.layout.transformer_dir / "tokenizer.json"
        if not tokenizer_file.is_file():
            raise OnnxExportError(f"{model_dir}: no tokenizer.json (fast tokenizer)")
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        # The window sentence-transformers applies (max_seq_length, special tokens included);
        # padding to the longest text of each batch, as its collate does.
        self.tokenizer.enable_truncation(max_length=self.layout.max_seq_length)
        self.tokenizer.no_padding()  # each batch is padded here, to its own longest text
        pad_id = self.tokenizer.token_to_id("[PAD]")
        self._pad_id = 0 if pad_id is None else pad_id
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        if threads:
            options.intra_op_num_threads = threads  # None: ONNX Runtime's default, every core
        self.session = ort.InferenceSession(str(self.folder / MODEL_FILE), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self.session.get_inputs()}

    @property
    def dim(self) -> int:
        return self.layout.dim

    def encode(self, texts: Sequence[str], batch_size: int = BATCH_SIZE) -> np.ndarray:
        """Unit vectors (float32), in the order given. All texts are tokenized at once, then
        batched by word-piece count, longest first, so a batch pads to nearly equal lengths
        (sentence-transformers sorts by characters, a looser proxy)."""
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self.tokenizer.encode_batch(texts)
        order = np.argsort([-len(e.ids) for e in encodings], kind="stable")
        for start in range(0, len(texts), batch_size):
            idx = order[start : start + batch_size]
            out[idx] = self._encode_batch([encodings[i] for i in idx])
        return out

    def _encode_batch(self, encodings: list) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        types = np.zeros((len(encodings), width), dtype=np.int64)
        for row, e in enumerate(encodings):
            n = len(e.ids)
            ids[row, :n], mask[row, :n], types[row, :n] = e.ids, e.attention_mask, e.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = types
        tokens = self.session.run(None, feeds)[0]
        vectors = pool(tokens, mask, self.layout.pooling)
        if self.layout.normalize:
            vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors.astype(np.float32, copy=False)


def pool(tokens: np.ndarray, mask: np.ndarray, mode: str) -> np.ndarray:
    """sentence-transformers' Pooling: mean over the attended tokens (sum / max(count, 1e-9)),
    the first token, or the max over attended tokens."""
    if mode == "cls":
        return tokens[:, 0]
    m = mask[..., None].astype(tokens.dtype)
    if mode == "max":
        return np.where(m > 0, tokens, -1e9).max(axis=1)
    return (tokens * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
