"""ONNX lowerings of the tensor ops: elementwise and broadcast arithmetic, scalar forms,
unary math, clip, concat/stack/split, flatten/reshape (MXNet's special codes, also with
a dynamic batch), transpose, slicing, reductions, dot products and casts.
"""
from __future__ import annotations


from ..lowering import onnx_lowering
from . import elemwise, matrix, matrix_join, matrix_misc, nn, nn_softmax, norm  # noqa: F401 - the ops lowered here

_BINARY = {"Add": ("elemwise_add", "broadcast_add"), "Sub": ("elemwise_sub", "broadcast_sub"),
           "Mul": ("elemwise_mul", "broadcast_mul"), "Div": ("elemwise_div", "broadcast_div"),
           "Pow": ("_power", "broadcast_power"), "Max": ("_maximum", "broadcast_maximum"),
           "Min": ("_minimum", "broadcast_minimum")}


def _binary(op_type: str):
    def lower(g, node):
        return [g.op(op_type, g.inputs[:2])]
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
        if op_type == "NotEqual":
            return [g.cast(g.op("Not", [g.op("Equal", [a, b])]), g.out_dtypes[0])]
        y = g.op(op_type, [a, b])
        if op_type in ("Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"):
            y = g.cast(y, g.out_dtypes[0])
        return [y]
    return lower


for _name, (_op_type, _rev) in _SCALAR.items():
    onnx_lowering(_name)(_scalar(_op_type, _rev))


_UNARY = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "log": "Log", "sqrt": "Sqrt",
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
