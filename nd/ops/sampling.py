"""Spatial transformer family (MXNet 1.9.1 semantics): GridGenerator, BilinearSampler and
SpatialTransformer, sharing one bilinear sampling kernel and its backward.

A sampling grid has shape (batch, 2, out_h, out_w): channel 0 the source x, channel 1 the
source y, both normalised to [-1, 1] over the input's width/height. Sampling reads the four
neighbours of each source point, each one that falls outside the input counting as 0 (MXNet's
CPU kernel). The weights are computed in float64 and the results cast back, as MXNet's kernel
mixes double constants into its float arithmetic.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import DTypeError, ShapeError
from ..registry import register, same_type

_FLOATS = (np.dtype("float16"), np.dtype("float32"), np.dtype("float64"))
_CORNERS = ((0, 0), (0, 1), (1, 0), (1, 1))


def _positions(xp, grid, in_h: int, in_w: int):
    """Source coordinates (x, y) in input pixels, their top-left corner and its weights."""
    g = grid.astype(np.float64)
    x = (g[:, 0] + 1) * (in_w - 1) / 2
    y = (g[:, 1] + 1) * (in_h - 1) / 2
    x0, y0 = xp.floor(x), xp.floor(y)
    return x0.astype(np.int64), y0.astype(np.int64), 1.0 - (x - x0), 1.0 - (y - y0)


def _corner_weights(wx, wy):
    """Weights of the top-left, top-right, bottom-left, bottom-right neighbours."""
    return wy * wx, wy * (1 - wx), (1 - wy) * wx, (1 - wy) * (1 - wx)


def _gather(xp, data, x0, y0):
    """The four neighbour values (batch, C, out_h, out_w) each, 0 outside the input, and the
    flat indices / validity masks used to scatter gradients back."""
    n, c, in_h, in_w = data.shape
    batch = xp.arange(n).reshape(n, 1, 1)
    values, places = [], []
    for dy, dx in _CORNERS:
        yy, xx = y0 + dy, x0 + dx
        valid = (yy >= 0) & (yy < in_h) & (xx >= 0) & (xx < in_w)
        v = data[batch, :, xp.clip(yy, 0, in_h - 1), xp.clip(xx, 0, in_w - 1)]   # (n, oh, ow, c)
        v = xp.moveaxis(v, -1, 1).astype(np.float64) * valid[:, None]
        values.append(v)
        places.append((yy, xx, valid))
    return values, places


def bilinear_sample(xp, data, grid):
    """Samples data (N, C, H, W) at grid (N, 2, oh, ow): output (N, C, oh, ow)."""
    x0, y0, wx, wy = _positions(xp, grid, data.shape[2], data.shape[3])
    values, _ = _gather(xp, data, x0, y0)
    weights = _corner_weights(wx[:, None], wy[:, None])
    out = sum(v * w for v, w in zip(values, weights))
    return out.astype(data.dtype)


def bilinear_sample_backward(xp, ograd, data, grid):
    """(d data, d grid) of bilinear_sample for the head gradient `ograd` (MXNet's formulas:
    neighbours outside the input get no gradient and count as 0 in the grid's)."""
    n, c, in_h, in_w = data.shape
    x0, y0, wx, wy = _positions(xp, grid, in_h, in_w)
    values, places = _gather(xp, data, x0, y0)
    g = ograd.astype(np.float64)
    flat = xp.zeros(data.size, dtype=np.float64)
    chan = (xp.arange(n)[:, None] * c + xp.arange(c)[None, :])[:, :, None, None]
    for (yy, xx, valid), w in zip(places, _corner_weights(wx, wy)):
        idx = (chan * in_h + yy[:, None]) * in_w + xx[:, None]
        keep = xp.broadcast_to(valid[:, None], idx.shape)
        flat += xp.bincount(idx[keep], weights=(g * w[:, None])[keep], minlength=data.size)
    tl, tr, bl, br = values
    cross = tl - tr - bl + br
    gy = -(g * (tr - br + cross * wx[:, None])).sum(axis=1) * (in_h - 1) / 2
    gx = -(g * (bl - br + cross * wy[:, None])).sum(axis=1) * (in_w - 1) / 2
    dgrid = xp.stack([gx, gy], axis=1)
    return flat.reshape(data.shape).astype(data.dtype), dgrid.astype(grid.dtype)


def _check_float(op: str, *arrays) -> None:
    for x in arrays:
        if np.dtype(x.dtype) not in _FLOATS:
            raise DTypeError(f"operator {op}: expected a floating-point input, got {x.dtype}")


# -- GridGenerator ------------------------------------------------------------

_TARGET = Attr("shape", (0, 0), "Specifies the output shape (H, W). This is used in affine transformation.")


def _affine_grid_dst(xp, h: int, w: int, dtype):
    """(3, h*w): the target pixels' normalised x, y and 1, in MXNet's arithmetic."""
    i = xp.arange(h * w, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):   # a side of 1 divides by 0, as MXNet
        sx, sy = np.float64(2.0) / (w - 1), np.float64(2.0) / (h - 1)
        x = -1.0 + (i % w) * sx
        y = -1.0 + (i // w) * sy
    return xp.stack([x, y, xp.ones_like(x)]).astype(dtype)


def _check_target(op: str, target) -> tuple:
    if len(target) != 2 or target[0] <= 0 or target[1] <= 0:
        raise ShapeError(f"operator {op}: target_shape must be two positive sizes (H, W), got {tuple(target)}")
    return tuple(target)


def _grid_shape(a, shape):
    if shape is None:
        return None
    if a.transform_type == "affine":
        if len(shape) != 2 or shape[1] != 6:
            raise ShapeError(f"operator GridGenerator: with transform_type='affine' the input must be "
                             f"(batch, 6) affine matrices, got {tuple(shape)}")
        h, w = _check_target("GridGenerator", a.target_shape)
        return [shape], [(shape[0], 2, h, w), (3, h * w)]
    if len(shape) != 4 or shape[1] != 2:
        raise ShapeError(f"operator GridGenerator: with transform_type='warp' the input must be an "
                         f"optical flow (batch, 2, H, W), got {tuple(shape)}")
    return [shape], [tuple(shape), (2, shape[2], shape[3])]


def _grid_type(t):
    """MXNet 1.9.1 runs GridGenerator in float32 only ("Other DTypes are not supported")."""
    if t is None:
        return None
    if t != np.dtype("float32"):
        raise DTypeError(f"operator GridGenerator: input 'data' must be float32 (MXNet 1.9.1 "
                         f"supports no other dtype), got {t}")
    return [t], [t, t]


def _warp_scale(xp, h: int, w: int):
    return xp.asarray([(w - 1.0) / 2.0, (h - 1.0) / 2.0]).reshape(1, 2, 1, 1)


_GRID_ATTRS = {
    "transform_type": Attr("str", doc="The type of transformation. For `affine`, input data should "
                           "be an affine matrix of size (batch, 6). For `warp`, input data should be an "
                           "optical flow of size (batch, 2, h, w).", choices=("affine", "warp")),
    "target_shape": _TARGET,
}


@register("GridGenerator", inputs=("data",), outputs=("output", "grid_dst"), num_visible_outputs=1,
          attrs=dict(_GRID_ATTRS), infer_shape=_grid_shape, infer_type=lambda a, t: _grid_type(t))
def GridGenerator(xp, a, data):  # noqa: N802
    """Sampling grids (batch, 2, H, W) for BilinearSampler from affine matrices (target_shape
    sized) or from an optical flow added to the identity grid."""
    _grid_type(np.dtype(data.dtype))
    _grid_shape(a, data.shape)
    if a.transform_type == "affine":
        h, w = a.target_shape
        dst = _affine_grid_dst(xp, h, w, data.dtype)
        out = xp.matmul(data.reshape(-1, 3).astype(np.float64), dst.astype(np.float64))
        return out.reshape(data.shape[0], 2, h, w).astype(data.dtype), dst
    n, _, h, w = data.shape
    ys, xs = xp.meshgrid(xp.arange(h, dtype=np.float64), xp.arange(w, dtype=np.float64), indexing="ij")
    dst = xp.stack([xs, ys])
    out = (data.astype(np.float64) + dst[None]) / _warp_scale(xp, h, w) - 1
    return out.astype(data.dtype), dst.astype(data.dtype)


@GridGenerator.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_GridGenerator(ograds[0], outputs[1], **a.given)]


@register("_backward_GridGenerator", inputs=("ograd", "grid_dst"), attrs=dict(_GRID_ATTRS),
          infer_shape=lambda a, g, d: None if g is None else ([g, d], [_grid_input_shape(a, g)]),
          infer_type=same_type)
def _backward_GridGenerator(xp, a, ograd, dst):  # noqa: N802
    """affine: d theta = g (2, HW) @ grid_dst^T per sample; warp: g / ((W-1)/2, (H-1)/2)."""
    if a.transform_type == "affine":
        n = ograd.shape[0]
        g = ograd.reshape(n * 2, -1).astype(np.float64)
        return (xp.matmul(g, dst.astype(np.float64).T).reshape(n, 6).astype(ograd.dtype),)
    h, w = ograd.shape[2], ograd.shape[3]
    return ((ograd.astype(np.float64) / _warp_scale(xp, h, w)).astype(ograd.dtype),)


def _grid_input_shape(a, gshape):
    return (gshape[0], 6) if a.transform_type == "affine" else tuple(gshape)


# -- BilinearSampler ----------------------------------------------------------

_CUDNN_OFF = Attr("bool", None, "whether to turn cudnn off (no effect here: there is no cuDNN)",
                  optional=True)


def _sampler_shape(a, dshape, gshape):
    if dshape is None or gshape is None:
        return None
    if len(dshape) != 4:
        raise ShapeError(f"operator BilinearSampler: input 'data' must be 4-D (batch, channel, "
                         f"height, width), got {tuple(dshape)}")
    if len(gshape) != 4 or gshape[1] != 2 or gshape[0] != dshape[0] or min(gshape[2:]) <= 0:
        raise ShapeError(f"operator BilinearSampler: input 'grid' must be (batch={dshape[0]}, 2, "
                         f"height, width), got {tuple(gshape)}")
    out = (dshape[0], dshape[1], gshape[2], gshape[3])
    return [dshape, gshape], [out, (gshape[0], gshape[2], gshape[3], 2)]


@register("BilinearSampler", inputs=("data", "grid"), outputs=("output", "tmp"), num_visible_outputs=1,
          attrs={"cudnn_off": _CUDNN_OFF}, infer_shape=_sampler_shape,
          infer_type=lambda a, d, g: None if d is None else ([d, d], [d, d]))
def BilinearSampler(xp, a, data, grid):  # noqa: N802
    """Bilinear sampling of data at the grid's points (0 outside the input)."""
    _check_float("BilinearSampler", data, grid)
    _sampler_shape(a, data.shape, grid.shape)
    out = bilinear_sample(xp, data, grid)
    return out, xp.zeros((grid.shape[0], grid.shape[2], grid.shape[3], 2), dtype=data.dtype)


@BilinearSampler.def_gradient
def _(F, a, inputs, outputs, ograds):
    grads = F._backward_BilinearSampler(ograds[0], inputs[0], inputs[1])
    return [grads[0], grads[1]]


@register("_backward_BilinearSampler", inputs=("ograd", "data", "grid"), outputs=("data_grad", "grid_grad"),
          infer_shape=lambda a, g, d, gr: None if d is None or gr is None else ([g, d, gr], [d, gr]),
          infer_type=lambda a, g, d, gr: None if d is None else ([d, d, d], [d, d]))
def _backward_BilinearSampler(xp, a, ograd, data, grid):  # noqa: N802
    """Gradients of BilinearSampler for data and grid."""
    return bilinear_sample_backward(xp, ograd, data, grid)


# -- SpatialTransformer -------------------------------------------------------

_ST_ATTRS = {
    "target_shape": _TARGET,
    "transform_type": Attr("str", doc="transformation type", choices=("affine",)),
    "sampler_type": Attr("str", doc="sampling type", choices=("bilinear",)),
    "cudnn_off": _CUDNN_OFF,
}


def _st_shape(a, dshape, lshape):
    if dshape is None:
        return None
    if len(dshape) != 4:
        raise ShapeError(f"operator SpatialTransformer: input 'data' must be 4-D (batch, channel, "
                         f"height, width), got {tuple(dshape)}")
    if lshape is not None and (len(lshape) != 2 or lshape[1] != 6 or lshape[0] != dshape[0]):
        raise ShapeError(f"operator SpatialTransformer: input 'loc' must be ({dshape[0]}, 6), "
                         f"got {tuple(lshape)}")
    h, w = _check_target("SpatialTransformer", a.target_shape)
    return [dshape, (dshape[0], 6)], [(dshape[0], dshape[1], h, w), (3, h * w), (dshape[0], 2, h * w)]


def _st_grid(xp, a, data, loc):
    h, w = a.target_shape
    dst = _affine_grid_dst(xp, h, w, data.dtype)
    src = xp.matmul(loc.reshape(-1, 2, 3).astype(np.float64), dst.astype(np.float64))
    return dst, src.astype(data.dtype)


@register("SpatialTransformer", inputs=("data", "loc"), outputs=("output", "grid_dst", "grid_src"),
          num_visible_outputs=1, attrs=dict(_ST_ATTRS), infer_shape=_st_shape,
          infer_type=lambda a, d, lt: None if d is None else ([d, d], [d, d, d]))
def SpatialTransformer(xp, a, data, loc):  # noqa: N802
    """Affine spatial transformer: samples data bilinearly on the grid `loc` maps the
    target_shape output onto."""
    _check_float("SpatialTransformer", data, loc)
    _st_shape(a, data.shape, loc.shape)
    h, w = a.target_shape
    dst, src = _st_grid(xp, a, data, loc)
    out = bilinear_sample(xp, data, src.reshape(src.shape[0], 2, h, w))
    return out, dst, src


@SpatialTransformer.def_gradient
def _(F, a, inputs, outputs, ograds):
    grads = F._backward_SpatialTransformer(ograds[0], inputs[0], inputs[1], **a.given)
    return [grads[0], grads[1]]


@register("_backward_SpatialTransformer", inputs=("ograd", "data", "loc"), outputs=("data_grad", "loc_grad"),
          attrs=dict(_ST_ATTRS),
          infer_shape=lambda a, g, d, lc: None if d is None or lc is None else ([g, d, lc], [d, lc]),
          infer_type=lambda a, g, d, lc: None if d is None else ([d, d, d], [d, d]))
def _backward_SpatialTransformer(xp, a, ograd, data, loc):  # noqa: N802
    """d data from the sampler; d loc = d grid_src (2, HW) @ grid_dst^T per sample."""
    h, w = a.target_shape
    dst, src = _st_grid(xp, a, data, loc)
    ddata, dgrid = bilinear_sample_backward(xp, ograd, data, src.reshape(src.shape[0], 2, h, w))
    dloc = xp.matmul(dgrid.reshape(dgrid.shape[0], 2, -1).astype(np.float64), dst.astype(np.float64).T)
    return ddata, dloc.reshape(loc.shape).astype(loc.dtype)
