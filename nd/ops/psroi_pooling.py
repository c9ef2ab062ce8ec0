"""PSROIPooling (MXNet 1.9.1, src/operator/contrib/psroi_pooling*): position-sensitive average
pooling of regions of interest (R-FCN).

A ROI row is (batch index, x1, y1, x2, y2); its corners are rounded (C's round) before
`spatial_scale` scales them, the far corner + 1, and each side is at least 0.1. Bin (ph, pw)
of output channel k averages the integer pixel range [floor(start), ceil(end)) (clipped to
the image) of input channel (k * group_size + gh) * group_size + gw, where (gh, gw) is the
bin's cell in the group_size x group_size grid (group_size 0 means pooled_size); an empty
bin gives 0. Bin sums come from an integral image; the gradient spreads each bin's gradient
evenly over its pixels through a 2-D difference array (one scatter, two cumulative sums).
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..backend import to_numpy
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import register, shape_known
from .indexing_ops import scatter_add

_FLOATS = (np.dtype("float16"), np.dtype("float32"), np.dtype("float64"))
_ATTRS = {
    "spatial_scale": Attr("float", doc="Ratio of input feature map height (or w) to raw image height (or w). "
                                       "Equals the reciprocal of total stride in convolutional layers"),
    "output_dim": Attr("int", doc="fix output dim"),
    "pooled_size": Attr("int", doc="fix pooled size"),
    "group_size": Attr("int", 0, "fix group size"),
}


def _group(a) -> int:
    if a.pooled_size < 1 or a.output_dim < 1 or a.group_size < 0:
        raise AttrError(f"operator _contrib_PSROIPooling: pooled_size and output_dim must be positive and "
                        f"group_size non-negative, got pooled_size={a.pooled_size}, output_dim={a.output_dim}, "
                        f"group_size={a.group_size}")
    if not 0.0 <= a.spatial_scale <= 1.0:
        raise AttrError(f"operator _contrib_PSROIPooling: spatial_scale {a.spatial_scale} exceeds the bound [0, 1]")
    return a.group_size or a.pooled_size


def _shape(a, d, r):
    gs = _group(a)
    d = d if d is None or shape_known(d) else None
    r = r if r is None or shape_known(r) else None
    if d is not None:
        if len(d) != 4:
            raise ShapeError(f"operator _contrib_PSROIPooling: data should be a 4D tensor, got shape {tuple(d)}")
        if d[1] < a.output_dim * gs * gs:
            raise ShapeError(f"operator _contrib_PSROIPooling: data has {d[1]} channels, fewer than output_dim * "
                             f"group_size**2 = {a.output_dim * gs * gs}")
    if r is not None and (len(r) != 2 or r[1] != 5):
        raise ShapeError(f"operator _contrib_PSROIPooling: rois should be a 2D tensor of shape (num_rois, 5), "
                         f"got {tuple(r)}")
    if d is None or r is None:
        return None
    return [tuple(d), tuple(r)], [(r[0], a.output_dim, a.pooled_size, a.pooled_size)]


def _type(a, td, tr):
    t = td if td is not None else tr
    if t is None:
        return None
    if t not in _FLOATS:
        raise DTypeError(f"operator _contrib_PSROIPooling: expected a floating-point dtype, got {t}")
    if td is not None and tr is not None and td != tr:
        raise DTypeError(f"operator _contrib_PSROIPooling: data and rois must have one dtype, got {td} and {tr}")
    return [t, t], [t]


def _c_round(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def _bins(a, rois, n: int, height: int, width: int):
    """Index arrays (R, K, P, P) of batch, channel, and bin bounds hs, he, ws, we (host numpy)."""
    p, gs, t = a.pooled_size, _group(a), rois.dtype.type
    scale = t(a.spatial_scale)
    b = rois[:, 0].astype(np.int64)
    if b.size and (b.min() < 0 or b.max() >= n):
        raise ShapeError(f"operator _contrib_PSROIPooling: ROI batch indices must lie in [0, {n}), got "
                         f"{b.tolist()}")
    x1, y1 = _c_round(rois[:, 1]).astype(rois.dtype) * scale, _c_round(rois[:, 2]).astype(rois.dtype) * scale
    x2 = (_c_round(rois[:, 3]) + t(1)).astype(rois.dtype) * scale
    y2 = (_c_round(rois[:, 4]) + t(1)).astype(rois.dtype) * scale
    rw, rh = np.maximum(x2 - x1, t(0.1)), np.maximum(y2 - y1, t(0.1))
    q = np.arange(p).astype(rois.dtype)[None, :]

    def bounds(start, size, limit):
        bin_size = (size / t(p))[:, None]
        lo = np.floor(q * bin_size + start[:, None]).astype(np.int64)
        hi = np.ceil((q + t(1)) * bin_size + start[:, None]).astype(np.int64)
        return np.clip(lo, 0, limit), np.clip(hi, 0, limit)

    hs, he = bounds(y1, rh, height)
    ws, we = bounds(x1, rw, width)
    cell = np.clip(np.floor(np.arange(p) * gs / p).astype(np.int64), 0, gs - 1)
    k = np.arange(a.output_dim)[:, None, None]
    chan = (k * gs + cell[None, :, None]) * gs + cell[None, None, :]            # (K, P, P)
    shape = (len(rois), a.output_dim, p, p)
    return (np.broadcast_to(b[:, None, None, None], shape), np.broadcast_to(chan[None], shape),
            np.broadcast_to(hs[:, None, :, None], shape), np.broadcast_to(he[:, None, :, None], shape),
            np.broadcast_to(ws[:, None, None, :], shape), np.broadcast_to(we[:, None, None, :], shape))


@register("_contrib_PSROIPooling", hint="psroipooling", inputs=("data", "rois"), attrs=dict(_ATTRS),
          infer_shape=_shape, infer_type=_type)
def PSROIPooling(xp, a, data, rois):  # noqa: N802
    """Position-sensitive average pooling of each ROI (see the module doc)."""
    _shape(a, data.shape, rois.shape)
    n, c, h, w = data.shape
    b, ch, hs, he, ws, we = (xp.asarray(v) for v in _bins(a, to_numpy(rois), n, h, w))
    integral = xp.zeros((n, c, h + 1, w + 1))
    integral[:, :, 1:, 1:] = data.astype(np.float64).cumsum(axis=2).cumsum(axis=3)
    total = (integral[b, ch, he, we] - integral[b, ch, hs, we] - integral[b, ch, he, ws] + integral[b, ch, hs, ws])
    area = (he - hs) * (we - ws)
    out = xp.where(area > 0, total / xp.maximum(area, 1), 0.0)
    return (out.astype(data.dtype),)


@PSROIPooling.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_PSROIPooling(ograds[0], inputs[0], inputs[1], **a.given), F.zeros_like(inputs[1])]


@register("_backward_PSROIPooling", inputs=("ograd", "data", "rois"), attrs=dict(_ATTRS),
          infer_shape=lambda a, g, d, r: None if d is None or r is None else (
              [_shape(a, d, r)[1][0], tuple(d), tuple(r)], [tuple(d)]),
          infer_type=lambda a, tg, td, tr: None if td is None else ([td, td, td], [td]))
def _backward_PSROIPooling(xp, a, ograd, data, rois):  # noqa: N802
    """Each bin's gradient / its area added to every pixel of the bin (data gives the shape)."""
    n, c, h, w = data.shape
    b, ch, hs, he, ws, we = (xp.asarray(v) for v in _bins(a, to_numpy(rois), n, h, w))
    area = (he - hs) * (we - ws)
    val = xp.where(area > 0, ograd.astype(np.float64) / xp.maximum(area, 1), 0.0).reshape(-1)
    diff = xp.zeros(n * c * (h + 1) * (w + 1))
    base = (b * c + ch) * (h + 1)
    for rows, cols, sign in ((hs, ws, 1.0), (hs, we, -1.0), (he, ws, -1.0), (he, we, 1.0)):
        scatter_add(xp, diff, ((base + rows) * (w + 1) + cols).reshape(-1), sign * val)
    grad = diff.reshape(n, c, h + 1, w + 1).cumsum(axis=2).cumsum(axis=3)[:, :, :h, :w]
    return (xp.ascontiguousarray(grad).astype(data.dtype),)
