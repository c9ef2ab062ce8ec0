"""Fused kernels for the eager path of Gluon's losses (hybridgraph helpers, not MXNet ops).

`SoftmaxCrossEntropyLoss` with class-index labels is `-pick(log_softmax(x), label)`:
three operators eagerly, three tape nodes and five backward kernels. Run eagerly
(un-hybridized, the usual way a loss is called) that chain costs far more in
dispatch than in arithmetic, so the loss calls `_sparse_softmax_ce` instead, whose
first-order gradient is one kernel. The values are those of the chain (the same
numpy operations). Traced losses keep MXNet's operators, so exported graphs are
unchanged.

Under `autograd.record()` with `create_graph`, the gradient is built from the
chain's own differentiable operators instead, so higher-order gradients still work.
"""
from __future__ import annotations

import math
from typing import NamedTuple

from .. import autograd
from ..attrs import Attr
from ..fastpath import broadcast_copy, clip_index, mean_keepdims, scatter_last_axis, take_last_axis
from ..registry import register
from .indexing_ops import as_index
from .reduce import _accumulator, keepdims_shape, reduce_axes, reduced_shape
from .nn import _merge, _norm_axis
from .nn_softmax import softmax_kernel

_ATTRS = {"axis": Attr("int", -1, "The class axis (softmax and pick run along it)."),
          "batch_axis": Attr("int", None, "When given, the result is averaged over every axis but "
                                          "this one (the loss's `mean(axis=batch_axis, exclude=True)`).")}


class _Layout(NamedTuple):
    """The shapes of one (data shape, axis, batch_axis) case, worked out once."""

    ax: int              # the class axis, non-negative
    kept: tuple          # the per-position loss: data's shape with the class axis as 1
    rows: tuple          # data's shape without the class axis (the label's)
    mean_axes: tuple | None   # the batch mean's axes of `kept` (None: no mean)
    count: int           # positions each mean averages
    out: tuple           # the result's shape


_LAYOUTS: dict = {}


def _layout(op: str, a, dshape) -> _Layout:
    key = (tuple(dshape), a.axis, a.batch_axis)
    hit = _LAYOUTS.get(key)
    if hit is None:
        ax = _norm_axis(op, a.axis, len(dshape))
        kept = tuple(dshape[:ax]) + (1,) + tuple(dshape[ax + 1:])
        rows = tuple(d for i, d in enumerate(dshape) if i != ax)
        axes = None if a.batch_axis is None else reduce_axes(op, kept, (a.batch_axis,), True)
        count = 1 if axes is None else math.prod(kept[i] for i in axes)
        out = kept if axes is None else reduced_shape(kept, axes, False)
        hit = _Layout(ax, kept, rows, axes, count, out)
        if len(_LAYOUTS) > 1024:
            _LAYOUTS.clear()
        _LAYOUTS[key] = hit
    return hit


def _label_shape(op: str, lay: _Layout, lshape) -> tuple:
    """The label's shape: data's without the class axis, or with it kept as 1."""
    if lshape == lay.rows and lay.rows:      # the usual label (a tuple), checked first
        return lay.rows
    if lshape is not None and tuple(lshape) == lay.kept:
        return lay.kept
    reduced = lay.rows or (1,)
    return _merge(op, "label", lshape, reduced) if lshape is not None else reduced


def _ce_shape(a, dshape, lshape):
    if dshape is None:
        return None
    op = "_sparse_softmax_ce"
    lay = _layout(op, a, dshape)
    return [tuple(dshape), _label_shape(op, lay, lshape)], [lay.out, tuple(dshape)]


def _ce_type(a, dt, lt):
    return None if dt is None else ([dt, lt or dt], [dt, dt])


def _moved(xp, x, ax: int):
    """`x` with axis `ax` last (a view)."""
    return x if ax == x.ndim - 1 else xp.moveaxis(x, ax, -1)


def _positions(xp, label, data, lay: _Layout):
    """Class indices per row of `data` with the class axis moved last, clipped into range
    (pick's 'clip')."""
    return clip_index(xp, as_index(xp, label).reshape(lay.rows), data.shape[lay.ax] - 1)


@register("_sparse_softmax_ce", inputs=("data", "label"), outputs=("output", "log_softmax"),
          num_visible_outputs=1, attrs=dict(_ATTRS), infer_shape=_ce_shape, infer_type=_ce_type)
