"""Specs for nd/ops/norm.py: BatchNorm, LayerNorm, InstanceNorm, GroupNorm,
L2Normalization, LRN, moments and their hidden backward operators.

The numpy references here (float64, written from MXNet's documented formulas)
are also used by tests/nd/test_norm_ops.py.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, shapes

# ---------------------------------------------------------------------------
# numpy references


def _f32(v):
    """MXNet declares these attributes as C float: they have float32 precision."""
    return float(np.float32(v))


def _bcast(v, ndim, axis):
    shape = [1] * ndim
    shape[axis] = -1
    return np.asarray(v).reshape(shape)


def ref_batch_norm(data, gamma, beta, moving_mean, moving_var, *, eps=1e-3, momentum=0.9, fix_gamma=True,
                   use_global_stats=False, output_mean_var=False, axis=1, is_train=True, **_):
    """(out, mean used, 1/sqrt(var used + eps)); batch statistics when training."""
    ax = axis % data.ndim
    red = tuple(i for i in range(data.ndim) if i != ax)
    if is_train and not use_global_stats:
        mean, var = data.mean(axis=red), data.var(axis=red)
    else:
        mean, var = moving_mean, moving_var
    invstd = 1 / np.sqrt(var + eps)
    w = np.ones_like(gamma) if fix_gamma else gamma
    out = (data - _bcast(mean, data.ndim, ax)) * _bcast(invstd * w, data.ndim, ax) + _bcast(beta, data.ndim, ax)
    return (out, mean, invstd) if output_mean_var else out


def ref_layer_norm(data, gamma, beta, *, axis=-1, eps=1e-5, output_mean_var=False):
    eps = _f32(eps)
    ax = axis % data.ndim
    mean = data.mean(axis=ax, keepdims=True)
    std = np.sqrt(data.var(axis=ax, keepdims=True) + eps)
    out = (data - mean) / std * _bcast(gamma, data.ndim, ax) + _bcast(beta, data.ndim, ax)
    return (out, mean, std) if output_mean_var else out


def ref_instance_norm(data, gamma, beta, *, eps=1e-3):
    eps = _f32(eps)
    red = tuple(range(2, data.ndim))
    mean = data.mean(axis=red, keepdims=True)
    var = data.var(axis=red, keepdims=True)
    return (data - mean) / np.sqrt(var + eps) * _bcast(gamma, data.ndim, 1) + _bcast(beta, data.ndim, 1)


def ref_group_norm(data, gamma, beta, *, num_groups=1, eps=1e-5, output_mean_var=False):
    eps = _f32(eps)
    n = data.shape[0]
    x = data.reshape(n, num_groups, -1)
    mean = x.mean(axis=2, keepdims=True)
    std = np.sqrt(x.var(axis=2, keepdims=True) + eps)
    out = ((x - mean) / std * gamma.reshape(1, -1, 1) + beta.reshape(1, -1, 1)).reshape(data.shape)
    return (out, mean.reshape(n, -1), std.reshape(n, -1)) if output_mean_var else out


def ref_l2_normalization(data, *, eps=1e-10, mode="instance"):
    eps = _f32(eps)
    axes = {"instance": tuple(range(1, data.ndim)), "channel": (1,), "spatial": tuple(range(2, data.ndim))}[mode]
    return data / np.sqrt((data ** 2).sum(axis=axes, keepdims=True) + eps)


def ref_lrn(data, *, nsize, alpha=1e-4, beta=0.75, knorm=2.0):
    alpha, beta, knorm = _f32(alpha), _f32(beta), _f32(knorm)
    c = data.shape[1]
    sq = data ** 2
    window = np.stack([sq[:, max(0, i - nsize // 2):i + nsize // 2 + 1].sum(axis=1) for i in range(c)], axis=1)
    return data * (knorm + alpha / nsize * window) ** -beta


def ref_moments(data, *, axes, keepdims=False):
    axes = tuple(axes)
    return data.mean(axis=axes, keepdims=keepdims), data.var(axis=axes, keepdims=keepdims)


# ---------------------------------------------------------------------------
# cases


def _channels(draw, min_dims=2, max_dims=4):
    return draw(shapes(min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=4))


def _bn_case(draw):
    shape = _channels(draw)
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    c = shape[axis]
    attrs = {"axis": axis, "fix_gamma": draw(st.booleans()), "use_global_stats": draw(st.booleans()),
             "eps": draw(st.sampled_from([1e-3, 0.1]))}
    return [draw(arr(shape)), draw(arr((c,))), draw(arr((c,))), draw(arr((c,))),
            draw(arr((c,), 0.5, 2.0))], attrs


def _ln_case(draw):
    shape = _channels(draw, 1)
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    c = shape[axis]
    return [draw(arr(shape)), draw(arr((c,))), draw(arr((c,)))], {
        "axis": axis, "eps": draw(st.sampled_from([1e-3, 0.1]))}


def _in_case(draw):
    shape = _channels(draw, 3, 5)
    return [draw(arr(shape)), draw(arr((shape[1],))), draw(arr((shape[1],)))], {
        "eps": draw(st.sampled_from([1e-3, 0.1]))}


def _gn_case(draw):
    groups = draw(st.integers(1, 3))
    shape = (draw(st.integers(1, 3)), groups * draw(st.integers(1, 2))) + draw(shapes(1, 2, 1, 3))
    return [draw(arr(shape)), draw(arr((groups,))), draw(arr((groups,)))], {
        "num_groups": groups, "eps": draw(st.sampled_from([1e-3, 0.1]))}


def _l2_case(draw):
    mode = draw(st.sampled_from(["instance", "channel", "spatial"]))
    shape = _channels(draw, 1 if mode == "instance" else 3)
    return [draw(arr(shape, away_from=0.0))], {"mode": mode, "eps": draw(st.sampled_from([1e-10, 1e-3]))}


def _lrn_case(draw):
    shape = _channels(draw, 2, 4)
    return [draw(arr(shape))], {"nsize": draw(st.sampled_from([1, 3, 5])),
                                "alpha": draw(st.sampled_from([1e-4, 0.5])),
                                "beta": draw(st.sampled_from([0.75, 0.3])),
                                "knorm": draw(st.sampled_from([2.0, 1.0]))}


def _moments_case(draw):
    shape = _channels(draw, 1, 4)
    axes = draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape), unique=True))
    neg = draw(st.booleans())
    return [draw(arr(shape))], {"axes": tuple(a - len(shape) if neg else a for a in axes),
                                "keepdims": draw(st.booleans())}


def _backward_of(forward_case, extra):
    """Case for a hidden backward op: an ograd like the data, then `extra(draw, inputs, attrs)`."""
    def case(draw):
        inputs, attrs = forward_case(draw)
        data = inputs[0]
        return [draw(arr(data.shape)), *extra(draw, inputs, attrs)], attrs
    return case


def _bn_backward_extra(draw, inputs, attrs):
    data, gamma, _, mm, mv = inputs
    c = gamma.shape[0]
    return [data, gamma, draw(arr((c,))), draw(arr((c,), 0.5, 2.0)), mm, mv]


def _stats_extra(stat_shape):
    def extra(draw, inputs, attrs):
        data, gamma = inputs[0], inputs[1]
        s = stat_shape(data.shape, attrs)
        return [data, gamma, draw(arr(s)), draw(arr(s, 0.5, 2.0))]
    return extra


def _ln_stat(shape, attrs):
    ax = attrs["axis"] % len(shape)
    return shape[:ax] + (1,) + shape[ax + 1:]


def _l2_backward_case(draw):
    (data,), attrs = _l2_case(draw)
    y = ref_l2_normalization(data, **attrs)
    norm = {"instance": lambda: np.sqrt((data ** 2).reshape(data.shape[0], -1).sum(1)),
            "channel": lambda: np.sqrt((data ** 2).sum(axis=1, keepdims=True)),
            "spatial": lambda: np.sqrt((data ** 2).reshape(data.shape[:2] + (-1,)).sum(2))}[attrs["mode"]]()
    return [draw(arr(data.shape)), y, norm], attrs


def _lrn_backward_case(draw):
    (data,), attrs = _lrn_case(draw)
    return [draw(arr(data.shape)), data, draw(arr(data.shape, 1.0, 3.0))], attrs


def _moments_backward_case(draw):
    (data,), attrs = _moments_case(draw)
    mean, _ = ref_moments(data, **attrs)
    return [draw(arr(mean.shape)), draw(arr(mean.shape)), data, mean], attrs


_HIDDEN = ("hidden backward operator: MXNet gives it no gradient either; its values are "
           "checked through the forward operator's gradient")

SPECS = [
    OpSpec("BatchNorm", case=_bn_case, ref=ref_batch_norm, is_train=True, grad_inputs=(0, 1, 2),
           rtol=1e-7, atol=1e-9),
    OpSpec("LayerNorm", case=_ln_case, ref=ref_layer_norm, rtol=1e-7, atol=1e-9),
    OpSpec("InstanceNorm", case=_in_case, ref=ref_instance_norm, rtol=1e-7, atol=1e-9),
    OpSpec("GroupNorm", case=_gn_case, ref=ref_group_norm, rtol=1e-7, atol=1e-9),
    OpSpec("L2Normalization", case=_l2_case, ref=ref_l2_normalization, rtol=1e-7, atol=1e-9),
    OpSpec("LRN", case=_lrn_case, ref=ref_lrn, rtol=1e-7, atol=1e-9),
    OpSpec("moments", case=_moments_case, ref=ref_moments, rtol=1e-7, atol=1e-9),
    OpSpec("_backward_BatchNorm", case=_backward_of(_bn_case, _bn_backward_extra), nondiff=_HIDDEN),
    OpSpec("_backward_LayerNorm", case=_backward_of(_ln_case, _stats_extra(_ln_stat)), nondiff=_HIDDEN),
    OpSpec("_backward_InstanceNorm",
           case=_backward_of(_in_case, _stats_extra(lambda s, a: s[:2])), nondiff=_HIDDEN),
    OpSpec("_backward_GroupNorm",
           case=_backward_of(_gn_case, _stats_extra(lambda s, a: (s[0], a["num_groups"]))), nondiff=_HIDDEN),
    OpSpec("_backward_L2Normalization", case=_l2_backward_case, nondiff=_HIDDEN),
    OpSpec("_backward_LRN", case=_lrn_backward_case, nondiff=_HIDDEN),
    OpSpec("_backward_moments", case=_moments_backward_case, nondiff=_HIDDEN),
]
