"""More of `mx.np` as MXNet 1.9.1's operators: the windows `_npi_hanning` / `_npi_hamming` /
`_npi_blackman`, `_npi_indices`, `_npi_bitwise_not`, `_npi_nan_to_num`, `_npi_rot90` and
`_npi_polyval`.

Kernels are numpy's functions on the backend array module; gradients follow MXNet
(nan_to_num passes the gradient where the input was finite, rot90 rotates it back, polyval
differentiates in both the coefficients and the points).
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import DTypeError, ShapeError
from ..registry import ZERO_GRAD, register, same_shape
from .np_init import _ctx_attr
from .reduce import sum_to_shape

# -- windows and indices (creation) -------------------------------------------------------------

for _win in ("hanning", "hamming", "blackman"):
    def _window(xp, a, _w=_win):
        return (xp.asarray(getattr(np, _w)(a.M), dtype=a.dtype or "float32"),)
    register(f"_npi_{_win}", inputs=(), hint=_win, gradient=ZERO_GRAD,
             attrs={"M": Attr("int", doc="Number of points (<= 0: empty)."),
                    "ctx": _ctx_attr(), "dtype": Attr("dtype", "float32", "The dtype of the window.")},
             infer_shape=lambda a: ([], [(max(a.M, 0),)]),
             infer_type=lambda a, *t: ([], [np.dtype(a.dtype or "float32")]),
             doc=f"numpy's {_win} window of M points.")(_window)


def _indices_shape(a) -> tuple:
    return (len(a.dimensions),) + tuple(a.dimensions)


@register("_npi_indices", inputs=(), hint="indices", gradient=ZERO_GRAD,
          attrs={"dimensions": Attr("shape", doc="The shape of the grid."), "ctx": _ctx_attr(),
                 "dtype": Attr("dtype", "int32", "The dtype of the indices.")},
          infer_shape=lambda a: ([], [_indices_shape(a)]),
          infer_type=lambda a, *t: ([], [np.dtype(a.dtype or "int32")]))
def _npi_indices(xp, a):
    """numpy's indices: one grid of each axis' index, stacked (shape (ndim,) + dimensions)."""
    return (xp.asarray(np.indices(tuple(a.dimensions), dtype=a.dtype or "int32")),)


# -- bitwise_not ----------------------------------------------------------------------------------

def _int_or_bool(op: str):
    def infer(a, t):
        if t is None:
            return None
        if np.dtype(t).kind not in "iub":
            raise DTypeError(f"operator {op}: only integer and bool inputs are supported, got {np.dtype(t)}")
        return [t], [t]
    return infer


@register("_npi_bitwise_not", inputs=("x",), hint="bitwise_not", gradient=ZERO_GRAD, infer_shape=same_shape,
          infer_type=_int_or_bool("_npi_bitwise_not"))
def _npi_bitwise_not(xp, a, x):
    """numpy's bitwise_not (invert) of integer or bool arrays."""
    _int_or_bool("_npi_bitwise_not")(a, x.dtype)
    return (xp.invert(x),)


# -- nan_to_num -----------------------------------------------------------------------------------

_NAN_ATTRS = {"copy": Attr("bool", True, "Whether to return a copy (False: in place, through out=)."),
              "nan": Attr("float", 0.0, "The value for NaN."),
              "posinf": Attr("float", None, "The value for +inf (None: the dtype's largest)."),
              "neginf": Attr("float", None, "The value for -inf (None: the dtype's most negative).")}


@register("_npi_nan_to_num", inputs=("data",), hint="nan_to_num", attrs=dict(_NAN_ATTRS), infer_shape=same_shape)
def _npi_nan_to_num(xp, a, x):
    """numpy's nan_to_num: NaN and infinities replaced by finite numbers (integers unchanged)."""
    if x.dtype.kind not in "fc":
        return (x.copy(),)
    return (xp.nan_to_num(x, copy=True, nan=a.nan, posinf=a.posinf, neginf=a.neginf),)


@_npi_nan_to_num.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_npi_nan_to_num(ograds[0], inputs[0], **a.values())]


@register("_backward_npi_nan_to_num", inputs=("ograd", "data"), attrs=dict(_NAN_ATTRS), public=False,
          fluent=False, infer_shape=lambda a, g, s: None if s is None else ([g, s], [s]),
          infer_type=lambda a, g, t: None if t is None else ([g, t], [t]))