def _sparse_softmax_ce(xp, a, data, label):
    """-log_softmax(data)[label] along `axis`, the axis kept with size 1 (hybridgraph helper:
    the loss `-pick(log_softmax(data, axis), label, axis, keepdims=True)` in one kernel).
    The log-softmax is a hidden output, kept for the gradient."""
    op = "_sparse_softmax_ce"
    lay = _layout(op, a, data.shape)
    _label_shape(op, lay, label.shape)
    logp = softmax_kernel(xp, data, lay.ax, log=True)
    picked = take_last_axis(xp, _moved(xp, logp, lay.ax), _positions(xp, label, data, lay))
    loss = xp.negative(picked).reshape(lay.kept)
    if lay.mean_axes is None or lay.count == 1:   # a mean over one element is that element
        return loss.reshape(lay.out), logp
    mean = mean_keepdims(xp, loss, lay.mean_axes, lay.count, _accumulator(loss)).astype(loss.dtype, copy=False)
    return mean.reshape(lay.out), logp


@_sparse_softmax_ce.def_gradient
def _(F, a, inputs, outputs, ograds):
    data, label = inputs
    # first order (a symbolic backward graph, or no tape recording): one kernel on the saved
    # log-softmax; a symbolic graph's higher orders come from replaying its forward eagerly
    if not autograd.is_recording() or getattr(data, "_is_symbolic", False):
        return [F._backward_sparse_softmax_ce(ograds[0], outputs[1], label, axis=a.axis, batch_axis=a.batch_axis),
                None]
    # create_graph: the chain's own differentiable operators (same values)
    g = ograds[0]
    if a.batch_axis is not None:
        like = F._sparse_softmax_ce(data, label, axis=a.axis)
        g = F._unreduce(g, like, axis=(a.batch_axis,), exclude=True, normalize=True)
    logp = F.log_softmax(data, axis=a.axis)
    g = F._backward_pick(F.negative(g), label, logp, axis=a.axis, keepdims=True, mode="clip")
    return [F._backward_log_softmax(g, logp, axis=a.axis), None]


def _ce_back_shape(a, gshape, dshape, lshape):  # dshape: the log-softmax's (data's)
    fwd = _ce_shape(a, dshape, lshape)
    if fwd is None:
        return None
    (d, lab), (out, _) = fwd
    return [_merge("_backward_sparse_softmax_ce", "ograd", gshape, out), d, lab], [d]


def _head_per_position(xp, lay: _Layout, ograd, data):
    """The head gradient per position of the unaveraged loss (keepdims shape): divided by the
    mean's count and broadcast when `batch_axis` is given, as `_unreduce` does."""
    g = ograd.astype(data.dtype, copy=False)
    if lay.mean_axes is None or lay.count == 1:   # (the mean over one element: g / 1, unchanged)
        return g.reshape(lay.kept)
    r = g.reshape(keepdims_shape(lay.kept, lay.mean_axes))
    r = r / r.dtype.type(max(lay.count, 1))
    return broadcast_copy(xp, r, lay.kept, data.dtype)


@register("_backward_sparse_softmax_ce", inputs=("ograd", "log_softmax", "label"), attrs=dict(_ATTRS),
          infer_shape=_ce_back_shape, infer_type=lambda a, g, d, lab: None if d is None else ([d, d, lab], [d]))
def _backward_sparse_softmax_ce(xp, a, ograd, logp, label):
    """Gradient of `_sparse_softmax_ce` for its data, from its hidden log-softmax output:
    ograd * (softmax(data) - onehot(label)), computed as the chain's backward does (exp of
    the log-softmax)."""
    lay = _layout("_backward_sparse_softmax_ce", a, logp.shape)
    ax = lay.ax
    data = logp                  # the same shape and dtype
    g = _head_per_position(xp, lay, ograd, data)
    # the chain: _backward_pick puts -g at the label, then log_softmax's vjp: that - exp(logp) * sum
    neg = xp.negative(g)
    picked = scatter_last_axis(xp, neg, _positions(xp, label, data, lay), _moved(xp, logp, ax).shape, data.dtype)
    picked = picked if ax == data.ndim - 1 else xp.moveaxis(picked, -1, ax)
    e = xp.exp(logp)
    e *= neg
    return (xp.subtract(picked, e, out=e),)

