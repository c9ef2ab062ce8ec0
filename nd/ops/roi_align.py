"""ROIAlign and RROIAlign (MXNet 1.9.1, src/operator/contrib/roi_align*, rroi_align*): average of
bilinear samples over each bin of each region of interest (Mask R-CNN; rotated boxes for text).

A ROI row is (batch index, x1, y1, x2, y2) for ROIAlign and (batch index, center x, center y,
width, height, angle in degrees) for RROIAlign, in image coordinates scaled by `spatial_scale`.
Each of the pooled_size bins averages a grid of samples (`sample_ratio` / `sampling_ratio` per
side, or ceil(roi side / pooled side) when <= 0); a sample reads the four neighbouring pixels
with MXNet's rules: outside [-1, size] it is zero, below 0 it is clamped to 0, at the last
pixel it does not interpolate. Coordinates are computed in the ROI's dtype, in MXNet's order.

Each ROI becomes a sparse interpolation matrix M (pooled bins x H*W, built on the host) so
the output is one matrix product per ROI and the gradient the transposed one.
`position_sensitive` (R-FCN) reads channel c * PH * PW + bin for output channel c. ROIAlign
with a negative batch index gives zeros (MXNet documents the ROI as ignored). RROIAlign has no
gradient, as in MXNet.
"""
from __future__ import annotations

import math

import numpy as np

from ..attrs import Attr
from ..backend import to_numpy
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import register, shape_known

_FLOATS = (np.dtype("float16"), np.dtype("float32"), np.dtype("float64"))
_SCALE_DOC = ("Ratio of input feature map height (or w) to raw image height (or w). Equals the reciprocal "
              "of total stride in convolutional layers")
_ALIGN_ATTRS = {
    "pooled_size": Attr("shape", doc="ROI Align output roi feature map height and width: (h, w)"),
    "spatial_scale": Attr("float", doc=_SCALE_DOC),
    "sample_ratio": Attr("int", -1, "Optional sampling ratio of ROI align, using adaptive size by default."),
    "position_sensitive": Attr("bool", False, "Whether to perform position-sensitive RoI pooling."),
    "aligned": Attr("bool", False, "Center-aligned ROIAlign introduced in Detectron2. To enable, set aligned "
                                   "to True."),
}
_RROI_ATTRS = {
    "pooled_size": Attr("shape", doc="RROI align output shape (h,w) "),
    "spatial_scale": Attr("float", doc=_SCALE_DOC),
    "sampling_ratio": Attr("int", -1, "Optional sampling ratio of RROI align, using adaptive size by default."),
}


def _pooled(op: str, a) -> tuple:
    size = tuple(a.pooled_size)
    if len(size) != 2 or any(s < 1 for s in size):
        raise AttrError(f"operator {op}: pooled_size must be (h, w) of positive sizes, got {size}")
    if not 0.0 <= a.spatial_scale <= 1.0:
        raise AttrError(f"operator {op}: spatial_scale {a.spatial_scale} exceeds the bound [0, 1]")
    return size


def _shape(op: str, a, d, r, cols: int):
    ph, pw = _pooled(op, a)
    if d is not None and len(d) != 4:
        raise ShapeError(f"operator {op}: data should be a 4D tensor, got shape {tuple(d)}")
    if r is not None and (len(r) != 2 or r[1] not in (0, cols)):
        raise ShapeError(f"operator {op}: rois should be a 2D tensor of shape (num_rois, {cols}), got {tuple(r)}")
    if d is None or r is None or not shape_known(d) or not shape_known(r):
        return None
    c = d[1]
    if getattr(a, "position_sensitive", False):
        if c % (ph * pw):
            raise ShapeError(f"operator {op}: input channels ({c}) should be divisible by pooled_size[0] * "
                             f"pooled_size[1] ({ph * pw}) when position_sensitive is true")
        c //= ph * pw
    return [tuple(d), tuple(r)], [(r[0], c, ph, pw)]


def _type(op: str):
    def rule(a, td, tr):
        t = td if td is not None else tr
        if t is None:
            return None
        if t not in _FLOATS:
            raise DTypeError(f"operator {op}: expected a floating-point dtype, got {t}")
        if td is not None and tr is not None and td != tr:
            raise DTypeError(f"operator {op}: data and rois must have one dtype, got {td} and {tr}")
        return [t, t], [t]
    return rule