def _backward_npi_nan_to_num(xp, a, g, x):
    """The head gradient where the input was finite, 0 where it was replaced."""
    return (xp.where(xp.isfinite(x), g, 0).astype(x.dtype, copy=False),)


# -- rot90 ----------------------------------------------------------------------------------------

_ROT_ATTRS = {"k": Attr("int", 1, "Number of quarter turns (from the first axis towards the second)."),
              "axes": Attr("shape", (0, 1), "The plane of the rotation.")}


def _rot_axes(a, ndim: int) -> tuple:
    axes = tuple(a.axes)
    if len(axes) != 2:
        raise ShapeError(f"operator _npi_rot90: len(axes) must be 2, got {axes}")
    if ndim < 2:
        raise ShapeError(f"operator _npi_rot90: the input must have at least two dimensions, got {ndim}")
    for ax in axes:
        if not -ndim <= ax < ndim:
            raise ShapeError(f"operator _npi_rot90: axes={axes} are out of range for {ndim} dimensions")
    if axes[0] % ndim == axes[1] % ndim:
        raise ShapeError(f"operator _npi_rot90: the axes must be different, got {axes}")
    return axes


def _rot_shape(a, s):
    if s is None:
        return None
    a0, a1 = (ax % len(s) for ax in _rot_axes(a, len(s)))
    out = list(s)
    if a.k % 2:
        out[a0], out[a1] = s[a1], s[a0]
    return [s], [tuple(out)]


@register("_npi_rot90", hint="rot90", attrs=dict(_ROT_ATTRS), infer_shape=_rot_shape)
def _npi_rot90(xp, a, x):
    """numpy's rot90 (a copy)."""
    return (xp.ascontiguousarray(xp.rot90(x, a.k, _rot_axes(a, x.ndim))),)


@_npi_rot90.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._npi_rot90(ograds[0], k=-a.k, axes=a.axes)]


# -- polyval --------------------------------------------------------------------------------------

def _polyval_shape(a, sp, sx):
    if sp is None or sx is None:
        return None
    if len(sp) != 1:
        raise ShapeError(f"operator _npi_polyval: p must be 1-D, got shape {tuple(sp)}")
    return [sp, sx], [tuple(sx)]


def _polyval_type(a, tp, tx):
    if tp is None or tx is None:
        return None
    return [tp, tx], [np.result_type(tp, tx)]


@register("_npi_polyval", inputs=("p", "x"), hint="polyval", infer_shape=_polyval_shape, infer_type=_polyval_type)
def _npi_polyval(xp, a, p, x):
    """numpy's polyval: p[0] x^(n-1) + ... + p[n-1] at every x (Horner's rule)."""
    _polyval_shape(a, p.shape, x.shape)
    dt = np.result_type(p.dtype, x.dtype)
    return (xp.asarray(np.polyval(p.astype(dt, copy=False), x.astype(dt, copy=False)), dtype=dt).reshape(x.shape),)


@_npi_polyval.def_gradient
def _(F, a, inputs, outputs, ograds):
    return list(F._backward_npi_polyval(ograds[0], *inputs))


@register("_backward_npi_polyval", inputs=("ograd", "p", "x"), outputs=("grad_p", "grad_x"), public=False,
          fluent=False, infer_shape=lambda a, g, sp, sx: None if sp is None or sx is None else ([g, sp, sx], [sp, sx]),
          infer_type=lambda a, g, tp, tx: None if tp is None or tx is None else ([g, tp, tx], [tp, tx]))
def _backward_npi_polyval(xp, a, g, p, x):
    """d/dp_i = x^(n-1-i) summed with the head gradient; d/dx = the derivative polynomial at x."""
    n = p.shape[0]
    powers = xp.stack([x.astype(np.float64) ** (n - 1 - i) for i in range(n)], axis=-1) if n else \
        xp.zeros(x.shape + (0,))
    gp = (g[..., None] * powers).reshape(-1, n).sum(axis=0) if n else xp.zeros((0,))
    dp = np.polyder(p.astype(np.float64)) if n > 1 else np.zeros(1)
    gx = g * np.polyval(dp, x.astype(np.float64))
    return gp.astype(p.dtype), sum_to_shape(xp, gx, x.shape).astype(x.dtype)
