"""im2col / col2im (MXNet 1.9.1, src/operator/nn/im2col*): the sliding windows of a convolution
as columns, and their adjoint.

im2col turns a channel-first image (N, C, *spatial) into (N, C * prod(kernel), prod(out)),
column p holding the window of output position p (channels outer, kernel taps inner); col2im
sums such columns back into an image of `output_size`, overlapping taps added. Each is the
other's gradient. Both run on conv_kernels' gather / scatter, the same code Convolution uses.
"""
from __future__ import annotations

from ..attrs import Attr
from ..errors import AttrError, ShapeError
from ..registry import register, shape_known
from .conv_kernels import Geometry, _col2im, _im2col, prod

_WINDOW = {
    "kernel": Attr("shape", doc="Sliding kernel size: (w,), (h, w) or (d, h, w)."),
    "stride": Attr("shape", (), "The stride between adjacent sliding blocks in spatial dimension: "
                                "(w,), (h, w) or (d, h, w). Defaults to 1 for each dimension."),
    "dilate": Attr("shape", (), "The spacing between adjacent kernel points: (w,), (h, w) or (d, h, w). "
                                "Defaults to 1 for each dimension."),
    "pad": Attr("shape", (), "The zero-value padding size on both sides of spatial dimension: "
                             "(w,), (h, w) or (d, h, w). Defaults to no padding."),
}
_COL2IM = {"output_size": Attr("shape", doc="The spatial dimension of image array: (w,), (h, w) or (d, h, w)."),
           **_WINDOW}


def _tuple(op: str, name: str, value, kernel: tuple, default: int, low: int) -> tuple:
    if not value:
        return (default,) * len(kernel)
    value = tuple(int(v) for v in value)
    if len(value) != len(kernel):
        raise AttrError(f"operator {op}: {name} must have the same number of dimensions as kernel, "
                        f"but kernel is {kernel} while {name} is {value}")
    if any(v < low for v in value):
        raise AttrError(f"operator {op}: {name} entries must be >= {low}, got {value}")
    return value


def _geometry(op: str, a) -> Geometry:
    kernel = tuple(int(k) for k in a.kernel)
    if not 1 <= len(kernel) <= 3 or any(k < 1 for k in kernel):
        raise AttrError(f"operator {op}: kernel must be (w,), (h, w) or (d, h, w) of positive sizes, got {kernel}")
    return Geometry(kernel, _tuple(op, "stride", a.stride, kernel, 1, 1),
                    _tuple(op, "dilate", a.dilate, kernel, 1, 1), _tuple(op, "pad", a.pad, kernel, 0, 0), 1)


def _out_spatial(op: str, geo: Geometry, in_sp: tuple) -> tuple:
    out = geo.out_size(in_sp)
    if any(o < 1 for o in out):
        raise ShapeError(f"operator {op}: the dilated kernel {geo.extent()} does not fit the padded input "
                         f"{tuple(s + 2 * p for s, p in zip(in_sp, geo.pad))}")
    return out


def _im2col_shape(a, s):
    if s is None or not shape_known(s):
        return None
    geo = _geometry("im2col", a)
    if len(s) != len(geo.kernel) + 2:
        raise ShapeError(f"operator im2col: expected a {len(geo.kernel) + 2}-d input (N, C, *spatial) for "
                         f"kernel {geo.kernel}, got shape {tuple(s)}")
    out = _out_spatial("im2col", geo, tuple(s[2:]))
    return [tuple(s)], [(s[0], s[1] * prod(geo.kernel), prod(out))]


@register("im2col", attrs=dict(_WINDOW), infer_shape=_im2col_shape)
def im2col(xp, a, data):
    """Sliding windows of `data` (N, C, *spatial) as columns (N, C * prod(kernel), prod(out))."""
    n, ck, p = _im2col_shape(a, data.shape)[1][0]
    geo = _geometry("im2col", a)
    cols = _im2col(xp, data, geo, geo.out_size(data.shape[2:]))      # (1, C*K, N*P)
    return (xp.ascontiguousarray(cols.reshape(ck, n, p).transpose(1, 0, 2)),)


@im2col.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_im2col(ograds[0], inputs[0], **a.given)]


@register("_backward_im2col", inputs=("ograd", "data"), attrs=dict(_WINDOW),
          infer_shape=lambda a, g, s: None if s is None else ([_im2col_shape(a, s)[1][0], tuple(s)], [tuple(s)]),
          infer_type=lambda a, tg, t: None if t is None else ([t, t], [t]))
def _backward_im2col(xp, a, ograd, data):  # noqa: N802
    """im2col's gradient: col2im of the column gradient into data's shape (data only gives the shape)."""
    geo = _geometry("im2col", a)
    cols = xp.ascontiguousarray(ograd.transpose(1, 0, 2))
    return (_col2im(xp, cols, data.shape, geo, geo.out_size(data.shape[2:])).astype(data.dtype, copy=False),)


def _col2im_shape(a, s):
    if s is None or not shape_known(s):
        return None
    geo = _geometry("col2im", a)
    size = tuple(int(v) for v in a.output_size)
    if len(size) != len(geo.kernel):
        raise AttrError(f"operator col2im: output_size {size} must have as many dimensions as kernel {geo.kernel}")
    if len(s) != 3:
        raise ShapeError(f"operator col2im: expected a 3-d input (N, C * prod(kernel), L), got shape {tuple(s)}")
    k = prod(geo.kernel)
    if s[1] % k:
        raise ShapeError(f"operator col2im: input's second dimension {s[1]} is not a multiple of "
                         f"prod(kernel) = {k}")
    out = _out_spatial("col2im", geo, size)
    if s[2] != prod(out):
        raise ShapeError(f"operator col2im: output size does not match convolution parameters: input has "
                         f"{s[2]} columns, output_size {size} gives {prod(out)}")
    return [tuple(s)], [(s[0], s[1] // k, *size)]


@register("col2im", attrs=dict(_COL2IM), infer_shape=_col2im_shape)
def col2im(xp, a, data):
    """Columns (N, C * prod(kernel), L) summed back into an image (N, C, *output_size)."""
    out_shape = _col2im_shape(a, data.shape)[1][0]
    geo = _geometry("col2im", a)
    cols = xp.ascontiguousarray(data.transpose(1, 0, 2))              # (C*K, N, P)
    return (_col2im(xp, cols, out_shape, geo, geo.out_size(out_shape[2:])).astype(data.dtype, copy=False),)


@col2im.def_gradient
def _(F, a, inputs, outputs, ograds):
    given = {k: v for k, v in a.given.items() if k != "output_size"}
    return [F.im2col(ograds[0], **given)]
