"""More `mx.np` binary ufuncs: `lcm`, `bitwise_and/or/xor`, `copysign`, `arctan2`, `ldexp`
(`_npi_<name>`, `_npi_<name>_scalar`, and `_npi_r<name>_scalar` for the non-commutative ones).

Unlike `_npi_add` & co. these do no type promotion (MXNet 1.9.1 registers them with
same-dtype type inference): both arrays must have one dtype, and the result has it.
`lcm` and the bitwise ops take integer (or bool) arrays only, `arctan2` float arrays only,
`copysign`/`ldexp` anything but bool. An integer array with a scalar casts the scalar to
the array's dtype first (`ldexp(x, 2.5)` on int32 is `x * 4`), as MXNet's kernels do;
a float kernel on integers is computed in float64 and truncated to the dtype.
"""
from __future__ import annotations

import math

import numpy as np

from ..attrs import Attr
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import ZERO_GRAD, OpDef, add_op, same_shape
from .np_elemwise import _SCALAR_ATTRS, _scalar_out_dtype, np_broadcast_shape
from .np_matrix import _norm_axes, _np_reduced

_INT_KINDS = "iub"


def _lcm(x, y):
    return np.lcm(x, y) if x.dtype.kind in "iu" else np.logical_and(x, y)


def _copysign(x, y):
    return np.copysign(x, y)


def _ldexp(x, y):
    return x * np.power(2.0, y.astype(np.float64) if y.dtype.kind in "iu" else y)


# name -> (numpy kernel on two arrays of one dtype, allowed dtype kinds, what the check says)
KERNELS = {
    "lcm": (_lcm, "iub", "integer"),
    "bitwise_and": (np.bitwise_and, "iub", "integer"),
    "bitwise_or": (np.bitwise_or, "iub", "integer"),
    "bitwise_xor": (np.bitwise_xor, "iub", "integer"),
    "copysign": (_copysign, "iuf", "non-boolean"),
    "arctan2": (np.arctan2, "f", "float"),
    "ldexp": (_ldexp, "iuf", "non-boolean"),
}
COMMUTATIVE = ("lcm", "bitwise_and", "bitwise_or", "bitwise_xor")


def _check_kind(name: str, dt: np.dtype) -> None:
    kinds, what = KERNELS[name][1], KERNELS[name][2]
    if np.dtype(dt).kind not in kinds:
        raise DTypeError(f"_npi_{name}: the input must have a {what} dtype, got {np.dtype(dt)}")


def _run(name: str, x, y, dt: np.dtype):
    with np.errstate(all="ignore"):
        r = np.asarray(KERNELS[name][0](x, y))
    if r.dtype != dt:
        if dt.kind in "iu" and r.dtype.kind == "f":
            r = np.trunc(r)
        r = r.astype(dt)
    return r


def _tensor_type(name: str):
    def infer(a, lhs, rhs):
        if lhs is None or rhs is None:
            return None
        lhs, rhs = np.dtype(lhs), np.dtype(rhs)
        if lhs != rhs:
            raise DTypeError(f"_npi_{name}: both inputs must have one dtype, got {lhs} and {rhs}")
        _check_kind(name, lhs)
        return [lhs, rhs], [lhs]
    return infer


def _tensor_forward(name: str):
    infer = _tensor_type(name)

    def forward(xp, a, lhs, rhs):
        dt = infer(a, lhs.dtype, rhs.dtype)[1][0]
        return (xp.asarray(_run(name, np.asarray(lhs), np.asarray(rhs), dt)),)
    return forward


def _scalar_dtype(name: str, x: np.dtype) -> np.dtype:
    x = np.dtype(x)
    if name in COMMUTATIVE:
        _check_kind(name, x)
        return x
    if name == "arctan2" and x.kind != "f":
        raise DTypeError(f"_npi_{name}_scalar: the input must have a float dtype, got {x}")
    return _scalar_out_dtype(x, False)


def _scalar_type(name: str):
    def infer(a, x):
        return None if x is None else ([x], [_scalar_dtype(name, x)])
    return infer


def _scalar_forward(name: str, reverse: bool):
    def forward(xp, a, x):
        dt = _scalar_dtype(name, x.dtype)
        x = np.asarray(x).astype(dt, copy=False)
        s = np.full(x.shape, a.scalar, dtype=np.float64).astype(dt)   # the scalar in the array's dtype
        return (xp.asarray(_run(name, s, x, dt) if reverse else _run(name, x, s, dt)),)
    return forward


# -- gradients (MXNet: zero for lcm and the bitwise ops) ------------------------------------

