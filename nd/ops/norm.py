"""Normalization operators with a learned scale and shift: BatchNorm,
LayerNorm, InstanceNorm and GroupNorm (L2Normalization, LRN and moments live in
normalize.py, which shares the helpers here).

Each operator computes its statistics once in the forward pass and returns
them as (usually hidden) extra outputs, as MXNet 1.9.1 does; the gradient rule
hands them to a hidden `_backward_<Op>` operator, an ordinary registry entry
whose kernel computes every input gradient in one pass. BatchNorm's moving
statistics are updated by `_backward_BatchNorm` (MXNet updates them in the
backward pass, not the forward), which therefore declares `mutate_inputs`.

Statistics of float16 data are computed in float32 (MXNet's AccReal), other
float dtypes in their own precision.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..attrs import Attr, Attrs
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import merge_shape, register
from . import norm_jit

Shape = tuple


# ---------------------------------------------------------------------------
# shared helpers


def _acc_dtype(dtype) -> np.dtype:
    """The dtype statistics are computed (and BatchNorm parameters kept) in."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _f32(value: float) -> float:
    """An attribute MXNet declares as C `float`, at the float32 precision it has there."""
    return float(np.float32(value))


def _check_float(op: str, name: str, dtype) -> None:
    """Normalization kernels only run on floating point data (as in MXNet)."""
    if dtype is not None and np.dtype(dtype).kind != "f":
        raise DTypeError(f"operator {op}: input {name!r} must be a floating point type "
                         f"(float16/float32/float64), got {np.dtype(dtype).name}")


def _real_axis(op: str, axis: int, ndim: int) -> int:
    """A possibly negative axis as an index into `ndim` dims, or a ShapeError."""
    real = axis + ndim if axis < 0 else axis
    if not 0 <= real < ndim:
        raise ShapeError(f"operator {op}: axis {axis} is out of range for data with {ndim} "
                         f"dimension(s); expected -{ndim} <= axis < {ndim}")
    return real


def _merge_input(op: str, name: str, expected: Shape | None, got: Shape | None) -> Shape | None:
    """Unify an input's given shape with the one the operator requires."""
    try:
        return merge_shape(expected, got)
    except ShapeError:
        raise ShapeError(f"operator {op}: input {name!r} has shape {tuple(got)}, "
                         f"expected {tuple(expected)}") from None


def _param_shapes(op: str, names: Sequence[str], shapes: Sequence[Shape | None],
                  size: int) -> tuple[Shape, int]:
    """Merge 1-D parameter shapes (gamma, beta, ...) with each other and with `size`
    (0 = unknown); returns the common shape and the size it fixes."""
    common: Shape = (size,)
    for name, s in zip(names, shapes):
        common = _merge_input(op, name, common, s)
    return common, common[0]


def _bshape(ndim: int, axis: int, size: int = -1) -> tuple:
    """Shape that broadcasts a per-`axis` vector against an `ndim`-d array."""
    shape = [1] * ndim
    shape[axis] = size
    return tuple(shape)


def _others(ndim: int, axes: Sequence[int]) -> tuple:
    """Every axis of an `ndim`-d array except `axes`."""
    return tuple(i for i in range(ndim) if i not in axes)


def _float_types(op: str, names: Sequence[str], n_out: int):
    """Type rule: every input and output has one floating point dtype."""
    def infer_type(a: Attrs, *dtypes):
        t = None
        for name, d in zip(names, dtypes):
            if d is None:
                continue
            _check_float(op, name, d)
            if t is None:
                t = d
            elif np.dtype(d) != np.dtype(t):
                raise DTypeError(f"operator {op}: input {name!r} has dtype {np.dtype(d).name}, "
                                 f"expected {np.dtype(t).name} (all inputs share one dtype)")
        return None if t is None else ([t] * len(dtypes), [t] * n_out)
    return infer_type


def _grad_types(n_grads: int, sources: Sequence[int]):
    """Type rule of a hidden backward op: gradient i has the dtype of input sources[i]."""
    def infer_type(a: Attrs, *dtypes):
        if any(dtypes[i] is None for i in sources[:n_grads]):
            return None
        return list(dtypes), [dtypes[i] for i in sources[:n_grads]]
    return infer_type


