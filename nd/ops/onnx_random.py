"""ONNX lowerings of the random operators (nd/ops/random.py).

The exported model draws from the runtime's generator: the same distribution, never the
same values as hybridgraph's (`mx.random.seed` does not carry over), so tests compare
shapes, dtypes and statistics. onnxruntime's random kernels make float32/float64; float16
outputs are drawn in float32 and cast. Distributions ONNX has no draw for are written from
a uniform draw by their inverse CDF (exponential, randint); the rest (gamma, poisson,
negative binomial) have no exact form and keep the "no lowering" error.
"""
from __future__ import annotations

import numpy as np

from ..lowering import onnx_lowering
from . import random  # noqa: F401 - the ops these lowerings register onto

_NOTE = "draws from the runtime's generator (same distribution, other values)"


def _draw_dtype(dtype) -> np.dtype:
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)


def _finish(g, y: str, dtype) -> str:
    return y if _draw_dtype(dtype) == np.dtype(dtype) else g.cast(y, dtype)


def _uniform(g, shape, dtype, low: float = 0.0, high: float = 1.0) -> str:
    return g.op("RandomUniform", [], shape=[int(d) for d in shape], low=float(low), high=float(high),
                dtype=g.onnx_dtype(_draw_dtype(dtype)))


def _exponential(g, u: str, dtype) -> str:
    """-log(1 - U) for U uniform on [0, 1): a standard exponential draw (1 - U > 0, so finite)."""
    one = g.scalar(1.0, _draw_dtype(dtype))
    return g.op("Neg", [g.op("Log", [g.op("Sub", [one, u])])])


@onnx_lowering("_random_uniform", note=_NOTE)
def _random_uniform(g, node):
    a, dt = node.attrs, g.out_dtypes[0]
    return [_finish(g, _uniform(g, g.out_shapes[0], dt, a.low, a.high), dt)]


@onnx_lowering("_random_normal", note=_NOTE)
def _random_normal(g, node):
    a, dt = node.attrs, g.out_dtypes[0]
    y = g.op("RandomNormal", [], shape=[int(d) for d in g.out_shapes[0]], mean=float(a.loc),
             scale=float(a.scale), dtype=g.onnx_dtype(_draw_dtype(dt)))
    return [_finish(g, y, dt)]


@onnx_lowering("_random_uniform_like", "_random_normal_like", note=_NOTE)
def _random_like(g, node):
    a, dt = node.attrs, g.out_dtypes[0]
    kw = {"dtype": g.onnx_dtype(_draw_dtype(dt))}
    if node.op.name == "_random_uniform_like":
        y = g.op("RandomUniformLike", [g.inputs[0]], low=float(a.low), high=float(a.high), **kw)
    else:
        y = g.op("RandomNormalLike", [g.inputs[0]], mean=float(a.loc), scale=float(a.scale), **kw)
    return [_finish(g, y, dt)]


@onnx_lowering("_random_exponential", "_random_exponential_like", note=_NOTE + "; -log(1 - U) / lam")
def _random_exponential(g, node):
    dt = g.out_dtypes[0]
    if node.op.name.endswith("_like"):
        u = g.op("RandomUniformLike", [g.inputs[0]], dtype=g.onnx_dtype(_draw_dtype(dt)))
    else:
        u = _uniform(g, g.out_shapes[0], dt)
    y = _exponential(g, u, dt)
    return [_finish(g, g.op("Div", [y, g.scalar(float(node.attrs.lam), _draw_dtype(dt))]), dt)]


@onnx_lowering("_random_randint", note=_NOTE + "; floor of a float64 uniform draw on [low, high)")
def _random_randint(g, node):
    a = node.attrs
    u = _uniform(g, g.out_shapes[0], np.float64, a.low, a.high)
    # floor of U on [low, high) is uniform on the integers low..high-1 (exact for |range| < 2**53)
    y = g.op("Clip", [g.op("Floor", [u]), g.scalar(float(a.low), np.float64), g.scalar(float(a.high) - 1, np.float64)])
    return [g.cast(y, g.out_dtypes[0])]


def _per_entry(g, i: int, dt) -> str:
    """Parameter input i, cast to the draw dtype, with one trailing axis per sample axis."""
    x = g.inputs[i]
    x = x if g.in_dtypes[i] == _draw_dtype(dt) else g.cast(x, _draw_dtype(dt))
    extra = len(g.out_shapes[0]) - len(g.in_shapes[i])
    return g.axes_op("Unsqueeze", x, list(range(len(g.in_shapes[i]), len(g.in_shapes[i]) + extra))) if extra else x


@onnx_lowering("_sample_uniform", "_sample_normal", "_sample_exponential", note=_NOTE)
def _sample(g, node):
    dt, shape = g.out_dtypes[0], g.out_shapes[0]
    kind = node.op.name[len("_sample_"):]
    if kind == "normal":
        z = g.op("RandomNormal", [], shape=[int(d) for d in shape], dtype=g.onnx_dtype(_draw_dtype(dt)))
        y = g.op("Add", [_per_entry(g, 0, dt), g.op("Mul", [z, _per_entry(g, 1, dt)])])
    elif kind == "uniform":
        low, high = _per_entry(g, 0, dt), _per_entry(g, 1, dt)
        y = g.op("Add", [low, g.op("Mul", [_uniform(g, shape, dt), g.op("Sub", [high, low])])])
    else:
        y = g.op("Div", [_exponential(g, _uniform(g, shape, dt), dt), _per_entry(g, 0, dt)])
    return [_finish(g, y, dt)]


@onnx_lowering("_sample_multinomial", note=_NOTE + "; Multinomial of log-probabilities")
def _sample_multinomial(g, node):
    a, shape = node.attrs, g.in_shapes[0]
    k = shape[-1]
    n = int(np.prod(a.shape, dtype=np.int64)) if a.shape else 1
    probs = g.inputs[0] if g.in_dtypes[0] == np.float32 else g.cast(g.inputs[0], np.float32)
    rows = g.reshape(probs, [-1, k])
    idx = g.op("Multinomial", [g.op("Log", [rows])], sample_size=n, dtype=g.onnx_dtype(np.int64))
    outs = [g.reshape_out(g.cast(idx, g.out_dtypes[0]), 0)]
    if a.get_prob:
        picked = g.op("Log", [g.op("GatherElements", [rows, idx], axis=1)])
        outs.append(g.reshape_out(g.cast(picked, g.out_dtypes[1]) if g.out_dtypes[1] != np.float32 else picked, 1))
    return outs
