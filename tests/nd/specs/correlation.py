"""Specs for nd/ops/correlation.py: Correlation against a per-pixel numpy loop and its hidden
backward (MXNet 1.9.1's own values and gradients: tests/nd/test_correlation.py)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr

_HIDDEN = "hidden backward op without a gradient of its own (as MXNet)"


def _case(draw):
    k = draw(st.sampled_from([1, 3]))
    md, pad = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    attrs = {"kernel_size": k, "max_displacement": md, "stride1": draw(st.integers(1, 2)),
             "stride2": draw(st.integers(1, 2)), "pad_size": pad, "is_multiply": draw(st.booleans())}
    low = 2 * (md + (k - 1) // 2) - 2 * pad + 1      # the smallest side that fits
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2)),
             max(low, 1) + draw(st.integers(0, 2)), max(low, 1) + draw(st.integers(0, 2)))
    # abs(x - y) has a kink at x == y: keep the two inputs in different ranges
    return [draw(arr(shape, -1.0, -0.1)), draw(arr(shape, 0.1, 1.0))], attrs


def _ref(a, b, kernel_size, max_displacement, stride1, stride2, pad_size, is_multiply):
    p = ((0, 0), (0, 0), (pad_size, pad_size), (pad_size, pad_size))
    t1, t2 = np.pad(a, p), np.pad(b, p)
    border = max_displacement + (kernel_size - 1) // 2
    top_h = -(-(t1.shape[2] - 2 * border) // stride1)
    top_w = -(-(t1.shape[3] - 2 * border) // stride1)
    r = max_displacement // stride2
    width = 2 * r + 1
    out = np.zeros((a.shape[0], width * width, top_h, top_w))
    for n, ch, i, j in np.ndindex(out.shape):
        y1, x1 = i * stride1 + max_displacement, j * stride1 + max_displacement
        y2, x2 = y1 + (ch // width - r) * stride2, x1 + (ch % width - r) * stride2
        p1 = t1[n, :, y1:y1 + kernel_size, x1:x1 + kernel_size]
        p2 = t2[n, :, y2:y2 + kernel_size, x2:x2 + kernel_size]
        out[n, ch, i, j] = (p1 * p2).sum() if is_multiply else np.abs(p1 - p2).sum()
    return out / (kernel_size * kernel_size * a.shape[1])


def _backward_case(draw):
    (a, b), attrs = _case(draw)
    return [draw(arr(_ref(a, b, **attrs).shape)), a, b], attrs


SPECS = [
    OpSpec("Correlation", case=_case, ref=_ref),
    OpSpec("_backward_Correlation", case=_backward_case, nondiff=_HIDDEN),
]