def _mean_center(xp, x, axes: tuple, acc) -> tuple[Any, Any, Any]:
    """(mean, x - mean, biased variance) over `axes`, kept dims, in dtype `acc`."""
    xa = x.astype(acc, copy=False)
    mean = xa.mean(axis=axes, keepdims=True)
    xc = xa - mean
    var = (xc * xc).mean(axis=axes, keepdims=True)
    return mean, xc, var


def _affine_backward(xp, g, xhat, scale, *, inv, axes: tuple):
    """d(data) of y = xhat * scale + shift, xhat normalised over `axes` with 1/std `inv`:
    (g*scale - mean(g*scale) - xhat * mean(g*scale*xhat)) * inv."""
    gs = g * scale
    return (gs - gs.mean(axis=axes, keepdims=True)
            - xhat * (gs * xhat).mean(axis=axes, keepdims=True)) * inv


_EPS_DOC = "An `epsilon` parameter to prevent division by 0."

# ---------------------------------------------------------------------------
# BatchNorm

_BN_INPUTS = ("data", "gamma", "beta", "moving_mean", "moving_var")
_BN_ATTRS = {
    "eps": Attr("float", 1e-3, "Epsilon to prevent div 0 (cuDNN needs at least 1e-5)."),
    "momentum": Attr("float", 0.9, "Momentum for moving average."),
    "fix_gamma": Attr("bool", True, "Fix gamma while training: gamma is treated as 1 and gets "
                                    "a zero gradient."),
    "use_global_stats": Attr("bool", False, "Use the moving statistics instead of the batch "
                                            "statistics, in training too (a scale-shift operator)."),
    "output_mean_var": Attr("bool", False, "Also output the mean and the inverse std."),
    "axis": Attr("int", 1, "The axis of the channel (normalized separately); -1 is the last."),
    "cudnn_off": Attr("bool", False, "Do not select cuDNN (no effect here)."),
    "min_calib_range": Attr("float", None, "Minimum calibrated output value (quantized "
                                           "BatchNorm only; no effect here)."),
    "max_calib_range": Attr("float", None, "Maximum calibrated output value (quantized "
                                           "BatchNorm only; no effect here)."),
}


def _bn_shape(a: Attrs, data, gamma, beta, moving_mean, moving_var):  # noqa: PLR0917 - one parameter per input
    """gamma, beta and the moving statistics are (C,), C = data.shape[axis]; a known
    parameter shape fills an unknown channel dim of data."""
    if data is None:
        return None
    ax = _real_axis("BatchNorm", a.axis, len(data))
    pshape, c = _param_shapes("BatchNorm", _BN_INPUTS[1:], (gamma, beta, moving_mean, moving_var),
                              data[ax])
    data = data[:ax] + (c,) + data[ax + 1:]
    return [data, pshape, pshape, pshape, pshape], [data, pshape, pshape]


def _bn_type(a: Attrs, data, *params):
    """float16 data keeps its parameters and statistics in float32, others in its own dtype."""
    if data is None:
        return None
    _check_float("BatchNorm", "data", data)
    pt = _acc_dtype(data)
    for name, d in zip(_BN_INPUTS[1:], params):
        if d is not None and np.dtype(d) != pt:
            raise DTypeError(f"operator BatchNorm: input {name!r} has dtype {np.dtype(d).name}, "
                             f"expected {pt.name} for {np.dtype(data).name} data")
    return [data, pt, pt, pt, pt], [data, pt, pt]


def _bn_layout(a: Attrs, x) -> tuple[int, tuple, tuple]:
    """(channel axis, reduction axes, broadcast shape of per-channel vectors)."""
    ax = _real_axis("BatchNorm", a.axis, x.ndim)
    return ax, _others(x.ndim, (ax,)), _bshape(x.ndim, ax)


def _inv_std(xp, var, eps: float, acc):
    """1 / sqrt(var + eps); 0 where var + eps == 0 (MXNet's guard against 0-division)."""
    denom = var + acc.type(eps)
    if eps != 0:
        return 1.0 / xp.sqrt(denom)
    zero = denom == 0
    return xp.where(zero, acc.type(0), 1.0 / xp.sqrt(xp.where(zero, acc.type(1), denom)))


def _bn_uses_batch_stats(a: Attrs, is_train: bool) -> bool:
    return is_train and not a.use_global_stats


