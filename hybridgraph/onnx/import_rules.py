"""One rule per ONNX op: how importer.py writes an ONNX node as hybridgraph symbols.

Rules cover the ONNX ops the exporter writes (the same op set), so export -> import
gives back a model with equal outputs. Each takes the importer's Reader `r`.
"""
from __future__ import annotations

import numpy as np

from hybridgraph import symbol as S  # noqa: N812 - the symbol namespace, as MXNet code writes F

RULES: dict = {}


def op(op_name: str, inputs: list, name: str | None = None, **attrs):
    """A node of a registered op that has no front-end function under `symbol` (numpy-mode ops)."""
    from hybridgraph.nd.registry import get_op
    from hybridgraph.symbol.symbol import create
    return create(get_op(op_name), list(inputs), attrs, name=name)


def rule(*op_types: str):
    def wrap(fn):
        for t in op_types:
            RULES[t] = fn
        return fn
    return wrap


def _pads(r, nsp: int) -> tuple[tuple, tuple]:
    pads = list(r.attr("pads", [0] * (2 * nsp)))
    if r.attr("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        raise r.fail("auto_pad SAME_* (write explicit pads)")
    return tuple(pads[:nsp]), tuple(pads[nsp:])


def _padded(r, x, lo, hi, value: float = 0.0):
    """Explicit asymmetric padding (MXNet's ops pad both sides alike)."""
    width = (0, 0, 0, 0) + tuple(v for pair in zip(lo, hi) for v in pair)
    if len(lo) == 1:  # MXNet's Pad takes 4-D and 5-D data: pad (N, C, 1, L)
        x = S.Pad(S.expand_dims(x, axis=2), mode="constant", pad_width=(0, 0) + width, constant_value=value,
                  name=r.name("_pad"))
        return S.reshape(x, shape=(0, 0, -1))
    return S.Pad(x, mode="constant", pad_width=width, constant_value=value, name=r.name("_pad"))


@rule("Conv")
def _conv(r):
    w = np.empty(r.static_shape(1, "weight"), dtype=np.bool_)
    nsp = w.ndim - 2
    lo, hi = _pads(r, nsp)
    x = r.sym(0)
    if lo != hi:
        x, lo = _padded(r, x, lo, hi), (0,) * nsp
    kw = {"kernel": tuple(w.shape[2:]), "stride": tuple(r.attr("strides", [1] * nsp)),
          "dilate": tuple(r.attr("dilations", [1] * nsp)), "pad": lo, "num_filter": w.shape[0],
          "num_group": r.attr("group", 1), "no_bias": not r.has(2)}
    args = [x, r.sym(1)] + ([r.sym(2)] if r.has(2) else [])
    return S.Convolution(*args, name=r.name(), **kw)


@rule("ConvTranspose")
def _conv_transpose(r):
    w = np.empty(r.static_shape(1, "weight"), dtype=np.bool_)
    nsp = w.ndim - 2
    lo, hi = _pads(r, nsp)
    out_pad = tuple(r.attr("output_padding", [0] * nsp))
    if lo != hi or r.attr("output_shape") is not None:
        raise r.fail("ConvTranspose with asymmetric pads or output_shape (MXNet's Deconvolution pads both sides "
                     "alike; write pads + output_padding)")
    kw = {"kernel": tuple(w.shape[2:]), "stride": tuple(r.attr("strides", [1] * nsp)),
          "dilate": tuple(r.attr("dilations", [1] * nsp)), "pad": lo, "adj": out_pad,
          "num_filter": w.shape[1] * r.attr("group", 1), "num_group": r.attr("group", 1), "no_bias": not r.has(2)}
    args = [r.sym(0), r.sym(1)] + ([r.sym(2)] if r.has(2) else [])
    return S.Deconvolution(*args, name=r.name(), **kw)


@rule("Gemm")
def _gemm(r):
    w = r.shape(1)
    bias = r.shape(2) if r.has(2) else None
    if (r.attr("transB", 0) == 1 and r.attr("transA", 0) == 0 and r.attr("alpha", 1.0) == 1.0
            and r.attr("beta", 1.0) == 1.0 and w is not None and isinstance(w[0], int)
            and (bias is None or tuple(bias) == (w[0],))):
        args = [r.sym(0), r.sym(1)] + ([r.sym(2)] if r.has(2) else [])
        return S.FullyConnected(*args, num_hidden=w[0], no_bias=not r.has(2), name=r.name())
    y = S.dot(r.sym(0), r.sym(1), transpose_a=bool(r.attr("transA", 0)), transpose_b=bool(r.attr("transB", 0)))
    y = y * r.attr("alpha", 1.0) if r.attr("alpha", 1.0) != 1.0 else y
    if r.has(2):
        c = r.sym(2)
        y = S.broadcast_add(y, c * r.attr("beta", 1.0) if r.attr("beta", 1.0) != 1.0 else c)
    return y


@rule("MatMul")
def _matmul(r):
    lhs, rhs = r.shape(0), r.shape(1)
    if rhs is not None and len(rhs) == 2 and lhs is not None and len(lhs) >= 1:
        return S.dot(r.sym(0), r.sym(1), name=r.name())
    return op("_npi_matmul", [r.sym(0), r.sym(1)], name=r.name())  # numpy's matmul is ONNX's


@rule("BatchNormalization")
def _batch_norm(r):
    for i in (3, 4):
        r.aux.add(r.node.input[i])
    return S.BatchNorm(*(r.sym(i) for i in range(5)), eps=r.attr("epsilon", 1e-5), fix_gamma=False,
                       use_global_stats=True, name=r.name())


@rule("InstanceNormalization")
def _instance_norm(r):
    return S.InstanceNorm(r.sym(0), r.sym(1), r.sym(2), eps=r.attr("epsilon", 1e-5), name=r.name())


_ACT = {"Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Softplus": "softrelu", "Softsign": "softsign"}


@rule(*_ACT)
def _activation(r):
    return S.Activation(r.sym(0), act_type=_ACT[r.node.op_type], name=r.name())


@rule("LeakyRelu", "Elu", "Selu")
def _leaky(r):
    t = r.node.op_type
    if t == "Selu":
        return S.LeakyReLU(r.sym(0), act_type="selu", name=r.name())
    return S.LeakyReLU(r.sym(0), act_type="leaky" if t == "LeakyRelu" else "elu",
                       slope=r.attr("alpha", 0.01 if t == "LeakyRelu" else 1.0), name=r.name())


@rule("PRelu")
def _prelu(r):
    slope = r.need_const(1, "slope")
    name = r.node.input[1]
    r.consts[name] = slope.reshape(-1)
    return S.LeakyReLU(r.sym(0), r.sym(1), act_type="prelu", name=r.name())


@rule("MaxPool", "AveragePool", "LpPool")
def _pool(r):
    k = tuple(r.attr("kernel_shape"))
    nsp = len(k)
    lo, hi = _pads(r, nsp)
    kind = {"MaxPool": "max", "AveragePool": "avg", "LpPool": "lp"}[r.node.op_type]
    include = r.attr("count_include_pad", 0)
    x = r.sym(0)
    if r.attr("ceil_mode", 0):
        raise r.fail("ceil_mode=1 (write explicit pads)")
    if lo != hi and (kind != "avg" or include):
        x, lo = _padded(r, x, lo, hi, -np.inf if kind == "max" else 0.0), (0,) * nsp
    elif lo != hi:
        raise r.fail("asymmetric pads with count_include_pad=0")
    kw = {"kernel": k, "stride": tuple(r.attr("strides", [1] * nsp)), "pad": lo, "pool_type": kind}
    if kind == "avg":
        kw["count_include_pad"] = bool(include)
    if kind == "lp":
        kw["p_value"] = r.attr("p", 2)
    return S.Pooling(x, name=r.name(), **kw)


@rule("GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool")
def _global_pool(r):
    kind = {"GlobalAveragePool": "avg", "GlobalMaxPool": "max", "GlobalLpPool": "lp"}[r.node.op_type]
    kw = {"p_value": r.attr("p", 2)} if kind == "lp" else {}
    return S.Pooling(r.sym(0), kernel=(1, 1), global_pool=True, pool_type=kind, name=r.name(), **kw)


@rule("Flatten")
def _flatten(r):
    axis = r.attr("axis", 1)
    if axis == 1:
        return S.Flatten(r.sym(0), name=r.name())
    return S.reshape(r.sym(0), shape=(-3,) * 0 + (0,) * axis + (-1,) if axis > 0 else (-1,), name=r.name())


@rule("Reshape")
def _reshape(r):
    target = r.shape_value(1)
    if target is None:
        raise r.fail("its target shape must be computed from constants and tensor shapes")
    x_shape = r.shape(0) or ()
    shape = []
    for i, d in enumerate(target):  # a symbolic dim is MXNet's 0 where it copies the input's dim there
        if isinstance(d, int):
            shape.append(d)
        elif d is not None and i < len(x_shape) and x_shape[i] == d:
            shape.append(0)
        else:
            shape.append(-1)
    if shape.count(-1) > 1:
        raise r.fail(f"target shape {target} has more than one dim not known at import")
    if r.attr("allowzero", 0) and 0 in shape:  # a literal 0: numpy's reshape, which needs every dim
        if -1 in shape or any(not isinstance(d, int) for d in target):
            raise r.fail("allowzero=1 with a 0 in a target shape not known at import")
        return op("_np_reshape", [r.sym(0)], newshape=tuple(shape), name=r.name())
    if not shape:  # MXNet's reshape has no 0-d target; numpy's has
        return op("_np_reshape", [r.sym(0)], newshape=(), name=r.name())
    return S.reshape(r.sym(0), shape=tuple(shape), name=r.name())


@rule("Concat")
def _concat(r):
    return S.concat(*(r.sym(i) for i in range(len(r.node.input))), dim=r.attr("axis"), name=r.name())


_BIN = {"Add": "broadcast_add", "Sub": "broadcast_sub", "Mul": "broadcast_mul", "Div": "broadcast_div",
        "Pow": "broadcast_power", "Max": "broadcast_maximum", "Min": "broadcast_minimum",
        "Equal": "broadcast_equal", "Greater": "broadcast_greater", "Less": "broadcast_lesser",
        "GreaterOrEqual": "broadcast_greater_equal", "LessOrEqual": "broadcast_lesser_equal",
        "And": "broadcast_logical_and", "Or": "broadcast_logical_or", "Xor": "broadcast_logical_xor"}


@rule(*_BIN)
def _binary(r):
    if r.node.op_type in ("Max", "Min") and len(r.node.input) != 2:
        raise r.fail("Max/Min of other than two inputs")
    return getattr(S, _BIN[r.node.op_type])(r.sym(0), r.sym(1), name=r.name())


@rule("Sum")
def _sum(r):
    return S.add_n(*(r.sym(i) for i in range(len(r.node.input))), name=r.name())


_UN = {"Exp": "exp", "Log": "log", "Sqrt": "sqrt", "Abs": "abs", "Neg": "negative", "Floor": "floor",
       "Ceil": "ceil", "Sin": "sin", "Cos": "cos", "Tan": "tan", "Asin": "arcsin", "Acos": "arccos",
       "Atan": "arctan", "Sinh": "sinh", "Cosh": "cosh", "Asinh": "arcsinh", "Acosh": "arccosh",
       "Atanh": "arctanh", "Reciprocal": "reciprocal", "Sign": "sign", "Erf": "erf", "Identity": "identity",
       "Not": "logical_not"}


@rule(*_UN)
def _unary(r):
    return getattr(S, _UN[r.node.op_type])(r.sym(0), name=r.name())


@rule("Dropout")
def _dropout(r):
    return S.identity(r.sym(0), name=r.name())


@rule("Softmax", "LogSoftmax")
def _softmax(r):
    fn = S.softmax if r.node.op_type == "Softmax" else S.log_softmax
    return fn(r.sym(0), axis=r.attr("axis", -1), name=r.name())


@rule("Clip")
def _clip(r):
    lo, hi = r.const(1), r.const(2)
    return S.clip(r.sym(0), a_min=float(lo) if lo is not None else -np.inf,
                  a_max=float(hi) if hi is not None else np.inf, name=r.name())


@rule("Transpose")
def _transpose(r):
    perm = r.attr("perm")
    return S.transpose(r.sym(0), axes=tuple(perm) if perm else (), name=r.name())


def _axes(r, i: int = 1):
    v = r.const(i)
    return tuple(int(a) for a in v) if v is not None else tuple(r.attr("axes", []))


@rule("Unsqueeze")
def _unsqueeze(r):
    y = r.sym(0)
    for a in sorted(_axes(r)):
        y = S.expand_dims(y, axis=a)
    return y


@rule("Squeeze")
def _squeeze(r):
    axes = _axes(r)
    return S.squeeze(r.sym(0), axis=axes or None, name=r.name())


@rule("Cast")
def _cast(r):
    from onnx import helper
    return S.Cast(r.sym(0), dtype=np.dtype(helper.tensor_dtype_to_np_dtype(r.attr("to"))).name, name=r.name())


@rule("Gather")
def _gather(r):
    axis = r.attr("axis", 0)
    return S.take(r.sym(0), r.sym(1), axis=axis, mode="wrap", name=r.name())


@rule("Slice")
def _slice(r):
    starts, ends = r.shape_value(1), r.shape_value(2)
    if starts is None or ends is None or any(not isinstance(v, int) for v in starts):
        raise r.fail("its starts and ends must be constants or tensor shapes")
    axes = r.need_const(3, "axes") if r.has(3) else np.arange(len(starts))
    steps = r.need_const(4, "steps") if r.has(4) else np.ones(len(starts), dtype=np.int64)
    shape = r.shape(0)
    if shape is None:
        raise r.fail("the rank of its data must be known")
    ndim = len(shape)
    begin, end, step = [None] * ndim, [None] * ndim, [None] * ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        a, st = int(a) % ndim, int(st)
        n = shape[a]
        if not isinstance(e, int):  # a dim known at run time: the whole axis when it is the data's own
            if e is None or e != n or st < 0:
                raise r.fail(f"its end {e!r} on axis {a} is known only at run time")
            e = 2 ** 62
        if isinstance(n, int):  # ONNX clamps out-of-range bounds; MXNet wants them in range
            s, e, st = slice(s, e, st).indices(n)
            e = None if e < 0 else e
        else:
            e = None if abs(e) >= 2 ** 62 else e
        begin[a], end[a], step[a] = s, e, st
    last = max(i for i in range(ndim) if begin[i] is not None or end[i] is not None or step[i] is not None) \
        if len(starts) else -1
    if last < 0:
        return S.identity(r.sym(0), name=r.name())
    return S.slice(r.sym(0), begin=tuple(begin[:last + 1]), end=tuple(end[:last + 1]),
                   step=tuple(step[:last + 1]), name=r.name())


@rule("Split")
def _split(r):
    sizes = r.const(1)
    axis = r.attr("axis", 0)
    n = len(r.node.output)
    if sizes is None or len(set(int(s) for s in sizes)) == 1:
        return list(S.split(r.sym(0), num_outputs=n, axis=axis, name=r.name()))
    idx = tuple(int(v) for v in np.cumsum(sizes)[:-1])
    return list(S._internal._split_v2(r.sym(0), indices=(0,) + idx, axis=axis, name=r.name())) \
        if hasattr(S, "_internal") else r.fail("uneven Split")


@rule("Where")
def _where(r):  # ONNX's Where broadcasts, as numpy's where does (MXNet's where does not)
    return op("_npi_where", [r.sym(0), r.sym(1), r.sym(2)], name=r.name())


@rule("LRN")
def _lrn(r):
    return S.LRN(r.sym(0), alpha=r.attr("alpha", 1e-4), beta=r.attr("beta", 0.75), knorm=r.attr("bias", 1.0),
                 nsize=r.attr("size"), name=r.name())


@rule("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd")
def _reduce(r):
    fn = {"ReduceSum": S.sum, "ReduceMean": S.mean, "ReduceMax": S.max, "ReduceMin": S.min,
          "ReduceProd": S.prod}[r.node.op_type]
    axes = _axes(r)
    if not axes and r.attr("noop_with_empty_axes", 0):
        return S.identity(r.sym(0), name=r.name())
    keep = bool(r.attr("keepdims", 1))
    return scalar_out(r, fn(r.sym(0), axis=axes or None, keepdims=keep, name=r.name()), axes, keep)


def scalar_out(r, y, axes, keepdims: bool):
    """ONNX reduces every axis without keepdims to a 0-d tensor, where MXNet's legacy ops give (1,)."""
    rank = len(r.shape(0)) if r.shape(0) is not None else None
    if keepdims or rank is None or (axes and len(set(a % rank for a in axes)) < rank):
        return y
    return op("_np_reshape", [y], newshape=(), name=r.name("_scalar"))


@rule("ArgMax", "ArgMin")
def _arg(r):
    fn = S.argmax if r.node.op_type == "ArgMax" else S.argmin
    axis, keep = r.attr("axis", 0), bool(r.attr("keepdims", 1))
    return scalar_out(r, fn(r.sym(0), axis=axis, keepdims=keep, name=r.name()), [axis], keep)


@rule("LSTM", "GRU", "RNN")
def _rnn(r):
    t = r.node.op_type
    w, rr = r.need_const(1, "W"), r.need_const(2, "R")
    b = r.const(3) if r.has(3) else np.zeros((w.shape[0], 2 * w.shape[1]), w.dtype)
    dirs, hidden = w.shape[0], r.attr("hidden_size")
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[t]
    mode = {"LSTM": "lstm", "GRU": "gru"}.get(t) or \
        ("rnn_relu" if (r.attr("activations") or ["Tanh"])[0] == "Relu" else "rnn_tanh")
    if t == "GRU" and not r.attr("linear_before_reset", 0):
        raise r.fail("GRU with linear_before_reset=0 (MXNet's GRU is cuDNN's)")
    back = {"lstm": [0, 2, 3, 1], "gru": [1, 0, 2]}.get(mode, [0])

    def mx(block):  # ONNX gate order -> MXNet's
        return block.reshape(gates, hidden, -1)[back].reshape(gates * hidden, -1)
    ws = [np.concatenate([mx(w[d]).ravel(), mx(rr[d]).ravel()]) for d in range(dirs)]
    bs = [np.concatenate([mx(b[d, :gates * hidden, None]).ravel(), mx(b[d, gates * hidden:, None]).ravel()])
          for d in range(dirs)]
    name = r.name("_parameters")
    r.consts[name] = np.concatenate(ws + bs).astype(w.dtype)
    r.node.input.append(name)
    params = r.sym(len(r.node.input) - 1)
    args = [r.sym(0), params, r.sym(5)] + ([r.sym(6)] if mode == "lstm" else [])
    lens = {}
    if r.has(4):
        args.append(r.sym(4))
        lens = {"use_sequence_length": True}
    out = S.RNN(*args, state_size=hidden, num_layers=1, bidirectional=dirs == 2, mode=mode, state_outputs=True,
                name=r.name(), **lens)
    # ONNX's Y is (T, D, N, H)
    y = S.transpose(S.reshape(out[0], shape=(0, 0, dirs, hidden)), axes=(0, 2, 1, 3))
    return [y, out[1]] + ([out[2]] if mode == "lstm" else [])
