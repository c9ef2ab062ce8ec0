"""ONNX lowerings of the tensor ops: elementwise and broadcast arithmetic, scalar forms,
unary math, clip, concat/stack/split, flatten/reshape (MXNet's special codes, also with
a dynamic batch), transpose, slicing, reductions, dot products and casts.
"""
from __future__ import annotations


import numpy as np

from ..lowering import onnx_lowering
from . import elemwise, init, matrix, matrix_join, matrix_misc, nn, nn_softmax, norm  # noqa: F401 - the ops lowered
from .matrix import _reshape_out

_BINARY = {"Add": ("elemwise_add", "broadcast_add"), "Sub": ("elemwise_sub", "broadcast_sub"),
           "Mul": ("elemwise_mul", "broadcast_mul"), "Div": ("elemwise_div", "broadcast_div"),
           "Pow": ("_power", "broadcast_power"), "Max": ("_maximum", "broadcast_maximum"),
           "Min": ("_minimum", "broadcast_minimum")}


def _binary(op_type: str):
    def lower(g, node):
        a, b = g.inputs[:2]
        if op_type == "Pow" and np.issubdtype(g.in_dtypes[0], np.integer):  # MXNet: x ** max(y, 0) on ints
            b = g.op("Max", [b, g.scalar(0, g.in_dtypes[1])])
        return [g.op(op_type, [a, b])]
    return lower


for _op_type, _names in _BINARY.items():
    onnx_lowering(*_names)(_binary(_op_type))


_COMPARE = {"Equal": ("_equal", "broadcast_equal"), "Greater": ("_greater", "broadcast_greater"),
            "Less": ("_lesser", "broadcast_lesser"),
            "GreaterOrEqual": ("_greater_equal", "broadcast_greater_equal"),
            "LessOrEqual": ("_lesser_equal", "broadcast_lesser_equal"),
            "NotEqual": ("_not_equal", "broadcast_not_equal")}


def _compare(op_type: str):
    def lower(g, node):
        a, b = g.inputs[:2]
        if op_type == "NotEqual":
            y = g.op("Not", [g.op("Equal", [a, b])])
        else:
            y = g.op(op_type, [a, b])
        return [g.cast(y, g.out_dtypes[0])]  # MXNet's comparisons give 0/1 of the input dtype
    return lower


for _op_type, _names in _COMPARE.items():
    onnx_lowering(*_names)(_compare(_op_type))


# scalar forms: (ONNX op, scalar first?)
_SCALAR = {"_plus_scalar": ("Add", False), "_minus_scalar": ("Sub", False), "_rminus_scalar": ("Sub", True),
           "_mul_scalar": ("Mul", False), "_div_scalar": ("Div", False), "_rdiv_scalar": ("Div", True),
           "_power_scalar": ("Pow", False), "_rpower_scalar": ("Pow", True),
           "_maximum_scalar": ("Max", False), "_minimum_scalar": ("Min", False),
           "_equal_scalar": ("Equal", False), "_greater_scalar": ("Greater", False),
           "_lesser_scalar": ("Less", False), "_greater_equal_scalar": ("GreaterOrEqual", False),
           "_lesser_equal_scalar": ("LessOrEqual", False), "_not_equal_scalar": ("NotEqual", False)}


def _scalar(op_type: str, reverse: bool):
    def lower(g, node):
        dt = g.in_dtypes[0]
        s = g.scalar(float(node.attrs.scalar), dt)
        a, b = (s, g.inputs[0]) if reverse else (g.inputs[0], s)
        if op_type == "Pow" and np.issubdtype(dt, np.integer):  # MXNet: x ** max(y, 0) on ints
            b = g.op("Max", [b, g.scalar(0, dt)])
        if op_type == "NotEqual":
            return [g.cast(g.op("Not", [g.op("Equal", [a, b])]), g.out_dtypes[0])]
        y = g.op(op_type, [a, b])
        if op_type in ("Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"):
            y = g.cast(y, g.out_dtypes[0])
        return [y]
    return lower


for _name, (_op_type, _rev) in _SCALAR.items():
    onnx_lowering(_name)(_scalar(_op_type, _rev))


_UNARY = {"sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "log": "Log", "sqrt": "Sqrt",
          "abs": "Abs", "negative": "Neg", "floor": "Floor", "ceil": "Ceil", "sin": "Sin", "cos": "Cos",
          "tan": "Tan", "arcsin": "Asin", "arccos": "Acos", "arctan": "Atan", "sinh": "Sinh", "cosh": "Cosh",
          "arcsinh": "Asinh", "arccosh": "Acosh", "arctanh": "Atanh", "reciprocal": "Reciprocal",
          "sign": "Sign", "erf": "Erf", "_copy": "Identity", "softsign": "Softsign",
          "BlockGrad": "Identity", "make_loss": "Identity"}


