"""Specs for nd/ops/nn.py: layers, activations, softmax family, loss layers, Dropout."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.op_specs import OpSpec, arr, ints, shapes

_LOSS = "loss-style: the backward is MXNet's formula and ignores the head gradient"
_BACKWARD = "hidden backward of a loss layer: no gradient rule (as in MXNet)"
_SELU_L, _SELU_A = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
_erf = np.vectorize(math.erf)


def _away(shape, points, low=-2.0, high=2.0):
    """Float64 arrays whose values stay 0.05 away from every kink in `points`."""
    elems = st.floats(low, high, allow_nan=False, width=64).filter(
        lambda v: all(abs(v - p) > 0.05 for p in points))
    return hnp.arrays(np.float64, shape, elements=elems)


def softmax_ref(x, axis=-1, temperature=None, length=None, negate=False, log=False):
    z = x / (temperature or 1.0)
    z = -z if negate else z
    if length is not None:
        ar = np.arange(x.shape[axis]).reshape((-1,) + (1,) * (x.ndim - axis % x.ndim - 1))
        valid = ar < np.expand_dims(length, axis)
        z = np.where(valid, z, -np.inf)
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(z - m)
    s = e.sum(axis=axis, keepdims=True)
    if log:
        return z - m - np.log(s)
    return np.where(s > 0, e / np.where(s > 0, s, 1), 0)


# -- FullyConnected -----------------------------------------------------------

def fc_ref(data, weight, bias=None, num_hidden=None, no_bias=False, flatten=True):
    x2 = data.reshape(data.shape[0], -1) if flatten else data.reshape(-1, data.shape[-1])
    out = x2 @ weight.T + (0 if bias is None else bias.reshape(-1))
    return out.reshape((data.shape[0], num_hidden) if flatten else data.shape[:-1] + (num_hidden,))


def _fc_case(draw):
    dshape = draw(shapes(min_dims=1, max_dims=3, max_side=4))
    flatten, no_bias, hid = draw(st.booleans()), draw(st.booleans()), draw(st.integers(1, 4))
    k = int(np.prod(dshape[1:])) if flatten else dshape[-1]
    inputs = [draw(arr(dshape)), draw(arr((hid, k)))] + ([] if no_bias else [draw(arr((hid,)))])
    return inputs, {"num_hidden": hid, "no_bias": no_bias, "flatten": flatten}


def _fc_back_case(draw):
    inputs, attrs = _fc_case(draw)
    out_shape = fc_ref(*inputs[:2], num_hidden=attrs["num_hidden"], flatten=attrs["flatten"]).shape
    return [draw(arr(out_shape))] + inputs, attrs


def fc_back_ref(g, data, weight, bias=None, num_hidden=None, no_bias=False, flatten=True):
    g2 = g.reshape(-1, num_hidden)
    x2 = data.reshape(g2.shape[0], -1)
    outs = [(g2 @ weight).reshape(data.shape), g2.T @ x2]
    return tuple(outs) if bias is None else (*outs, g2.sum(0))


def _fc_data_grad_case(draw):
    inputs, attrs = _fc_case(draw)
    g = draw(arr(fc_ref(*inputs[:2], num_hidden=attrs["num_hidden"], flatten=attrs["flatten"]).shape))
    return [g, inputs[0], inputs[1]], {"num_hidden": attrs["num_hidden"], "flatten": attrs["flatten"]}


def _fc_weight_grad_case(draw):
    inputs, attrs = _fc_case(draw)
    g = draw(arr(fc_ref(*inputs[:2], num_hidden=attrs["num_hidden"], flatten=attrs["flatten"]).shape))
    return [g, inputs[0]] + inputs[2:], attrs


def fc_data_grad_ref(g, data, weight, num_hidden, flatten):
    return (g.reshape(-1, num_hidden) @ weight).reshape(data.shape)


def fc_weight_grad_ref(g, data, bias=None, num_hidden=None, no_bias=False, flatten=True):
    g2 = g.reshape(-1, num_hidden)
    dw = g2.T @ data.reshape(g2.shape[0], -1)
    return dw if bias is None else (dw, g2.sum(0).reshape(bias.shape))


# -- activations --------------------------------------------------------------

_ACT_REF = {
    "relu": lambda x: np.maximum(x, 0), "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "tanh": np.tanh,
    "softrelu": lambda x: np.log1p(np.exp(x)), "softsign": lambda x: x / (1 + np.abs(x)),
}


def _leaky_ref(data, gamma=None, act_type="leaky", slope=0.25, lower_bound=0.125, upper_bound=0.334):
    if act_type == "leaky":
        return np.where(data > 0, data, slope * data)
    if act_type == "elu":
        return np.where(data > 0, data, slope * np.expm1(data))
    if act_type == "selu":
        return _SELU_L * np.where(data > 0, data, _SELU_A * np.expm1(data))
    if act_type == "gelu":
        return 0.5 * data * (1 + _erf(data / math.sqrt(2)))
    if act_type == "rrelu":
        s = (lower_bound + upper_bound) / 2
        return np.where(data > 0, data, s * data), np.full(data.shape, s)
    g = gamma.reshape([1] * data.ndim) if gamma.size == 1 else gamma.reshape(
        [-1 if i == min(1, data.ndim - 1) else 1 for i in range(data.ndim)])
    return np.where(data > 0, data, g * data)


def _leaky_case(draw):
    act = draw(st.sampled_from(["leaky", "elu", "selu", "gelu", "prelu", "rrelu"]))
    shape = draw(shapes(max_dims=4, max_side=4))
    inputs = [draw(_away(shape, [0.0]))]
    attrs = {"act_type": act}
    if act in ("leaky", "elu"):
        attrs["slope"] = draw(st.sampled_from([0.1, 0.25, 0.7]))
    if act == "prelu":
        chans = shape[1] if len(shape) >= 2 else shape[0]
        inputs.append(draw(arr((draw(st.sampled_from([1, chans])),), 0.05, 1.0)))
    return inputs, attrs


def _prelu_pair(draw):
    shape = draw(shapes(max_dims=4, max_side=4))
    chans = shape[1] if len(shape) >= 2 else shape[0]
    return shape, draw(st.sampled_from([1, chans]))


def _prelu_view(shape, size):
    if size == 1:
        return (1,) * len(shape)
    return tuple(size if i == min(1, len(shape) - 1) else 1 for i in range(len(shape)))


def _prelu_expand_case(draw):
    shape, size = _prelu_pair(draw)
    return [draw(arr((size,))), draw(arr(shape))], {}


def _prelu_reduce_case(draw):
    shape, size = _prelu_pair(draw)
    return [draw(arr(shape)), draw(arr((size,)))], {}


def _prelu_reduce_ref(data, gamma):
    view = _prelu_view(data.shape, gamma.size)
    axes = tuple(i for i, v in enumerate(view) if v == 1)
    return data.sum(axis=axes).reshape(gamma.shape)


# -- softmax family -------------------------------------------------------------

def _softmax_case(with_length):
    def case(draw):
        shape = draw(shapes(max_dims=3, max_side=4))
        axis = draw(st.integers(-len(shape), len(shape) - 1))
        attrs = {"axis": axis, "temperature": draw(st.sampled_from([None, 0.5, 2.0]))}
        inputs = [draw(arr(shape))]
        if with_length and draw(st.booleans()):
            ax = axis % len(shape)
            inputs.append(draw(ints(shape[:ax] + shape[ax + 1:], 0, shape[ax], dtype=np.int32)))
            attrs["use_length"] = True
        return inputs, attrs
    return case


def _softmax_spec(name, negate=False, log=False):
    return OpSpec(name, case=_softmax_case(name == "softmax"), grad_inputs=(0,),
                  ref=lambda x, length=None, axis=-1, temperature=None, use_length=False:
                  softmax_ref(x, axis, temperature, length, negate, log))


def _softmax_vjp_case(draw):
    shape = draw(shapes(max_dims=3, max_side=4))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    x = draw(arr(shape))
    return [draw(arr(shape)), softmax_ref(x, axis, None, None, False, False)], {"axis": axis}


def _softmax_vjp_ref(g, y, axis=-1):
    return y * (g - (g * y).sum(axis=axis, keepdims=True))


def _log_softmax_vjp_case(draw):
    (g, y), attrs = _softmax_vjp_case(draw)
    return [g, np.log(y)], attrs          # a log_softmax output


def _log_softmax_vjp_ref(g, y, axis=-1):
    return g - np.exp(y) * g.sum(axis=axis, keepdims=True)


def _sparse_ce_case(draw):
    shape = draw(shapes(min_dims=1, max_dims=3, max_side=4))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    rows = tuple(d for i, d in enumerate(shape) if i != axis % len(shape)) or (1,)
    label = draw(ints(rows, -1, shape[axis] + 1, np.float64))    # out of range: clipped, as pick
    attrs = {"axis": axis}
    if draw(st.booleans()):
        attrs["batch_axis"] = draw(st.integers(-len(shape), len(shape) - 1))
    return [draw(arr(shape)), label], attrs


def _sparse_ce_ref(x, label, axis=-1, batch_axis=None):
    ax = axis % x.ndim
    logp = softmax_ref(x, ax, None, None, False, True)
    idx = np.clip(label.astype(np.int64), 0, x.shape[ax] - 1).reshape(
        tuple(d if i != ax else 1 for i, d in enumerate(x.shape)))
    loss = -np.take_along_axis(logp, idx, axis=ax)
    if batch_axis is None:
        return loss
    b = batch_axis % x.ndim
    return loss.mean(axis=tuple(i for i in range(x.ndim) if i != b)).reshape(-1)


def _sparse_ce_back_case(draw):
    """(head gradient, the forward's hidden log-softmax output, label)."""
    (x, label), attrs = _sparse_ce_case(draw)
    logp = softmax_ref(x, attrs["axis"] % x.ndim, None, None, False, True).astype(x.dtype)
    return [draw(arr(_sparse_ce_ref(x, label, **attrs).shape)), logp, label], attrs


def _sparse_ce_back_ref(g, logp, label, axis=-1, batch_axis=None):
    x = logp
    ax = axis % x.ndim
    p = np.exp(logp)
    kept = tuple(d if i != ax else 1 for i, d in enumerate(x.shape))
    if batch_axis is not None:      # the mean's gradient: spread over the averaged positions
        b = batch_axis % x.ndim
        view = tuple(d if i == b else 1 for i, d in enumerate(kept))
        g = np.broadcast_to(g.reshape(view) / (np.prod(kept) / kept[b]), kept)
    idx = np.clip(label.astype(np.int64), 0, x.shape[ax] - 1).reshape(kept)
    onehot = np.zeros_like(p)
    np.put_along_axis(onehot, idx, 1.0, axis=ax)
    return g * (p - onehot)


def _softmax_act_case(draw):
    mode = draw(st.sampled_from(["instance", "channel"]))
    shape = draw(shapes(min_dims=3 if mode == "channel" else 1, max_dims=4, max_side=3))
    return [draw(arr(shape))], {"mode": mode}


# -- loss layers ----------------------------------------------------------------

def _so_case(draw):
    kind = draw(st.sampled_from(["2d", "multi", "preserve", "prob"]))
    attrs = {"grad_scale": draw(st.sampled_from([1.0, 0.5])),
             "normalization": draw(st.sampled_from(["null", "batch", "valid"])),
             "use_ignore": draw(st.booleans()), "ignore_label": draw(st.sampled_from([-1.0, 0.0, 1.0])),
             "smooth_alpha": draw(st.sampled_from([0.0, 0.1]))}
    if kind == "2d":
        n, k = draw(st.integers(1, 4)), draw(st.integers(2, 5))
        return [draw(arr((n, k))), draw(ints((n,), 0, k - 1, np.float64))], attrs
    if kind == "prob":
        n, k = draw(st.integers(1, 4)), draw(st.integers(2, 5))
        return [draw(arr((n, k))), draw(arr((n, k), 0.0, 1.0))], attrs
    n, k, s = draw(st.integers(1, 3)), draw(st.integers(2, 4)), draw(st.integers(1, 3))
    if kind == "multi":
        attrs["multi_output"] = True
        return [draw(arr((n, k, s))), draw(ints((n, s), 0, k - 1, np.float64))], attrs
    attrs["preserve_shape"] = True
    return [draw(arr((n, s, k))), draw(ints((n, s), 0, k - 1, np.float64))], attrs


def so_forward_ref(data, label, multi_output=False, preserve_shape=False, **kw):
    if multi_output:
        return softmax_ref(data, 1)
    if preserve_shape:
        return softmax_ref(data, -1)
    return softmax_ref(data.reshape(data.shape[0], -1), 1).reshape(data.shape)


def so_backward_ref(g, out, label, grad_scale=1.0, ignore_label=-1.0, multi_output=False, use_ignore=False,
                    preserve_shape=False, normalization="null", out_grad=False, smooth_alpha=0.0):
    """A loop-free restatement of MXNet's SoftmaxOutput backward (smoothing applies everywhere)."""
    if label.shape == out.shape:
        grad = (out - label) * grad_scale
        return grad * g if out_grad else grad
    axis = 1
    if multi_output:
        n, k = out.shape[:2]
        probs, labels = out.reshape(n, k, -1), label.reshape(n, -1).astype(int)
    else:
        probs = out.reshape(-1, out.shape[-1]) if preserve_shape else out.reshape(out.shape[0], -1)
        labels = label.reshape(-1).astype(int)[:probs.shape[0]]   # MXNet reads one label per row
    k = probs.shape[1]
    onehot = np.moveaxis(np.eye(k)[np.clip(labels, 0, k - 1)] * ((labels >= 0) & (labels < k))[..., None], -1, axis)
    target = onehot if smooth_alpha == 0 else np.where(onehot > 0, 1 - smooth_alpha, smooth_alpha / (k - 1))
    grad = probs - target
    if use_ignore:
        grad = grad * np.expand_dims(labels != int(ignore_label), axis)
    count = {"null": 1, "batch": label.shape[0] if multi_output else label.size,
             "valid": max(label.size - int((label.astype(int) == int(ignore_label)).sum()), 1)}[normalization]
    scale = grad_scale / count / (probs.shape[2] if multi_output and normalization != "valid" else 1)
    grad = (grad * scale).reshape(out.shape)
    return grad * g if out_grad else grad


def _so_back_case(draw):
    (data, label), attrs = _so_case(draw)
    attrs["out_grad"] = draw(st.booleans())
    return [draw(arr(data.shape)), so_forward_ref(data, label, **attrs), label], attrs


def _reg_case(draw):
    shape = draw(st.sampled_from([(4, 1), (3, 2), (2, 3, 2)]))
    lshape = (shape[0],) if shape == (4, 1) else shape
    return [draw(arr(shape)), draw(arr(lshape))], {"grad_scale": draw(st.sampled_from([1.0, 2.0]))}


def _reg_back_ref(fn):
    def ref(out, label, grad_scale=1.0):
        return fn(out - label.reshape(out.shape)) * grad_scale / (label.size // label.shape[0])
    return ref


def _make_loss_case(draw):
    return [draw(arr(shapes(max_dims=3)))], {"grad_scale": draw(st.sampled_from([1.0, 0.5])),
                                             "normalization": draw(st.sampled_from(["null", "batch", "valid"])),
                                             "valid_thresh": draw(st.sampled_from([0.0, 0.5]))}


def _make_loss_back_ref(data, grad_scale=1.0, valid_thresh=0.0, normalization="null"):
    norm = {"null": 1, "batch": data.shape[0], "valid": max(int((data > valid_thresh).sum()), 1)}[normalization]
    return np.full(data.shape, grad_scale / norm)


def _sce_case(draw):
    n, k = draw(st.integers(1, 4)), draw(st.integers(2, 5))
    return [draw(arr((n, k))), draw(ints((n,), 0, k - 1, np.float64))], {}


def _sce_ref(data, label):
    logp = softmax_ref(data, 1, log=True)
    return np.array([-logp[np.arange(len(label)), label.astype(int)].sum()])


def _sce_back_ref(g, data, label):
    return (softmax_ref(data, 1) - np.eye(data.shape[1])[label.astype(int)]) * g.reshape(())


# -- smooth_l1, hard_sigmoid ------------------------------------------------------

def _smooth_l1_case(draw):
    s = draw(st.sampled_from([1.0, 2.0, 0.8]))
    return [draw(_away(shapes(), [1 / s**2, -1 / s**2], -3, 3))], {"scalar": s}


def _smooth_l1_ref(x, scalar=1.0):
    s2 = scalar * scalar
    return np.where(np.abs(x) < 1 / s2, 0.5 * s2 * x * x, np.abs(x) - 0.5 / s2)


def _hard_sigmoid_case(draw):
    alpha, beta = draw(st.sampled_from([0.2, 0.3])), draw(st.sampled_from([0.5, 0.4]))
    return [draw(_away(shapes(), [-beta / alpha, (1 - beta) / alpha], -5, 5))], {"alpha": alpha, "beta": beta}


SPECS = [
    OpSpec("FullyConnected", case=_fc_case, ref=fc_ref),
    OpSpec("_backward_FullyConnected", case=_fc_back_case, ref=fc_back_ref),
    OpSpec("_backward_FullyConnected_data", case=_fc_data_grad_case, ref=fc_data_grad_ref, grad_inputs=(0, 2)),
    OpSpec("_backward_FullyConnected_weight", case=_fc_weight_grad_case, ref=fc_weight_grad_ref,
           grad_inputs=(0, 1)),
    OpSpec("Activation", case=lambda draw: ([draw(_away(shapes(), [0.0]))],
                                            {"act_type": draw(st.sampled_from(sorted(_ACT_REF)))}),
           ref=lambda x, act_type: _ACT_REF[act_type](x)),
    OpSpec("LeakyReLU", case=_leaky_case, ref=_leaky_ref),
    OpSpec("_prelu_expand", case=_prelu_expand_case,
           ref=lambda g, like: np.broadcast_to(g.reshape(_prelu_view(like.shape, g.size)), like.shape),
           grad_inputs=(0,)),
    OpSpec("_prelu_reduce", case=_prelu_reduce_case, ref=_prelu_reduce_ref, grad_inputs=(0,)),
    _softmax_spec("softmax"),
    _softmax_spec("log_softmax", log=True),
    _softmax_spec("softmin", negate=True),
    OpSpec("_backward_softmax", case=_softmax_vjp_case, ref=_softmax_vjp_ref),
    OpSpec("_backward_log_softmax", case=_log_softmax_vjp_case, ref=_log_softmax_vjp_ref),
    OpSpec("_sparse_softmax_ce", case=_sparse_ce_case, ref=_sparse_ce_ref, grad_inputs=(0,)),
    OpSpec("_backward_sparse_softmax_ce", case=_sparse_ce_back_case, ref=_sparse_ce_back_ref,
           nondiff="first-order backward helper: create_graph uses the differentiable chain instead"),
    OpSpec("_nn_cast_like", case=lambda draw: ([draw(arr(shapes())), draw(arr((1,)))], {}),
           ref=lambda x, like: x, grad_inputs=(0,)),
    OpSpec("SoftmaxActivation", case=_softmax_act_case,
           ref=lambda x, mode: softmax_ref(x, 1 if mode == "channel" else -1)),
    OpSpec("SoftmaxOutput", case=_so_case, ref=so_forward_ref, nondiff=_LOSS),
    OpSpec("_backward_SoftmaxOutput", case=_so_back_case, ref=so_backward_ref, nondiff=_BACKWARD),
    OpSpec("LinearRegressionOutput", case=_reg_case, ref=lambda x, label, grad_scale: x, nondiff=_LOSS),
    OpSpec("MAERegressionOutput", case=_reg_case, ref=lambda x, label, grad_scale: x, nondiff=_LOSS),
    OpSpec("LogisticRegressionOutput", case=_reg_case, ref=lambda x, label, grad_scale: 1 / (1 + np.exp(-x)),
           nondiff=_LOSS),
    OpSpec("_backward_linear_reg_out", case=_reg_case, ref=_reg_back_ref(lambda d: d), nondiff=_BACKWARD),
    OpSpec("_backward_logistic_reg_out", case=_reg_case, ref=_reg_back_ref(lambda d: d), nondiff=_BACKWARD),
    OpSpec("_backward_mae_reg_out", case=_reg_case, ref=_reg_back_ref(lambda d: np.where(d > 0, 1.0, -1.0)),
           nondiff=_BACKWARD),
    OpSpec("MakeLoss", case=_make_loss_case, ref=lambda x, **kw: x, nondiff=_LOSS),
    OpSpec("_backward_MakeLoss", case=_make_loss_case, ref=_make_loss_back_ref,
           nondiff="zero gradient (piecewise constant in data)"),
    OpSpec("make_loss", case=lambda draw: ([draw(arr(shapes()))], {}), ref=lambda x: x, nondiff=_LOSS),
    OpSpec("softmax_cross_entropy", case=_sce_case, ref=_sce_ref, grad_inputs=(0,)),
    OpSpec("_backward_softmax_cross_entropy",
           case=lambda draw: ([draw(arr((1,))), *_sce_case(draw)[0]], {}),
           ref=_sce_back_ref, nondiff=_BACKWARD),
    OpSpec("smooth_l1", case=_smooth_l1_case, ref=_smooth_l1_ref),
    OpSpec("hard_sigmoid", case=_hard_sigmoid_case, ref=lambda x, alpha, beta: np.clip(alpha * x + beta, 0, 1)),
    OpSpec("_contrib_div_sqrt_dim", case=lambda draw: ([draw(arr(shapes()))], {}),
           ref=lambda x: x / math.sqrt(x.shape[-1])),
    OpSpec("Dropout", case=lambda draw: ([draw(arr(shapes()))], {"p": draw(st.sampled_from([0.0, 0.3, 0.5]))}),
           ref=lambda x, p: x),  # inference: identity; training is tested in tests/nd/test_nn_ops.py
]