def _bn_scale_shift(a: Attrs, gamma, beta, moving_mean, moving_var) -> tuple:
    """Inference BatchNorm as `data * scale + shift` per channel (float64 numpy), for the
    fold_batchnorm pass: scale = gamma / sqrt(var + eps), shift = beta - mean * scale."""
    inv = _inv_std(np, moving_var.astype(np.float64), a.eps, np.dtype(np.float64))
    scale = inv if a.fix_gamma else inv * gamma.astype(np.float64)
    return a.axis, scale, beta.astype(np.float64) - moving_mean.astype(np.float64) * scale


@register("BatchNorm", aliases=("_npx_batch_norm",), inputs=_BN_INPUTS,
          aux=("moving_mean", "moving_var"), outputs=("output", "mean", "var"),
          inference_scale_shift=_bn_scale_shift,
          num_visible_outputs=lambda a: 3 if a.output_mean_var else 1, attrs=_BN_ATTRS,
          infer_shape=_bn_shape, infer_type=_bn_type, train_aware=True,
          learnable=("gamma", "beta", "moving_mean", "moving_var"),
          var_init={3: '["zero", {}]', 4: '["one", {}]'})
def batch_norm(xp, a: Attrs, data, gamma, beta, moving_mean, moving_var, is_train: bool = False):  # noqa: PLR0917 - one parameter per input
    """Batch normalization over every axis but `axis`:
    out = (data - mean) / sqrt(var + eps) * gamma + beta.

    In training (and not `use_global_stats`) mean/var are the batch's (biased)
    statistics, otherwise the moving ones. The hidden outputs are the mean used
    and the inverse std 1/sqrt(var + eps). The moving statistics are updated by
    the backward pass, not here (as in MXNet)."""
    _check_float("BatchNorm", "data", data.dtype)
    _bn_shape(a, data.shape, gamma.shape, beta.shape, moving_mean.shape, moving_var.shape)
    acc = _acc_dtype(data.dtype)
    ax, red, bs = _bn_layout(a, data)
    compiled = _compiled_bn(xp, ax, acc, data)     # norm_jit's two passes, numpy's arithmetic
    xc = None
    if _bn_uses_batch_stats(a, is_train):
        if compiled is not None:
            mean, var = np.empty(data.shape[1], acc), np.empty(data.shape[1], acc)
            compiled.stats(norm_jit.as_ncs(data), mean, var)
        else:
            mean, xc, var = _mean_center(xp, data, red, acc)
            mean, var = mean.reshape(-1), var.reshape(-1)
    else:
        # a copy: the mean output must not alias the moving_mean the backward updates
        mean, var = moving_mean.astype(acc), moving_var.astype(acc, copy=False)
        if compiled is None:
            xc = data.astype(acc, copy=False) - mean.reshape(bs)
    invstd = _inv_std(xp, var, a.eps, acc)
    scale = invstd if a.fix_gamma else invstd * gamma.astype(acc, copy=False)
    if compiled is not None:
        out = np.empty_like(data)
        compiled.apply(norm_jit.as_ncs(data), mean, scale, beta.astype(acc, copy=False), norm_jit.as_ncs(out))
    else:
        # out = xc * scale + beta, in place in xc (a fresh array) rather than two temporaries
        out = xp.multiply(xc, scale.reshape(bs), out=xc)
        out += beta.astype(acc, copy=False).reshape(bs)
    return out.astype(data.dtype, copy=False), mean, invstd.astype(acc, copy=False)


def _compiled_bn(xp, ax: int, acc, *arrays):
    """norm_jit's kernels where they apply (numpy, channel axis 1, float32/float64 data that is
    its own accumulation dtype, contiguous runs), else None."""
    if xp is not np or ax != 1 or np.dtype(acc) != arrays[0].dtype or not norm_jit.applies(*arrays):
        return None
    return norm_jit.kernels()


def _from_saved_stats(backward: str) -> Callable:
    """The gradient of a normalization op with inputs (data, gamma, beta) and outputs (out, two
    saved statistics): the `backward` op of (ograd, data, gamma, statistics) gives all three grads."""

    def gradient(F, a, inputs, outputs, ograds):
        data, gamma, _ = inputs
        return list(getattr(F, backward)(ograds[0], data, gamma, outputs[1], outputs[2], **a.given))

    return gradient


