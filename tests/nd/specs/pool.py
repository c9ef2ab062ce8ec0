"""Specs for nd/ops/pool.py: Pooling and _backward_Pooling.

`pool_ref` is a per-output-position loop written from MXNet's pool.h formulas
(tiny shapes); it is also used by tests/nd/test_pool_ops.py.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import strategies as st

from tests.nd.specs.conv import vjp_ref
from tests.op_specs import OpSpec, arr, distinct


def pool_windows(in_sp, kernel=(), stride=(), pad=(), pooling_convention="valid", global_pool=False, **_):
    """Per spatial dim: list of (start, end, clip_end) of every window, MXNet's geometry."""
    n = len(in_sp)
    if global_pool:
        return [[(0, x, x)] for x in in_sp]
    stride = tuple(stride) or (1,) * n
    pad = tuple(pad) or (0,) * n
    dims = []
    for x, k, s, p in zip(in_sp, kernel, stride, pad):
        if pooling_convention == "same":
            o = math.ceil(x / s)
            total = max((o - 1) * s + k - x, 0)
            lo, hi = total // 2, total - total // 2
        else:
            o = (x + 2 * p - k) // s + 1 if pooling_convention == "valid" else 1 + math.ceil((x + 2 * p - k) / s)
            lo = hi = p
        dims.append([(i * s - lo, i * s - lo + k, x + hi) for i in range(o)])
    return dims


def pool_ref(data, *, pool_type="max", kernel=(), p_value=None, count_include_pad=None, layout=None, **kw):
    x = np.moveaxis(data, -1, 1) if layout in ("NWC", "NHWC", "NDHWC") else data
    dims = pool_windows(x.shape[2:], kernel, **kw)
    out = np.zeros(x.shape[:2] + tuple(len(d) for d in dims))
    for pos in itertools.product(*(range(len(d)) for d in dims)):
        lo = [dims[i][j][0] for i, j in enumerate(pos)]
        hi = [min(dims[i][j][1], dims[i][j][2]) for i, j in enumerate(pos)]
        clo = [max(v, 0) for v in lo]
        chi = [min(h, s) for h, s in zip(hi, x.shape[2:])]
        win = x[(slice(None), slice(None)) + tuple(slice(a, b) for a, b in zip(clo, chi))]
        win = win.reshape(x.shape[:2] + (-1,))
        if pool_type == "max":
            # a window wholly in the padding: MXNet's lowest finite value (-FLT_MAX for float32)
            val = win.max(axis=-1) if win.shape[-1] else np.full(x.shape[:2], np.finfo(x.dtype).min)
        elif pool_type == "lp":
            s = (win ** p_value).sum(axis=-1)
            val = np.sign(s) * np.abs(s) ** (1.0 / p_value)
        else:
            val = win.sum(axis=-1)
            if pool_type == "avg":
                size = np.prod([b - a for a, b in zip(clo, chi)] if count_include_pad is False else
                               [b - a for a, b in zip(lo, hi)])
                val = val / max(size, 1)
        out[(slice(None), slice(None)) + pos] = val
    return np.moveaxis(out, 1, -1) if layout in ("NWC", "NHWC", "NDHWC") else out


@st.composite
def pool_attrs(draw, nsp, types=("max", "avg", "sum", "lp")):
    pool_type = draw(st.sampled_from(types))
    attrs = {"pool_type": pool_type}
    if pool_type == "lp":
        attrs["p_value"] = draw(st.integers(1, 3))
    if draw(st.integers(0, 5)) == 0:
        attrs["global_pool"] = True
        attrs["kernel"] = (1,) * nsp
        return attrs
    attrs["kernel"] = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    attrs["stride"] = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    attrs["pooling_convention"] = draw(st.sampled_from(["valid", "full", "same"]))
    if attrs["pooling_convention"] != "same":
        attrs["pad"] = tuple(draw(st.integers(0, k // 2)) for k in attrs["kernel"])
    if pool_type == "avg":
        attrs["count_include_pad"] = draw(st.sampled_from([True, False]))
    return attrs


def pool_case(draw, types=("max", "avg", "sum", "lp"), with_grads=False):
    nsp = draw(st.sampled_from([1, 2, 2, 3]))
    attrs = draw(pool_attrs(nsp, types))
    side = 4 if nsp == 3 else 6
    sp = tuple(draw(st.integers(3, side)) for _ in range(nsp))
    layout = draw(st.sampled_from([None, {1: "NWC", 2: "NHWC", 3: "NDHWC"}[nsp]]))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2)), *sp)
    if layout:
        attrs["layout"] = layout
        shape = (shape[0], *sp, shape[1])
    if attrs["pool_type"] == "max":
        if any(lo >= n for d, n in zip(pool_windows(sp, **attrs), sp) for lo, _, _ in d):
            attrs.pop("pad", None)     # no window wholly in the padding: its -FLT_MAX defeats finite differences
        x = draw(distinct(st.just(shape)))
    elif attrs["pool_type"] == "lp":
        x = draw(arr(shape, 0.5, 2.0))
    else:
        x = draw(arr(shape))
    if not with_grads:
        return [x], attrs
    y = pool_ref(x, **attrs)
    return [draw(arr(y.shape)), x, y], attrs


def _backward_ref(ograd, data, output, **attrs):
    return vjp_ref(lambda d: pool_ref(d, **attrs), [data], ograd, (0,))[0]


SPECS = [
    OpSpec("Pooling", case=pool_case, ref=pool_ref),
    OpSpec("_backward_Pooling", case=lambda draw: pool_case(draw, ("avg", "sum"), with_grads=True),
           ref=_backward_ref, grad_inputs=(0,)),
]