def _same_sign(F, lhs, rhs):
    """1 where lhs and rhs have one sign (>= 0 counts as positive), else -1 (copysign's d/dx1)."""
    agree = F._equal(F._greater_equal_scalar(lhs, scalar=0.0), F._greater_equal_scalar(rhs, scalar=0.0))
    return F._minus_scalar(F._mul_scalar(agree, scalar=2.0), scalar=1.0)


def _tensor_rule(name: str):
    def copysign(F, g, lhs, rhs, y):
        return F.elemwise_mul(g, _same_sign(F, lhs, rhs)), F.zeros_like(g)

    def arctan2(F, g, lhs, rhs, y):
        den = F.elemwise_add(F.square(lhs), F.square(rhs))
        return (F.elemwise_mul(g, F.elemwise_div(rhs, den)),
                F.negative(F.elemwise_mul(g, F.elemwise_div(lhs, den))))

    def ldexp(F, g, lhs, rhs, y):
        return (F.elemwise_mul(g, F._rpower_scalar(rhs, scalar=2.0)),
                F.elemwise_mul(g, F._mul_scalar(y, scalar=math.log(2.0))))
    return {"copysign": copysign, "arctan2": arctan2, "ldexp": ldexp}[name]


def _tensor_gradient(name: str):
    if name in COMMUTATIVE:
        return ZERO_GRAD
    rule = _tensor_rule(name)

    def gradient(F, a, inputs, outputs, ograds):
        lhs, rhs = inputs
        y = outputs[0]
        gl, gr = rule(F, ograds[0], F.broadcast_like(lhs, y), F.broadcast_like(rhs, y), y)
        return [F._sum_to_like(gl, lhs), F._sum_to_like(gr, rhs)]
    return gradient


def _scalar_gradient(name: str, reverse: bool):
    if name in COMMUTATIVE or (name == "copysign" and reverse):
        return ZERO_GRAD

    def gradient(F, a, inputs, outputs, ograds):
        g, x, y, s = ograds[0], inputs[0], outputs[0], a.scalar
        if name == "copysign":
            return [F.elemwise_mul(g, _same_sign(F, x, F._mul_scalar(F.ones_like(x), scalar=s)))]
        if name == "arctan2":
            den = F._plus_scalar(F.square(x), scalar=s * s)
            num = F._mul_scalar(F.reciprocal(den), scalar=-s if reverse else s)
            return [F.elemwise_mul(g, num)]
        if reverse:   # s * 2**x
            return [F.elemwise_mul(g, F._mul_scalar(y, scalar=math.log(2.0)))]
        return [F._mul_scalar(g, scalar=2.0 ** s)]
    return gradient


for _name in KERNELS:
    add_op(OpDef(f"_npi_{_name}", inputs=("lhs", "rhs"), forward=_tensor_forward(_name),
                 monitor_inputs=("x1", "x2") if _name == "arctan2" else None,
                 infer_shape=np_broadcast_shape, infer_type=_tensor_type(_name),
                 gradient=_tensor_gradient(_name), hint=_name,
                 doc=f"numpy's {_name} with broadcasting; both inputs of one dtype (MXNet 1.9.1)."))
    for _rev in (False, True) if _name not in COMMUTATIVE else (False,):
        _op = f"_npi_{'r' if _rev else ''}{_name}_scalar"
        add_op(OpDef(_op, inputs=("data",), attrs=dict(_SCALAR_ATTRS), forward=_scalar_forward(_name, _rev),
                     monitor_inputs="input",
                     infer_shape=same_shape, infer_type=_scalar_type(_name),
                     gradient=_scalar_gradient(_name, _rev), hint=_op[5:],
                     doc=f"numpy's {_name} of {'a scalar and an array' if _rev else 'an array and a scalar'}."))


# -- mod's gradient kernels (np_elemwise.py's `_npi_mod*` call them): zero for integer dtypes ----------

def _is_int(x) -> bool:
    return x.dtype.kind in _INT_KINDS


def _backward_mod(xp, a, g, lhs, rhs):
    if _is_int(lhs):
        return xp.zeros(g.shape, lhs.dtype), xp.zeros(g.shape, rhs.dtype)
    return g.astype(lhs.dtype, copy=False), (-g * xp.floor(lhs / rhs)).astype(rhs.dtype, copy=False)


def _backward_mod_scalar(reverse: bool):
    def forward(xp, a, g, x):
        if _is_int(x):
            return (xp.zeros(x.shape, x.dtype),)
        return ((-g * xp.floor(x.dtype.type(a.scalar) / x) if reverse else g).astype(x.dtype, copy=False),)
    return forward


def _pair_shape(a, g, lhs, rhs):
    return None if lhs is None or rhs is None else ([lhs, lhs, rhs], [lhs, rhs])


def _pair_type(a, g, lhs, rhs):
    return None if lhs is None or rhs is None else ([lhs, lhs, rhs], [lhs, rhs])


