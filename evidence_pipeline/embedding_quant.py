"""Int8 with one activation scale per token: the exported fp32 graph rewritten so that a
text's vector does not depend on the texts batched with it.

Each MatMul with a constant 2-D weight ``W[K, N]`` becomes::

    step = max(|x|) / 127 over each token's row (the last axis)      # one scale per token
    q    = QuantizeLinear(x / step, scale 1, zero point 128)          # uint8, |x / step| <= 127
    y    = MatMulIntegerToFloat(q, Wq + 128, a_scale=step, b_scale=w_scale, a_zero_point=128, b_zero_point=128)

with ``Wq`` symmetric int8 per output column, stored as uint8 around 128 (``as_uint8``). A row's
scale, rounding and integer products come from that row alone, so a text's vector is the same
alone and in any batch; ONNX Runtime's ``quantize_dynamic`` takes one scale per batch tensor, so
padding or an outlier elsewhere in the batch would change every text's rounding. Weights are
uint8 because a u8 x s8 GEMM on a CPU without AVX-512 VNNI sums pairs of products into a
saturating int16, while u8 x u8 widens first. ``MatMulIntegerToFloat`` (a contrib op: the model
runs on ONNX Runtime only) is written directly, without its bias input: the graph optimizer's own
fusion takes the bias in and scales it by the row scales. Inputs shared by several MatMuls are
quantized once; the bias ``Add`` after each MatMul stays as exported.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

# Smallest row maximum: a row of zeros (never seen in practice) quantizes to zeros, not NaN.
TINY = 1e-12
ZERO_POINT = 128  # uint8 activations: x / step in [-127, 127], shifted to [1, 255]


def quantize_weight(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 per output column: ``(Wq[K, N] int8, scale[N] float32)``, W ~ Wq * scale."""
    amax = np.abs(weight).max(axis=0)
    scale = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
    quantized = np.clip(np.rint(weight / scale), -127, 127).astype(np.int8)
    return quantized, scale


def as_uint8(quantized: np.ndarray) -> np.ndarray:
    """Symmetric int8 weights stored as uint8 around ``ZERO_POINT`` (the same values, shifted): a
    uint8 x uint8 GEMM, exact on every x86 kernel (see the module's docstring)."""
    return (quantized.astype(np.int16) + ZERO_POINT).astype(np.uint8)


def per_token_int8(model):
    """``model`` (an ``onnx.ModelProto``, changed in place and returned) with every MatMul whose
    second input is a constant 2-D weight run in int8 with per-token activation scales."""
    import onnx
    from onnx import helper, numpy_helper

    graph = model.graph
    opset = _opset(model)
    if opset < 13:
        raise ValueError(f"per-token int8 needs opset >= 13 (QuantizeLinear, ReduceMax), the model has {opset}")
    weights = {t.name: t for t in graph.initializer}
    added: list = [
        numpy_helper.from_array(np.array(1.0 / 127.0, dtype=np.float32), "ptq/1_over_127"),
        numpy_helper.from_array(np.array(TINY, dtype=np.float32), "ptq/tiny"),
        numpy_helper.from_array(np.array(ZERO_POINT, dtype=np.uint8), "ptq/zp_u8"),
        numpy_helper.from_array(np.array(1.0, dtype=np.float32), "ptq/one"),
        numpy_helper.from_array(np.array([-1], dtype=np.int64), "ptq/last_axis"),
    ]
    quantized: dict[str, tuple[str, str]] = {}  # activation -> (uint8 tensor, row scale)
    nodes: list = []
    replaced: set[str] = set()

    def reduce(op: str, x: str, out: str):
        if opset >= 18:  # axes became an input in opset 18
            return helper.make_node(op, [x, "ptq/last_axis"], [out], name=out, keepdims=1)
        return helper.make_node(op, [x], [out], name=out, axes=[-1], keepdims=1)

    def quantize_rows(x: str) -> tuple[str, str]:
        """``x``'s uint8 form and its rows' steps (``amax / 127``), made once per tensor."""
        if x not in quantized:
            p = f"ptq/{len(quantized)}"
            nodes.extend(
                [
                    reduce("ReduceMax", x, f"{p}/max"),
                    reduce("ReduceMin", x, f"{p}/min"),
                    helper.make_node("Neg", [f"{p}/min"], [f"{p}/neg_min"], name=f"{p}/Neg"),
                    helper.make_node("Max", [f"{p}/max", f"{p}/neg_min", "ptq/tiny"], [f"{p}/amax"], name=f"{p}/AbsMax"),
                    helper.make_node("Mul", [f"{p}/amax", "ptq/1_over_127"], [f"{p}/step"], name=f"{p}/Step"),
                    # x / step lies in [-127, 127]; QuantizeLinear rounds half to even, adds 128, saturates.
                    helper.make_node("Div", [x, f"{p}/step"], [f"{p}/scaled"], name=f"{p}/Scale"),
                    helper.make_node("QuantizeLinear", [f"{p}/scaled", "ptq/one", "ptq/zp_u8"], [f"{p}/q"], name=f"{p}/Quantize"),
                ]
            )
            quantized[x] = (f"{p}/q", f"{p}/step")
        return quantized[x]

    for node in graph.node:
        weight = weights.get(node.input[1]) if node.op_type == "MatMul" and len(node.input) == 2 else None
        if weight is None or len(weight.dims) != 2:
            nodes.append(node)
            continue
        q, step = quantize_rows(node.input[0])
        wq, w_scale = quantize_weight(numpy_helper.to_array(weight).astype(np.float32))
        base = f"ptq/{node.name or node.output[0]}"
        wq_u8 = as_uint8(wq)
        added += [numpy_helper.from_array(wq_u8, f"{base}/Wq"), numpy_helper.from_array(w_scale, f"{base}/w_scale")]
        inputs = [q, f"{base}/Wq", step, f"{base}/w_scale", "ptq/zp_u8", "ptq/zp_u8"]
        # ((q - 128) @ Wq) * step[row] * w_scale[column] in one kernel: the integer GEMM with the
        # column scales in its output stage, the row scales applied after. The bias stays the
        # Add after it: given to this kernel, the bias would be scaled by the row scales too.
        nodes.append(
            helper.make_node("MatMulIntegerToFloat", inputs, [node.output[0]], name=f"{base}/MatMulIntegerToFloat", domain="com.microsoft")
        )
        replaced.add(weight.name)

    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    still_used = {i for n in nodes for i in n.input}
    kept = [t for t in graph.initializer if t.name not in replaced or t.name in still_used]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(kept + added)
    onnx.checker.check_model(model)
    return model


