"""Neural-network layers and activations (MXNet 1.9.1 semantics).

FullyConnected, Activation, smooth_l1, hard_sigmoid, Dropout and _contrib_div_sqrt_dim,
plus the small helpers shared with nn_softmax.py (the softmax family and the loss-style
output layers) and nn_leaky.py (LeakyReLU).

Gradient rules only call registry operators through `F`. Where MXNet's
backward is heavy (FullyConnected), a hidden `_backward_*` operator carries
the kernel; those are ordinary registry entries. FullyConnected's data
gradient also has a node of its own (`_backward_FullyConnected_data`, with
`_backward_FullyConnected_weight` for the parameters), used on graph inputs
so that dead-code elimination drops a data gradient nobody asks for.
FullyConnected, its backward ops and Activation write into `out=` buffers
(Activation in place) for the compiled plans. Deliberate differences from
MXNet 1.9.1:

* Dropout with p=1 outputs zeros (MXNet gives NaN from 0 * 1/0).
"""
from __future__ import annotations

import math
import numpy as np

from .. import rng
from ..attrs import Attr
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import merge_shape, register, same_shape

# ---------------------------------------------------------------------------
# small shared helpers


def _given(a) -> dict:
    """The attributes a call gave (MXNet strings), without hidden `__x__` ones."""
    return {k: v for k, v in a.given.items() if not (k.startswith("__") and k.endswith("__"))}


def _merge(op: str, name: str, got, want):
    """Unify an input's shape with the one the operator expects, naming both on failure."""
    try:
        return merge_shape(got, want)
    except ShapeError:
        raise ShapeError(f"operator {op}: input {name!r} has shape {tuple(got)}, "
                         f"expected {tuple(want)}") from None


def _prod(dims) -> int:
    out = 1
    for d in dims:
        out *= d
    return out