def _unary(op_type: str):
    def lower(g, node):
        return [g.op(op_type, [g.inputs[0]])]
    return lower


for _name, _op_type in _UNARY.items():
    onnx_lowering(_name)(_unary(_op_type))


@onnx_lowering("relu")
def _relu(g, node):
    if np.issubdtype(g.in_dtypes[0], np.integer):  # onnxruntime's Relu is float only
        return [g.op("Max", [g.inputs[0], g.scalar(0, g.in_dtypes[0])])]
    return [g.op("Relu", [g.inputs[0]])]


@onnx_lowering("square")
def _square(g, node):
    return [g.op("Mul", [g.inputs[0], g.inputs[0]])]


@onnx_lowering("rsqrt")
def _rsqrt(g, node):
    return [g.op("Reciprocal", [g.op("Sqrt", [g.inputs[0]])])]


@onnx_lowering("clip")
def _clip(g, node):
    a, dt = node.attrs, g.in_dtypes[0]
    return [g.op("Clip", [g.inputs[0], g.scalar(a.a_min, dt), g.scalar(a.a_max, dt)])]


@onnx_lowering("Concat")
def _concat(g, node):
    ndim = len(g.in_shapes[0])
    dim = node.attrs.dim
    return [g.op("Concat", g.inputs, axis=int(dim + ndim if dim < 0 else dim))]


@onnx_lowering("add_n")
def _add_n(g, node):
    return [g.op("Sum", g.inputs)] if len(g.inputs) > 1 else [g.op("Identity", g.inputs)]


@onnx_lowering("Flatten")
def _flatten(g, node):
    return [g.op("Flatten", [g.inputs[0]], axis=1)]


@onnx_lowering("Cast")
def _cast(g, node):
    return [g.cast(g.inputs[0], node.attrs.dtype)]


# -- shapes ---------------------------------------------------------------------------------

def _dependencies(infer, shape: tuple) -> tuple[tuple, list[list[int]]]:
    """The output shape at `shape`, and for each output dim the input dims it scales with.

    Doubling one input dim at a time and watching which output dims double finds how
    MXNet's codes (0, -1, -2, -3, -4, or any rule) move dims, without re-deriving them."""
    base = tuple(infer(tuple(shape)))
    deps: list[list[int]] = [[] for _ in base]
    for i in range(len(shape)):
        bigger = list(shape)
        bigger[i] *= 2
        try:
            out = tuple(infer(tuple(bigger)))
        except (ValueError, ArithmeticError):
            continue  # this input dim cannot vary under the codes (an exact split): it stays fixed
        if len(out) != len(base):
            continue
        for j, (a, b) in enumerate(zip(base, out)):
            if b == 2 * a and a != 0:
                deps[j].append(i)
    return base, deps


def dynamic_shape(g, x: str, in_shape: tuple, infer) -> str:
    """The target-shape tensor of a reshape of `x` whose rule is `infer(input shape) -> output shape`.

    Static exports bake the shape; dynamic ones compute every dim that scales with an input
    dim from `Shape(x)` (one of them as -1), so a symbolic batch flows through any code."""
    base, deps = _dependencies(infer, in_shape)
    if not g.dynamic or not any(deps):
        return g.ints(base)
    moving = [j for j, d in enumerate(deps) if d]
    if len(moving) == 1:
        return g.ints([-1 if j == moving[0] else d for j, d in enumerate(base)])
    shape = g.op("Shape", [x])
    parts = []
    for j, d in enumerate(base):
        if not deps[j] or j == moving[-1]:
            parts.append(g.ints([-1 if deps[j] else d]))
            continue
        dims = g.op("Gather", [shape, g.ints(deps[j], "dims")], axis=0)
        size = g.axes_op("ReduceProd", dims, [0], keepdims=1)
        scale = int(np.prod([in_shape[i] for i in deps[j]]))
        if d != scale:
            size = g.op("Div", [g.op("Mul", [size, g.ints([d])]), g.ints([scale])])
        parts.append(size)
    return g.op("Concat", parts, axis=0)


@onnx_lowering("Reshape")
def _reshape_op(g, node):
    a = node.attrs
    target = dynamic_shape(g, g.inputs[0], tuple(g.in_shapes[0]), lambda s: _reshape_out(a, s))
    return [g.op("Reshape", [g.inputs[0], target])]


