"""The embedding model on ONNX Runtime: exported once from the local model folder, then run without torch.

Why: on a few CPU cores the model is most of an ingest's time, and importing torch plus
loading the sentence-transformers model is most of a cold ``evidence-pipeline search``. ONNX Runtime
with the ``tokenizers`` fast tokenizer imports in a fraction of a second, and the int8
variant, ``onnx-int8-token``, runs the encoder faster still (``embedding_quant``: one
activation scale per token, so a text's vector does not depend on its batch).

What is exported: the transformer alone (token embeddings). Pooling and normalisation
are done here in numpy, read from the model's own ``modules.json`` and pooling config,
exactly as sentence-transformers does them (mean over the attention mask, then L2), so
the vectors agree with the torch backend (``test_embedding_onnx``).

The export is written into ``<cache>/<model>-<variant>-<fingerprint>/`` through a
temporary folder renamed into place: a concurrent process sees the whole model or none,
and two that export at once keep the first one's. The fingerprint covers the model's
config and weight files and ``EXPORT_VERSION``, so a changed model exports again. One
variant is one export: the int8 model is quantized from an fp32 graph that lives only in the
temporary folder (``embed.model_exports`` in ``work`` counts them).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import threading
import uuid
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evidence_pipeline.embedding_quant import quantize_per_token
from evidence_pipeline.work import WORK

# Bumped when what is exported (graph inputs/outputs, opset, quantization) changes.
EXPORT_VERSION = "2"  # 2: uint8 weights, no int16 saturation on AVX2 (embedding_quant)
# onnx: fp32. onnx-int8-token: every MatMul with a constant weight int8, with one activation
# scale per token (embedding_quant), so a text's vector does not depend on the texts batched with it.
ONNX_VARIANTS = ("onnx", "onnx-int8-token")
MODEL_FILE = "model.onnx"
FP32_FILE = "fp32.onnx"  # the int8 variant's intermediate, inside the temporary folder only
META_FILE = "export.json"  # written last inside the temporary folder: its presence marks a whole export
OPSET = 17
# Texts per session run: with batches cut by word-piece count, small batches pad least and keep
# activations in cache. `python -m evidence_pipeline.benchmark.embedding_backends <parsed
# folder>` prints the speed at this size against raw fp32 encode.
BATCH_SIZE = 8
# Texts whose vectors a batch-independent encoder keeps for the rest of the process: the same
# sentence, row or heading in several documents (two filings of one company) is run once.
MEMO_TEXTS = 32_768


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
    def read(cls, model_dir: str | Path) -> ModelLayout:
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
    log(f"preparing the embedding model: exporting it to ONNX ({variant}), once, about 15 s, into {final}")
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".{final.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    WORK.count("embed.model_exports")
    try:
        if variant == "onnx":
            _export_fp32(model_dir, tmp / MODEL_FILE)
        else:
            # Quantized from the fp32 export when the cache holds one (``onnx`` chosen once),
            # else from an fp32 graph exported into the temporary folder only: one export per
            # variant, and no fp32 model left in the cache that nobody asked for.
            source = export_dir(model_dir, "onnx", cache_dir) / MODEL_FILE
            if not is_exported(source.parent):
                source = tmp / FP32_FILE
                _export_fp32(model_dir, source)
            try:
                quantize_per_token(source, tmp / MODEL_FILE)
            except ValueError as exc:
                raise OnnxExportError(str(exc)) from None
            (tmp / FP32_FILE).unlink(missing_ok=True)
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
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # no "Loading weights" bar: the one line above says what happens
    layout = ModelLayout.read(model_dir)
    # Eager attention exports as plain MatMul/Softmax, which quantizes per channel; the SDPA
    # path traces a padding check as a constant.
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


class OnnxEncoder:
    """Tokenize (``tokenizers``), run the exported transformer (ONNX Runtime), pool, normalise.

    One session per model and process, on one thread per run: ``encode`` runs as many batches at
    once as ``lanes`` says, each on a core of its own, so an embedding can take the core a parser
    leaves idle between documents and give it back while the parser works (``Embedder``). A
    run's output depends on its batch alone, never on the thread that ran it.

    ``onnx-int8-token`` vectors do not depend on the batch either, so a text embedded once in
    this process is not run again (``MEMO_TEXTS``, least recently used first out).
    """

    def __init__(self, model_dir: str | Path, variant: str, cache_dir: str | Path, log=None):
        import onnxruntime  # noqa: F401  (an ImportError here sends Embedder to its torch fallback)
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
        self._session = None  # documents' batches: one thread per run, runs side by side
        self._inputs: set[str] | None = None  # the graph's input names, read off the first session
        self._query_session = None  # one query: every free core on its one run
        self._memo: OrderedDict[str, np.ndarray] | None = OrderedDict() if variant == "onnx-int8-token" else None
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def _new_session(self, threads: int):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(str(self.folder / MODEL_FILE), options, providers=["CPUExecutionProvider"])
        if self._inputs is None:
            self._inputs = {i.name for i in session.get_inputs()}
        WORK.count("embed.sessions")
        return session

    @property
    def session(self):
        """The session documents' batches run on, one thread per run (created on first use):
        parallel runs (``encode``'s lanes) use the other cores, and no thread pool of ONNX
        Runtime's own spins waiting on a core the parser holds."""
        with self._lock:
            if self._session is None:
                self._session = self._new_session(1)
            return self._session

    @session.setter
    def session(self, value) -> None:
        self._session = value

    def _query_session_for(self, threads: int):
        """The session a lone query runs on, on ``threads`` threads (created on first use; a
        process that only searches has this one alone). Its vectors are the batch session's:
        each output is summed in the same order whatever the threads."""
        with self._lock:
            if self._query_session is None:
                self._query_session = self._new_session(threads)
            return self._query_session

    @property
    def dim(self) -> int:
        return self.layout.dim

    def encode(
        self, texts: Sequence[str], batch_size: int = BATCH_SIZE, lanes: Callable[[], int] | int = 1, *, remember: bool = False
    ) -> np.ndarray:
        """Unit vectors (float32), in the order given. All texts are tokenized at once, then
        batched by word-piece count, longest first, so a batch pads to nearly equal lengths
        (sentence-transformers sorts by characters, a looser proxy). ``lanes``: how many
        batches may run at once (a function is asked again before each batch). ``remember``:
        look the texts up in the memo and keep their vectors there (documents' texts; a query
        is embedded afresh every time)."""
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        todo = self._remembered(texts, out) if remember else list(range(len(texts)))
        if not todo:
            return out
        encodings = self.tokenizer.encode_batch([texts[i] for i in todo])
        order = np.argsort([-len(e.ids) for e in encodings], kind="stable")
        batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
        rows = np.asarray(todo)

        free = lanes if callable(lanes) else (lambda: lanes)
        # A lone query runs on every free core within its one run (a session of its own); a
        # document's batches run one core each, side by side.
        cores = free() if len(todo) == 1 and not remember else 1
        session = self._query_session_for(cores) if cores > 1 else self.session

        def run(idx: np.ndarray) -> None:
            out[rows[idx]] = self._encode_batch([encodings[i] for i in idx], session)

        if len(batches) == 1:
            run(batches[0])  # no thread hand-off for one batch
        else:
            self._run_all(batches, run, free)
        WORK.count("embed.texts", len(todo))
        if remember and self._memo is not None:
            with self._lock:
                for i in todo:
                    self._memo[texts[i]] = out[i].copy()
                while len(self._memo) > MEMO_TEXTS:
                    self._memo.popitem(last=False)
        return out

    def forget(self) -> None:
        """Empty the memo: the next ``encode`` with ``remember`` embeds every text again."""
        if self._memo is not None:
            with self._lock:
                self._memo.clear()

    def _remembered(self, texts: list[str], out: np.ndarray) -> list[int]:
        """Fill ``out`` with the vectors the memo holds; the positions still to embed (each
        distinct text once is the caller's business: ``Embedder.embed``)."""
        if self._memo is None:
            return list(range(len(texts)))
        todo = []
        with self._lock:
            for i, text in enumerate(texts):
                vector = self._memo.get(text)
                if vector is None:
                    todo.append(i)
                else:
                    self._memo.move_to_end(text)
                    out[i] = vector
        if len(todo) < len(texts):
            WORK.count("embed.memo_hits", len(texts) - len(todo))
        return todo

    def _run_all(self, batches: list, run: Callable[[np.ndarray], None], lanes: Callable[[], int]) -> None:
        """``run`` each batch: on this thread while one lane is open, else on the pool's threads,
        at most ``lanes()`` at a time."""
        pending: set[Future] = set()
        done: set[Future] = set()
        try:
            for idx in batches:
                allowed = max(1, lanes())
                if allowed == 1 and not pending:
                    run(idx)  # a query, or an ingest while the parser works: no thread hand-off
                    continue
                while len(pending) >= allowed:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in finished:
                        future.result()
                pending.add(self._executor().submit(run, idx))
        finally:
            if pending:
                done, _ = wait(pending)
        for future in done:
            future.result()

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2), thread_name_prefix="embed")
            return self._pool

    def _encode_batch(self, encodings: list, session=None) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        types = np.zeros((len(encodings), width), dtype=np.int64)
        pieces = 0
        for row, e in enumerate(encodings):
            n = len(e.ids)
            pieces += n
            ids[row, :n], mask[row, :n], types[row, :n] = e.ids, e.attention_mask, e.type_ids
        WORK.count("embed.word_pieces", pieces)
        WORK.count("embed.padding", width * len(encodings) - pieces)
        feeds = {"input_ids": ids, "attention_mask": mask}
        session = session or self.session
        if self._inputs is None:
            self._inputs = {i.name for i in session.get_inputs()}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = types
        tokens = session.run(None, feeds)[0]
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