def _norm_axis(op: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise AttrError(f"operator {op}: axis {axis} is out of range for an input with {ndim} "
                        f"dimension(s); expected -{ndim} <= axis < {ndim}")
    return axis % ndim


def _select(F, m, pos, neg):
    """`m * pos + (1 - m) * neg` for a 0/1 mask `m` (a differentiable where)."""
    return F.elemwise_add(F.elemwise_mul(m, pos), F.elemwise_mul(F._rminus_scalar(m, scalar=1.0), neg))


def _positive(F, x):
    """1 where x > 0, else 0 (its gradient is zero)."""
    return F._greater_scalar(x, scalar=0.0)


def _sigmoid(xp, x):
    """Overflow-free logistic function in the input's dtype."""
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


# ---------------------------------------------------------------------------
# FullyConnected


def _fc_inputs(a) -> tuple:
    return ("data", "weight") if a.no_bias else ("data", "weight", "bias")


def _fc_rows(a, dshape: tuple) -> tuple:
    """The 2-D (rows, K) view of the data that the product uses."""
    if a.flatten:
        return (dshape[0], _prod(dshape[1:]))
    return (_prod(dshape[:-1]), dshape[-1])


def _fc_out_shape(a, dshape: tuple) -> tuple:
    return (dshape[0], a.num_hidden) if a.flatten else tuple(dshape[:-1]) + (a.num_hidden,)


def _fc_check(a) -> None:
    if a.num_hidden < 1:
        raise AttrError(f"operator FullyConnected: attribute 'num_hidden' must be >= 1, got {a.num_hidden}")


def _fc_shape(a, dshape, wshape=None, bshape=None):
    """weight (num_hidden, K) and bias (num_hidden,) from the data; output from both."""
    _fc_check(a)
    hid = a.num_hidden
    if dshape is None or len(dshape) == 0:
        return None
    dshape = tuple(dshape)
    if a.flatten:
        k = _prod(dshape[1:]) if all(dshape[1:]) else 0
    else:
        k = dshape[-1]
    wshape = _merge("FullyConnected", "weight", wshape, (hid, k))
    if k == 0 and wshape[1] and (not a.flatten or len(dshape) == 2):
        dshape = dshape[:-1] + (wshape[1],)
    ins = [dshape, wshape]
    if not a.no_bias:
        if bshape is not None and len(bshape) == 2:
            ins.append(_merge("FullyConnected", "bias", bshape, (hid, 1)))
        else:
            ins.append(_merge("FullyConnected", "bias", bshape, (hid,)))
    return ins, [_fc_out_shape(a, dshape)]


def _fc_matrix(a, data):
    """The 2-D (rows, K) view of the data that the product uses (no copy for contiguous data)."""
    return data if data.ndim == 2 else data.reshape(_fc_rows(a, data.shape))


def _fc_shape_error(a, data, weight, bias) -> None:
    """Raise the ShapeError naming the input that does not fit (the kernels check cheaply first)."""
    _fc_shape(a, data.shape, weight.shape, None if bias is None else bias.shape)
    raise ShapeError(f"operator FullyConnected: inputs of shapes {tuple(data.shape)}, {tuple(weight.shape)}"
                     f"{'' if bias is None else ', ' + str(tuple(bias.shape))} do not fit num_hidden={a.num_hidden}")


def _into_matrix(buf, rows: int, cols: int):
    """A C-contiguous 2-D (rows, cols) view of an output buffer, or None when it has none."""
    if not buf.flags.c_contiguous:
        return None
    return buf if buf.ndim == 2 else buf.reshape(rows, cols)


def _matmul(xp, lhs, rhs, out):
    """lhs @ rhs for 2-D operands, into the matrix `out` when given (else a new array).

    `xp.dot` is the cheapest call for small matrices; it needs a C-contiguous `out` of
    exactly the product's dtype, so anything else falls back to matmul."""
    try:
        return xp.dot(lhs, rhs, out=out)
    except ValueError:
        if out is None or lhs.shape[1] != rhs.shape[0]:
            raise
        return xp.matmul(lhs, rhs, out=out)


def _written(out, res):
    """`out` (a 1-tuple) with a result computed elsewhere (no usable 2-D view) copied in."""
    out[0][...] = res.reshape(out[0].shape)
    return out


@register("FullyConnected", inputs=_fc_inputs, learnable=("weight", "bias"), writes_out=True,
          affine_channel=lambda a: (1 if a.flatten else -1, 0),
          attrs={"num_hidden": Attr("int", doc="Number of hidden nodes of the output."),
                 "no_bias": Attr("bool", False, "Whether to disable bias parameter."),
                 "flatten": Attr("bool", True, "Whether to collapse all but the first axis of the "
                                               "input data tensor.")},
          infer_shape=_fc_shape)
def FullyConnected(xp, a, data, weight, bias=None, out=None):  # noqa: PLR0917 - kernel signature
    """out = data @ weight.T + bias; with flatten, data is first reshaped to (batch, -1).

    With `out=(buffer,)` the product and the bias are written into the buffer."""
    x2 = data if data.ndim == 2 else data.reshape(_fc_rows(a, data.shape))
    hid = a.num_hidden
    if weight.shape != (hid, x2.shape[1]) or hid < 1 or (bias is not None and bias.size != hid):
        _fc_shape_error(a, data, weight, bias)
    transposed = _transposed_product_pays(xp, x2, weight, bias)
    if out is None:
        dst = xp.empty((x2.shape[0], hid), dtype=x2.dtype) if transposed else None
    else:
        dst = out[0] if out[0].ndim == 2 else _into_matrix(out[0], x2.shape[0], hid)
        transposed = transposed and dst is not None and dst.dtype == x2.dtype
    if transposed:   # the bias is added by the transposing copy
        y2 = _transposed_product(xp, x2, weight, bias, dst)
    else:
        y2 = _matmul(xp, x2, weight.T, dst)
        if bias is not None:
            y2 += bias if bias.ndim == 1 else bias.reshape(-1)
    if out is None:
        return (y2 if data.ndim == 2 else y2.reshape(_fc_out_shape(a, data.shape)),)
    return out if y2 is dst else _written(out, y2)


FullyConnected.batch_from_output = True


#: the row range, the fewest outputs and the fewest rows x outputs for which FullyConnected
#: computes (weight @ data.T).T (see _transposed_product_pays)
FC_TRANSPOSED_MIN_ROWS, FC_TRANSPOSED_MAX_ROWS, FC_TRANSPOSED_MIN_HIDDEN, FC_TRANSPOSED_MIN_OUTPUTS = 4, 64, 256, 2000
_BLAS_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _transposed_product_pays(xp, x2, weight, bias) -> bool:
    """Whether `_transposed_product` is the faster way to x2 @ weight.T: numpy, one float32 or
    float64 dtype, 4 to 64 rows, at least 256 outputs (500 at 4 rows) and 128 inputs. There OpenBLAS
    runs weight @ x2.T 1.2-2.5x faster than x2 @ weight.T (its packing of the transposed
    weight costs more than the product: 8 rows x 784 inputs x 256 outputs, 1 or 2 threads);
    with more rows the usual product wins, and with few outputs the transposing copy costs
    more than it saves (benchmarks/fc_layouts.py measures the grid)."""
    rows, hid = x2.shape[0], weight.shape[0]
    dt = x2.dtype
    return (xp is np and FC_TRANSPOSED_MIN_ROWS <= rows <= FC_TRANSPOSED_MAX_ROWS and hid >= FC_TRANSPOSED_MIN_HIDDEN
            and rows * hid >= FC_TRANSPOSED_MIN_OUTPUTS and x2.shape[1] >= 128 and dt in _BLAS_FLOATS
            and weight.dtype == dt and (bias is None or bias.dtype == dt))


def _transposed_product(xp, x2, weight, bias, dst):
    """x2 @ weight.T (+ bias) into the (rows, hidden) matrix `dst`, computed as the (hidden,
    rows) product weight @ x2.T; the transposing copy back and the bias add are one pass."""
    prod_t = xp.dot(weight, x2.T)
    if bias is None:
        xp.copyto(dst, prod_t.T)
    else:
        xp.add(prod_t.T, bias if bias.ndim == 1 else bias.reshape(-1), out=dst)
    return dst


def _is_graph_input(x) -> bool:
    """Whether a gradient rule's input is a variable of a symbolic graph (not an operator output)."""
    return bool(getattr(x, "_is_symbolic", False)) and hasattr(x, "get_children") and x.get_children() is None


@FullyConnected.def_gradient
def _fc_gradient(F, a, inputs, outputs, ograds, wanted=None):
    """One `_backward_FullyConnected` node (MXNet's); the weight (and bias) gradient alone when
    the data's gradient is not `wanted` (a batch, a frozen input: no (batch x out) @ (out x in)
    product for nothing), and split nodes on a graph input.

    A graph input's gradient is often not wanted (the data of the first layer): there the
    data gradient is a node of its own, which dead-code elimination drops when nothing
    asks for it, and the weight and bias gradients are another. Elsewhere one node keeps
    the three gradients at one point of the schedule, so that the output gradient dies
    there (split nodes would keep it alive until the weight gradient runs)."""
    if wanted is not None and 0 not in wanted:
        kw = {"num_hidden": a.num_hidden, "flatten": a.flatten}
        if a.no_bias:
            return [None, F._backward_FullyConnected_weight(ograds[0], inputs[0], no_bias=True, **kw)]
        res = F._backward_FullyConnected_weight(ograds[0], inputs[0], inputs[2], no_bias=False, **kw)
        return [None, res[0], res[1]]
    if not _is_graph_input(inputs[0]):
        res = F._backward_FullyConnected(ograds[0], *inputs, **_given(a))
        return [res[i] for i in range(len(inputs))]
    g, data = ograds[0], inputs[0]
    kw = {"num_hidden": a.num_hidden, "flatten": a.flatten}
    d_data = F._backward_FullyConnected_data(g, data, inputs[1], **kw)
    if a.no_bias:
        return [d_data, F._backward_FullyConnected_weight(g, data, no_bias=True, **kw)]
    res = F._backward_FullyConnected_weight(g, data, inputs[2], no_bias=False, **kw)
    return [d_data, res[0], res[1]]


def _fc_back_outputs(a) -> tuple:
    return ("data_grad", "weight_grad") if a.no_bias else ("data_grad", "weight_grad", "bias_grad")


def _fc_back_shape(a, gshape, dshape, wshape, bshape=None):
    fwd = _fc_shape(a, dshape, wshape, bshape)
    if fwd is None:
        return None
    ins, outs = fwd
    return [_merge("_backward_FullyConnected", "ograd", gshape, outs[0]), *ins], list(ins)


_FC_BACK_ATTRS = {"num_hidden": Attr("int", doc="Number of hidden nodes of the output."),
                  "no_bias": Attr("bool", False, "Whether the forward had no bias."),
                  "flatten": Attr("bool", True, "Whether the forward flattened its data.")}


@register("_backward_FullyConnected", inputs=lambda a: ("ograd",) + _fc_inputs(a), writes_out=True,
          outputs=_fc_back_outputs, infer_shape=_fc_back_shape, attrs=dict(_FC_BACK_ATTRS))
def _backward_FullyConnected(xp, a, ograd, data, weight, bias=None, out=None):  # noqa: PLR0917 - kernel signature
    """Gradients of FullyConnected: (ograd @ W, ograd.T @ X, sum of ograd over rows), written into
    `out=(data_grad, weight_grad[, bias_grad])` when given."""
    dx = _backward_FullyConnected_data.forward(xp, a, ograd, data, weight, out=None if out is None else out[:1])
    rest = _backward_FullyConnected_weight.forward(xp, a, ograd, data, bias, out=None if out is None else out[1:])
    return dx + rest


@_backward_FullyConnected.def_gradient
def _fc_back_gradient(F, a, inputs, outputs, ograds):
    """The backward is bilinear, so its own gradients are FullyConnected products again."""
    g, data, weight = inputs[:3]
    u_dx, u_dw = ograds[0], ograds[1]
    kw = {"num_hidden": a.num_hidden, "flatten": a.flatten}
    from_dx = (F.FullyConnected(u_dx, weight, num_hidden=a.num_hidden, flatten=a.flatten, no_bias=True)
               if a.no_bias else F.FullyConnected(u_dx, weight, ograds[2], no_bias=False, **kw))
    d_g = F.elemwise_add(from_dx, F.FullyConnected(data, u_dw, no_bias=True, **kw))
    d_data = F._backward_FullyConnected_data(g, data, u_dw, **kw)
    d_weight = F._backward_FullyConnected_weight(g, u_dx, no_bias=True, **kw)
    return [d_g, d_data, d_weight] + ([] if a.no_bias else [None])


# -- the split backward: one node per gradient FullyConnected's rule needs


class _NoBias:
    """A forward's attributes without a bias (to reuse `_fc_shape` for the data gradient)."""

    no_bias = True

    def __init__(self, a):
        self.num_hidden, self.flatten = a.num_hidden, a.flatten


def _fc_data_grad_shape(a, gshape, dshape, wshape):
    fwd = _fc_shape(_NoBias(a), dshape, wshape)
    if fwd is None:
        return None
    (dshape, wshape), outs = fwd
    return [_merge("_backward_FullyConnected_data", "ograd", gshape, outs[0]), dshape, wshape], [dshape]


@register("_backward_FullyConnected_data", inputs=("ograd", "data", "weight"), writes_out=True,
          infer_shape=_fc_data_grad_shape,
          attrs={k: v for k, v in _FC_BACK_ATTRS.items() if k != "no_bias"},
          doc="FullyConnected's data gradient ograd @ weight, in the data's shape (hybridgraph helper: "
              "`data` only gives the shape).")
def _backward_FullyConnected_data(xp, a, ograd, data, weight, out=None):  # noqa: PLR0917 - kernel signature
    g2 = ograd if ograd.ndim == 2 else ograd.reshape(-1, a.num_hidden)
    dst = None if out is None else _into_matrix(out[0], g2.shape[0], weight.shape[1])
    res = _matmul(xp, g2, weight, dst)
    if out is not None:
        return out if res is dst else _written(out, res)
    return (res if res.shape == data.shape else res.reshape(data.shape),)


@_backward_FullyConnected_data.def_gradient
def _fc_data_grad_gradient(F, a, inputs, outputs, ograds):
    """Bilinear in (ograd, weight): the adjoints are the forward product and the weight gradient."""
    g, data, weight = inputs
    u = ograds[0]
    kw = {"num_hidden": a.num_hidden, "flatten": a.flatten}
    return [F.FullyConnected(u, weight, no_bias=True, **kw), None,
            F._backward_FullyConnected_weight(g, u, no_bias=True, **kw)]


def _fc_weight_grad_inputs(a) -> tuple:
    return ("ograd", "data") if a.no_bias else ("ograd", "data", "bias")


def _fc_weight_grad_outputs(a) -> tuple:
    return ("weight_grad",) if a.no_bias else ("weight_grad", "bias_grad")


def _fc_weight_grad_shape(a, gshape, dshape, bshape=None):
    _fc_check(a)
    if dshape is None or len(dshape) == 0 or not all(dshape):
        return None
    dshape = tuple(dshape)
    k = _fc_rows(a, dshape)[1]
    fwd = _fc_shape(a, dshape, (a.num_hidden, k), bshape)
    ins, outs = fwd
    return ([_merge("_backward_FullyConnected_weight", "ograd", gshape, outs[0]), dshape] + ins[2:],
            [ins[1]] + ins[2:])


@register("_backward_FullyConnected_weight", inputs=_fc_weight_grad_inputs, outputs=_fc_weight_grad_outputs,
          writes_out=True, infer_shape=_fc_weight_grad_shape, attrs=dict(_FC_BACK_ATTRS),
          doc="FullyConnected's weight gradient ograd.T @ data and bias gradient (ograd summed over "
              "rows) (hybridgraph helper: `bias` only gives the bias gradient's shape).")
def _backward_FullyConnected_weight(xp, a, ograd, data, bias=None, out=None):  # noqa: PLR0917
    g2 = ograd if ograd.ndim == 2 else ograd.reshape(-1, a.num_hidden)
    x2 = _fc_matrix(a, data)
    if out is None:
        res = [_matmul(xp, g2.T, x2, None)]
        if bias is not None:
            res.append(g2.sum(axis=0).reshape(bias.shape))
        return tuple(res)
    dst = _into_matrix(out[0], *out[0].shape)
    res = _matmul(xp, g2.T, x2, dst)
    if dst is None:
        out[0][...] = res
    if bias is not None:
        if out[1].ndim == 1:
            g2.sum(axis=0, out=out[1])
        else:
            out[1][...] = g2.sum(axis=0).reshape(out[1].shape)
    return tuple(out)


@_backward_FullyConnected_weight.def_gradient
def _fc_weight_grad_gradient(F, a, inputs, outputs, ograds):
    """Bilinear in (ograd, data) plus a row sum: adjoints are the forward product, the data
    gradient and the bias broadcast back over the rows (a FullyConnected with a zero weight)."""
    g, data = inputs[:2]
    v = ograds[0]
    kw = {"num_hidden": a.num_hidden, "flatten": a.flatten}
    if a.no_bias:
        d_g = F.FullyConnected(data, v, no_bias=True, **kw)
    else:
        d_g = F.FullyConnected(data, v, ograds[1], no_bias=False, **kw)
    res = [d_g, F._backward_FullyConnected_data(g, data, v, **kw)]
    return res if a.no_bias else res + [None]


# ---------------------------------------------------------------------------
# Activation


def _act_relu(xp, x, out=None):
    """Activation's relu maps NaN to 0 (MXNet's `a > 0 ? a : 0`), unlike nd.relu, which keeps it."""
    return xp.fmax(x, x.dtype.type(0), out=out)


def _act_sigmoid(xp, x, out=None):
    """Overflow-free logistic function: 1/(1+e) for x >= 0, e/(1+e) below, with e = exp(-|x|).

    Two temporaries; `out` may be `x` itself (the sign is read before it is written)."""
    e = xp.abs(x)
    xp.negative(e, out=e)
    xp.exp(e, out=e)
    den = e + 1
    xp.copyto(e, x.dtype.type(1), where=x >= 0)
    return xp.divide(e, den, out=out)


def _act_tanh(xp, x, out=None):
    return xp.tanh(x, out=out)


def _act_softrelu(xp, x, out=None):
    return xp.logaddexp(x.dtype.type(0), x, out=out)


def _act_softsign(xp, x, out=None):
    den = xp.abs(x)
    den += 1
    return xp.divide(x, den, out=out)


# act_type -> kernel(xp, x, out=None); each writes into `out` (which may be `x`) when given
_ACT_KERNELS = {"relu": _act_relu, "sigmoid": _act_sigmoid, "tanh": _act_tanh,
                "softrelu": _act_softrelu, "softsign": _act_softsign}

# act_type -> the input's gradient as F ops of (head gradient g, input x, output y); relu's is
# MXNet's own one-kernel node
_ACT_GRADIENTS = {
    "relu": lambda F, g, x, y: F._backward_relu(g, y),
    "sigmoid": lambda F, g, x, y: F.elemwise_mul(g, F.elemwise_mul(y, F._rminus_scalar(y, scalar=1.0))),
    "tanh": lambda F, g, x, y: F.elemwise_mul(g, F._rminus_scalar(F.square(y), scalar=1.0)),
    "softrelu": lambda F, g, x, y: F.elemwise_mul(g, F.sigmoid(x)),
    "softsign": lambda F, g, x, y: F.elemwise_mul(
        g, F.reciprocal(F.square(F._plus_scalar(F.abs(x), scalar=1.0)))),
}


# act_type -> C expression for generated elementwise GPU kernels (fused nodes)
_ACT_CEXPR = {"relu": "x0 > 0 ? x0 : 0", "sigmoid": "1 / (1 + exp(-x0))", "tanh": "tanh(x0)",
              "softrelu": "x0 > 20 ? x0 : log1p(exp(x0))", "softsign": "x0 / (1 + abs(x0))"}


@register("Activation",
          monitor_inputs="input", infer_shape=same_shape, elementwise=True, cexpr=lambda a: _ACT_CEXPR[a.act_type],
          inplace=((0, 0),), writes_out=True,
          attrs={"act_type": Attr("str", doc="Activation function to be applied.",
                                  choices=("relu", "sigmoid", "softrelu", "softsign", "tanh"))})
def Activation(xp, a, data, out=None):
    """Elementwise relu, sigmoid, tanh, softrelu (log(1+exp(x))) or softsign (x/(1+|x|)).

    With `out=(buffer,)` the result is written there; the buffer may be `data` (in place)."""
    return (_ACT_KERNELS[a.act_type](xp, data, None if out is None else out[0]),)


@Activation.def_gradient
def _act_gradient(F, a, inputs, outputs, ograds):
    return [_ACT_GRADIENTS[a.act_type](F, ograds[0], inputs[0], outputs[0])]


# ---------------------------------------------------------------------------
# smooth_l1, hard_sigmoid, _contrib_div_sqrt_dim


@register("smooth_l1", monitor_inputs="input", infer_shape=same_shape, elementwise=True,
          attrs={"scalar": Attr("float", 1.0, "scalar input (sigma)", fmt=str),
                 "is_int": Attr("bool", True, "Whether the scalar is an integer (numpy front end).")})
def smooth_l1(xp, a, data):
    """0.5 * (sigma*x)^2 where |x| < 1/sigma^2, else |x| - 0.5/sigma^2."""
    s2 = a.scalar * a.scalar
    ax = xp.abs(data)
    with np.errstate(divide="ignore"):
        bound = 1.0 / s2
    out = xp.where(ax < bound, (0.5 * s2) * data * data, ax - 0.5 * bound)
    return (out.astype(data.dtype, copy=False),)


@smooth_l1.def_gradient
def _smooth_l1_gradient(F, a, inputs, outputs, ograds):
    x, s2 = inputs[0], a.scalar * a.scalar
    inner = F._lesser_scalar(F.abs(x), scalar=(1.0 / s2) if s2 else math.inf)
    factor = _select(F, inner, F._mul_scalar(x, scalar=s2), F.sign(x))
    return [F.elemwise_mul(ograds[0], factor)]


@register("hard_sigmoid", monitor_inputs="input", infer_shape=same_shape, elementwise=True,
          attrs={"alpha": Attr("float", 0.2, "Slope of hard sigmoid"),
                 "beta": Attr("float", 0.5, "Bias of hard sigmoid.")})
def hard_sigmoid(xp, a, data):
    """clip(alpha * x + beta, 0, 1)."""
    return (xp.clip(data * a.alpha + a.beta, 0, 1).astype(data.dtype, copy=False),)


@hard_sigmoid.def_gradient
def _hard_sigmoid_gradient(F, a, inputs, outputs, ograds):
    y = outputs[0]
    inside = F.elemwise_mul(F._greater_scalar(y, scalar=0.0), F._lesser_scalar(y, scalar=1.0))
    return [F.elemwise_mul(ograds[0], F._mul_scalar(inside, scalar=a.alpha))]


@register("_contrib_div_sqrt_dim", monitor_inputs="input", infer_shape=same_shape, hint="div_sqrt_dim",
          gradient=lambda F, a, inputs, outputs, ograds: [F._contrib_div_sqrt_dim(ograds[0])])
def _contrib_div_sqrt_dim(xp, a, data):
    """data / sqrt(size of the last axis)."""
    return ((data / data.dtype.type(math.sqrt(data.shape[-1]))).astype(data.dtype, copy=False),)


# ---------------------------------------------------------------------------
# Dropout


def _dropout_mask_shape(a, dshape: tuple) -> tuple:
    """The mask is shared along `axes` (their size is 1 in the mask)."""
    mshape = list(dshape)
    for ax in a.axes:
        mshape[_norm_axis("Dropout", ax, len(dshape))] = 1
    return tuple(mshape)


def _dropout_check(a) -> None:
    if not 0.0 <= a.p <= 1.0:
        raise AttrError(f"operator Dropout: attribute 'p' must be in [0, 1], got {a.p}")


def _dropout_shape(a, dshape):
    _dropout_check(a)
    if dshape is None:
        return None
    return [tuple(dshape)], [tuple(dshape), _dropout_mask_shape(a, tuple(dshape))]


def _dropout_type(a, dt):
    if dt is not None and np.dtype(dt).kind != "f":   # MXNet 1.9.1's message (checked)
        raise DTypeError(f"This operation only support floating point types, not {np.dtype(dt).name}")
    return None if dt is None else ([dt], [dt, dt])


@register("Dropout", outputs=("output", "mask"), num_visible_outputs=1, train_aware=True, is_random=True,
          identity_when=lambda a, is_train, shape: a.p == 0 or (not is_train and a.mode == "training"),
          infer_shape=_dropout_shape, infer_type=_dropout_type,
          attrs={"p": Attr("float", 0.5, "Fraction of the input that gets dropped out during training time."),
                 "mode": Attr("str", "training", "Whether to only turn on dropout during training or to "
                                                 "also turn on for inference.", choices=("always", "training")),
                 "axes": Attr("shape", (), "Axes for variational dropout kernel."),
                 "cudnn_off": Attr("bool", False, "Whether to turn off cudnn in dropout operator.",
                                   optional=True)})
def Dropout(xp, a, data, *, is_train=False):
    """Zero each element with probability p and scale the rest by 1/(1-p) (training or mode='always')."""
    _dropout_check(a)
    mshape = _dropout_mask_shape(a, data.shape)
    if not (is_train or a.mode == "always") or a.p == 0:
        return data.copy(), xp.ones(mshape, dtype=data.dtype)
    keep = 1.0 - a.p
    if keep == 0:   # MXNet 1.9.1 scales the all-zero mask by 1/0: 0 * inf, NaN everywhere (checked)
        mask = xp.full(mshape, np.nan, dtype=data.dtype)
    else:
        mask = ((rng.generator(xp).random(mshape) < keep) * (1.0 / keep)).astype(data.dtype)
    return (data * mask).astype(data.dtype, copy=False), mask


@Dropout.def_gradient
def _dropout_gradient(F, a, inputs, outputs, ograds):
    return [F.broadcast_mul(ograds[0], outputs[1])]