@onnx_lowering("_rnn_param_concat")
def _rnn_param_concat(g, node):
    return _concat(g, node)


# -- creation ---------------------------------------------------------------------------------

def _filled(value_of):
    def lower(g, node):
        return [g.fill(g.out_shape_tensor(0), value_of(node.attrs), g.out_dtypes[0])]
    return lower


onnx_lowering("_zeros", "_empty")(_filled(lambda a: 0))
onnx_lowering("_ones")(_filled(lambda a: 1))
onnx_lowering("_full")(_filled(lambda a: a.value))


@onnx_lowering("zeros_like", "ones_like")
def _fill_like(g, node):
    value = 0 if node.op.name == "zeros_like" else 1
    return [g.fill(g.op("Shape", [g.inputs[0]]), value, g.in_dtypes[0])]


@onnx_lowering("_arange", note="written as its values (a constant)")
def _arange(g, node):
    a = node.attrs
    start, stop = (0.0, a.start) if a.stop is None else (a.start, a.stop)
    n = len(range(0, max(int(np.ceil((stop - start) / a.step)), 0)))
    vals = (start + a.step * np.arange(n, dtype=np.float64)).astype(a.dtype or "float32")
    return [g.op("Identity", [g.const(np.repeat(vals, a.repeat), hint="arange")])]


@onnx_lowering("_contrib_arange_like", note="Range over the input's size, so it follows a dynamic batch")
def _arange_like(g, node):
    a, shape = node.attrs, g.in_shapes[0]
    if a.axis is None:
        n = g.op("Size", [g.inputs[0]])
    else:
        axis = a.axis % len(shape)
        n = g.axes_op("Squeeze", g.shape_of(g.inputs[0], axis, axis + 1), [0])
    k = g.op("Range", [g.const(np.int64(0)), n, g.const(np.int64(1))])
    if a.repeat != 1:
        k = g.op("Div", [k, g.const(np.int64(a.repeat))])  # non-negative: integer Div floors
    # start + step * k in float64, cast to the input's dtype, as MXNet computes it in double
    y = g.op("Mul", [g.scalar(a.step, np.float64), g.cast(k, "float64")])
    y = g.op("Add", [g.scalar(a.start, np.float64), y])
    y = g.cast(y, g.out_dtypes[0])
    return [y if a.axis is not None else g.op("Reshape", [y, g.shape_of(g.inputs[0])])]


# -- more elementwise math -----------------------------------------------------------------------

def _math(fn):
    def lower(g, node):
        return [fn(g, g.inputs[0], g.in_dtypes[0], node.attrs)]
    return lower


def _sign_abs(g, x, inner):
    return g.op("Mul", [g.op("Sign", [x]), inner(g.op("Abs", [x]))])


_MATH = {
    "log1p": lambda g, x, dt, a: g.op("Log", [g.op("Add", [x, g.scalar(1, dt)])]),
    "expm1": lambda g, x, dt, a: g.op("Sub", [g.op("Exp", [x]), g.scalar(1, dt)]),
    "log2": lambda g, x, dt, a: g.op("Div", [g.op("Log", [x]), g.scalar(np.log(2.0), dt)]),
    "log10": lambda g, x, dt, a: g.op("Div", [g.op("Log", [x]), g.scalar(np.log(10.0), dt)]),
    "degrees": lambda g, x, dt, a: g.op("Mul", [x, g.scalar(180.0 / np.pi, dt)]),
    "radians": lambda g, x, dt, a: g.op("Mul", [x, g.scalar(np.pi / 180.0, dt)]),
    # mshadow's rint sends ties to the floor: ceil(x - 0.5)
    "rint": lambda g, x, dt, a: g.op("Ceil", [g.op("Sub", [x, g.scalar(0.5, dt)])]),
    # MXNet rounds half away from zero; ONNX's Round is half to even
    "round": lambda g, x, dt, a: _sign_abs(g, x, lambda v: g.op("Floor", [g.op("Add", [v, g.scalar(0.5, dt)])])),
    "trunc": lambda g, x, dt, a: _sign_abs(g, x, lambda v: g.op("Floor", [v])),
    "fix": lambda g, x, dt, a: _sign_abs(g, x, lambda v: g.op("Floor", [v])),
    "cbrt": lambda g, x, dt, a: _sign_abs(g, x, lambda v: g.op("Pow", [v, g.scalar(1 / 3, dt)])),
    "rcbrt": lambda g, x, dt, a: g.op("Reciprocal", [_sign_abs(g, x, lambda v: g.op("Pow", [v, g.scalar(1 / 3, dt)]))]),
    "logical_not": lambda g, x, dt, a: g.cast(g.op("Not", [g.cast(x, "bool")]), dt),
    "hard_sigmoid": lambda g, x, dt, a: g.op("HardSigmoid", [x], alpha=float(a.alpha), beta=float(a.beta)),
    "softmin": lambda g, x, dt, a: g.op("Softmax", [g.op("Div", [x, g.scalar(-(a.temperature or 1.0), dt)])],
                                        axis=int(a.axis)),
    "_contrib_div_sqrt_dim": lambda g, x, dt, a: g.op("Div", [x, g.op("Sqrt", [g.cast(
        g.op("Shape", [x], start=-1), dt)])]),
    "smooth_l1": lambda g, x, dt, a: _smooth_l1(g, x, dt, float(a.scalar)),
}


