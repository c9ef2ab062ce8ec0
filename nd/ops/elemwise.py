"""Elementwise operators: unary math, binary (same-shape and broadcasting),
scalar forms and comparisons.

Each family is a table; one `register` call per row declares the operator
with its kernel, C expression (for fused GPU kernels) and gradient rule.
Gradient rules only call registry operators through `F`.
"""
from __future__ import annotations

import math

import numpy as np

from ..attrs import Attr
from ..registry import ZERO_GRAD, OpDef, add_op, broadcast_shape, same_shape
from . import elemwise_jit, special

# ---------------------------------------------------------------------------
# unary math: name -> (kernel, C expression, gradient(F, g, x, y) or ZERO_GRAD, aliases)


def _ufunc(name):
    return lambda xp, x, out=None: getattr(xp, name)(x, out=out)


def _cast_like(fn):
    """Kernels computing in float64 (special functions) return the input dtype."""
    def run(xp, x, out=None):
        r = fn(xp, x).astype(x.dtype, copy=False)
        if out is None:
            return r
        out[...] = r
        return out
    return run


def _int_safe(name):
    """Rounding ufuncs: identity on integer dtypes (numpy's do too, but keep dtype)."""
    def run(xp, x, out=None):
        if x.dtype.kind in "iub":
            return x.copy() if out is None else xp.copyto(out, x) or out
        return getattr(xp, name)(x, out=out)
    return run


def _relu(xp, x, out=None):
    return xp.maximum(x, x.dtype.type(0), out=out)


def _sigmoid(xp, x, out=None):
    out = xp.negative(x, out=out)
    xp.exp(out, out=out)
    out += 1
    return xp.reciprocal(out, out=out)


def _softsign(xp, x, out=None):
    d = xp.abs(x)
    d += 1
    return xp.divide(x, d, out=out)


def _rsqrt(xp, x, out=None):
    out = xp.sqrt(x, out=out)
    return xp.reciprocal(out, out=out)


def _rcbrt(xp, x, out=None):
    out = xp.cbrt(x, out=out)
    return xp.reciprocal(out, out=out)


def _round(xp, x, out=None):
    # MXNet rounds half away from zero; numpy rounds half to even
    if x.dtype.kind in "iub":
        return x.copy()
    r = xp.floor(xp.abs(x) + x.dtype.type(0.5))
    return xp.multiply(xp.sign(x), r, out=out)


def _rint(xp, x, out=None):
    # mshadow's rint: ties go to the floor (-2.5 -> -3, 1.5 -> 1), unlike numpy's half-to-even
    if x.dtype.kind in "iub":
        return x.copy()
    f = xp.floor(x)
    return xp.where(x - f <= xp.ceil(x) - x, f, f + 1).astype(x.dtype, copy=False)


