"""Specs for nd/ops/roi_align.py: ROIAlign / RROIAlign against a per-sample numpy loop
(MXNet 1.9.1's own values and gradients: tests/nd/ops/test_roi_ops.py)."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr


def _bilinear(plane, y, x):
    h, w = plane.shape
    if y < -1.0 or y > h or x < -1.0 or x > w:
        return 0.0
    y, x = max(y, 0.0), max(x, 0.0)
    yl, xl = int(y), int(x)
    if yl >= h - 1:
        yl = yh = h - 1
        y = float(yl)
    else:
        yh = yl + 1
    if xl >= w - 1:
        xl = xh = w - 1
        x = float(xl)
    else:
        xh = xl + 1
    ly, lx = y - yl, x - xl
    return ((1 - ly) * (1 - lx) * plane[yl, xl] + (1 - ly) * lx * plane[yl, xh]
            + ly * (1 - lx) * plane[yh, xl] + ly * lx * plane[yh, xh])


def _pool(data, rois, pooled_size, spatial_scale, ratio, ps=False, aligned=False, rotated=False):
    ph_, pw_ = pooled_size
    c_out = data.shape[1] // (ph_ * pw_) if ps else data.shape[1]
    out = np.zeros((len(rois), c_out, ph_, pw_))
    for r, row in enumerate(rois):
        b = int(row[0])
        if b < 0:
            continue
        if rotated:
            cx, cy, rw, rh = row[1:5] * spatial_scale
            theta = row[5] * math.pi / 180.0
            rw, rh = max(rw, 1.0), max(rh, 1.0)
            y0, x0 = -rh / 2, -rw / 2
        else:
            off = 0.5 if aligned else 0.0
            x0, y0, x1, y1 = row[1:5] * spatial_scale - off
            rw, rh = x1 - x0, y1 - y0
            if not aligned:
                rw, rh = max(rw, 1.0), max(rh, 1.0)
        gh = ratio if ratio > 0 else int(math.ceil(rh / ph_))
        gw = ratio if ratio > 0 else int(math.ceil(rw / pw_))
        for c, ph, pw in np.ndindex(c_out, ph_, pw_):
            cin = c * ph_ * pw_ + ph * pw_ + pw if ps else c
            acc = 0.0
            for iy, ix in np.ndindex(gh, gw):
                y = y0 + ph * rh / ph_ + (iy + 0.5) * rh / ph_ / gh
                x = x0 + pw * rw / pw_ + (ix + 0.5) * rw / pw_ / gw
                if rotated:
                    cos, sin = math.cos(theta), math.sin(theta)
                    x, y = x * cos + y * sin + cx, y * cos - x * sin + cy
                acc += _bilinear(data[b, cin], y, x)
            out[r, c, ph, pw] = acc / max(gh * gw, 1)
    return out


def _rois(draw, n, h, w, rotated=False):
    rows = []
    for _ in range(draw(st.integers(1, 3))):
        b = draw(st.integers(-1 if not rotated else 0, n - 1))
        if rotated:
            rows.append([b, draw(st.floats(0, w)), draw(st.floats(0, h)), draw(st.floats(0.5, w)),
                         draw(st.floats(0.5, h)), draw(st.floats(0, 180))])
        else:
            x0, y0 = draw(st.floats(-2, w)), draw(st.floats(-2, h))
            rows.append([b, x0, y0, x0 + draw(st.floats(0.6, w)), y0 + draw(st.floats(0.6, h))])
    return np.array(rows)


def _align_case(draw):
    ps = draw(st.booleans())
    pooled = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    c = (pooled[0] * pooled[1] if ps else 1) * draw(st.integers(1, 2))
    n, h, w = draw(st.integers(1, 2)), draw(st.integers(2, 6)), draw(st.integers(2, 6))
    attrs = {"pooled_size": pooled, "spatial_scale": draw(st.sampled_from([1.0, 0.5])),
             "sample_ratio": draw(st.sampled_from([-1, 1, 2])), "position_sensitive": ps,
             "aligned": draw(st.booleans())}
    return [draw(arr((n, c, h, w))), _rois(draw, n, h, w)], attrs


def _align_ref(data, rois, pooled_size, spatial_scale, sample_ratio, position_sensitive, aligned):
    return _pool(data, rois, pooled_size, spatial_scale, sample_ratio, position_sensitive, aligned)


def _backward_case(draw):
    (data, rois), attrs = _align_case(draw)
    return [draw(arr(_align_ref(data, rois, **attrs).shape)), data, rois], attrs


def _rroi_case(draw):
    n, h, w = draw(st.integers(1, 2)), draw(st.integers(2, 6)), draw(st.integers(2, 6))
    attrs = {"pooled_size": (draw(st.integers(1, 3)), draw(st.integers(1, 3))),
             "spatial_scale": draw(st.sampled_from([1.0, 0.5])), "sampling_ratio": draw(st.sampled_from([-1, 2]))}
    return [draw(arr((n, draw(st.integers(1, 2)), h, w))), _rois(draw, n, h, w, rotated=True)], attrs


SPECS = [
    OpSpec("_contrib_ROIAlign", case=_align_case, ref=_align_ref, grad_inputs=(0,)),
    OpSpec("_backward_ROIAlign", case=_backward_case, nondiff="hidden backward op without a gradient of its own"),
    OpSpec("_contrib_RROIAlign", case=_rroi_case,
           ref=lambda d, r, pooled_size, spatial_scale, sampling_ratio: _pool(
               d, r, pooled_size, spatial_scale, sampling_ratio, rotated=True),
           nondiff="MXNet 1.9.1 has no RROIAlign gradient"),
]