@batch_norm.def_gradient
def _(F, a, inputs, outputs, ograds):
    data, gamma, beta, moving_mean, moving_var = inputs
    dx, dgamma, dbeta = F._backward_BatchNorm(ograds[0], data, gamma, outputs[1], outputs[2],
                                              moving_mean, moving_var, **a.given)
    return [dx, dgamma, dbeta, None, None]


def _bn_backward_shape(a: Attrs, ograd, data, gamma, mean, invstd, moving_mean, moving_var):  # noqa: PLR0917 - one parameter per input
    data = merge_shape(ograd, data)
    got = _bn_shape(a, data, gamma, mean, moving_mean, moving_var)
    if got is None:
        return None
    (data, p, *_), _ = got
    p = _merge_input("_backward_BatchNorm", "invstd", p, invstd)
    return [data, data, p, p, p, p, p], [data, p, p]


@register("_backward_BatchNorm", inputs=("ograd", "data", "gamma", "mean", "invstd",
                                         "moving_mean", "moving_var"),
          outputs=("data_grad", "gamma_grad", "beta_grad"), attrs=_BN_ATTRS,
          infer_shape=_bn_backward_shape, infer_type=_grad_types(3, (1, 2, 2)),
          train_aware=True, mutate_inputs=(5, 6))
def _backward_batch_norm(xp, a: Attrs, ograd, data, gamma, mean, invstd, moving_mean, moving_var,  # noqa: PLR0917 - one parameter per input
                         is_train: bool = False):
    """Gradients of BatchNorm for (data, gamma, beta); in training with batch
    statistics it also updates moving_mean / moving_var in place:
    new = momentum * old + (1 - momentum) * batch_stat (biased batch variance)."""
    acc = _acc_dtype(data.dtype)
    ax, red, bs = _bn_layout(a, data)
    n = data.size // max(data.shape[ax], 1)
    eps = acc.type(a.eps)
    if _bn_uses_batch_stats(a, is_train):
        zero = invstd == 0
        safe = xp.where(zero, acc.type(1), invstd)
        var = xp.where(zero, acc.type(0), 1.0 / (safe * safe) - eps)
        m = acc.type(_f32(a.momentum))
        moving_mean[...] = (moving_mean * m + mean * (1 - m)).astype(moving_mean.dtype, copy=False)
        moving_var[...] = (moving_var * m + var * (1 - m)).astype(moving_var.dtype, copy=False)
    else:
        mean = moving_mean.astype(acc, copy=False)
        invstd = _inv_std(xp, moving_var.astype(acc, copy=False), a.eps, acc)
    w = xp.ones_like(invstd) if a.fix_gamma else gamma.astype(acc, copy=False)
    batch = _bn_uses_batch_stats(a, is_train)
    compiled = _compiled_bn(xp, ax, acc, data, ograd) if batch else None
    if compiled is not None:         # the same formula, its sums in float64, dx in one pass
        g3, x3 = norm_jit.as_ncs(ograd), norm_jit.as_ncs(data)
        sums = np.empty((2, data.shape[1]), np.float64)
        compiled.grad_sums(g3, x3, mean, sums[0], sums[1])
        sum_g, dotp = sums.astype(acc)
    else:
        g = ograd.astype(acc, copy=False)
        # two full-size buffers, every step written into one of them (the arithmetic, and so the
        # result, of the textbook expression in the comments; its temporaries cost more than it)
        xc = xp.subtract(data.astype(acc, copy=False), mean.reshape(bs))
        sum_g = g.sum(axis=red)
        tmp = xp.multiply(xc, g)
        dotp = tmp.sum(axis=red)                                     # (xc * g).sum(axis=red)
    if batch:
        # dx = (g - sum_g / n - xc * k) * (invstd * w)
        gmean, k, scale = sum_g / n, dotp * invstd * invstd / n, invstd * w
        if compiled is not None:
            dx = np.empty_like(data)
            compiled.grad_apply(g3, x3, mean, gmean, k, scale, norm_jit.as_ncs(dx))
        else:
            xp.multiply(xc, k.reshape(bs), out=xc)
            xp.subtract(g, gmean.reshape(bs), out=tmp)
            xp.subtract(tmp, xc, out=tmp)
            dx = xp.multiply(tmp, scale.reshape(bs), out=tmp)
    else:
        dx = xp.multiply(g, (invstd * w).reshape(bs), out=tmp)
    dgamma = xp.zeros_like(dotp) if a.fix_gamma else dotp * invstd
    pt = gamma.dtype
    return dx.astype(data.dtype, copy=False), dgamma.astype(pt, copy=False), sum_g.astype(pt, copy=False)