def _taps(t, coord, size: int):
    """Per sample coordinate: (low, high) pixel and (low, high) weight, zero outside [-1, size]."""
    valid = (coord >= t(-1.0)) & (coord <= t(size))
    c = np.where(coord <= 0, t(0), coord)
    low = np.floor(c).astype(np.int64)
    end = low >= size - 1
    low = np.where(end, size - 1, low)
    high = np.where(end, size - 1, low + 1)
    frac = np.where(end, t(0), (c - low.astype(c.dtype)).astype(c.dtype))
    return low, high, (t(1) - frac) * valid, frac * valid


def _matrix(t, ys, xs, height: int, width: int, count: int):
    """M (bins, H*W): bilinear weights of every sample (ys, xs: (bins, samples)) summed, / count."""
    yl, yh, wyl, wyh = _taps(t, ys, height)
    xl, xh, wxl, wxh = _taps(t, xs, width)
    bins = np.broadcast_to(np.arange(ys.shape[0])[:, None], ys.shape)
    m = np.zeros((ys.shape[0], height * width))
    for yi, wy in ((yl, wyl), (yh, wyh)):
        for xi, wx in ((xl, wxl), (xh, wxh)):
            np.add.at(m, (bins, yi * width + xi), (wy * wx).astype(np.float64))
    return m / count


def _grid(t, start, size, pooled: int, n: int):
    """Sample offsets along one axis: (pooled, n), MXNet's float arithmetic in dtype t."""
    bin_size = t(size) / t(pooled)
    p = np.arange(pooled).astype(t)[:, None]
    i = (np.arange(n).astype(t) + t(0.5))[None, :]
    return t(start) + p * bin_size + i * bin_size / t(n)


def _align_matrices(a, rois, height: int, width: int):
    """(batch index, M or None) per ROI of ROIAlign."""
    ph, pw = _pooled("_contrib_ROIAlign", a)
    t = rois.dtype.type
    scale, off = t(a.spatial_scale), t(0.5 if a.aligned else 0.0)
    out = []
    for row in rois:
        b = int(row[0])
        if b < 0:
            out.append((b, None))
            continue
        x1, y1, x2, y2 = (row[1:5] * scale - off).astype(rois.dtype)
        rw, rh = t(x2 - x1), t(y2 - y1)
        if a.aligned:
            if not (rw > 0 and rh > 0):
                raise ShapeError(f"operator _contrib_ROIAlign: with aligned=True every ROI needs a positive "
                                 f"width and height, got ROI {row.tolist()}")
        else:
            rw, rh = max(rw, t(1)), max(rh, t(1))
        gh = a.sample_ratio if a.sample_ratio > 0 else int(math.ceil(rh / t(ph)))
        gw = a.sample_ratio if a.sample_ratio > 0 else int(math.ceil(rw / t(pw)))
        ys = _grid(t, y1, rh, ph, gh)                  # (ph, gh)
        xs = _grid(t, x1, rw, pw, gw)                  # (pw, gw)
        yy = np.broadcast_to(ys[:, None, :, None], (ph, pw, gh, gw)).reshape(ph * pw, -1)
        xx = np.broadcast_to(xs[None, :, None, :], (ph, pw, gh, gw)).reshape(ph * pw, -1)
        out.append((b, _matrix(t, yy, xx, height, width, max(gh * gw, 1))))
    return out


def _check_batch(op: str, b: int, n: int) -> None:
    if b >= n:
        raise ShapeError(f"operator {op}: ROI batch index {b} is out of range for data with {n} images")


@register("_contrib_ROIAlign", hint="roialign", inputs=("data", "rois"), attrs=dict(_ALIGN_ATTRS),
          infer_shape=lambda a, d, r: _shape("_contrib_ROIAlign", a, d, r, 5),
          infer_type=_type("_contrib_ROIAlign"))
def ROIAlign(xp, a, data, rois):  # noqa: N802
    """Average of bilinear samples per bin of each ROI (see the module doc)."""
    (_, (oshape,)) = _shape("_contrib_ROIAlign", a, data.shape, rois.shape, 5)
    r, c_out, ph, pw = oshape
    out = xp.zeros((r, c_out, ph * pw), dtype=np.float64)
    mats = _align_matrices(a, to_numpy(rois), data.shape[2], data.shape[3])
    for i, (b, m) in enumerate(mats):
        if m is None:
            continue
        _check_batch("_contrib_ROIAlign", b, data.shape[0])
        plane, mm = data[b].reshape(data.shape[1], -1).astype(np.float64), xp.asarray(m)
        if a.position_sensitive:
            out[i] = xp.einsum("cph,ph->cp", plane.reshape(c_out, ph * pw, -1), mm)
        else:
            out[i] = plane @ mm.T
    return (out.reshape(oshape).astype(data.dtype),)


