"""Window extraction (MXNet 1.9.1 semantics): Crop and ROIPooling, with their
hidden backward operators. `_backward_Crop` is linear in its head gradient, so
its own gradient is Crop again; ROIPooling's backward scatters each bin's
gradient to the arg-max its forward recorded in the hidden `maxidx` output.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr, Attrs
from ..errors import AttrError, ShapeError
from ..registry import merge_shape, register
from .conv import given_attrs
from .spatial import _check_4d, _grad_type

Shape = tuple


# ---------------------------------------------------------------------------
# Crop

CROP_ATTRS = {
    "num_args": Attr("int", doc="Number of inputs for crop, if equals one, then we will use the h_w for crop "
                                "height and width, else if equals two, then we will use the height and width "
                                "of the second input symbol, we name crop_like here"),
    "offset": Attr("shape", (0, 0), "crop offset coordinate: (y, x)"),
    "h_w": Attr("shape", (0, 0), "crop height and width: (h, w)"),
    "center_crop": Attr("bool", False, "If set to true, then it will use be the center_crop,or it will crop "
                                       "using the shape of crop_like"),
}


def _crop_inputs(a: Attrs) -> tuple:
    return tuple(f"arg{i}" for i in range(a.num_args or 0))


def _crop_window(a: Attrs, dshape, like=None) -> tuple[int, int, int, int]:
    """(top, left, height, width) of the crop, validated against the data."""
    op = "Crop"
    if a.num_args not in (1, 2):
        raise AttrError(f"operator {op}: num_args must be 1 or 2, got {a.num_args}")
    if len(a.offset) != 2 or len(a.h_w) != 2:
        raise AttrError(f"operator {op}: offset and h_w must have 2 entries, got {a.offset} and {a.h_w}")
    h, w = (like[2], like[3]) if like is not None else tuple(a.h_w)
    if h < 1 or w < 1:
        raise AttrError(f"operator {op}: the crop height and width (h_w) must be >= 1, got {(h, w)}")
    if h > dshape[2] or w > dshape[3]:
        raise ShapeError(f"operator {op}: crop size {(h, w)} exceeds the data {tuple(dshape)}")
    if a.center_crop:
        top, left = (dshape[2] - h) // 2, (dshape[3] - w) // 2
    else:
        top, left = a.offset
    if not (0 <= top <= dshape[2] - h and 0 <= left <= dshape[3] - w):
        raise ShapeError(f"operator {op}: offset {(top, left)} leaves no room for a {(h, w)} crop of data "
                         f"{tuple(dshape)}")
    return top, left, h, w


def _crop_shape(a: Attrs, dshape, like=None):
    _check_4d("Crop", "arg0", dshape)
    _check_4d("Crop", "arg1", like)
    if dshape is None or (a.num_args == 2 and like is None):
        return None
    _, _, h, w = _crop_window(a, dshape, like)
    return [tuple(dshape)] + ([tuple(like)] if like is not None else []), [(dshape[0], dshape[1], h, w)]


@register("Crop", inputs=_crop_inputs, key_var_num_args="num_args", attrs=dict(CROP_ATTRS),
          infer_shape=_crop_shape, infer_type=lambda a, *t: None if t[0] is None else ([t[0]] * len(t), [t[0]]))
def Crop(xp, a: Attrs, data, like=None):
    """Crop the H and W dims of NCHW data to h_w (or to the second input's size) at
    offset, or centred."""
    top, left, h, w = _crop_window(a, data.shape, None if like is None else like.shape)
    return (xp.ascontiguousarray(data[:, :, top:top + h, left:left + w]),)


@Crop.def_gradient
def _crop_gradient(F, a, inputs, outputs, ograds):
    res = F._backward_Crop(ograds[0], *inputs, **given_attrs(a))
    return [res] if len(inputs) == 1 else [res[0], res[1]]


def _crop_back_shape(a: Attrs, gshape, dshape, like=None):
    fwd = _crop_shape(a, dshape, like)
    if fwd is None:
        return None
    return [merge_shape(gshape, fwd[1][0]), *fwd[0]], list(fwd[0])


@register("_backward_Crop", inputs=lambda a: ("ograd",) + _crop_inputs(a),
          outputs=lambda a: tuple(f"{n}_grad" for n in _crop_inputs(a)), attrs=dict(CROP_ATTRS),
          infer_shape=_crop_back_shape, infer_type=_grad_type(lambda a: a.num_args))
def _backward_Crop(xp, a: Attrs, ograd, data, like=None):
    """The head gradient placed back into the crop window of zeros (zeros for crop_like)."""
    top, left, h, w = _crop_window(a, data.shape, None if like is None else like.shape)
    dx = xp.zeros(data.shape, dtype=ograd.dtype)
    dx[:, :, top:top + h, left:left + w] = ograd
    return (dx,) if like is None else (dx, xp.zeros(like.shape, dtype=ograd.dtype))


@_backward_Crop.def_gradient
def _crop_back_gradient(F, a, inputs, outputs, ograds):
    return [F.Crop(ograds[0], *inputs[2:], **given_attrs(a))] + [None] * (len(inputs) - 1)


# ---------------------------------------------------------------------------
# ROIPooling

ROI_ATTRS = {
    "pooled_size": Attr("shape", doc="ROI pooling output shape (h,w) "),
    "spatial_scale": Attr("float", doc="Ratio of input feature map height (or w) to raw image height (or w). "
                                       "Equals the reciprocal of total stride in convolutional layers"),
}


def _roi_pooled(a: Attrs) -> tuple:
    size = tuple(a.pooled_size)
    if len(size) != 2 or any(s is None or s < 1 for s in size):
        raise AttrError(f"operator ROIPooling: pooled_size must be two entries >= 1, got {size}")
    if not 0 <= a.spatial_scale <= 1:
        raise AttrError(f"operator ROIPooling: spatial_scale must be in [0, 1], got {a.spatial_scale}")
    return size


def _roi_shape(a: Attrs, dshape, rshape):
    ph, pw = _roi_pooled(a)
    _check_4d("ROIPooling", "data", dshape)
    if rshape is not None and (len(rshape) != 2 or rshape[1] not in (0, 5)):
        raise ShapeError(f"operator ROIPooling: rois must have shape (num_rois, 5), got {tuple(rshape)}")
    if dshape is None or rshape is None:
        return None
    out = (rshape[0], dshape[1], ph, pw)
    return [tuple(dshape), (rshape[0], 5)], [out, out]


def _c_round(xp, v):
    """C's round(): halves away from zero (numpy rounds them to even)."""
    return xp.sign(v) * xp.floor(xp.abs(v) + 0.5)


def _roi_bins(xp, rois, scale: float, pooled: int, size: int, lo_col: int, hi_col: int, dtype):
    """Per ROI and pooled bin, the [start, end) input range along one axis (clipped)."""
    start = _c_round(xp, rois[:, lo_col] * dtype.type(scale)).astype(np.int64)
    end = _c_round(xp, rois[:, hi_col] * dtype.type(scale)).astype(np.int64)
    length = xp.maximum(end - start + 1, 1).astype(dtype)
    bin_size = length / dtype.type(pooled)
    p = xp.arange(pooled, dtype=dtype)
    b0 = xp.floor(p[None, :] * bin_size[:, None]).astype(np.int64) + start[:, None]
    b1 = xp.ceil((p[None, :] + 1) * bin_size[:, None]).astype(np.int64) + start[:, None]
    return xp.clip(b0, 0, size), xp.clip(b1, 0, size)


@register("ROIPooling", aliases=("_npx_roi_pooling",), inputs=("data", "rois"), outputs=("output", "maxidx"),
          num_visible_outputs=1, attrs=dict(ROI_ATTRS), infer_shape=_roi_shape,
          infer_type=lambda a, d, r: None if d is None else ([d, d if r is None else r], [d, d]))
def ROIPooling(xp, a: Attrs, data, rois):
    """Max pooling of each region of interest into pooled_size bins (Fast R-CNN); the
    hidden second output holds each bin's arg-max (h*W + w, -1 for an empty bin)."""
    _roi_shape(a, data.shape, rois.shape)
    ph, pw = _roi_pooled(a)
    n, c, height, width = data.shape
    dtype = np.dtype(data.dtype)
    rois = rois.astype(dtype, copy=False)
    hs, he = _roi_bins(xp, rois, a.spatial_scale, ph, height, 2, 4, dtype)
    ws, we = _roi_bins(xp, rois, a.spatial_scale, pw, width, 1, 3, dtype)
    kh = max(int((he - hs).max()) if he.size else 1, 1)
    kw = max(int((we - ws).max()) if we.size else 1, 1)
    hi = hs[:, :, None] + xp.arange(kh)[None, None, :]          # (R, ph, kh)
    wi = ws[:, :, None] + xp.arange(kw)[None, None, :]          # (R, pw, kw)
    hvalid, wvalid = hi < he[:, :, None], wi < we[:, :, None]
    hi, wi = xp.minimum(hi, height - 1), xp.minimum(wi, width - 1)
    batch = xp.clip(rois[:, 0].astype(np.int64), 0, n - 1)
    nhwc = data.transpose(0, 2, 3, 1)
    vals = nhwc[batch[:, None, None, None, None], hi[:, :, None, :, None], wi[:, None, :, None, :]]
    valid = hvalid[:, :, None, :, None] & wvalid[:, None, :, None, :]  # (R, ph, pw, kh, kw)
    low = dtype.type(-np.inf) if dtype.kind == "f" else np.iinfo(dtype).min
    vals = xp.where(valid[..., None], vals, low).reshape(len(rois), ph, pw, kh * kw, c)
    arg = vals.argmax(axis=3)                                    # (R, ph, pw, C), first maximum
    best = xp.take_along_axis(vals, arg[:, :, :, None, :], axis=3)[:, :, :, 0, :]
    flat_h = xp.take_along_axis(xp.broadcast_to(hi[:, :, None, :, None], valid.shape).reshape(
        len(rois), ph, pw, kh * kw, 1), arg[:, :, :, None, :], axis=3)[:, :, :, 0, :]
    flat_w = xp.take_along_axis(xp.broadcast_to(wi[:, None, :, None, :], valid.shape).reshape(
        len(rois), ph, pw, kh * kw, 1), arg[:, :, :, None, :], axis=3)[:, :, :, 0, :]
    empty = ~valid.reshape(len(rois), ph, pw, -1).any(axis=3)[..., None]
    out = xp.where(empty, dtype.type(0), best).transpose(0, 3, 1, 2)
    idx = xp.where(empty, -1, flat_h * width + flat_w).astype(dtype).transpose(0, 3, 1, 2)
    return xp.ascontiguousarray(out), xp.ascontiguousarray(idx)


@ROIPooling.def_gradient
def _roi_gradient(F, a, inputs, outputs, ograds):
    grad = F._backward_ROIPooling(ograds[0], inputs[0], inputs[1], outputs[1], **given_attrs(a))
    return [grad, F.zeros_like(inputs[1])]


def _roi_back_shape(a: Attrs, gshape, dshape, rshape, ishape):
    fwd = _roi_shape(a, dshape, rshape)
    if fwd is None:
        return None
    out = merge_shape(merge_shape(gshape, fwd[1][0]), ishape)
    return [out, *fwd[0], out], [fwd[0][0]]


@register("_backward_ROIPooling", inputs=("ograd", "data", "rois", "maxidx"), outputs=("data_grad",),
          attrs=dict(ROI_ATTRS), infer_shape=_roi_back_shape,
          infer_type=lambda a, g, d, r, i: None if g is None else ([g, g if d is None else d, r, i], [g]))
def _backward_ROIPooling(xp, a: Attrs, ograd, data, rois, maxidx):
    """Each bin's gradient added at its arg-max (summed over overlapping ROIs)."""
    n, c, height, width = data.shape
    batch = xp.clip(rois[:, 0].astype(np.int64), 0, n - 1)
    idx = maxidx.astype(np.int64)
    chan = (batch[:, None] * c + xp.arange(c)[None, :])[:, :, None, None] * (height * width)
    flat = xp.broadcast_to(chan, idx.shape) + idx
    keep = (idx >= 0).reshape(-1)
    weights = ograd.reshape(-1)[keep].astype(np.float64)
    total = xp.bincount(flat.reshape(-1)[keep], weights=weights, minlength=n * c * height * width)
    return (total.astype(ograd.dtype).reshape(data.shape),)