# ---------------------------------------------------------------------------
# LayerNorm

_LN_ATTRS = {
    "axis": Attr("int", -1, "The axis to normalize over (usually the channel axis); negative "
                            "values count from the end."),
    "eps": Attr("float", 1e-5, _EPS_DOC),
    "output_mean_var": Attr("bool", False, "Also output the mean and std along the axis."),
}


def _ln_shape(a: Attrs, data, gamma, beta):
    """gamma and beta are (data.shape[axis],); mean and std keep data's shape with 1 at axis."""
    if data is None:
        return None
    ax = _real_axis("LayerNorm", a.axis, len(data))
    pshape, c = _param_shapes("LayerNorm", ("gamma", "beta"), (gamma, beta), data[ax])
    data = data[:ax] + (c,) + data[ax + 1:]
    stat = data[:ax] + (1,) + data[ax + 1:]
    return [data, pshape, pshape], [data, stat, stat]


@register("LayerNorm", aliases=("_npx_layer_norm",), inputs=("data", "gamma", "beta"),
          outputs=("output", "mean", "std"),
          num_visible_outputs=lambda a: 3 if a.output_mean_var else 1, attrs=_LN_ATTRS,
          infer_shape=_ln_shape, infer_type=_float_types("LayerNorm", ("data", "gamma", "beta"), 3),
          learnable=("gamma", "beta"))
def layer_norm(xp, a: Attrs, data, gamma, beta):
    """Layer normalization along `axis`:
    out = (data - mean) / sqrt(var + eps) * gamma + beta; the hidden outputs are
    mean and std = sqrt(var + eps), with data's shape and 1 at `axis`."""
    _check_float("LayerNorm", "data", data.dtype)
    _ln_shape(a, data.shape, gamma.shape, beta.shape)
    acc = _acc_dtype(data.dtype)
    ax = _real_axis("LayerNorm", a.axis, data.ndim)
    bs = _bshape(data.ndim, ax)
    mean, xc, var = _mean_center(xp, data, (ax,), acc)
    std = xp.sqrt(var + acc.type(_f32(a.eps)))
    out = xc / std * gamma.astype(acc, copy=False).reshape(bs) + beta.astype(acc, copy=False).reshape(bs)
    dt = data.dtype
    return out.astype(dt, copy=False), mean.astype(dt, copy=False), std.astype(dt, copy=False)


layer_norm.def_gradient(_from_saved_stats("_backward_LayerNorm"))


def _stat_backward_shape(forward_shape):
    """Shape rule of a hidden backward op with inputs (ograd, data, gamma, mean, std)."""
    def infer_shape(a: Attrs, ograd, data, gamma, mean, std):  # noqa: PLR0917 - one parameter per input
        data = merge_shape(ograd, data)
        got = forward_shape(a, data, gamma, None)
        if got is None:
            return None
        (data, p, _), (_, stat, _) = got
        return [data, data, p, stat, stat], [data, p, p]
    return infer_shape


@register("_backward_LayerNorm", inputs=("ograd", "data", "gamma", "mean", "std"),
          outputs=("data_grad", "gamma_grad", "beta_grad"), attrs=_LN_ATTRS,
          infer_shape=_stat_backward_shape(_ln_shape), infer_type=_grad_types(3, (1, 2, 2)))
def _backward_layer_norm(xp, a: Attrs, ograd, data, gamma, mean, std):  # noqa: PLR0917 - one parameter per input
    """Gradients of LayerNorm for (data, gamma, beta) from the saved mean and std."""
    acc = _acc_dtype(data.dtype)
    ax = _real_axis("LayerNorm", a.axis, data.ndim)
    bs, red = _bshape(data.ndim, ax), _others(data.ndim, (ax,))
    g = ograd.astype(acc, copy=False)
    inv = 1.0 / std.astype(acc, copy=False)
    xhat = (data.astype(acc, copy=False) - mean) * inv
    dx = _affine_backward(xp, g, xhat, gamma.astype(acc, copy=False).reshape(bs), inv=inv, axes=(ax,))
    pt = gamma.dtype
    return (dx.astype(data.dtype, copy=False), (g * xhat).sum(axis=red).astype(pt, copy=False),
            g.sum(axis=red).astype(pt, copy=False))


