"""More numpy front-end operators with MXNet's names: `_np_roll`, `_np_cumsum`, `_npi_diff`.

Kernels are numpy's (`roll`, `cumsum`, `diff`) on the backend array module; gradients are
shape-free rules (roll back by the opposite shift) or hidden backward operators that read the
input's shape at run time (`_backward_np_cumsum`, `_backward_npi_diff`).
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import ShapeError
from ..registry import OpDef, add_op, same_shape

# -- roll --------------------------------------------------------------------------------------


def _roll(xp, a, x):
    if a.shift is None:
        raise ShapeError("operator _np_roll: attribute 'shift' is required")
    shift = tuple(a.shift)
    axis = None if a.axis is None else tuple(a.axis)
    if axis is None:
        return (xp.roll(x, int(sum(shift)) if len(shift) > 1 else shift[0]),)
    if len(shift) == 1 and len(axis) > 1:
        shift = shift * len(axis)
    return (xp.roll(x, shift, axis),)


def _roll_grad(F, a, inputs, outputs, ograds):
    return [F._np_roll(ograds[0], shift=tuple(-s for s in a.shift), axis=a.axis)]


add_op(OpDef("_np_roll", inputs=("data",), attrs={
    "shift": Attr("shape", None, "The number of places by which elements are shifted (per axis)."),
    "axis": Attr("shape", None, "The axes along which elements are shifted (None: the flattened array).")},
    forward=_roll, infer_shape=same_shape, gradient=_roll_grad, hint="roll", doc="numpy's roll."))


# -- cumsum ------------------------------------------------------------------------------------

def _cumsum_dtype(a, x_dtype) -> np.dtype:
    if a.dtype is not None:
        return np.dtype(a.dtype)
    return np.dtype(np.float32) if np.dtype(x_dtype) == np.bool_ else np.dtype(x_dtype)   # as MXNet


def _cumsum(xp, a, x):
    dt = _cumsum_dtype(a, x.dtype)
    return (xp.cumsum(x, axis=a.axis, dtype=dt),)


def _cumsum_shape(a, data):
    if data is None:
        return None
    return [data], [(int(np.prod(data)),) if a.axis is None else tuple(data)]


def _cumsum_grad(F, a, inputs, outputs, ograds):
    return [F._backward_np_cumsum(ograds[0], inputs[0], axis=a.axis)]


add_op(OpDef("_np_cumsum", aliases=("cumsum",), inputs=("a",), attrs={
    "axis": Attr("int", None, "The axis of the running sum (None: the flattened array)."),
    "dtype": Attr("dtype", None, "The dtype of the result (default: the input's).")},
    forward=_cumsum, infer_shape=_cumsum_shape,
    infer_type=lambda a, t: None if t is None else ([t], [_cumsum_dtype(a, t)]),
    gradient=_cumsum_grad, hint="cumsum", doc="numpy's cumsum."))


def _backward_cumsum(xp, a, g, x):
    axis = -1 if a.axis is None else a.axis
    r = xp.flip(xp.cumsum(xp.flip(g, axis), axis=axis), axis)
    return (xp.ascontiguousarray(r).reshape(x.shape).astype(x.dtype, copy=False),)


add_op(OpDef("_backward_np_cumsum", inputs=("ograd", "a"),
             attrs={"axis": Attr("int", None, "The forward cumsum's axis.")},
             forward=_backward_cumsum, infer_shape=lambda a, g, x: ([g, x], [x]),
             infer_type=lambda a, g, x: ([g, x], [x]), public=False, fluent=False,
             doc="cumsum's gradient: the reversed running sum of the head gradient."))


# -- diff --------------------------------------------------------------------------------------

def _diff_shape(a, data):
    if data is None:
        return None
    if not data:
        raise ShapeError("operator _npi_diff: diff requires an input of at least one dimension")
    out = list(data)
    ax = a.axis % len(data)
    out[ax] = max(out[ax] - a.n, 0)
    return [data], [tuple(out)]


def _diff(xp, a, x):
    _diff_shape(a, x.shape)
    return (xp.diff(x, n=a.n, axis=a.axis),)


def _diff_grad(F, a, inputs, outputs, ograds):
    return [F._backward_npi_diff(ograds[0], inputs[0], n=a.n, axis=a.axis)]


_DIFF_ATTRS = {"n": Attr("int", 1, "The number of times values are differenced."),
               "axis": Attr("int", -1, "The axis along which the difference is taken.")}
add_op(OpDef("_npi_diff", inputs=("a",), attrs=dict(_DIFF_ATTRS), forward=_diff, infer_shape=_diff_shape,
             gradient=_diff_grad, hint="diff", doc="numpy's diff (n-th discrete difference)."))


def _backward_diff(xp, a, g, x):
    res = g
    for _ in range(a.n):
        pad = [(0, 0)] * res.ndim
        pad[a.axis % res.ndim] = (1, 1)
        res = -xp.diff(xp.pad(res, pad), axis=a.axis)
    return (res.reshape(x.shape).astype(x.dtype, copy=False),)


add_op(OpDef("_backward_npi_diff", inputs=("ograd", "a"), attrs=dict(_DIFF_ATTRS), forward=_backward_diff,
             infer_shape=lambda a, g, x: ([g, x], [x]), infer_type=lambda a, g, x: ([g, x], [x]),
             public=False, fluent=False, doc="diff's gradient (the adjoint differences)."))


# -- tril -----------------------------------------------------------------------------

def _tri_shape(name):
    def infer(a, data):
        if data is None:
            return None
        if len(data) < 1:
            raise ShapeError(f"operator {name}: the input must have at least one dimension")
        return [data], [tuple(data) if len(data) > 1 else (data[0], data[0])]
    return infer


def _tril(xp, a, x):
    return (xp.tril(x, a.k),)


def _tril_grad(F, a, inputs, outputs, ograds):
    # a 1-D input was broadcast along the rows: its gradient sums them back (identity otherwise)
    return [F._sum_to_like(F._npi_tril(ograds[0], k=a.k), inputs[0])]


add_op(OpDef("_npi_tril", inputs=("data",), attrs={"k": Attr("int", 0, "The diagonal above which elements "
                                                                  "are zeroed (0: the main one).")},
             forward=_tril, infer_shape=_tri_shape("_npi_tril"), gradient=_tril_grad, hint="tril",
             doc="numpy's tril: the lower triangle of the last two axes (a 1-D input is broadcast to 2-D)."))