add_op(OpDef("_backward_npi_mod", inputs=("ograd", "lhs", "rhs"), outputs=("grad_lhs", "grad_rhs"),
             forward=_backward_mod, infer_shape=_pair_shape, infer_type=_pair_type, public=False, fluent=False,
             doc="mod's gradients (operands broadcast to the output's shape): 1 and -floor(lhs / rhs); "
                 "zero for integer dtypes."))
for _rev in (False, True):
    add_op(OpDef(f"_backward_npi_{'r' if _rev else ''}mod_scalar", inputs=("ograd", "data"),
                 attrs=dict(_SCALAR_ATTRS), forward=_backward_mod_scalar(_rev), public=False, fluent=False,
                 infer_shape=lambda a, g, x: None if x is None else ([x, x], [x]),
                 infer_type=lambda a, g, x: None if x is None else ([x, x], [x]),
                 doc="mod's scalar-form gradient; zero for integer dtypes."))


# -- ediff1d ---------------------------------------------------------------------------------

_EDIFF_ATTRS = {
    "to_begin_arr_given": Attr("bool", False, "Whether `to_begin` is an array (an input)."),
    "to_end_arr_given": Attr("bool", False, "Whether `to_end` is an array (an input)."),
    "to_begin_scalar": Attr("float", None, "If `to_begin` is a scalar, its value."),
    "to_end_scalar": Attr("float", None, "If `to_end` is a scalar, its value."),
}


def _ediff_inputs(a) -> tuple:
    n = 1 + bool(a.to_begin_arr_given) + bool(a.to_end_arr_given)
    return ("input1", "input2", "input3")[:n]


def _ediff_parts(a, sizes: list) -> tuple:
    """The sizes of (begin, end) in the output: an array's size, 1 for a scalar, else 0."""
    rest = iter(sizes[1:])
    begin = next(rest) if a.to_begin_arr_given else int(a.to_begin_scalar is not None)
    end = next(rest) if a.to_end_arr_given else int(a.to_end_scalar is not None)
    return begin, end


def _ediff_shape(a, *shapes):
    if any(s is None for s in shapes):
        return None
    sizes = [int(np.prod(s)) for s in shapes]
    begin, end = _ediff_parts(a, sizes)
    return list(shapes), [(max(sizes[0] - 1, 0) + begin + end,)]


def _ediff_type(a, *dtypes):
    if dtypes[0] is None:
        return None
    return [dtypes[0]] * len(dtypes), [dtypes[0]]


def _ediff1d(xp, a, ary, *arrays):
    dt = ary.dtype
    rest = iter(arrays)
    flat = ary.reshape(-1)
    begin = next(rest).reshape(-1) if a.to_begin_arr_given else \
        xp.asarray([] if a.to_begin_scalar is None else [a.to_begin_scalar])
    end = next(rest).reshape(-1) if a.to_end_arr_given else \
        xp.asarray([] if a.to_end_scalar is None else [a.to_end_scalar])
    return (xp.concatenate([begin.astype(dt), (flat[1:] - flat[:-1]).astype(dt), end.astype(dt)]),)


def _ediff_gradient(F, a, inputs, outputs, ograds):
    res = F._npi_backward_ediff1d(ograds[0], *inputs, **a.given)
    return list(res) if len(inputs) > 1 else [res]   # one output comes back bare


def _ediff_backward(xp, a, g, ary, *arrays):
    n = ary.size
    begin, end = _ediff_parts(a, [n, *(x.size for x in arrays)])
    mid = g[begin:begin + max(n - 1, 0)]
    gx = xp.zeros(n, g.dtype)
    if n > 1:
        gx[1:] += mid
        gx[:-1] -= mid
    out = [gx.reshape(ary.shape).astype(ary.dtype, copy=False)]
    rest = iter(arrays)
    if a.to_begin_arr_given:
        x = next(rest)
        out.append(g[:begin].reshape(x.shape).astype(x.dtype, copy=False))
    if a.to_end_arr_given:
        x = next(rest)
        out.append(g[g.shape[0] - end:].reshape(x.shape).astype(x.dtype, copy=False))
    return tuple(out)


add_op(OpDef("_npi_ediff1d", inputs=_ediff_inputs, attrs=dict(_EDIFF_ATTRS), forward=_ediff1d,
             infer_shape=_ediff_shape, infer_type=_ediff_type, gradient=_ediff_gradient, hint="ediff1d",
             doc="numpy's ediff1d: the differences of the flattened array, with `to_begin` / `to_end` "
                 "(arrays as inputs, or scalars as attributes) around them."))
