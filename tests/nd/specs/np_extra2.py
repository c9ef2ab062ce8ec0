"""Specs for nd/ops/np_extra2.py: lcm, bitwise_and/or/xor, copysign, arctan2, ldexp (arrays with
broadcasting, and the scalar forms) against numpy; gradients by finite differences."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, ints, shapes

_INT = "integer operation (zero gradient)"


def _pair(draw, make):
    s = draw(shapes(max_dims=3))
    s2 = tuple(1 if draw(st.booleans()) else d for d in s)[draw(st.integers(0, len(s))):]
    a, b = draw(make(s)), draw(make(s2))
    return [a, b] if draw(st.booleans()) else [b, a]


def _int_op(name):
    return OpSpec(f"_npi_{name}", case=lambda draw: (_pair(draw, lambda s: ints(s, -20, 20, dtype=np.int32)), {}),
                  ref=lambda a, b, **kw: getattr(np, name)(a, b), nondiff=_INT)


def _int_scalar(name):
    return OpSpec(f"_npi_{name}_scalar",
                  case=lambda draw: ([draw(ints(shapes(), -20, 20, dtype=np.int32))],
                                     {"scalar": float(draw(st.integers(-9, 9))), "is_int": True}),
                  ref=lambda x, scalar, **kw: getattr(np, name)(x, np.int32(scalar)), nondiff=_INT)


def _ldexp_ref(a, b, **kw):
    return a * np.power(2.0, b)


def _float_scalar(name, ref, rev, lo=-2.0, hi=2.0, away=None):
    def case(draw):
        return [draw(arr(shapes(), lo, hi, away_from=away))], {"scalar": draw(st.sampled_from([-1.5, 0.5, 2.0]))}

    def run(x, scalar, **kw):
        return ref(np.full_like(x, scalar), x) if rev else ref(x, np.full_like(x, scalar))
    zero = "zero gradient (the sign of x only)" if name == "copysign" and rev else None
    return OpSpec(f"_npi_{'r' if rev else ''}{name}_scalar", case=case, ref=run, fd_rtol=1e-3, nondiff=zero)


def _mod_backward_case(draw):
    s = draw(shapes(max_dims=3))
    if draw(st.booleans()):
        i32 = [draw(ints(s, lo, 9, dtype=np.int32)) for lo in (-9, -9, 1)]
        return i32, {}
    return [draw(arr(s)), draw(arr(s, 0.1, 3.0)), draw(arr(s, 0.5, 2.0))], {}


def _mod_backward_ref(g, lhs, rhs, **kw):
    if lhs.dtype.kind == "i":
        return np.zeros_like(lhs), np.zeros_like(rhs)
    return g, -g * np.floor(lhs / rhs)


def _mod_scalar_backward(rev):
    def case(draw):
        s = draw(shapes(max_dims=3))
        if draw(st.booleans()):
            return [draw(ints(s, -9, 9, dtype=np.int32)), draw(ints(s, 1, 9, dtype=np.int32))], {"scalar": 2.0}
        return [draw(arr(s)), draw(arr(s, 0.5, 3.0))], {"scalar": 1.7}

    def ref(g, x, scalar, **kw):
        if x.dtype.kind == "i":
            return np.zeros_like(x)
        return -g * np.floor(scalar / x) if rev else g
    return OpSpec(f"_backward_npi_{'r' if rev else ''}mod_scalar", case=case, ref=ref, nondiff="a gradient kernel")


def _ediff_case(draw):
    inputs = [draw(arr(shapes(min_dims=0, max_dims=3)))]
    attrs = {}
    for end in ("begin", "end"):
        kind = draw(st.sampled_from(["arr", "scalar", "none"]))
        attrs[f"to_{end}_arr_given"] = kind == "arr"
        attrs[f"to_{end}_scalar"] = draw(st.sampled_from([-1.5, 2.0])) if kind == "scalar" else None
        if kind == "arr":
            inputs.append(draw(arr(shapes(min_dims=1, max_dims=2))))
    return inputs, attrs


def _ediff_split(inputs, a):
    rest = iter(inputs[1:])
    begin = next(rest) if a["to_begin_arr_given"] else a["to_begin_scalar"]
    end = next(rest) if a["to_end_arr_given"] else a["to_end_scalar"]
    return inputs[0], begin, end


def _ediff_ref(*inputs, **a):
    ary, begin, end = _ediff_split(inputs, a)
    return np.ediff1d(ary, to_end=end, to_begin=begin)


def _ediff_backward_case(draw):
    inputs, attrs = _ediff_case(draw)
    return [draw(arr(_ediff_ref(*inputs, **attrs).shape)), *inputs], attrs


def _ediff_backward_ref(g, *inputs, **a):
    ary, begin, end = _ediff_split(inputs, a)
    nb = 0 if begin is None else np.size(begin)
    n = ary.size
    mid = g[nb:nb + max(n - 1, 0)]
    gx = np.zeros(n)
    if n > 1:
        gx[1:] += mid
        gx[:-1] -= mid
    out = [gx.reshape(ary.shape)]
    if a["to_begin_arr_given"]:
        out.append(g[:nb].reshape(begin.shape))
    if a["to_end_arr_given"]:
        out.append(g[g.size - end.size:].reshape(end.shape))
    return tuple(out)


def _pct_case(draw):
    x = draw(arr(shapes(max_dims=3)))
    axes = draw(st.one_of(st.none(), st.lists(st.integers(0, x.ndim - 1), min_size=1, max_size=x.ndim, unique=True)))
    attrs = {"axis": None if axes is None else tuple(axes), "keepdims": draw(st.booleans()),
             "interpolation": draw(st.sampled_from(["linear", "lower", "higher", "midpoint"]))}
    if draw(st.booleans()):
        return [x], {**attrs, "q_scalar": draw(st.sampled_from([0.0, 25.0, 50.0, 100.0]))}
    return [x, np.array(draw(st.lists(st.sampled_from([0.0, 10.0, 75.0, 100.0]), min_size=1, max_size=3)))], \
        {**attrs, "q_scalar": None}


def _pct_ref(x, q=None, axis=None, keepdims=False, interpolation="linear", q_scalar=None, **kw):
    # numpy's own percentile (MXNet's float32 index can differ in the last bits, and its `nearest`
    # rounds halves up: tests/numpy checks that mode)
    qv = q_scalar if q is None else q
    return np.percentile(x, qv, axis=axis, method=interpolation, keepdims=keepdims)


SPECS = [
    OpSpec("_npi_percentile", case=_pct_case, ref=_pct_ref, nondiff="zero gradient (as MXNet's)"),
    OpSpec("_npi_ediff1d", case=_ediff_case, ref=_ediff_ref),
    OpSpec("_npi_backward_ediff1d", case=_ediff_backward_case, ref=_ediff_backward_ref, nondiff="a gradient kernel"),
    OpSpec("_backward_npi_mod", case=_mod_backward_case, ref=_mod_backward_ref, nondiff="a gradient kernel"),
    _mod_scalar_backward(False), _mod_scalar_backward(True),
    *(_int_op(n) for n in ("lcm", "bitwise_and", "bitwise_or", "bitwise_xor")),
    *(_int_scalar(n) for n in ("lcm", "bitwise_and", "bitwise_or", "bitwise_xor")),
    OpSpec("_npi_copysign", case=lambda draw: (_pair(draw, lambda s: arr(s, away_from=0.0)), {}),
           ref=lambda a, b, **kw: np.copysign(a, b)),
    OpSpec("_npi_arctan2", case=lambda draw: (_pair(draw, lambda s: arr(s, 0.3, 2.0)), {}),
           ref=lambda a, b, **kw: np.arctan2(a, b)),
    OpSpec("_npi_ldexp", case=lambda draw: (_pair(draw, lambda s: arr(s, -2.0, 2.0)), {}), ref=_ldexp_ref,
           fd_rtol=1e-3),
    _float_scalar("copysign", np.copysign, False, away=0.0),
    _float_scalar("copysign", np.copysign, True, away=0.0),
    _float_scalar("arctan2", np.arctan2, False, 0.3, 2.0),
    _float_scalar("arctan2", np.arctan2, True, 0.3, 2.0),
    _float_scalar("ldexp", _ldexp_ref, False),
    _float_scalar("ldexp", _ldexp_ref, True),
]