def _reciprocal(xp, x, out=None):
    if x.dtype.kind in "iu":
        r = (1 // xp.where(x == 0, 1, x)).astype(x.dtype)
        return r
    return xp.reciprocal(x, out=out)


def _logical_not(xp, x, out=None):
    r = (x == 0).astype(x.dtype)
    if out is None:
        return r
    out[...] = r
    return out


def _identity(xp, x, out=None):
    if out is None:
        return x.copy()
    out[...] = x
    return out


UNARY = {
    "abs": (_ufunc("abs"), "abs(x0)", lambda F, g, x, y: F.elemwise_mul(g, F.sign(x)), ()),
    "sign": (_ufunc("sign"), "(x0 > 0) - (x0 < 0)", ZERO_GRAD, ()),
    "negative": (_ufunc("negative"), "-x0", lambda F, g, x, y: F.negative(g), ()),
    "reciprocal": (_reciprocal, "1 / x0",
                   lambda F, g, x, y: F.negative(F.elemwise_mul(g, F.square(y))), ()),
    "square": (_ufunc("square"), "x0 * x0",
               lambda F, g, x, y: F.elemwise_mul(g, F._mul_scalar(x, scalar=2.0)), ()),
    "sqrt": (_ufunc("sqrt"), "sqrt(x0)",
             lambda F, g, x, y: F.elemwise_div(g, F._mul_scalar(y, scalar=2.0)), ()),
    "rsqrt": (_rsqrt, "rsqrt(x0)",
              lambda F, g, x, y: F.elemwise_mul(g, F._mul_scalar(F._power_scalar(y, scalar=3.0), scalar=-0.5)), ()),
    "cbrt": (_ufunc("cbrt"), "cbrt(x0)",
             lambda F, g, x, y: F.elemwise_div(g, F._mul_scalar(F.square(y), scalar=3.0)), ()),
    "rcbrt": (_rcbrt, "rcbrt(x0)",
              lambda F, g, x, y: F.elemwise_mul(g, F._mul_scalar(F.elemwise_div(y, x), scalar=-1.0 / 3)), ()),
    "exp": (_ufunc("exp"), "exp(x0)", lambda F, g, x, y: F.elemwise_mul(g, y), ()),
    "expm1": (_ufunc("expm1"), "expm1(x0)",
              lambda F, g, x, y: F.elemwise_mul(g, F._plus_scalar(y, scalar=1.0)), ()),
    "log": (_ufunc("log"), "log(x0)", lambda F, g, x, y: F.elemwise_div(g, x), ()),
    "log1p": (_ufunc("log1p"), "log1p(x0)",
              lambda F, g, x, y: F.elemwise_div(g, F._plus_scalar(x, scalar=1.0)), ()),
    "log2": (_ufunc("log2"), "log2(x0)",
             lambda F, g, x, y: F.elemwise_div(g, F._mul_scalar(x, scalar=math.log(2))), ()),
    "log10": (_ufunc("log10"), "log10(x0)",
              lambda F, g, x, y: F.elemwise_div(g, F._mul_scalar(x, scalar=math.log(10))), ()),
    "sin": (_ufunc("sin"), "sin(x0)", lambda F, g, x, y: F.elemwise_mul(g, F.cos(x)), ()),
    "cos": (_ufunc("cos"), "cos(x0)", lambda F, g, x, y: F.negative(F.elemwise_mul(g, F.sin(x))), ()),
    "tan": (_ufunc("tan"), "tan(x0)",
            lambda F, g, x, y: F.elemwise_mul(g, F._plus_scalar(F.square(y), scalar=1.0)), ()),
    "arcsin": (_ufunc("arcsin"), "asin(x0)",
               lambda F, g, x, y: F.elemwise_mul(g, F.rsqrt(F._rminus_scalar(F.square(x), scalar=1.0))), ()),
    "arccos": (_ufunc("arccos"), "acos(x0)",
               lambda F, g, x, y: F.negative(
                   F.elemwise_mul(g, F.rsqrt(F._rminus_scalar(F.square(x), scalar=1.0)))), ()),
    "arctan": (_ufunc("arctan"), "atan(x0)",
               lambda F, g, x, y: F.elemwise_div(g, F._plus_scalar(F.square(x), scalar=1.0)), ()),
    "sinh": (_ufunc("sinh"), "sinh(x0)", lambda F, g, x, y: F.elemwise_mul(g, F.cosh(x)), ()),
    "cosh": (_ufunc("cosh"), "cosh(x0)", lambda F, g, x, y: F.elemwise_mul(g, F.sinh(x)), ()),
    "tanh": (_ufunc("tanh"), "tanh(x0)",
             lambda F, g, x, y: F.elemwise_mul(g, F._rminus_scalar(F.square(y), scalar=1.0)), ()),
    "arcsinh": (_ufunc("arcsinh"), "asinh(x0)",
                lambda F, g, x, y: F.elemwise_mul(g, F.rsqrt(F._plus_scalar(F.square(x), scalar=1.0))), ()),
    "arccosh": (_ufunc("arccosh"), "acosh(x0)",
                lambda F, g, x, y: F.elemwise_mul(g, F.rsqrt(F._minus_scalar(F.square(x), scalar=1.0))), ()),
    "arctanh": (_ufunc("arctanh"), "atanh(x0)",
                lambda F, g, x, y: F.elemwise_div(g, F._rminus_scalar(F.square(x), scalar=1.0)), ()),
    "degrees": (_ufunc("degrees"), "x0 * (180.0 / 3.141592653589793)",
                lambda F, g, x, y: F._mul_scalar(g, scalar=180.0 / math.pi), ()),
    "radians": (_ufunc("radians"), "x0 * (3.141592653589793 / 180.0)",
                lambda F, g, x, y: F._mul_scalar(g, scalar=math.pi / 180.0), ()),
    "relu": (_relu, "(x0 > 0 || x0 != x0) ? x0 : 0", lambda F, g, x, y: F._backward_relu(g, y), ()),
    "sigmoid": (_sigmoid, "1 / (1 + exp(-x0))",
                lambda F, g, x, y: F.elemwise_mul(g, F.elemwise_mul(y, F._rminus_scalar(y, scalar=1.0))), ()),
    "softsign": (_softsign, "x0 / (1 + abs(x0))",
                 lambda F, g, x, y: F.elemwise_div(g, F.square(F._plus_scalar(F.abs(x), scalar=1.0))), ()),
    "erf": (_cast_like(special.erf), "erf(x0)",
            lambda F, g, x, y: F.elemwise_mul(g, F._mul_scalar(F.exp(F.negative(F.square(x))),
                                                               scalar=2.0 / math.sqrt(math.pi))), ()),
    "erfinv": (_cast_like(special.erfinv), "erfinv(x0)",
               lambda F, g, x, y: F.elemwise_mul(g, F._mul_scalar(F.exp(F.square(y)),
                                                                  scalar=math.sqrt(math.pi) / 2)), ()),
    "gamma": (_cast_like(special.gamma), "tgamma(x0)",
              lambda F, g, x, y: F.elemwise_mul(g, F.elemwise_mul(y, F._digamma(x))), ()),
    "gammaln": (_cast_like(special.gammaln), "lgamma(x0)",
                lambda F, g, x, y: F.elemwise_mul(g, F._digamma(x)), ()),
    "_digamma": (_cast_like(special.digamma), None, None, ()),
    "floor": (_int_safe("floor"), "floor(x0)", ZERO_GRAD, ()),
    "ceil": (_int_safe("ceil"), "ceil(x0)", ZERO_GRAD, ()),
    "round": (_round, "round(x0)", ZERO_GRAD, ()),
    "rint": (_rint, "rint(x0)", ZERO_GRAD, ()),
    "fix": (_int_safe("fix"), "trunc(x0)", ZERO_GRAD, ()),
    "trunc": (_int_safe("trunc"), "trunc(x0)", ZERO_GRAD, ()),
    "logical_not": (_logical_not, "x0 == 0", ZERO_GRAD, ()),
    "_copy": (_identity, "x0", lambda F, g, x, y: g, ("identity",)),
    "BlockGrad": (_identity, "x0", ZERO_GRAD, ("stop_gradient",)),
}


def _unary_gradient(rule):
    if rule is None or rule == ZERO_GRAD:
        return rule

    def gradient(F, a, inputs, outputs, ograds):
        return [rule(F, ograds[0], inputs[0], outputs[0])]
    return gradient


def _unary_forward(fn):
    def forward(xp, a, x, out=None):
        return (fn(xp, x, None if out is None else out[0]),)
    return forward


for _name, (_fn, _cexpr, _rule, _aliases) in UNARY.items():
    add_op(OpDef(_name, monitor_inputs="input", aliases=_aliases, inputs=("data",), forward=_unary_forward(_fn),
                 infer_shape=same_shape, gradient=_unary_gradient(_rule), elementwise=True,
                 inplace=((0, 0),), writes_out=True, cexpr=_cexpr,
                 doc=f"Computes {_name} elementwise."))

# ---------------------------------------------------------------------------
# binary math shared by the same-shape (elemwise_*), broadcast_* and scalar forms.
# name -> (kernel(xp, l, r, out), C expr, gradient(F, g, l, r, y) -> (gl, gr) | ZERO_GRAD)


def _np2(name):
    return lambda xp, lhs, rhs, out=None: getattr(xp, name)(lhs, rhs, out=out)


def _div(xp, lhs, rhs, out=None):
    if lhs.dtype.kind in "iu":
        with np.errstate(divide="ignore", invalid="ignore"):
            return xp.trunc(xp.true_divide(lhs, rhs)).astype(lhs.dtype)
    return xp.divide(lhs, rhs, out=out)


def _mod(xp, lhs, rhs, out=None):
    # MXNet's mod follows the sign of the divisor (like numpy), with x % 0 = 0
    if lhs.dtype.kind in "iu":
        safe = xp.where(rhs == 0, 1, rhs)
        return xp.where(rhs == 0, 0, xp.mod(lhs, safe)).astype(lhs.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = xp.mod(lhs, rhs)
    return xp.where(rhs == 0, lhs.dtype.type(0), r).astype(lhs.dtype, copy=False)


def _power(xp, lhs, rhs, out=None):
    if lhs.dtype.kind in "iu":
        return xp.power(lhs, xp.maximum(rhs, 0)).astype(lhs.dtype)
    return xp.power(lhs, rhs, out=out)


def _cmp(name):
    def run(xp, lhs, rhs, out=None):
        r = getattr(xp, name)(lhs, rhs)
        dt = lhs.dtype if hasattr(lhs, "dtype") else rhs.dtype
        return r.astype(dt)
    return run


def _logical(name):
    def run(xp, lhs, rhs, out=None):
        r = getattr(xp, name)(lhs != 0, rhs != 0)
        dt = lhs.dtype if hasattr(lhs, "dtype") else rhs.dtype
        return r.astype(dt)
    return run


BINARY = {
    "add": (_np2("add"), "x0 + x1", lambda F, g, lhs, rhs, y: (g, g)),
    "sub": (_np2("subtract"), "x0 - x1", lambda F, g, lhs, rhs, y: (g, F.negative(g))),
    "mul": (_np2("multiply"), "x0 * x1",
            lambda F, g, lhs, rhs, y: (F.elemwise_mul(g, rhs), F.elemwise_mul(g, lhs))),
    "div": (_div, "x0 / x1",
            lambda F, g, lhs, rhs, y: (F.elemwise_div(g, rhs),
                                       F.negative(F.elemwise_div(F.elemwise_mul(g, y), rhs)))),
    "mod": (_mod, "fmod(x0, x1)",
            lambda F, g, lhs, rhs, y: tuple(F._backward_mod(g, lhs, rhs))),   # dtype-dependent: mod_grad.py
    "power": (_power, "pow(x0, x1)",
              lambda F, g, lhs, rhs, y: (
                  F.elemwise_mul(g, F.elemwise_mul(rhs, F.elemwise_div(y, lhs))),
                  F.elemwise_mul(g, F.elemwise_mul(y, F.log(lhs))))),
    "maximum": (_np2("maximum"), "max(x0, x1)",
                lambda F, g, lhs, rhs, y: (F.elemwise_mul(g, F._greater_equal(lhs, rhs)),
                                           F.elemwise_mul(g, F._lesser(lhs, rhs)))),
    "minimum": (_np2("minimum"), "min(x0, x1)",
                lambda F, g, lhs, rhs, y: (F.elemwise_mul(g, F._lesser_equal(lhs, rhs)),
                                           F.elemwise_mul(g, F._greater(lhs, rhs)))),
    "hypot": (_np2("hypot"), "hypot(x0, x1)",
              lambda F, g, lhs, rhs, y: (F.elemwise_mul(g, F.elemwise_div(lhs, y)),
                                         F.elemwise_mul(g, F.elemwise_div(rhs, y)))),
    "equal": (_cmp("equal"), "x0 == x1", ZERO_GRAD),
    "not_equal": (_cmp("not_equal"), "x0 != x1", ZERO_GRAD),
    "greater": (_cmp("greater"), "x0 > x1", ZERO_GRAD),
    "greater_equal": (_cmp("greater_equal"), "x0 >= x1", ZERO_GRAD),
    "lesser": (_cmp("less"), "x0 < x1", ZERO_GRAD),
    "lesser_equal": (_cmp("less_equal"), "x0 <= x1", ZERO_GRAD),
    "logical_and": (_logical("logical_and"), "(x0 != 0) && (x1 != 0)", ZERO_GRAD),
    "logical_or": (_logical("logical_or"), "(x0 != 0) || (x1 != 0)", ZERO_GRAD),
    "logical_xor": (_logical("logical_xor"), "(x0 != 0) != (x1 != 0)", ZERO_GRAD),
}

# same-shape names as MXNet registers them: canonical name, aliases
SAME_SHAPE_NAMES = {
    "add": ("elemwise_add", ("_plus", "_Plus", "_add")),
    "sub": ("elemwise_sub", ("_minus", "_Minus", "_sub")),
    "mul": ("elemwise_mul", ("_mul", "_Mul")),
    "div": ("elemwise_div", ("_div", "_Div")),
    "mod": ("_mod", ("_Mod",)),
    "power": ("_power", ("_Power", "pow")),
    "maximum": ("_maximum", ("_Maximum",)),
    "minimum": ("_minimum", ("_Minimum",)),
    "hypot": ("_hypot", ("_Hypot",)),
    "equal": ("_equal", ("_Equal",)),
    "not_equal": ("_not_equal", ("_Not_Equal",)),
    "greater": ("_greater", ("_Greater",)),
    "greater_equal": ("_greater_equal", ("_Greater_Equal",)),
    "lesser": ("_lesser", ("_Lesser",)),
    "lesser_equal": ("_lesser_equal", ("_Lesser_Equal",)),
    "logical_and": ("_logical_and", ("_Logical_And",)),
    "logical_or": ("_logical_or", ("_Logical_Or",)),
    "logical_xor": ("_logical_xor", ("_Logical_Xor",)),
}
BROADCAST_ALIASES = {"add": ("broadcast_plus",), "sub": ("broadcast_minus",)}


def _binary_forward(fn):
    def forward(xp, a, lhs, rhs, out=None):
        return (fn(xp, lhs, rhs, None if out is None else out[0]),)
    return forward


_RULES_WITHOUT_OPERANDS = {"add", "sub"}


def _binary_gradient(key: str, rule, unbroadcast: bool):
    if rule == ZERO_GRAD:
        return ZERO_GRAD
    needs_operands = unbroadcast and key not in _RULES_WITHOUT_OPERANDS

    def gradient(F, a, inputs, outputs, ograds):
        lhs, rhs = inputs
        y = outputs[0]
        if needs_operands:  # the same-shape rules need operands of the output's shape
            lhs_b, rhs_b = F.broadcast_like(lhs, y), F.broadcast_like(rhs, y)
        else:
            lhs_b, rhs_b = lhs, rhs
        gl, gr = rule(F, ograds[0], lhs_b, rhs_b, y)
        if unbroadcast:
            return [F._sum_to_like(gl, lhs), F._sum_to_like(gr, rhs)]
        return [gl, gr]
    return gradient


# numpy ufuncs equal to the kernel for two arrays of any one dtype (eager fast path)
_FLOAT_UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
                 "minimum": np.minimum}

for _key, (_fn, _cexpr, _rule) in BINARY.items():
    _name, _aliases = SAME_SHAPE_NAMES[_key]
    add_op(OpDef(_name, aliases=_aliases, inputs=("lhs", "rhs"), forward=_binary_forward(_fn),
                 infer_shape=same_shape, gradient=_binary_gradient(_key, _rule, False), elementwise=True,
                 inplace=((0, 0), (1, 0)), writes_out=True, cexpr=_cexpr, hint=_name,
                 doc=f"{_key} of two arrays of the same shape, elementwise."))
    add_op(OpDef("broadcast_" + _key, aliases=BROADCAST_ALIASES.get(_key, ()), inputs=("lhs", "rhs"),
                 forward=_binary_forward(_fn), infer_shape=broadcast_shape, ufunc=_FLOAT_UFUNCS.get(_key),
                 gradient=_binary_gradient(_key, _rule, True), elementwise=True, cexpr=_cexpr,
                 doc=f"{_key} of two arrays with numpy-style broadcasting."))



def _backward_relu(xp, a, lhs, rhs, out=None):
    """ograd * relu'(rhs), rhs being relu's output: the step is 1 above zero, 0 at or below it
    and NaN for NaN, which is MXNet's relu_grad (a NaN input gives a NaN gradient).

    max(sign(rhs), 0) is that step (`maximum` keeps NaN); it is heaviside(rhs, 0), computed
    about 4x faster than numpy's heaviside. With the [jit] extra, large float arrays take one
    compiled pass of the same arithmetic (elemwise_jit.py)."""
    dst = None if out is None else out[0]
    if xp is np and elemwise_jit.applies(lhs, rhs, *(() if dst is None else (dst,))):
        compiled = elemwise_jit.kernels()
        if compiled is not None:
            res = np.empty_like(lhs) if dst is None else dst
            compiled.relu_grad(lhs.reshape(-1), rhs.reshape(-1), res.reshape(-1))
            return (res,)
    if rhs.dtype.kind == "f":
        step = xp.sign(rhs)
        xp.maximum(step, rhs.dtype.type(0), out=step)
    else:
        step = rhs > 0
    return (xp.multiply(lhs, step, out=None if out is None else out[0]),)


def _backward_relu_gradient(F, a, inputs, outputs, ograds):
    """Linear in the head gradient; piecewise constant in the output (MXNet's rule)."""
    return [F._backward_relu(ograds[0], inputs[1]), F.zeros_like(inputs[1])]


add_op(OpDef("_backward_relu", inputs=("lhs", "rhs"), forward=_backward_relu, infer_shape=same_shape,
             gradient=_backward_relu_gradient, elementwise=True, inplace=((0, 0), (1, 0)), writes_out=True,
             cexpr="x1 > 0 ? x0 : (x1 != x1 ? x1 : x0 * 0)", public=False,
             doc="relu's gradient: lhs (the head gradient) where rhs (relu's output) > 0, NaN where it "
                 "is NaN, else 0."))

# MXNet's hints for the same-shape ops (`x + y` on Symbols is named `_plus0`)
for _key, _hint in (("elemwise_add", "_plus"), ("elemwise_sub", "_minus"), ("elemwise_mul", "_mul"),
                    ("elemwise_div", "_div")):
    from ..registry import get_op as _get_op  # noqa: E402
    _get_op(_key).hint = _hint


# ---------------------------------------------------------------------------
# scalar forms: one array and the `scalar` attribute


def _scalar_of(x, s):
    """The scalar cast to the array's dtype first, as MXNet's DType(scalar)."""
    return x.dtype.type(s)


def _scalar_forward(fn, reverse: bool):
    def forward(xp, a, x, out=None):
        s = _scalar_of(x, a.scalar)
        o = None if out is None else out[0]
        return (fn(xp, s, x, o) if reverse else fn(xp, x, s, o),)
    return forward


SCALAR_RULES = {
    "_plus_scalar": lambda F, a, g, x, y: g,
    "_minus_scalar": lambda F, a, g, x, y: g,
    "_rminus_scalar": lambda F, a, g, x, y: F.negative(g),
    "_mul_scalar": lambda F, a, g, x, y: F._mul_scalar(g, scalar=a.scalar),
    "_div_scalar": lambda F, a, g, x, y: F._div_scalar(g, scalar=a.scalar),
    "_rdiv_scalar": lambda F, a, g, x, y: F.negative(F.elemwise_mul(g, F.elemwise_div(y, x))),
    "_mod_scalar": lambda F, a, g, x, y: F._backward_mod_scalar(g, x, scalar=a.scalar),
    "_rmod_scalar": lambda F, a, g, x, y: F._backward_rmod_scalar(g, x, scalar=a.scalar),
    "_power_scalar": lambda F, a, g, x, y: F.elemwise_mul(
        g, F._mul_scalar(F._power_scalar(x, scalar=a.scalar - 1), scalar=a.scalar)),
    "_rpower_scalar": lambda F, a, g, x, y: F.elemwise_mul(g, F._mul_scalar(y, scalar=math.log(a.scalar))),
    "_maximum_scalar": lambda F, a, g, x, y: F.elemwise_mul(g, F._greater_equal_scalar(x, scalar=a.scalar)),
    "_minimum_scalar": lambda F, a, g, x, y: F.elemwise_mul(g, F._lesser_equal_scalar(x, scalar=a.scalar)),
    "_hypot_scalar": lambda F, a, g, x, y: F.elemwise_mul(g, F.elemwise_div(x, y)),
}
# scalar op name -> (binary key, reversed, aliases)
SCALAR_OPS = {
    "_plus_scalar": ("add", False, ("_PlusScalar",)),
    "_minus_scalar": ("sub", False, ("_MinusScalar",)),
    "_rminus_scalar": ("sub", True, ("_RMinusScalar",)),
    "_mul_scalar": ("mul", False, ("_MulScalar",)),
    "_div_scalar": ("div", False, ("_DivScalar",)),
    "_rdiv_scalar": ("div", True, ("_RDivScalar",)),
    "_mod_scalar": ("mod", False, ("_ModScalar",)),
    "_rmod_scalar": ("mod", True, ("_RModScalar",)),
    "_power_scalar": ("power", False, ("_PowerScalar",)),
    "_rpower_scalar": ("power", True, ("_RPowerScalar",)),
    "_maximum_scalar": ("maximum", False, ("_MaximumScalar",)),
    "_minimum_scalar": ("minimum", False, ("_MinimumScalar",)),
    "_hypot_scalar": ("hypot", False, ("_HypotScalar",)),
    "_equal_scalar": ("equal", False, ("_EqualScalar",)),
    "_not_equal_scalar": ("not_equal", False, ("_NotEqualScalar",)),
    "_greater_scalar": ("greater", False, ("_GreaterScalar",)),
    "_greater_equal_scalar": ("greater_equal", False, ("_GreaterEqualScalar",)),
    "_lesser_scalar": ("lesser", False, ("_LesserScalar",)),
    "_lesser_equal_scalar": ("lesser_equal", False, ("_LesserEqualScalar",)),
    "_logical_and_scalar": ("logical_and", False, ("_LogicalAndScalar",)),
    "_logical_or_scalar": ("logical_or", False, ("_LogicalOrScalar",)),
    "_logical_xor_scalar": ("logical_xor", False, ("_LogicalXorScalar",)),
}


def _scalar_gradient(rule):
    if rule is None:
        return ZERO_GRAD

    def gradient(F, a, inputs, outputs, ograds):
        return [rule(F, a, ograds[0], inputs[0], outputs[0])]
    return gradient


def _scalar_cexpr(expr: str, reverse: bool) -> str:
    """The binary C expression with the scalar in place of one operand."""
    if reverse:
        return expr.replace("x0", "scalar").replace("x1", "x0")
    return expr.replace("x1", "scalar")


for _name, (_key, _rev, _aliases) in SCALAR_OPS.items():
    _fn, _cexpr, _ = BINARY[_key]
    add_op(OpDef(_name, monitor_inputs="input", aliases=_aliases, inputs=("data",), forward=_scalar_forward(_fn, _rev),
                 attrs={"scalar": Attr("float", 1.0, "Scalar input value.", fmt=str),
                        "is_int": Attr("bool", True, "Whether the scalar is an integer (numpy front end).")},
                 infer_shape=same_shape, gradient=_scalar_gradient(SCALAR_RULES.get(_name)),
                 elementwise=True, inplace=((0, 0),), writes_out=True,
                 cexpr=_scalar_cexpr(_cexpr, _rev),
                 hint=_name.replace("_scalar", "scalar"),
                 doc=f"Elementwise {_key} of an array and a scalar" + (" (reversed)." if _rev else ".")))

# ---------------------------------------------------------------------------
# algebraic identities the simplify pass reads: output 0 equals input 0 (value and gradient)


def _always(a, is_train, shape):
    return True


def _scalar_is(value):
    return lambda a, is_train, shape: a.scalar == value


_IDENTITY_WHEN = {
    "_copy": _always,
    "BlockGrad": lambda a, is_train, shape: not is_train,  # its zero gradient matters in training only
    "_plus_scalar": _scalar_is(0.0), "_minus_scalar": _scalar_is(0.0),
    "_mul_scalar": _scalar_is(1.0), "_div_scalar": _scalar_is(1.0), "_power_scalar": _scalar_is(1.0),
}
for _name, _rule in _IDENTITY_WHEN.items():
    _get_op(_name).identity_when = _rule
