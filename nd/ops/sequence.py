"""The Sequence* family (MXNet 1.9.1 semantics): SequenceMask, SequenceLast
and SequenceReverse, with the optional `sequence_length` input.

Lengths may have any dtype; float lengths are truncated toward zero, as the
indices of indexing_ops.py are. SequenceLast's gradient scatters back through
the hidden `_backward_SequenceLast`, which is linear in its head gradient and
has a gradient rule of its own.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import AttrError, ShapeError
from ..registry import register
from .indexing_ops import as_index, check_shape


# ---------------------------------------------------------------------------
# SequenceMask / SequenceLast / SequenceReverse

_USE_LEN = Attr("bool", False, "Take an extra input `sequence_length` giving each sequence's length.")


def _seq_inputs(a):
    return ("data", "sequence_length") if a.use_sequence_length else ("data",)


def _seq_axis(op: str, a, allowed=(0, 1)) -> int:
    if a.axis not in allowed:
        raise AttrError(f"operator {op}: axis must be one of {list(allowed)} (as MXNet 1.9.1 "
                        f"supports), got {a.axis}")
    return a.axis


def _seq_batch_shape(op: str, a, dshape, lshapes):
    """Checks rank and fills `sequence_length` (batch,) from data."""
    axis = _seq_axis(op, a, (0,) if op == "SequenceReverse" else (0, 1))
    if len(dshape) < 2:
        raise ShapeError(f"operator {op}: input 'data' must have rank >= 2 "
                         f"([seq, batch, ...] or [batch, seq, ...]), got {tuple(dshape)}")
    if not a.use_sequence_length:
        return axis, []
    batch = (dshape[1 - axis],)
    got = lshapes[0] if lshapes and lshapes[0] is not None else (0,)
    return axis, [check_shape(op, "sequence_length", batch, got)]


def _seq_type(a, dt, *lt):
    if dt is None:
        return None
    return [dt] + [t if t is not None else dt for t in lt], [dt]


def _lengths(xp, lengths, t: int):
    """Integer sequence lengths clipped to [0, t] (MXNet reads out of bounds otherwise)."""
    return xp.clip(as_index(xp, lengths), 0, t)


def _time_mask(xp, lengths, t: int, axis: int, ndim: int):
    """True where the time step is inside its sequence, shaped to broadcast on data."""
    steps = xp.arange(t)
    if axis == 0:
        mask = steps[:, None] < lengths[None, :]
    else:
        mask = lengths[:, None] > steps[None, :]
    return mask.reshape(mask.shape + (1,) * (ndim - 2))


def _seq_mask_shape(a, dshape, *lshapes):
    if dshape is None:
        return None
    _, ls = _seq_batch_shape("SequenceMask", a, dshape, lshapes)
    return [dshape] + ls, [dshape]


@register("SequenceMask", aliases=("_npx_sequence_mask",), inputs=_seq_inputs,
          attrs={"use_sequence_length": _USE_LEN,
                 "value": Attr("float", 0.0, "The value to be used as a mask."),
                 "axis": Attr("int", 0, "The sequence axis: 0 ([seq, batch, ...]) or 1.")},
          infer_shape=_seq_mask_shape, infer_type=_seq_type)
def SequenceMask(xp, a, data, lengths=None):  # noqa: N802
    """Sets the steps past each sequence's length to `value` (identity without lengths)."""
    axis = _seq_axis("SequenceMask", a)
    if lengths is None:
        return (data.copy(),)
    t = data.shape[axis]
    keep = _time_mask(xp, _lengths(xp, lengths, t), t, axis, data.ndim)
    fill = xp.asarray(a.value).astype(data.dtype)
    return (xp.where(keep, data, fill),)


@SequenceMask.def_gradient
def _(F, a, inputs, outputs, ograds):
    if not a.use_sequence_length:
        return [ograds[0]]
    return [F.SequenceMask(ograds[0], inputs[1], use_sequence_length=True, value=0.0, axis=a.axis),
            None]


def _seq_last_shape(a, dshape, *lshapes):
    if dshape is None:
        return None
    axis, ls = _seq_batch_shape("SequenceLast", a, dshape, lshapes)
    out = tuple(dshape[:axis]) + tuple(dshape[axis + 1:])
    return [dshape] + ls, [out]


