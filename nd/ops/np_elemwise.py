"""The numpy front end's elementwise operators (`_npi_add`, `_npi_exp`, `_npi_add_scalar`, ...).

MXNet 1.9 registers its `mx.np` operators under their own names (`_npi_*`, `_np_*`,
`_npx_*`) so an np-mode export names them that way. They share the legacy
elementwise kernels and gradient rules (elemwise.py's tables); what differs is
the dtype rule, MXNet's numpy type promotion:

* two arrays: the same dtype stays; bool with X gives X (bool with bool: float32);
  a float with an integer gives the float; two floats the wider; mixed integers
  numpy's result type (uint8 with int8: int32, as MXNet);
* `true_divide` of integers gives float32;
* an array with a Python scalar keeps the array's dtype (bool arrays give float32),
  a float scalar on an integer array included, as MXNet;
* comparisons give bool; unary math keeps the input dtype.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..registry import ZERO_GRAD, OpDef, add_op, broadcast_dims, get_op, same_shape
from .elemwise import BINARY, SCALAR_RULES, UNARY, _binary_gradient, _scalar_gradient, _unary_gradient

_F32 = np.dtype(np.float32)
_BOOL = np.dtype(np.bool_)


def promote(lhs: np.dtype, rhs: np.dtype) -> np.dtype:
    """MXNet's numpy-mode result dtype of a binary arithmetic op on two arrays."""
    lhs, rhs = np.dtype(lhs), np.dtype(rhs)
    if lhs == rhs:
        return _F32 if lhs == _BOOL else lhs
    if lhs == _BOOL:
        return rhs
    if rhs == _BOOL:
        return lhs
    lf, rf = lhs.kind == "f", rhs.kind == "f"
    if lf and not rf:
        return lhs
    if rf and not lf:
        return rhs
    if lf and rf:
        return lhs if lhs.itemsize >= rhs.itemsize else rhs
    out = np.result_type(lhs, rhs)
    return np.dtype(np.int32) if out == np.int16 else out


def np_broadcast_shape(a, lhs, rhs):
    """numpy broadcasting where a 0 dimension is a real (empty) size: (3, 0) with (3, 0) or (1,) is
    (3, 0). A 0 against a size > 1 is still taken as a dimension not known yet (the tracer's
    convention for deferred parameters), as the legacy rule does."""
    if lhs is None or rhs is None:
        return None
    return [lhs, rhs], [broadcast_dims(lhs, rhs, zero_is_size=True)]


# two bool arrays stay bool for these (MXNet 1.9.1: logical or / and, x ** y = x or not y)
_BOOL_KERNELS = {"add": lambda xp, x, y: xp.logical_or(x, y), "multiply": lambda xp, x, y: xp.logical_and(x, y),
                 "power": lambda xp, x, y: xp.logical_or(x, xp.logical_not(y))}


def _binary_np_forward(kernel, true_divide: bool = False, name: str = ""):
    def forward(xp, a, lhs, rhs):
        if lhs.dtype == _BOOL and rhs.dtype == _BOOL and name in _BOOL_KERNELS:
            return (xp.asarray(_BOOL_KERNELS[name](xp, lhs, rhs)),)
        dt = promote(lhs.dtype, rhs.dtype)
        if true_divide and dt.kind in "iub":
            dt = _F32
        return (xp.asarray(kernel(xp, lhs.astype(dt, copy=False), rhs.astype(dt, copy=False))),)
    return forward


def _np_binary_type(name: str):
    def infer(a, lhs, rhs):
        if lhs is None or rhs is None:
            return None
        if np.dtype(lhs) == _BOOL and np.dtype(rhs) == _BOOL and name in _BOOL_KERNELS:
            return [lhs, rhs], [_BOOL]
        return [lhs, rhs], [promote(lhs, rhs)]
    return infer


def _compare_forward(kernel):
    def forward(xp, a, lhs, rhs):
        dt = promote(lhs.dtype, rhs.dtype)
        return (xp.asarray(kernel(xp, lhs.astype(dt, copy=False), rhs.astype(dt, copy=False))).astype(np.bool_),)
    return forward


def _bool_type(a, *dtypes):
    if any(d is None for d in dtypes):
        return None
    return list(dtypes), [_BOOL]


# np name -> elemwise.BINARY key
NP_BINARY = {"add": "add", "subtract": "sub", "multiply": "mul", "true_divide": "div", "mod": "mod",
             "power": "power", "maximum": "maximum", "minimum": "minimum", "hypot": "hypot"}