# ---------------------------------------------------------------------------
# InstanceNorm

_IN_ATTRS = {"eps": Attr("float", 1e-3, _EPS_DOC)}


def _in_shape(a: Attrs, data, gamma, beta):
    """data is (N, C, spatial...) with at least 3 dims; gamma, beta are (C,); the hidden
    mean and var are (N, C)."""
    if data is None:
        return None
    if len(data) < 3:
        raise ShapeError(f"operator InstanceNorm: input 'data' must have at least 3 dimensions "
                         f"(batch, channel, spatial...), got shape {tuple(data)}")
    pshape, c = _param_shapes("InstanceNorm", ("gamma", "beta"), (gamma, beta), data[1])
    data = (data[0], c) + tuple(data[2:])
    return [data, pshape, pshape], [data, (data[0], c), (data[0], c)]


@register("InstanceNorm", inputs=("data", "gamma", "beta"), outputs=("output", "mean", "var"),
          num_visible_outputs=1, attrs=_IN_ATTRS, infer_shape=_in_shape,
          infer_type=_float_types("InstanceNorm", ("data", "gamma", "beta"), 3),
          learnable=("gamma", "beta"))
def instance_norm(xp, a: Attrs, data, gamma, beta):
    """Instance normalization: each (sample, channel) is normalized over its spatial
    axes, out = (data - mean) / sqrt(var + eps) * gamma + beta; the hidden outputs
    are mean and (biased) var, shaped (N, C).

    MXNet 1.9.1 only has a float32 kernel; float16 and float64 work here too."""
    _check_float("InstanceNorm", "data", data.dtype)
    _in_shape(a, data.shape, gamma.shape, beta.shape)
    acc = _acc_dtype(data.dtype)
    red, bs = tuple(range(2, data.ndim)), _bshape(data.ndim, 1)
    mean, xc, var = _mean_center(xp, data, red, acc)
    out = (xc / xp.sqrt(var + acc.type(_f32(a.eps))) * gamma.astype(acc, copy=False).reshape(bs)
           + beta.astype(acc, copy=False).reshape(bs))
    n, c = data.shape[:2]
    dt = data.dtype
    return (out.astype(dt, copy=False), mean.reshape(n, c).astype(dt, copy=False),
            var.reshape(n, c).astype(dt, copy=False))


instance_norm.def_gradient(_from_saved_stats("_backward_InstanceNorm"))


@register("_backward_InstanceNorm", inputs=("ograd", "data", "gamma", "mean", "var"),
          outputs=("data_grad", "gamma_grad", "beta_grad"), attrs=_IN_ATTRS,
          infer_shape=_stat_backward_shape(_in_shape), infer_type=_grad_types(3, (1, 2, 2)))
def _backward_instance_norm(xp, a: Attrs, ograd, data, gamma, mean, var):  # noqa: PLR0917 - one parameter per input
    """Gradients of InstanceNorm for (data, gamma, beta) from the saved mean and var."""
    acc = _acc_dtype(data.dtype)
    red, bs = tuple(range(2, data.ndim)), _bshape(data.ndim, 1)
    stat_shape = data.shape[:2] + (1,) * (data.ndim - 2)
    g = ograd.astype(acc, copy=False)
    inv = 1.0 / xp.sqrt(var.astype(acc, copy=False).reshape(stat_shape) + acc.type(_f32(a.eps)))
    xhat = (data.astype(acc, copy=False) - mean.astype(acc, copy=False).reshape(stat_shape)) * inv
    dx = _affine_backward(xp, g, xhat, gamma.astype(acc, copy=False).reshape(bs), inv=inv, axes=red)
    pt = gamma.dtype
    outer = (0, *red)
    return (dx.astype(data.dtype, copy=False), (g * xhat).sum(axis=outer).astype(pt, copy=False),
            g.sum(axis=outer).astype(pt, copy=False))


# ---------------------------------------------------------------------------
# GroupNorm

