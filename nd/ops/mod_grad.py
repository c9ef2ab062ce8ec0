"""Hidden backward operators of mod (`_mod`, `broadcast_mod`, `_mod_scalar`, `_rmod_scalar`).

MXNet 1.9.1's mod gradients depend on the dtype (mshadow_op.h mod_grad, mod_rgrad,
rmod_grad): for floating types d(x % y)/dx = 1 and d(x % y)/dy = -floor(x / y); for integer
types both are 0. A gradient rule written with other operators cannot see the dtype, so the
rules call these kernels. Like MXNet's `_backward_mod`, they have no gradient of their own.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..registry import register


def _is_float(x) -> bool:
    return np.dtype(x.dtype).kind == "f"


def _floor_div(xp, a, b):
    with np.errstate(divide="ignore", invalid="ignore"):   # x / 0 gives inf or nan, as MXNet
        return xp.floor(a / b)


@register("_backward_mod", inputs=("ograd", "lhs", "rhs"), outputs=("lhs_grad", "rhs_grad"),
          infer_shape=lambda a, g, x, y: None if g is None else ([g, g, g], [g, g]))
def _backward_mod(xp, a, ograd, lhs, rhs):
    """(g, -g * floor(lhs / rhs)) for floating types, zeros for integers (same-shape operands)."""
    if not _is_float(ograd):
        return xp.zeros_like(ograd), xp.zeros_like(ograd)
    return ograd.copy(), (-ograd * _floor_div(xp, lhs, rhs)).astype(ograd.dtype, copy=False)


_SCALAR = {"scalar": Attr("float", 1.0, "scalar input value")}


@register("_backward_mod_scalar", monitor_inputs=("lhs", "rhs"), inputs=("ograd", "data"), attrs=dict(_SCALAR),
          infer_shape=lambda a, g, x: None if g is None else ([g, g], [g]))
def _backward_mod_scalar(xp, a, ograd, data):
    """d(x % s)/dx: g for floating types, 0 for integers."""
    return (ograd.copy() if _is_float(ograd) else xp.zeros_like(ograd),)


@register("_backward_rmod_scalar", monitor_inputs=("lhs", "rhs"), inputs=("ograd", "data"), attrs=dict(_SCALAR),
          infer_shape=lambda a, g, x: None if g is None else ([g, g], [g]))
def _backward_rmod_scalar(xp, a, ograd, data):
    """d(s % x)/dx: -g * floor(s / x) for floating types, 0 for integers."""
    if not _is_float(ograd):
        return (xp.zeros_like(ograd),)
    s = data.dtype.type(a.scalar)
    return ((-ograd * _floor_div(xp, s, data)).astype(ograd.dtype, copy=False),)