NP_COMPARE = {"equal": "equal", "not_equal": "not_equal", "greater": "greater",
              "greater_equal": "greater_equal", "less": "lesser", "less_equal": "lesser_equal",
              "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor"}

def _mod_gradient(F, a, inputs, outputs, ograds):
    """mod's gradient, zero for integer dtypes as MXNet's (kernel `_backward_npi_mod`, np_extra2.py)."""
    lhs, rhs = inputs
    y = outputs[0]
    gl, gr = F._backward_npi_mod(ograds[0], F.broadcast_like(lhs, y), F.broadcast_like(rhs, y))
    return [F._sum_to_like(gl, lhs), F._sum_to_like(gr, rhs)]


def _mod_scalar_gradient(backward: str):
    return lambda F, a, inputs, outputs, ograds: [getattr(F, backward)(ograds[0], inputs[0], scalar=a.scalar)]


for _np_name, _key in NP_BINARY.items():
    _fn, _cexpr, _rule = BINARY[_key]
    add_op(OpDef("_npi_" + _np_name,
                 monitor_inputs=("x1", "x2") if _np_name == "hypot" else None, inputs=("lhs", "rhs"),
                 forward=_binary_np_forward(_fn, true_divide=_np_name == "true_divide", name=_np_name),
                 infer_shape=np_broadcast_shape, infer_type=_np_binary_type(_np_name),
                 gradient=_mod_gradient if _key == "mod" else _binary_gradient(_key, _rule, True), hint=_np_name,
                 doc=f"numpy's {_np_name} with broadcasting and MXNet's numpy type promotion."))

for _np_name, _key in NP_COMPARE.items():
    _fn = BINARY[_key][0]
    add_op(OpDef("_npi_" + _np_name, inputs=("lhs", "rhs"), forward=_compare_forward(_fn),
                 infer_shape=np_broadcast_shape, infer_type=_bool_type, gradient=ZERO_GRAD, hint=_np_name,
                 doc=f"numpy's {_np_name} with broadcasting; the result is bool."))


# -- array and scalar ------------------------------------------------------------------

def _scalar_out_dtype(x_dtype: np.dtype, true_divide: bool) -> np.dtype:
    if x_dtype == _BOOL or (true_divide and x_dtype.kind in "iu"):
        return _F32
    return x_dtype


def _scalar_np_forward(kernel, reverse: bool, true_divide: bool, compare: bool):
    def forward(xp, a, x):
        dt = x.dtype if compare else _scalar_out_dtype(x.dtype, true_divide)
        if compare:
            dt = np.dtype(np.float64) if x.dtype.kind in "iub" and not a.is_int else x.dtype
        x = x.astype(dt, copy=False)
        s = dt.type(a.scalar)
        r = xp.asarray(kernel(xp, s, x) if reverse else kernel(xp, x, s))
        return ((r.astype(np.bool_) if compare else r.astype(dt, copy=False)),)
    return forward


def _scalar_type(true_divide: bool, compare: bool):
    def infer(a, x):
        if x is None:
            return None
        return [x], [_BOOL if compare else _scalar_out_dtype(np.dtype(x), true_divide)]
    return infer


# np scalar op -> (BINARY key, reversed, legacy scalar op whose gradient rule applies)
NP_SCALAR = {
    "add": ("add", False, "_plus_scalar"), "subtract": ("sub", False, "_minus_scalar"),
    "rsubtract": ("sub", True, "_rminus_scalar"), "multiply": ("mul", False, "_mul_scalar"),
    "true_divide": ("div", False, "_div_scalar"), "rtrue_divide": ("div", True, "_rdiv_scalar"),
    "mod": ("mod", False, "_mod_scalar"), "rmod": ("mod", True, "_rmod_scalar"),
    "power": ("power", False, "_power_scalar"), "rpower": ("power", True, "_rpower_scalar"),
    "maximum": ("maximum", False, "_maximum_scalar"), "minimum": ("minimum", False, "_minimum_scalar"),
    "hypot": ("hypot", False, "_hypot_scalar"),
}
NP_COMPARE_SCALAR = ("equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
                     "logical_and", "logical_or", "logical_xor")

_SCALAR_ATTRS = {"scalar": Attr("float", 1.0, "Scalar input value.", fmt=str),
                 "is_int": Attr("bool", True, "Whether the scalar is a Python int.")}