_GN_ATTRS = {
    "num_groups": Attr("int", 1, "Total number of groups."),
    "eps": Attr("float", 1e-5, _EPS_DOC),
    "output_mean_var": Attr("bool", False, "Also output the mean and std of each group."),
}


def _gn_groups(a: Attrs) -> int:
    if a.num_groups < 1:
        raise AttrError(f"operator GroupNorm: attribute 'num_groups' must be >= 1, got {a.num_groups}")
    return a.num_groups


def _gn_shape(a: Attrs, data, gamma, beta):
    """data is (N, C, ...) with at least 3 dims and C divisible by num_groups; gamma and
    beta are (num_groups,) (MXNet 1.x); the hidden mean and std are (N, num_groups)."""
    groups = _gn_groups(a)
    pshape, _ = _param_shapes("GroupNorm", ("gamma", "beta"), (gamma, beta), groups)
    if data is None:
        return None
    if len(data) < 3:
        raise ShapeError(f"operator GroupNorm: input 'data' must have at least 3 dimensions, "
                         f"got shape {tuple(data)}")
    if data[1] % groups:
        raise ShapeError(f"operator GroupNorm: the number of channels (data.shape[1] = {data[1]}) "
                         f"must be divisible by num_groups = {groups}")
    return [data, pshape, pshape], [data, (data[0], groups), (data[0], groups)]


@register("GroupNorm", inputs=("data", "gamma", "beta"), outputs=("output", "mean", "std"),
          num_visible_outputs=lambda a: 3 if a.output_mean_var else 1, attrs=_GN_ATTRS,
          infer_shape=_gn_shape, infer_type=_float_types("GroupNorm", ("data", "gamma", "beta"), 3),
          learnable=("gamma", "beta"))
def group_norm(xp, a: Attrs, data, gamma, beta):
    """Group normalization: the channels of each sample are split into `num_groups`
    groups, each normalized over its channels and spatial positions;
    gamma/beta scale and shift each group. Hidden outputs: mean and
    std = sqrt(var + eps), shaped (N, num_groups)."""
    _check_float("GroupNorm", "data", data.dtype)
    _gn_shape(a, data.shape, gamma.shape, beta.shape)
    acc = _acc_dtype(data.dtype)
    n, groups = data.shape[0], a.num_groups
    mean, xc, var = _mean_center(xp, data.reshape(n, groups, -1), (2,), acc)
    std = xp.sqrt(var + acc.type(_f32(a.eps)))
    out = (xc / std * gamma.astype(acc, copy=False).reshape(1, groups, 1)
           + beta.astype(acc, copy=False).reshape(1, groups, 1))
    dt = data.dtype
    return (out.reshape(data.shape).astype(dt, copy=False), mean.reshape(n, groups).astype(dt, copy=False),
            std.reshape(n, groups).astype(dt, copy=False))


group_norm.def_gradient(_from_saved_stats("_backward_GroupNorm"))


@register("_backward_GroupNorm", inputs=("ograd", "data", "gamma", "mean", "std"),
          outputs=("data_grad", "gamma_grad", "beta_grad"), attrs=_GN_ATTRS,
          infer_shape=_stat_backward_shape(_gn_shape), infer_type=_grad_types(3, (1, 2, 2)))
def _backward_group_norm(xp, a: Attrs, ograd, data, gamma, mean, std):  # noqa: PLR0917 - one parameter per input
    """Gradients of GroupNorm for (data, gamma, beta) from the saved mean and std."""
    acc = _acc_dtype(data.dtype)
    n, groups = data.shape[0], a.num_groups
    g = ograd.astype(acc, copy=False).reshape(n, groups, -1)
    inv = 1.0 / std.astype(acc, copy=False).reshape(n, groups, 1)
    xhat = (data.astype(acc, copy=False).reshape(n, groups, -1)
            - mean.astype(acc, copy=False).reshape(n, groups, 1)) * inv
    dx = _affine_backward(xp, g, xhat, gamma.astype(acc, copy=False).reshape(1, groups, 1), inv=inv, axes=(2,))
    pt = gamma.dtype
    return (dx.reshape(data.shape).astype(data.dtype, copy=False),
            (g * xhat).sum(axis=(0, 2)).astype(pt, copy=False), g.sum(axis=(0, 2)).astype(pt, copy=False))