def _opset(model) -> int:
    return max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)


def quantize_per_token(source: Path, target: Path) -> None:
    """Read the fp32 model at ``source``, write its per-token int8 form to ``target``, and check
    it on this ONNX Runtime (``check_against``)."""
    import onnx

    onnx.save(per_token_int8(onnx.load(str(source))), str(target))
    check_against(source, target)


# A probe the exported pair must pass before the int8 model is used: the probe's pooled token
# embeddings at least this close to fp32's. A sound export sits well above it; kernels that read
# the scales otherwise fall far below.
PROBE_MIN_COSINE = 0.99


def check_against(fp32: Path, int8: Path) -> None:
    """Run both models on a probe batch of two sequences (the second padded): the int8 model's
    mean-pooled output must be near fp32's, and the first sequence's output alone must equal
    its output in the batch. ValueError naming what failed otherwise: an ONNX Runtime whose
    kernels read the scales otherwise than described above is refused at export, not used."""
    import onnxruntime as ort

    ids = 1000 + (np.arange(64, dtype=np.int64).reshape(2, 32) * 397) % 20000
    mask = np.ones_like(ids)
    mask[1, 20:] = 0

    def run(path: Path, rows) -> np.ndarray:
        options = ort.SessionOptions()
        options.log_severity_level = 3
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        feeds = {"input_ids": ids[rows], "attention_mask": mask[rows], "token_type_ids": np.zeros_like(ids[rows])}
        return session.run(None, {i.name: feeds[i.name] for i in session.get_inputs()})[0]

    expected, got = run(fp32, slice(0, 2)), run(int8, slice(0, 2))
    # mean over the attended tokens, as embedding_onnx.pool (not imported: it imports this module)
    weights = mask[..., None].astype(np.float32)
    pooled = [(t * weights).sum(axis=1) / weights.sum(axis=1) for t in (expected, got)]
    cosines = np.sum(pooled[0] * pooled[1], axis=1) / np.linalg.norm(pooled[0], axis=1) / np.linalg.norm(pooled[1], axis=1)
    if float(cosines.min()) < PROBE_MIN_COSINE:
        raise ValueError(f"{int8}: per-token int8 model off fp32 on the probe (cosine {float(cosines.min()):.3f})")
    alone = run(int8, slice(0, 1))
    if not np.allclose(alone[0], got[0], rtol=0, atol=1e-4):
        raise ValueError(f"{int8}: per-token int8 output changes with the batch (max {float(np.abs(alone[0] - got[0]).max()):.2e})")
