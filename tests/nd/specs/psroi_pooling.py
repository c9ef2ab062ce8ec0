"""Specs for nd/ops/psroi_pooling.py against a per-bin numpy loop (MXNet 1.9.1's own values and
gradients: tests/nd/ops/test_roi_ops.py)."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr


def _ref(data, rois, spatial_scale, output_dim, pooled_size, group_size):
    gs, p = group_size or pooled_size, pooled_size
    out = np.zeros((len(rois), output_dim, p, p))
    h, w = data.shape[2:]
    rnd = lambda v: math.floor(abs(v) + 0.5) * (1 if v >= 0 else -1)  # noqa: E731
    for r, row in enumerate(rois):
        x1, y1 = rnd(row[1]) * spatial_scale, rnd(row[2]) * spatial_scale
        x2, y2 = (rnd(row[3]) + 1) * spatial_scale, (rnd(row[4]) + 1) * spatial_scale
        rw, rh = max(x2 - x1, 0.1), max(y2 - y1, 0.1)
        for k, ph, pw in np.ndindex(output_dim, p, p):
            hs = min(max(math.floor(ph * rh / p + y1), 0), h)
            he = min(max(math.ceil((ph + 1) * rh / p + y1), 0), h)
            ws = min(max(math.floor(pw * rw / p + x1), 0), w)
            we = min(max(math.ceil((pw + 1) * rw / p + x1), 0), w)
            gh, gw = min(ph * gs // p, gs - 1), min(pw * gs // p, gs - 1)
            c = (k * gs + gh) * gs + gw
            if he > hs and we > ws:
                out[r, k, ph, pw] = data[int(row[0]), c, hs:he, ws:we].mean()
    return out


def _case(draw):
    p = draw(st.integers(1, 3))
    gs = draw(st.sampled_from([0, p, 2]))
    od = draw(st.integers(1, 2))
    n, h, w = draw(st.integers(1, 2)), draw(st.integers(2, 6)), draw(st.integers(2, 6))
    rows = []
    for _ in range(draw(st.integers(1, 3))):
        x1, y1 = draw(st.floats(-2, 2 * w)), draw(st.floats(-2, 2 * h))
        x2, y2 = x1 + draw(st.floats(0, 2 * w)), y1 + draw(st.floats(0, 2 * h))
        rows.append([draw(st.integers(0, n - 1)), x1, y1, x2, y2])
    attrs = {"spatial_scale": draw(st.sampled_from([1.0, 0.5])), "output_dim": od, "pooled_size": p, "group_size": gs}
    return [draw(arr((n, od * (gs or p) ** 2 + draw(st.integers(0, 1)), h, w))), np.array(rows)], attrs


def _backward_case(draw):
    (data, rois), attrs = _case(draw)
    return [draw(arr(_ref(data, rois, **attrs).shape)), data, rois], attrs


SPECS = [
    OpSpec("_contrib_PSROIPooling", case=_case, ref=_ref, grad_inputs=(0,)),
    OpSpec("_backward_PSROIPooling", case=_backward_case, nondiff="hidden backward op without a gradient of its own"),
]