add_op(OpDef("_npi_backward_ediff1d", inputs=lambda a: ("ograd", *_ediff_inputs(a)),
             outputs=lambda a: tuple(f"grad_{n}" for n in _ediff_inputs(a)), attrs=dict(_EDIFF_ATTRS),
             forward=_ediff_backward, public=False, fluent=False,
             infer_shape=lambda a, g, *s: None if any(x is None for x in s) else ([g, *s], list(s)),
             infer_type=lambda a, g, *t: None if any(x is None for x in t) else ([g, *t], list(t)),
             doc="ediff1d's gradients: -diff of the padded head gradient for the array, slices for the ends."))


# -- percentile (quantile is percentile of 100 q) --------------------------------------------

_PCT_ATTRS = {
    "axis": Attr("shape", None, "Axis or axes along which the percentiles are computed (None: all)."),
    "interpolation": Attr("str", "linear", "Between two data points: linear, lower, higher, midpoint, nearest.",
                          choices=("linear", "lower", "higher", "midpoint", "nearest")),
    "keepdims": Attr("bool", False, "Keep the reduced axes with size one."),
    "q_scalar": Attr("float", None, "The percentile when it is a scalar (then there is no input q)."),
}


def _pct_shape(a, data, q=None):
    if data is None or (a.q_scalar is None and q is None):
        return None
    axes = _norm_axes("_npi_percentile", a.axis, len(data))
    out = _np_reduced(tuple(data), axes, a.keepdims)
    qshape = () if a.q_scalar is not None else tuple(q)
    if len(qshape) > 1:
        raise ShapeError(f"_npi_percentile: q must be a scalar or 1-D, got shape {qshape}")
    shapes = [data] if a.q_scalar is not None else [data, q]
    return shapes, [qshape + out]


def _pct_type(a, data, q=None):
    if data is None:
        return None
    out = np.dtype(np.float64) if np.dtype(data) == np.float64 else np.dtype(np.float32)
    return ([data] if a.q_scalar is not None else [data, q]), [out]


def _pick(sorted_, a, q: np.floating):
    """One percentile of the last axis of sorted data, MXNet's way: the index q (n - 1) / 100 in
    float32; nearest rounds halves away from zero (C's round), linear weights in float32."""
    n = sorted_.shape[-1]
    idx = np.float32(np.float64(q * q.dtype.type(n - 1)) / 100.0)   # q * (n-1) in q's dtype, as MXNet
    mode = a.interpolation
    if mode in ("lower", "higher", "nearest"):
        pos = {"lower": math.floor, "higher": math.ceil, "nearest": lambda v: math.floor(v + 0.5)}[mode](idx)
        return sorted_[..., int(pos)]
    if mode == "midpoint":
        idx = np.float32((math.floor(idx) + math.ceil(idx)) / 2)
    below = int(math.floor(idx))
    above = min(below + 1, n - 1)
    w = np.float32(idx - below)
    # each term data * weight in MXNet's C++ types (float16 stays float16, an integer becomes float32)
    pt = sorted_.dtype if sorted_.dtype.kind == "f" else np.dtype(np.float32)
    lo = (sorted_[..., below] * (np.float32(1) - w)).astype(pt)
    hi = (sorted_[..., above] * w).astype(pt)
    return lo.astype(np.float64 if pt == np.float64 else np.float32) + hi


def _percentile(xp, a, data, q=None):
    data = np.asarray(data)
    qv = np.asarray(a.q_scalar, dtype=np.float64) if a.q_scalar is not None else np.asarray(q)
    if ((qv < 0) | (qv > 100)).any():
        raise AttrError(f"_npi_percentile: percentiles must be in the range [0, 100], got {qv.tolist()}")
    out_dt = _pct_type(a, data.dtype, None if q is None else q.dtype)[1][0]
    axes = _norm_axes("_npi_percentile", a.axis, data.ndim)
    keep = [i for i in range(data.ndim) if i not in axes]
    moved = np.transpose(data, keep + list(axes)).reshape([data.shape[i] for i in keep] + [-1])
    sorted_ = np.sort(moved, axis=-1)
    reduced = _np_reduced(data.shape, axes, a.keepdims)
    res = [np.asarray(_pick(sorted_, a, v)).astype(out_dt).reshape(reduced) for v in qv.reshape(-1)]
    out = np.stack(res) if qv.ndim else res[0]
    return (xp.asarray(out.astype(out_dt)),)


add_op(OpDef("_npi_percentile", inputs=lambda a: ("a",) if a.q_scalar is not None else ("a", "q"),
             attrs=dict(_PCT_ATTRS), forward=_percentile, infer_shape=_pct_shape, infer_type=_pct_type,
             gradient=ZERO_GRAD, hint="percentile",
             doc="numpy's percentile (q in [0, 100], a scalar attribute or a 0-/1-D input) with MXNet's "
                 "interpolation modes; float64 data gives float64, other dtypes float32."))