for _np_name, (_key, _rev, _legacy) in NP_SCALAR.items():
    _td = _np_name.endswith("true_divide")
    add_op(OpDef(f"_npi_{_np_name}_scalar", monitor_inputs="input", inputs=("data",), attrs=dict(_SCALAR_ATTRS),
                 forward=_scalar_np_forward(BINARY[_key][0], _rev, _td, False),
                 infer_shape=same_shape, infer_type=_scalar_type(_td, False),
                 gradient=_mod_scalar_gradient(f"_backward_npi_{_np_name}_scalar") if _key == "mod" else
                 _scalar_gradient(SCALAR_RULES.get(_legacy)), hint=f"{_np_name}_scalar",
                 doc=f"numpy's {_np_name} of an array and a scalar."))

for _np_name in NP_COMPARE_SCALAR:
    add_op(OpDef(f"_npi_{_np_name}_scalar", inputs=("data",), attrs=dict(_SCALAR_ATTRS),
                 forward=_scalar_np_forward(BINARY[NP_COMPARE[_np_name]][0], False, False, True),
                 infer_shape=same_shape, infer_type=_scalar_type(False, True), gradient=ZERO_GRAD,
                 hint=f"{_np_name}_scalar", doc=f"numpy's {_np_name} of an array and a scalar (bool result)."))


# -- unary math ------------------------------------------------------------------------

def _unary_np_forward(kernel):
    def forward(xp, a, x):
        if x.ndim == 0:   # numpy ufuncs give scalars for 0-d arrays; the kernels write in place
            return (forward(xp, a, x.reshape(1))[0].reshape(()),)
        r = kernel(xp, x)
        return (r.astype(x.dtype, copy=False) if r.dtype != x.dtype else r,)
    return forward


# MXNet's np name -> legacy UNARY key (name prefix `_npi_` unless listed in _NPX)
NP_UNARY = {n: n for n in ("exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "cbrt", "square",
                           "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
                           "arcsinh", "arccosh", "arctanh", "degrees", "radians", "negative", "reciprocal",
                           "sign", "floor", "ceil", "trunc", "fix", "rint")}
NP_UNARY.update({"absolute": "abs", "deg2rad": "radians", "rad2deg": "degrees"})
_NPX = {"_npx_relu": "relu", "_npx_sigmoid": "sigmoid"}

for _np_name, _key in NP_UNARY.items():
    _fn, _cexpr, _rule, _ = UNARY[_key]
    add_op(OpDef("_npi_" + _np_name, inputs=("x",), forward=_unary_np_forward(
        lambda xp, x, _f=_fn: _f(xp, x)), infer_shape=same_shape, gradient=_unary_gradient(_rule),
        elementwise=True, cexpr=_cexpr, hint=_np_name, doc=f"numpy's {_np_name}, elementwise."))

for _name, _key in _NPX.items():
    _fn, _cexpr, _rule, _ = UNARY[_key]
    add_op(OpDef(_name,
                 monitor_inputs="input", inputs=("data",), forward=_unary_np_forward(lambda xp, x, _f=_fn: _f(xp, x)),
                 infer_shape=same_shape, gradient=_unary_gradient(_rule), elementwise=True, cexpr=_cexpr,
                 hint=_key, doc=f"npx.{_key}, elementwise."))


def _logical_not_type(a, x):
    return None if x is None else ([x], [_BOOL])


add_op(OpDef("_npi_logical_not", inputs=("x",), forward=lambda xp, a, x: (xp.logical_not(x),),
             infer_shape=same_shape, infer_type=_logical_not_type, gradient=ZERO_GRAD, hint="logical_not",
             doc="numpy's logical_not (bool result)."))



_COPY = get_op("_copy")
add_op(OpDef("_np_copy", inputs=("a",), forward=_COPY.forward, infer_shape=same_shape, gradient=_COPY.gradient,
             elementwise=True, cexpr="x0", hint="copy", doc="numpy's copy."))


def _around(xp, a, x):
    if x.dtype.kind in "iub" and a.decimals >= 0:
        return (x.copy(),)
    return (xp.asarray(xp.around(x, a.decimals)).astype(x.dtype, copy=False),)


add_op(OpDef("_npi_around", inputs=("x",), attrs={"decimals": Attr("int", 0, "Number of decimal places.")},
             forward=_around, infer_shape=same_shape, gradient=ZERO_GRAD, hint="around",
             doc="numpy's around: round half to even at the given number of decimals."))
