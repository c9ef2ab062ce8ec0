"""Specs for nd/ops/elemwise.py: unary math, binary, broadcast and scalar forms."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from hybridgraph.nd.ops import elemwise as ew
from tests.op_specs import OpSpec, arr, shapes

# unary: name -> (numpy reference, input low, high, kink to keep away from, differentiable)
_erf = np.vectorize(math.erf)
_gamma = np.vectorize(math.gamma)
_lgamma = np.vectorize(math.lgamma)


def _digamma(x, h=1e-5):
    return (_lgamma(x + h) - _lgamma(x - h)) / (2 * h)


def _rint(x):
    f = np.floor(x)
    return np.where(x - f <= np.ceil(x) - x, f, f + 1)


UNARY_REF = {
    "abs": (np.abs, -2, 2, 0.0), "sign": (np.sign, -2, 2, 0.0), "negative": (np.negative, -2, 2, None),
    "reciprocal": (np.reciprocal, 0.3, 2, None), "square": (np.square, -2, 2, None),
    "sqrt": (np.sqrt, 0.2, 3, None), "rsqrt": (lambda x: 1 / np.sqrt(x), 0.2, 3, None),
    "cbrt": (np.cbrt, 0.2, 3, None), "rcbrt": (lambda x: 1 / np.cbrt(x), 0.2, 3, None),
    "exp": (np.exp, -2, 2, None), "expm1": (np.expm1, -2, 2, None), "log": (np.log, 0.2, 3, None),
    "log1p": (np.log1p, -0.5, 2, None), "log2": (np.log2, 0.2, 3, None), "log10": (np.log10, 0.2, 3, None),
    "sin": (np.sin, -2, 2, None), "cos": (np.cos, -2, 2, None), "tan": (np.tan, -1, 1, None),
    "arcsin": (np.arcsin, -0.8, 0.8, None), "arccos": (np.arccos, -0.8, 0.8, None),
    "arctan": (np.arctan, -2, 2, None), "sinh": (np.sinh, -2, 2, None), "cosh": (np.cosh, -2, 2, None),
    "tanh": (np.tanh, -2, 2, None), "arcsinh": (np.arcsinh, -2, 2, None),
    "arccosh": (np.arccosh, 1.2, 3, None), "arctanh": (np.arctanh, -0.8, 0.8, None),
    "degrees": (np.degrees, -2, 2, None), "radians": (np.radians, -2, 2, None),
    "relu": (lambda x: np.maximum(x, 0), -2, 2, 0.0), "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), -2, 2, None),
    "softsign": (lambda x: x / (1 + np.abs(x)), -2, 2, 0.0), "erf": (_erf, -2, 2, None),
    "erfinv": (np.vectorize(ew.special._erfinv_scalar), -0.8, 0.8, None),
    "gamma": (_gamma, 0.5, 3, None), "gammaln": (_lgamma, 0.5, 3, None), "_digamma": (_digamma, 0.5, 3, None),
    "floor": (np.floor, -2, 2, None), "ceil": (np.ceil, -2, 2, None),
    "round": (lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), -2, 2, None), "rint": (_rint, -2, 2, None),
    "fix": (np.fix, -2, 2, None), "trunc": (np.trunc, -2, 2, None),
    "logical_not": (lambda x: (x == 0).astype(x.dtype), -2, 2, None),
    "_copy": (lambda x: x, -2, 2, None), "BlockGrad": (lambda x: x, -2, 2, None),
}
NONDIFF = {"sign", "floor", "ceil", "round", "rint", "fix", "trunc", "logical_not", "BlockGrad"}


def _unary(name):
    ref, lo, hi, kink = UNARY_REF[name]
    return OpSpec(name, case=lambda draw: ([draw(arr(shapes(), lo, hi, away_from=kink))], {}),
                  ref=lambda x, **kw: ref(x), rtol=1e-7 if name != "_digamma" else 1e-6,
                  nondiff=("zero gradient (piecewise constant)" if name in NONDIFF
                           else "no gradient rule (only used inside gamma's gradient)" if name == "_digamma" else None))


BINARY_REF = {
    "add": (np.add, None), "sub": (np.subtract, None), "mul": (np.multiply, None),
    "div": (np.divide, "nonzero"), "mod": (np.mod, "mod"), "power": (np.power, "positive"),
    "maximum": (np.maximum, "distinct"), "minimum": (np.minimum, "distinct"), "hypot": (np.hypot, "positive"),
    "equal": (np.equal, None), "not_equal": (np.not_equal, None), "greater": (np.greater, None),
    "greater_equal": (np.greater_equal, None), "lesser": (np.less, None),
    "lesser_equal": (np.less_equal, None), "logical_and": (lambda a, b: np.logical_and(a != 0, b != 0), None),
    "logical_or": (lambda a, b: np.logical_or(a != 0, b != 0), None),
    "logical_xor": (lambda a, b: np.logical_xor(a != 0, b != 0), None),
}
_COMPARISONS = {"equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal",
                "logical_and", "logical_or", "logical_xor"}


def _operands(kind, shape_l, shape_r):
    def build(draw):
        if kind == "positive":
            return [draw(arr(shape_l, 0.5, 2)), draw(arr(shape_r, -1.5, 1.5))]
        if kind == "nonzero":
            return [draw(arr(shape_l)), draw(arr(shape_r, 0.5, 2))]
        if kind == "mod":  # keep lhs/rhs away from integers, where mod jumps
            lhs = draw(arr(shape_l, 0.0, 3.0))
            lhs = 0.75 * (np.floor(lhs) + 0.1 + 0.8 * (lhs - np.floor(lhs)))
            return [lhs, np.full(draw(st.just(shape_r)) if isinstance(shape_r, tuple) else shape_r, 0.75)]
        lhs = draw(arr(shape_l))
        rhs = draw(arr(shape_r))
        if kind == "distinct":
            rhs = np.where(np.abs(np.broadcast_to(lhs, np.broadcast(lhs, rhs).shape) - rhs) < 0.05, rhs + 0.2, rhs) \
                if rhs.shape == np.broadcast(lhs, rhs).shape else rhs + 0.013
        return [lhs, rhs]
    return build


def _cast_ref(fn):
    return lambda a, b, **kw: np.asarray(fn(a, b)).astype(a.dtype)


def _binary_specs(key):
    fn, kind = BINARY_REF[key]
    name, _ = ew.SAME_SHAPE_NAMES[key]
    nondiff = "zero gradient (comparison)" if key in _COMPARISONS else None

    def same(draw):
        s = draw(shapes())
        return _operands(kind, s, s)(draw), {}

    def bcast(draw):
        s = draw(shapes(max_dims=3))
        mask = draw(st.lists(st.booleans(), min_size=len(s), max_size=len(s)))
        s2 = tuple(1 if m else d for m, d in zip(mask, s))
        if draw(st.booleans()):
            s2 = s2[1:] if len(s2) > 1 else s2
        return _operands(kind, s2, s)(draw) if draw(st.booleans()) else _operands(kind, s, s2)(draw), {}
    return [OpSpec(name, case=same, ref=_cast_ref(fn), nondiff=nondiff),
            OpSpec("broadcast_" + key, case=bcast, ref=_cast_ref(fn), nondiff=nondiff)]


def _scalar_spec(name):
    key, rev, _ = ew.SCALAR_OPS[name]
    fn, kind = BINARY_REF[key]
    nondiff = "zero gradient (comparison)" if key in _COMPARISONS else None

    def case(draw):
        s = draw(shapes())
        if kind == "positive":
            exponent = draw(st.sampled_from([2.0, 0.5, -1.5, 3.0]))
            x, scalar = (draw(arr(s, -1.5, 1.5)), 1.7) if rev else (draw(arr(s, 0.5, 2)), exponent)
        elif kind == "mod":
            x = draw(arr(s, 0.0, 3.0))
            x = 0.75 * (np.floor(x) + 0.1 + 0.8 * (x - np.floor(x)))
            x, scalar = (np.full(s, 0.75), 1.3) if rev else (x, 0.75)
            if rev:  # 1.3 / 0.75 is not an integer, and x is constant: mod is smooth there
                x = x + draw(arr(s, 0.0, 0.05))
        elif kind == "nonzero":
            x, scalar = (draw(arr(s, 0.5, 2)), 1.3) if rev else (draw(arr(s, 0.1, 3)), 0.7)
        elif kind == "distinct":
            x, scalar = draw(arr(s, away_from=0.25)), 0.25
        else:
            x, scalar = draw(arr(s)), draw(st.sampled_from([0.0, 1.0, -1.5, 2.5]))
        return [x], {"scalar": scalar}

    def ref(x, scalar, **kw):
        s = x.dtype.type(scalar)
        return np.asarray(fn(s, x) if rev else fn(x, s)).astype(x.dtype)
    return OpSpec(name, case=case, ref=ref, nondiff=nondiff)


def _backward_relu_case(draw):
    s = draw(shapes())
    return [draw(arr(s)), draw(arr(s, away_from=0.0))], {}


SPECS = ([_unary(n) for n in ew.UNARY]
         + [OpSpec("_backward_relu", case=_backward_relu_case,
                   ref=lambda g, y, **kw: (g * (y > 0)).astype(g.dtype))]
         + [s for k in ew.BINARY for s in _binary_specs(k)]
         + [_scalar_spec(n) for n in ew.SCALAR_OPS])


# -- the dtype-dependent hidden backward kernels of mod (nd/ops/mod_grad.py) --------------

def _mod_backward_case(draw):
    shape = draw(shapes(max_dims=3))
    return [draw(arr(shape)), draw(arr(shape, 1.0, 4.0)), draw(arr(shape, 0.5, 3.0))], {}


def _mod_scalar_backward_case(draw):
    shape = draw(shapes(max_dims=3))
    return [draw(arr(shape)), draw(arr(shape, 0.5, 3.0))], {"scalar": draw(st.sampled_from([2.5, -1.5]))}


SPECS += [
    OpSpec("_backward_mod", case=_mod_backward_case, ref=lambda g, x, y: (g, -g * np.floor(x / y)),
           nondiff="hidden backward op without a gradient of its own (as MXNet)"),
    OpSpec("_backward_mod_scalar", case=_mod_scalar_backward_case, ref=lambda g, x, scalar: g,
           nondiff="hidden backward op without a gradient of its own (as MXNet)"),
    OpSpec("_backward_rmod_scalar", case=_mod_scalar_backward_case,
           ref=lambda g, x, scalar: -g * np.floor(scalar / x),
           nondiff="hidden backward op without a gradient of its own (as MXNet)"),
]
