"""Specs for nd/ops/deformable_psroi.py against a per-sample numpy loop (MXNet 1.9.1's own values
and gradients: tests/nd/ops/test_roi_ops.py)."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr


def _ref(data, rois, trans=None, *, spatial_scale, output_dim, group_size, pooled_size, part_size,
         sample_per_part, trans_std, no_trans):
    p, gs, s = pooled_size, group_size, sample_per_part
    part = part_size or p
    h_, w_ = data.shape[2:]
    classes = 1 if trans is None else trans.shape[1] // 2
    out = np.zeros((len(rois), output_dim, p, p))
    rnd = lambda v: math.floor(abs(v) + 0.5) * (1 if v >= 0 else -1)  # noqa: E731
    for r, row in enumerate(rois):
        x1, y1 = rnd(row[1]) * spatial_scale - 0.5, rnd(row[2]) * spatial_scale - 0.5
        x2, y2 = (rnd(row[3]) + 1) * spatial_scale - 0.5, (rnd(row[4]) + 1) * spatial_scale - 0.5
        rw, rh = max(x2 - x1, 0.1), max(y2 - y1, 0.1)
        for k, ph, pw in np.ndindex(output_dim, p, p):
            cls = k // (output_dim // classes)
            cy, cx = math.floor(ph / p * part), math.floor(pw / p * part)
            tx = 0.0 if trans is None else trans[r, 2 * cls, cy, cx] * trans_std
            ty = 0.0 if trans is None else trans[r, 2 * cls + 1, cy, cx] * trans_std
            c = (k * gs + min(ph * gs // p, gs - 1)) * gs + min(pw * gs // p, gs - 1)
            vals = []
            for ih, iw in np.ndindex(s, s):
                w = pw * rw / p + x1 + tx * rw + iw * rw / p / s
                h = ph * rh / p + y1 + ty * rh + ih * rh / p / s
                if w < -0.5 or w > w_ - 0.5 or h < -0.5 or h > h_ - 0.5:
                    continue
                w, h = min(max(w, 0), w_ - 1), min(max(h, 0), h_ - 1)
                x0, y0 = math.floor(w), math.floor(h)
                xx, yy = math.ceil(w), math.ceil(h)
                dx, dy = w - x0, h - y0
                plane = data[int(row[0]), c]
                vals.append((1 - dx) * (1 - dy) * plane[y0, x0] + (1 - dx) * dy * plane[yy, x0]
                            + dx * (1 - dy) * plane[y0, xx] + dx * dy * plane[yy, xx])
            out[r, k, ph, pw] = np.mean(vals) if vals else 0.0
    return out


def _case(draw):
    p = draw(st.integers(1, 3))
    gs, classes = draw(st.integers(1, 2)), draw(st.sampled_from([1, 2]))
    od = classes * draw(st.integers(1, 2))
    part = draw(st.sampled_from([0, 1, 2]))
    no_trans = draw(st.booleans())
    n, h, w = draw(st.integers(1, 2)), draw(st.integers(2, 6)), draw(st.integers(2, 6))
    rows = []
    for _ in range(draw(st.integers(1, 3))):
        x1, y1 = draw(st.floats(-2, 2 * w)), draw(st.floats(-2, 2 * h))
        x2, y2 = x1 + draw(st.floats(0, 2 * w)), y1 + draw(st.floats(0, 2 * h))
        rows.append([draw(st.integers(0, n - 1)), x1, y1, x2, y2])
    attrs = {"spatial_scale": draw(st.sampled_from([1.0, 0.5])), "output_dim": od, "group_size": gs, "pooled_size": p,
             "part_size": part, "sample_per_part": draw(st.integers(1, 2)),
             "trans_std": draw(st.sampled_from([0.0, 0.1])), "no_trans": no_trans}
    ins = [draw(arr((n, od * gs * gs, h, w))), np.array(rows)]
    if not no_trans:
        ins.append(draw(arr((len(rows), 2 * classes, part or p, part or p), -1.0, 1.0)))
    return ins, attrs


def _backward_case(draw):
    ins, attrs = _case(draw)
    return [draw(arr(_ref(*ins, **attrs).shape))] + ins, attrs


SPECS = [
    # data only: the trans gradient is MXNet's formula, which ignores the border clamp
    OpSpec("_contrib_DeformablePSROIPooling", case=_case, ref=_ref, grad_inputs=(0,), compare_outputs=1),
    OpSpec("_backward_DeformablePSROIPooling", case=_backward_case,
           nondiff="hidden backward op without a gradient of its own"),
]