@ROIAlign.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_ROIAlign(ograds[0], inputs[0], inputs[1], **a.given), F.zeros_like(inputs[1])]


@register("_backward_ROIAlign", inputs=("ograd", "data", "rois"), attrs=dict(_ALIGN_ATTRS),
          infer_shape=lambda a, g, d, r: None if d is None or r is None else (
              [_shape("_contrib_ROIAlign", a, d, r, 5)[1][0], tuple(d), tuple(r)], [tuple(d)]),
          infer_type=lambda a, tg, td, tr: None if td is None else ([td, td, td], [td]))
def _backward_ROIAlign(xp, a, ograd, data, rois):  # noqa: N802
    """ROIAlign's data gradient: each bin's gradient spread back over its samples' pixels
    (data only gives the shape)."""
    n, c, h, w = data.shape
    r, c_out, ph, pw = ograd.shape
    grad = xp.zeros((n, c, h * w), dtype=np.float64)
    g = ograd.reshape(r, c_out, ph * pw).astype(np.float64)
    for i, (b, m) in enumerate(_align_matrices(a, to_numpy(rois), h, w)):
        if m is None:
            continue
        _check_batch("_contrib_ROIAlign", b, n)
        mm = xp.asarray(m)
        if a.position_sensitive:
            grad[b] += (g[i][:, :, None] * mm[None]).reshape(c, h * w)
        else:
            grad[b] += g[i] @ mm
    return (grad.reshape(data.shape).astype(data.dtype),)


def _rotated_matrices(a, rois, height: int, width: int):
    """(batch index, M) per ROI of RROIAlign: the sample grid rotated about the ROI's center."""
    ph, pw = _pooled("_contrib_RROIAlign", a)
    t = rois.dtype.type
    scale = t(a.spatial_scale)
    out = []
    for row in rois:
        b = int(row[0])
        cx, cy, rw, rh = (row[1:5] * scale).astype(rois.dtype)
        theta = t(row[5] * t(math.pi) / t(180.0))
        rw, rh = max(rw, t(1)), max(rh, t(1))
        gh = a.sampling_ratio if a.sampling_ratio > 0 else int(math.ceil(rh / t(ph)))
        gw = a.sampling_ratio if a.sampling_ratio > 0 else int(math.ceil(rw / t(pw)))
        ys = _grid(t, -rh / t(2), rh, ph, gh)
        xs = _grid(t, -rw / t(2), rw, pw, gw)
        yy = np.broadcast_to(ys[:, None, :, None], (ph, pw, gh, gw)).reshape(ph * pw, -1)
        xx = np.broadcast_to(xs[None, :, None, :], (ph, pw, gh, gw)).reshape(ph * pw, -1)
        cos, sin = t(np.cos(theta)), t(np.sin(theta))
        x = (xx * cos + yy * sin + cx).astype(rois.dtype)
        y = (yy * cos - xx * sin + cy).astype(rois.dtype)
        out.append((b, _matrix(t, y, x, height, width, max(gh * gw, 1))))
    return out


@register("_contrib_RROIAlign", hint="rroialign", inputs=("data", "rois"), attrs=dict(_RROI_ATTRS),
          infer_shape=lambda a, d, r: _shape("_contrib_RROIAlign", a, d, r, 6),
          infer_type=_type("_contrib_RROIAlign"))
def RROIAlign(xp, a, data, rois):  # noqa: N802
    """Average of bilinear samples per bin of each rotated ROI (see the module doc)."""
    (_, (oshape,)) = _shape("_contrib_RROIAlign", a, data.shape, rois.shape, 6)
    out = xp.zeros((oshape[0], oshape[1], oshape[2] * oshape[3]), dtype=np.float64)
    for i, (b, m) in enumerate(_rotated_matrices(a, to_numpy(rois), data.shape[2], data.shape[3])):
        if not 0 <= b < data.shape[0]:
            raise ShapeError(f"operator _contrib_RROIAlign: ROI batch index {b} is out of range for data "
                             f"with {data.shape[0]} images")
        out[i] = data[b].reshape(data.shape[1], -1).astype(np.float64) @ xp.asarray(m).T
    return (out.reshape(oshape).astype(data.dtype),)
