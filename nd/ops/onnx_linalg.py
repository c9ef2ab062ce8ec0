"""ONNX lowerings of linear algebra (nd/ops/linalg*.py) and of a few reductions, indexing ops
and losses that ONNX writes exactly from its own ops: gemm, det, syrk, sumlogdiag, diag,
nansum/nanprod, argmax_channel, batch_take, all_finite, softmax_cross_entropy, and the four
interleaved attention matmuls (reshape, transpose, MatMul).

potrf, trsm and inverse have no ONNX operator (the standard domain has no Cholesky,
triangular solve or inverse): they keep the exporter's "no lowering" error.
"""
from __future__ import annotations

import numpy as np

from ..lowering import onnx_lowering
from . import contrib_misc, indexing_ops, interleaved, linalg, linalg_square, matrix_misc, nn_softmax, reduce  # noqa: F401 - the ops these lowerings register onto
from .onnx_shape import _reduce_axes


def _swap(g, x: str, ndim: int) -> str:
    return g.op("Transpose", [x], perm=[*range(ndim - 2), ndim - 1, ndim - 2])


def _scaled(g, y: str, factor: float) -> str:
    return y if factor == 1.0 else g.op("Mul", [y, g.scalar(factor, g.in_dtypes[0])])


@onnx_lowering("_linalg_gemm")
def _linalg_gemm(g, node):
    a = node.attrs
    nd_ = len(g.in_shapes[0])
    if a.axis not in (-2, nd_ - 2):
        raise g.fail(f"linalg_gemm axis={a.axis}", "transpose the matrices to the last two axes first")
    lhs = _swap(g, g.inputs[0], nd_) if a.transpose_a else g.inputs[0]
    rhs = _swap(g, g.inputs[1], nd_) if a.transpose_b else g.inputs[1]
    prod = _scaled(g, g.op("MatMul", [lhs, rhs]), float(a.alpha))
    return [g.op("Add", [prod, _scaled(g, g.inputs[2], float(a.beta))])]


@onnx_lowering("_linalg_syrk")
def _linalg_syrk(g, node):
    a, x = node.attrs, g.inputs[0]
    xt = _swap(g, x, len(g.in_shapes[0]))
    prod = g.op("MatMul", [xt, x] if a.transpose else [x, xt])
    return [_scaled(g, prod, float(a.alpha))]


@onnx_lowering("_linalg_det", note="one matrix gives shape (1,), as MXNet")
def _linalg_det(g, node):
    return [g.reshape_out(g.op("Det", [g.inputs[0]]))]


@onnx_lowering("_linalg_sumlogdiag")
def _linalg_sumlogdiag(g, node):
    n = g.in_shapes[0][-1]
    eye = g.const(np.eye(n, dtype=g.in_dtypes[0]), hint="eye")
    diag = g.axes_op("ReduceSum", g.op("Mul", [g.inputs[0], eye]), [-1], keepdims=0)  # adds exact zeros
    return [g.reshape_out(g.axes_op("ReduceSum", g.op("Log", [diag]), [-1], keepdims=0))]


@onnx_lowering("nansum", "nanprod")
def _nan_reduce(g, node):
    x, dt = g.inputs[0], g.in_dtypes[0]
    if dt.kind == "f":  # NaN counts as the identity of the reduction
        fill = g.scalar(0.0 if node.op.name == "nansum" else 1.0, dt)
        x = g.op("Where", [g.op("IsNaN", [x]), fill, x])
    axes = _reduce_axes(node.attrs, len(g.in_shapes[0]))
    if not axes:
        return [g.op("Identity", [x])]
    op_type = "ReduceSum" if node.op.name == "nansum" else "ReduceProd"
    y = g.axes_op(op_type, x, axes, keepdims=int(bool(node.attrs.keepdims)))
    return [g.reshape_out(y) if g.out_shapes[0] == (1,) else y]


@onnx_lowering("argmax_channel")
def _argmax_channel(g, node):
    y = g.op("ArgMax", [g.inputs[0]], axis=1, keepdims=0)
    return [g.cast(g.reshape_out(y) if len(g.in_shapes[0]) == 1 else y, g.out_dtypes[0])]


@onnx_lowering("softmax_cross_entropy", note="labels outside [0, classes) add 0, as MXNet")
def _softmax_cross_entropy(g, node):
    k = g.in_shapes[0][1]
    logp = g.op("LogSoftmax", [g.inputs[0]], axis=1)
    idx = g.cast(g.inputs[1], "int64")
    # ONNX's OneHot counts a negative label from the end; MXNet's adds 0 for it
    idx = g.op("Where", [g.op("Less", [idx, g.const(np.int64(0))]), g.const(np.int64(k)), idx])
    onehot = g.op("OneHot", [idx, g.ints([k], "depth"), g.const(np.asarray([0, 1], dtype=g.in_dtypes[0]))], axis=-1)
    total = g.axes_op("ReduceSum", g.op("Mul", [logp, onehot]), [0, 1], keepdims=0)
    return [g.reshape(g.op("Neg", [total]), [1])]