def _last_positions(xp, lengths, t: int, batch: int):
    """Index of each sequence's last step (t - 1 without lengths; clipped to [0, t-1])."""
    if lengths is None:
        return xp.full((batch,), t - 1, dtype=np.int64)
    return xp.clip(as_index(xp, lengths) - 1, 0, t - 1)


@register("SequenceLast", inputs=_seq_inputs,
          attrs={"use_sequence_length": _USE_LEN,
                 "axis": Attr("int", 0, "The sequence axis: 0 ([seq, batch, ...]) or 1.")},
          infer_shape=_seq_last_shape, infer_type=_seq_type)
def SequenceLast(xp, a, data, lengths=None):  # noqa: N802
    """The last step of each sequence: (batch, ...) from [seq, batch, ...]."""
    axis = _seq_axis("SequenceLast", a)
    t, batch = data.shape[axis], data.shape[1 - axis]
    pos = _last_positions(xp, lengths, t, batch)
    rows = xp.arange(batch)
    return (data[pos, rows] if axis == 0 else data[rows, pos],)


@SequenceLast.def_gradient
def _(F, a, inputs, outputs, ograds):
    g = F._backward_SequenceLast(ograds[0], *inputs, use_sequence_length=a.use_sequence_length,
                                 axis=a.axis)
    return [g] + [None] * (len(inputs) - 1)


def _backward_seq_last_inputs(a):
    return ("ograd",) + _seq_inputs(a)


def _backward_seq_last_shape(a, gshape, dshape, *lshapes):
    return [gshape, dshape, *lshapes], [dshape]


def _backward_seq_last_type(a, gt, dt, *lt):
    t = gt or dt
    return None if t is None else ([t, t, *lt], [t])


@register("_backward_SequenceLast", inputs=_backward_seq_last_inputs,
          attrs={"use_sequence_length": _USE_LEN,
                 "axis": Attr("int", 0, "The sequence axis of SequenceLast.")},
          infer_shape=_backward_seq_last_shape, infer_type=_backward_seq_last_type)
def _backward_SequenceLast(xp, a, ograd, data, lengths=None):  # noqa: N802
    """Gradient of SequenceLast for its data: the head gradient at each sequence's
    last step, zeros elsewhere. `data` gives the shape."""
    axis = _seq_axis("SequenceLast", a)
    t, batch = data.shape[axis], data.shape[1 - axis]
    pos = _last_positions(xp, lengths, t, batch)
    steps = xp.arange(t)
    hit = (steps[:, None] == pos[None, :]) if axis == 0 else (pos[:, None] == steps[None, :])
    hit = hit.reshape(hit.shape + (1,) * (data.ndim - 2))
    g = xp.expand_dims(ograd.astype(data.dtype, copy=False), axis)
    return (xp.where(hit, g, data.dtype.type(0)),)


@_backward_SequenceLast.def_gradient
def _(F, a, inputs, outputs, ograds):
    lengths = inputs[2:]
    last = F.SequenceLast(ograds[0], *lengths, use_sequence_length=a.use_sequence_length,
                          axis=a.axis)
    return [last, None] + [None] * len(lengths)


def _seq_reverse_shape(a, dshape, *lshapes):
    if dshape is None:
        return None
    _, ls = _seq_batch_shape("SequenceReverse", a, dshape, lshapes)
    return [dshape] + ls, [dshape]


@register("SequenceReverse", inputs=_seq_inputs,
          attrs={"use_sequence_length": _USE_LEN,
                 "axis": Attr("int", 0, "The sequence axis; only 0 is supported (as MXNet).")},
          infer_shape=_seq_reverse_shape, infer_type=_seq_type)
def SequenceReverse(xp, a, data, lengths=None):  # noqa: N802
    """Reverses the first `length` steps of each sequence; later steps stay in place."""
    _seq_axis("SequenceReverse", a, (0,))
    t, batch = data.shape[0], data.shape[1]
    if lengths is None:
        return (data[::-1].copy(),)
    n = _lengths(xp, lengths, t)[None, :]
    steps = xp.arange(t)[:, None]
    src = xp.where(steps < n, n - 1 - steps, steps)
    return (data[src, xp.arange(batch)[None, :]],)


@SequenceReverse.def_gradient
def _(F, a, inputs, outputs, ograds):
    # the permutation is its own inverse (and its own transpose)
    g = F.SequenceReverse(ograds[0], *inputs[1:], use_sequence_length=a.use_sequence_length,
                          axis=a.axis)
    return [g] + [None] * (len(inputs) - 1)