def _smooth_l1(g, x, dt, sigma):
    s2 = sigma * sigma
    ax = g.op("Abs", [x])
    small = g.op("Mul", [g.op("Mul", [x, x]), g.scalar(0.5 * s2, dt)])
    big = g.op("Sub", [ax, g.scalar(0.5 / s2, dt)])
    return g.op("Where", [g.op("Less", [ax, g.scalar(1.0 / s2, dt)]), small, big])


for _name, _fn in _MATH.items():
    onnx_lowering(_name)(_math(_fn))


def _logical(op_type: str, scalar: bool):
    def lower(g, node):
        dt = g.in_dtypes[0]
        rhs = g.scalar(float(node.attrs.scalar), dt) if scalar else g.inputs[1]
        y = g.op(op_type, [g.cast(g.inputs[0], "bool"), g.cast(rhs, "bool")])
        return [g.cast(y, g.out_dtypes[0])]
    return lower


for _op_type, _names in {"And": ("_logical_and", "broadcast_logical_and"),
                         "Or": ("_logical_or", "broadcast_logical_or"),
                         "Xor": ("_logical_xor", "broadcast_logical_xor")}.items():
    onnx_lowering(*_names)(_logical(_op_type, False))
    onnx_lowering(_names[0] + "_scalar")(_logical(_op_type, True))


def _mod_values(g, x, y, dt):
    """numpy's mod (the sign of the divisor), which MXNet's mod follows, with x % 0 = 0."""
    zero = g.scalar(0, dt)
    is_zero = g.op("Equal", [y, zero])
    safe = g.op("Where", [is_zero, g.scalar(1, dt), y])
    if np.issubdtype(dt, np.integer):
        r = g.op("Mod", [x, safe], fmod=0)
    else:
        r = g.op("Sub", [x, g.op("Mul", [g.op("Floor", [g.op("Div", [x, safe])]), safe])])
    return g.op("Where", [is_zero, zero, r])


@onnx_lowering("_mod", "broadcast_mod")
def _mod(g, node):
    return [_mod_values(g, g.inputs[0], g.inputs[1], g.in_dtypes[0])]


@onnx_lowering("_mod_scalar", "_rmod_scalar")
def _mod_scalar(g, node):
    s, x = g.scalar(float(node.attrs.scalar), g.in_dtypes[0]), g.inputs[0]
    a, b = (x, s) if node.op.name == "_mod_scalar" else (s, x)
    return [_mod_values(g, a, b, g.in_dtypes[0])]


@onnx_lowering("_hypot", "broadcast_hypot")
def _hypot(g, node):
    x, y = g.inputs[:2]
    return [g.op("Sqrt", [g.op("Add", [g.op("Mul", [x, x]), g.op("Mul", [y, y])])])]


@onnx_lowering("_hypot_scalar")
def _hypot_scalar(g, node):
    x, s = g.inputs[0], float(node.attrs.scalar)
    return [g.op("Sqrt", [g.op("Add", [g.op("Mul", [x, x]), g.scalar(s * s, g.in_dtypes[0])])])]


@onnx_lowering("LinearRegressionOutput", "MAERegressionOutput", note="inference: the prediction")
def _regression(g, node):
    return [g.op("Identity", [g.inputs[0]])]


@onnx_lowering("LogisticRegressionOutput", note="inference: sigmoid of the prediction")
def _logistic(g, node):
    return [g.op("Sigmoid", [g.inputs[0]])]


@onnx_lowering("MakeLoss", note="inference: its input")
def _make_loss(g, node):
    return [g.op("Identity", [g.inputs[0]])]


@onnx_lowering("reshape_like")
def _reshape_like(g, node):
    return [g.op("Reshape", [g.inputs[0], g.out_shape_tensor(0)])] if g.dynamic else \
        [g.reshape(g.inputs[0], g.out_shapes[0])]