@onnx_lowering("all_finite", "multi_all_finite", note="init_output=True")
def _all_finite(g, node):
    if not node.attrs.init_output:
        raise g.fail("init_output=False accumulates into an earlier output", "use init_output=True")
    flags = []
    for x, dt in zip(g.inputs, g.in_dtypes):
        if np.dtype(dt).kind != "f":  # integers are always finite
            continue
        bad = g.op("Or", [g.op("IsInf", [x]), g.op("IsNaN", [x])])
        flags.append(g.axes_op("ReduceMax", g.reshape(g.cast(bad, "float32"), [-1]), [0], keepdims=1))
    if not flags:
        return [g.op("Identity", [g.const(np.ones(1, np.float32), hint="finite")])]
    bad = flags[0] if len(flags) == 1 else g.op("Max", flags)
    return [g.op("Sub", [g.const(np.ones(1, np.float32), hint="one"), bad])]


@onnx_lowering("batch_take", note="indices clipped to the row, as hybridgraph's batch_take")
def _batch_take(g, node):
    m = g.in_shapes[0][-1]
    rows = g.reshape(g.inputs[0], [-1, m])
    idx = g.op("Clip", [g.cast(g.inputs[1], "int64"), g.const(np.int64(0)), g.const(np.int64(m - 1))])
    return [g.reshape_out(g.op("GatherElements", [rows, g.reshape(idx, [-1, 1])], axis=1))]


@onnx_lowering("diag")
def _diag(g, node):
    a, shape = node.attrs, g.in_shapes[0]
    k = int(a.k)
    r0, c0 = max(-k, 0), max(k, 0)
    if len(shape) == 1:  # a matrix with the vector on diagonal k: Where of a gather (no 0 * x products)
        size = shape[0] + abs(k)
        r, c = np.indices((size, size))
        src = g.const(np.clip(r - r0, 0, max(shape[0] - 1, 0)).astype(np.int64), hint="diag_src")
        mask = g.const((c - r) == k, hint="diag_mask")
        return [g.op("Where", [mask, g.op("Gather", [g.inputs[0], src], axis=0), g.scalar(0, g.in_dtypes[0])])]
    nd_ = len(shape)
    a1, a2 = a.axis1 % nd_, a.axis2 % nd_
    rest = [i for i in range(nd_) if i not in (a1, a2)]
    n = g.out_shapes[0][-1]
    x = g.op("Transpose", [g.inputs[0]], perm=[a1, a2, *rest])
    idx = g.const(np.stack([np.arange(n) + r0, np.arange(n) + c0], axis=1).astype(np.int64), hint="diag_idx")
    y = g.op("GatherND", [x, idx])  # (n, rest...)
    return [g.op("Transpose", [y], perm=[*range(1, len(rest) + 1), 0]) if rest else y]


# -- the interleaved attention matmuls (nd/ops/interleaved.py) ------------------------------------
def _heads_part(g, x, heads: int, parts: int, part: int, perm):
    """One of the `parts` interleaved projections of (seq, batch, heads*parts*d), transposed by `perm`
    from (seq, batch, heads, d)."""
    split = g.reshape(x, [0, 0, heads, parts, -1])
    one = g.op("Gather", [split, g.const(np.asarray(part, dtype=np.int64), hint="part")], axis=3)
    return g.op("Transpose", [one], perm=perm)


def _scores(g, q, k, head_dim: int, sq: int, sk: int):
    """(b, h, sq, d) x (b, h, d, sk) -> (b*h, sq, sk) scaled by MXNet's 1/sqrt(head_dim) after the product."""
    prod = g.op("Mul", [g.op("MatMul", [q, k]), g.scalar(float(interleaved._scale(head_dim)), g.in_dtypes[0])])
    return g.reshape(prod, [-1, sq, sk])


def _weighted(g, att, v, heads: int, sq: int, sk: int):
    """(b*h, sq, sk) attention times (b, h, sk, d) values -> (sq, b, h*d)."""
    out = g.op("MatMul", [g.reshape(att, [-1, heads, sq, sk]), v])
    return g.reshape(g.op("Transpose", [out], perm=[2, 0, 1, 3]), [0, 0, -1])


@onnx_lowering("_contrib_interleaved_matmul_selfatt_qk")
def _selfatt_qk(g, node):
    h, (s, _, e) = node.attrs.heads, g.in_shapes[0]
    q = _heads_part(g, g.inputs[0], h, 3, 0, [1, 2, 0, 3])
    k = _heads_part(g, g.inputs[0], h, 3, 1, [1, 2, 3, 0])
    return [_scores(g, q, k, e // (3 * h), s, s)]


@onnx_lowering("_contrib_interleaved_matmul_selfatt_valatt")
def _selfatt_valatt(g, node):
    h, s = node.attrs.heads, g.in_shapes[0][0]
    v = _heads_part(g, g.inputs[0], h, 3, 2, [1, 2, 0, 3])
    return [_weighted(g, g.inputs[1], v, h, s, s)]


@onnx_lowering("_contrib_interleaved_matmul_encdec_qk")
def _encdec_qk(g, node):
    h, (sq, _, e), sk = node.attrs.heads, g.in_shapes[0], g.in_shapes[1][0]
    q = _heads_part(g, g.inputs[0], h, 1, 0, [1, 2, 0, 3])
    k = _heads_part(g, g.inputs[1], h, 2, 0, [1, 2, 3, 0])
    return [_scores(g, q, k, e // h, sq, sk)]


@onnx_lowering("_contrib_interleaved_matmul_encdec_valatt")
def _encdec_valatt(g, node):
    h, sk, (_, sq, _) = node.attrs.heads, g.in_shapes[0][0], g.in_shapes[1]
    v = _heads_part(g, g.inputs[0], h, 2, 1, [1, 2, 0, 3])
    return [_weighted(g, g.inputs[1], v, h, sq, sk)]
