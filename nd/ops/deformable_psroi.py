"""DeformablePSROIPooling (MXNet 1.9.1, src/operator/contrib/deformable_psroi_pooling*; Deformable
ConvNets' R-FCN head): position-sensitive ROI pooling whose bins are moved by learned offsets.

A ROI (batch index, x1, y1, x2, y2) is rounded (C's round), scaled by `spatial_scale` and shifted
by -0.5 (far corner + 1); each side is at least 0.1. Bin (ph, pw) of output channel k averages
sample_per_part**2 bilinear samples starting at the bin's corner, moved by trans_std times the
ROI's size times `trans` (R, 2 * num_classes, part_size, part_size) at the bin's part cell and
k's class (k // (output_dim / num_classes)); no_trans drops `trans`. Samples outside
[-0.5, size - 0.5] are skipped, the rest clamped to the image; the hidden second output counts
the samples used. The gradients are MXNet's: data through the bilinear weights, trans through
the corner differences (as MXNet, ignoring the clamp).
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..backend import to_numpy
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import register, shape_known
from .indexing_ops import scatter_add

_OP = "_contrib_DeformablePSROIPooling"
_FLOATS = (np.dtype("float16"), np.dtype("float32"), np.dtype("float64"))
_ATTRS = {
    "spatial_scale": Attr("float", doc="Ratio of input feature map height (or w) to raw image height (or w). "
                                       "Equals the reciprocal of total stride in convolutional layers"),
    "output_dim": Attr("int", doc="fix output dim"),
    "group_size": Attr("int", doc="fix group size"),
    "pooled_size": Attr("int", doc="fix pooled size"),
    "part_size": Attr("int", 0, "fix part size"),
    "sample_per_part": Attr("int", 1, "fix samples per part"),
    "trans_std": Attr("float", 0.0, "fix transition std"),
    "no_trans": Attr("bool", False, "Whether to disable trans parameter."),
}


def _inputs(a) -> tuple:
    return ("data", "rois") if a.no_trans else ("data", "rois", "trans")


def _check_attrs(a) -> None:
    if min(a.output_dim, a.group_size, a.pooled_size, a.sample_per_part) < 1 or a.part_size < 0:
        raise AttrError(f"operator {_OP}: output_dim, group_size, pooled_size and sample_per_part must be positive "
                        f"and part_size non-negative, got output_dim={a.output_dim}, group_size={a.group_size}, "
                        f"pooled_size={a.pooled_size}, sample_per_part={a.sample_per_part}, part_size={a.part_size}")
    if not 0.0 <= a.spatial_scale <= 1.0 or not 0.0 <= a.trans_std <= 1.0:
        raise AttrError(f"operator {_OP}: spatial_scale and trans_std must lie in [0, 1], got "
                        f"{a.spatial_scale} and {a.trans_std}")


def _shape(a, d, r, t=None):
    _check_attrs(a)
    if d is not None and len(d) != 4:
        raise ShapeError(f"operator {_OP}: data should be a 4D tensor, got shape {tuple(d)}")
    if r is not None and (len(r) != 2 or r[1] not in (0, 5)):
        raise ShapeError(f"operator {_OP}: rois should be a 2D tensor of shape (num_rois, 5), got {tuple(r)}")
    if t is not None and len(t) != 4:
        raise ShapeError(f"operator {_OP}: trans should be a 4D tensor, got shape {tuple(t)}")
    known = [s for s in (d, r, t) if s is not None]
    if d is None or r is None or (not a.no_trans and t is None) or not all(shape_known(s) for s in known):
        return None
    if d[1] < a.output_dim * a.group_size ** 2:
        raise ShapeError(f"operator {_OP}: data has {d[1]} channels, fewer than output_dim * group_size**2 = "
                         f"{a.output_dim * a.group_size ** 2}")
    part = a.part_size or a.pooled_size
    if t is not None:
        classes = t[1] // 2
        if t[0] != r[0] or t[1] % 2 or classes < 1 or a.output_dim % classes or tuple(t[2:]) != (part, part):
            raise ShapeError(f"operator {_OP}: trans must be (num_rois, 2 * num_classes, part_size, part_size) "
                             f"with num_classes dividing output_dim ({a.output_dim}), got {tuple(t)}")
    out = (r[0], a.output_dim, a.pooled_size, a.pooled_size)
    return [tuple(s) for s in known], [out, out]


def _type(a, td, tr, tt=None):
    if td is None:
        return None
    if td not in _FLOATS:
        raise DTypeError(f"operator {_OP}: expected a floating-point dtype, got {td}")
    for name, t in (("rois", tr), ("trans", tt)):
        if t is not None and t != td:
            raise DTypeError(f"operator {_OP}: {name} has dtype {t}, expected {td} like data")
    return [td] * (2 if a.no_trans else 3), [td, td]


def _samples(a, rois, trans, height: int, width: int):
    """Per (roi, channel, ph, pw, ih, iw) sample: batch, input channel, clamped (h, w), valid,
    plus the trans index, part cell and ROI sizes the trans gradient needs (host numpy)."""
    p, gs, s, k = a.pooled_size, a.group_size, a.sample_per_part, a.output_dim
    part = a.part_size or p
    t = rois.dtype.type
    scale = t(a.spatial_scale)

    def rnd(v):
        return (np.sign(v) * np.floor(np.abs(v) + 0.5)).astype(rois.dtype)
    x1, y1 = rnd(rois[:, 1]) * scale - t(0.5), rnd(rois[:, 2]) * scale - t(0.5)
    x2, y2 = (rnd(rois[:, 3]) + t(1)) * scale - t(0.5), (rnd(rois[:, 4]) + t(1)) * scale - t(0.5)
    rw, rh = np.maximum(x2 - x1, t(0.1)), np.maximum(y2 - y1, t(0.1))
    bw, bh = rw / t(p), rh / t(p)
    q = np.arange(p).astype(rois.dtype)
    cell = np.floor(q / t(p) * t(part)).astype(np.int64)                            # part cell per bin
    classes = 1 if trans is None else trans.shape[1] // 2
    cls = np.arange(k) // (k // classes)                                              # (K,)
    n = len(rois)
    shape = (n, k, p, p, s, s)
    if trans is None:
        tx = ty = np.zeros((n, k, p, p), dtype=rois.dtype)
    else:
        tx = trans[:, 2 * cls][:, :, cell][:, :, :, cell] * t(a.trans_std)             # (R, K, P, P)
        ty = trans[:, 2 * cls + 1][:, :, cell][:, :, :, cell] * t(a.trans_std)
    wstart = (q[None, None, None, :] * bw[:, None, None, None] + x1[:, None, None, None]) + tx * rw[:, None, None, None]
    hstart = (q[None, None, :, None] * bh[:, None, None, None] + y1[:, None, None, None]) + ty * rh[:, None, None, None]
    i = np.arange(s).astype(rois.dtype)
    w = wstart[..., None, None] + (i[None, :] * (bw / t(s))[:, None])[:, None, None, None, None, :]
    h = hstart[..., None, None] + (i[None, :] * (bh / t(s))[:, None])[:, None, None, None, :, None]
    w, h = np.broadcast_to(w, shape), np.broadcast_to(h, shape)
    valid = ~((w < -0.5) | (w > width - 0.5) | (h < -0.5) | (h > height - 0.5))
    w, h = np.clip(w, 0, width - 1), np.clip(h, 0, height - 1)
    g = np.clip(np.floor(q * t(gs) / t(p)).astype(np.int64), 0, gs - 1)
    chan = (np.arange(k)[:, None, None] * gs + g[None, :, None]) * gs + g[None, None, :]   # (K, P, P)
    return {"b": rois[:, 0].astype(np.int64), "chan": chan, "h": h, "w": w, "valid": valid, "cls": cls,
            "cell": cell, "rw": rw, "rh": rh, "classes": classes, "part": part}


def _corners(xp, data, smp):
    """(flat indices, weights, values) of the four bilinear corners (00, 01, 10, 11) of every sample."""
    n, c, height, width = data.shape
    b = xp.asarray(smp["b"])
    if smp["b"].size and (smp["b"].min() < 0 or smp["b"].max() >= n):
        raise ShapeError(f"operator {_OP}: ROI batch indices must lie in [0, {n}), got {smp['b'].tolist()}")
    h, w = xp.asarray(smp["h"].astype(np.float64)), xp.asarray(smp["w"].astype(np.float64))
    x0, x1 = xp.floor(w).astype(np.int64), xp.ceil(w).astype(np.int64)
    y0, y1 = xp.floor(h).astype(np.int64), xp.ceil(h).astype(np.int64)
    dx, dy = w - x0, h - y0
    base = (b[:, None, None, None] * c + xp.asarray(smp["chan"])[None]) * (height * width)
    base = base[..., None, None]
    flat = data.astype(np.float64).reshape(-1)
    out = []
    for yy, xx, wt in ((y0, x0, (1 - dx) * (1 - dy)), (y1, x0, (1 - dx) * dy), (y0, x1, dx * (1 - dy)),
                       (y1, x1, dx * dy)):
        index = base + yy * width + xx
        out.append((index, wt, flat[index]))
    return out, dx, dy


@register(_OP, hint="deformablepsroipooling", inputs=_inputs, arguments=("data", "rois", "trans"),
          outputs=("output", "top_count"), num_visible_outputs=1, attrs=dict(_ATTRS), infer_shape=_shape,
          infer_type=_type)
def DeformablePSROIPooling(xp, a, data, rois, trans=None):  # noqa: N802
    """Deformable position-sensitive ROI pooling (see the module doc); outputs (pooled, sample count)."""
    _shape(a, data.shape, rois.shape, None if trans is None else trans.shape)
    smp = _samples(a, to_numpy(rois), None if trans is None else to_numpy(trans), data.shape[2], data.shape[3])
    corners, _, _ = _corners(xp, data, smp)
    valid = xp.asarray(smp["valid"])
    total = sum(wt * v for _, wt, v in corners) * valid
    count = valid.sum(axis=(4, 5))
    out = xp.where(count > 0, total.sum(axis=(4, 5)) / xp.maximum(count, 1), 0.0)
    return out.astype(data.dtype), count.astype(data.dtype)


@DeformablePSROIPooling.def_gradient
def _(F, a, inputs, outputs, ograds):
    grads = F._backward_DeformablePSROIPooling(ograds[0], *inputs, **a.given)
    if a.no_trans:
        return [grads, F.zeros_like(inputs[1])]
    return [grads[0], F.zeros_like(inputs[1]), grads[1]]


@register("_backward_DeformablePSROIPooling", inputs=lambda a: ("ograd",) + _inputs(a),
          outputs=lambda a: ("data_grad",) if a.no_trans else ("data_grad", "trans_grad"), attrs=dict(_ATTRS),
          infer_shape=lambda a, g, *s: None if _shape(a, *s) is None else (
              [_shape(a, *s)[1][0]] + _shape(a, *s)[0], [s[0]] + ([] if a.no_trans else [s[2]])),
          infer_type=lambda a, tg, *ts: None if ts[0] is None else (
              [ts[0]] * (1 + len(ts)), [ts[0]] * (1 if a.no_trans else 2)))
def _backward_DeformablePSROIPooling(xp, a, ograd, data, rois, trans=None):  # noqa: N802
    """Gradients of DeformablePSROIPooling for data (and trans), by MXNet's formulas."""
    smp = _samples(a, to_numpy(rois), None if trans is None else to_numpy(trans), data.shape[2], data.shape[3])
    corners, dx, dy = _corners(xp, data, smp)
    valid = xp.asarray(smp["valid"])
    count = valid.sum(axis=(4, 5))
    diff = xp.where(count > 0, ograd.astype(np.float64) / xp.maximum(count, 1), 0.0)[..., None, None] * valid
    grad = xp.zeros(data.size)
    for index, wt, _ in corners:
        scatter_add(xp, grad, index.reshape(-1), (wt * diff).reshape(-1))
    out = [grad.reshape(data.shape).astype(data.dtype)]
    if trans is not None:
        (_, _, u00), (_, _, u01), (_, _, u10), (_, _, u11) = corners
        rw = xp.asarray(smp["rw"].astype(np.float64))[:, None, None, None, None, None]
        rh = xp.asarray(smp["rh"].astype(np.float64))[:, None, None, None, None, None]
        gx = (u11 * dy + u10 * (1 - dy) - u01 * dy - u00 * (1 - dy)) * a.trans_std * diff * rw
        gy = (u11 * dx + u01 * (1 - dx) - u10 * dx - u00 * (1 - dx)) * a.trans_std * diff * rh
        n, part = len(smp["b"]), smp["part"]
        cls, cell = xp.asarray(smp["cls"]), xp.asarray(smp["cell"])
        r = xp.arange(n)[:, None, None, None]
        base = ((r * smp["classes"] + cls[None, :, None, None]) * 2 * part + cell[None, None, :, None]) * part \
            + cell[None, None, None, :]
        base = xp.broadcast_to(base[..., None, None], gx.shape)
        tgrad = xp.zeros(trans.size)
        scatter_add(xp, tgrad, base.reshape(-1), gx.reshape(-1))
        scatter_add(xp, tgrad, (base + part * part).reshape(-1), gy.reshape(-1))
        out.append(tgrad.reshape(trans.shape).astype(trans.dtype))
    return tuple(out)
