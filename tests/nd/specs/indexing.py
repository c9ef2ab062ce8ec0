"""Specs for nd/ops/indexing_ops.py: take, Embedding, batch_take, pick, one_hot,
where, gather_nd, scatter_nd, the Sequence* family and their hidden backward ops.

Index inputs are drawn as integer arrays, so the finite-difference gradient
check only moves the float inputs.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, ints, shapes

_MODES = ("clip", "wrap", "raise")


def _mode_index(idx, n, mode):
    idx = np.trunc(idx).astype(np.int64)
    return np.clip(idx, 0, n - 1) if mode == "clip" else np.mod(idx, n)


# -- take / Embedding / batch_take --------------------------------------------

def _take_case(draw):
    a = draw(arr(shapes(max_dims=3)))
    axis = draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[axis]
    mode = draw(st.sampled_from(_MODES))
    lo, hi = (0, n - 1) if mode == "raise" else (-n - 2, n + 2)
    idx = draw(ints(shapes(max_dims=2, max_side=4), lo, hi))
    return [a, idx], {"axis": axis, "mode": mode}


def _take_ref(a, idx, axis, mode):
    return np.take(a, _mode_index(idx, a.shape[axis], mode), axis=axis)


def _backward_take_case(draw):
    (a, idx), attrs = _take_case(draw)
    g = draw(arr(_take_ref(a, idx, **attrs).shape))
    return [g, idx, a], attrs


def _backward_take_ref(g, idx, a, axis, mode):
    ax = axis % a.ndim
    pos = _mode_index(idx, a.shape[ax], mode).reshape(-1)
    gm = np.moveaxis(g.reshape(a.shape[:ax] + (pos.size,) + a.shape[ax + 1:]), ax, 0)
    out = np.zeros((a.shape[ax],) + gm.shape[1:])
    np.add.at(out, pos, gm)
    return np.moveaxis(out, 0, ax)


def _embedding_case(draw):
    vocab, dim = draw(st.integers(1, 6)), draw(st.integers(1, 4))
    data = draw(ints(shapes(max_dims=2, max_side=4), -1, vocab))
    return [data, draw(arr((vocab, dim)))], {"input_dim": vocab, "output_dim": dim, "dtype": "float64"}


def _batch_take_case(draw):
    a = draw(arr(shapes(min_dims=2, max_dims=3)))
    idx = draw(ints(a.shape[:-1], -2, a.shape[-1] + 1, dtype=np.int32))
    return [a, idx], {}


def _batch_take_ref(a, idx):
    rows = a.reshape(-1, a.shape[-1])
    pos = np.clip(idx.reshape(-1), 0, a.shape[-1] - 1)
    return rows[np.arange(rows.shape[0]), pos].reshape(idx.shape)


# -- pick --------------------------------------------------------------------

def _pick_case(draw):
    data = draw(arr(shapes(max_dims=3)))
    axis = draw(st.integers(-data.ndim, data.ndim - 1))
    keepdims = draw(st.booleans())
    mode = draw(st.sampled_from(("clip", "wrap")))
    ax = axis % data.ndim
    shape = data.shape[:ax] + data.shape[ax + 1:] or (1,)
    if draw(st.booleans()):
        shape = data.shape[:ax] + (1,) + data.shape[ax + 1:]
    n = data.shape[ax]
    return [data, draw(ints(shape, -n - 1, n + 1))], {"axis": axis, "keepdims": keepdims, "mode": mode}


def _pick_ref(data, index, axis, keepdims, mode):
    ax = axis % data.ndim
    kept = data.shape[:ax] + (1,) + data.shape[ax + 1:]
    pos = _mode_index(index, data.shape[ax], mode).reshape(kept)
    out = np.take_along_axis(data, pos, axis=ax)
    return out if keepdims else out.reshape(data.shape[:ax] + data.shape[ax + 1:] or (1,))


def _backward_pick_case(draw):
    (data, index), attrs = _pick_case(draw)
    return [draw(arr(_pick_ref(data, index, **attrs).shape)), index, data], attrs


def _backward_pick_ref(g, index, data, axis, keepdims, mode):
    ax = axis % data.ndim
    kept = data.shape[:ax] + (1,) + data.shape[ax + 1:]
    pos = _mode_index(index, data.shape[ax], mode).reshape(kept)
    out = np.zeros_like(data)
    np.put_along_axis(out, pos, g.reshape(kept), axis=ax)
    return out


# -- one_hot / where -----------------------------------------------------------

def _one_hot_case(draw):
    depth = draw(st.integers(1, 5))
    return [draw(ints(shapes(max_dims=2), -1, depth))], {
        "depth": depth, "on_value": draw(st.sampled_from([1.0, 2.5, -1.0])),
        "off_value": draw(st.sampled_from([0.0, -0.5])), "dtype": draw(st.sampled_from(["float32", "int32"]))}


def _one_hot_ref(idx, depth, on_value, off_value, dtype):
    hit = idx[..., None] == np.arange(depth)
    return np.where(hit, on_value, off_value).astype(dtype)


def _where_case(draw):
    s = draw(shapes(max_dims=3))
    cshape = s if draw(st.booleans()) else s[:1]
    return [draw(ints(cshape, 0, 1)), draw(arr(s)), draw(arr(s))], {}


def _where_ref(c, x, y):
    c = c.reshape(c.shape + (1,) * (x.ndim - c.ndim)) != 0
    return np.where(c, x, y)


# -- gather_nd / scatter_nd ----------------------------------------------------

def _nd_indices(draw, shape, m, ishape):
    rows = [draw(ints(ishape, -shape[j], shape[j] - 1)) for j in range(m)]
    return np.stack(rows).astype(np.int64)


def _gather_case(draw):
    data = draw(arr(shapes(max_dims=3)))
    m = draw(st.integers(1, data.ndim))
    return [data, _nd_indices(draw, data.shape, m, draw(shapes(max_dims=2, max_side=3)))], {}


def _gather_ref(data, idx):
    return data[tuple(idx)]


def _backward_gather_case(draw):
    (data, idx), _ = _gather_case(draw)
    return [draw(arr(_gather_ref(data, idx).shape)), idx, data], {}


def _backward_gather_ref(g, idx, data):
    out = np.zeros_like(data)
    np.add.at(out, tuple(idx), g)
    return out


def _scatter_case(draw):
    shape = draw(shapes(max_dims=3))
    m = draw(st.integers(1, len(shape)))
    cells = int(np.prod(shape[:m]))
    k = draw(st.integers(1, cells))
    flat = draw(st.permutations(list(range(cells))))[:k]      # distinct positions
    idx = np.stack(np.unravel_index(np.array(flat), shape[:m])).astype(np.int64)
    idx = np.where(draw(st.booleans()), idx - np.array(shape[:m])[:, None], idx)  # negative forms
    return [draw(arr((k,) + tuple(shape[m:]))), idx], {"shape": tuple(shape)}


def _scatter_ref(data, idx, shape):
    out = np.zeros(shape)
    out[tuple(idx)] = data
    return out


# -- Sequence* ---------------------------------------------------------------

def _seq_case(axes, lengths=True):
    def case(draw):
        axis = draw(st.sampled_from(axes))
        data = draw(arr(shapes(min_dims=2, max_dims=4)))
        attrs = {"axis": axis}
        if lengths and draw(st.booleans()):
            t = data.shape[axis]
            attrs["use_sequence_length"] = True
            return [data, draw(ints((data.shape[1 - axis],), 0, t))], attrs
        return [data], attrs
    return case


def _seq_mask_case(draw):
    inputs, attrs = _seq_case((0, 1))(draw)
    attrs["value"] = draw(st.sampled_from([0.0, -1.5]))
    return inputs, attrs


def _steps(data, axis):
    t = data.shape[axis]
    return np.arange(t).reshape((-1, 1) if axis == 0 else (1, -1))


def _expand(mask, ndim):
    return mask.reshape(mask.shape + (1,) * (ndim - 2))


def _seq_mask_ref(data, lengths=None, axis=0, value=0.0, use_sequence_length=False):
    if lengths is None:
        return data
    n = lengths.reshape((1, -1) if axis == 0 else (-1, 1))
    return np.where(_expand(_steps(data, axis) < n, data.ndim), data, value)


def _last_pos(data, lengths, axis):
    t = data.shape[axis]
    if lengths is None:
        return np.full(data.shape[1 - axis], t - 1)
    return np.clip(lengths - 1, 0, t - 1)


def _seq_last_ref(data, lengths=None, axis=0, use_sequence_length=False):
    pos = _last_pos(data, lengths, axis)
    b = np.arange(data.shape[1 - axis])
    return data[pos, b] if axis == 0 else data[b, pos]


def _backward_seq_last_case(draw):
    inputs, attrs = _seq_case((0, 1))(draw)
    g = draw(arr(_seq_last_ref(*inputs, **attrs).shape))
    return [g] + inputs, attrs


def _backward_seq_last_ref(g, data, lengths=None, axis=0, use_sequence_length=False):
    out = np.zeros_like(data)
    pos = _last_pos(data, lengths, axis)
    b = np.arange(data.shape[1 - axis])
    if axis == 0:
        out[pos, b] = g
    else:
        out[b, pos] = g
    return out


def _seq_reverse_ref(data, lengths=None, axis=0, use_sequence_length=False):
    if lengths is None:
        return data[::-1]
    out = data.copy()
    for b, n in enumerate(lengths):
        out[:n, b] = data[:n, b][::-1]
    return out


_INDEX_SEQ = "index / length inputs are integers; data is differentiated"

SPECS = [
    OpSpec("take", case=_take_case, ref=_take_ref),
    OpSpec("_backward_take", case=_backward_take_case, ref=_backward_take_ref, grad_inputs=(0,)),
    OpSpec("Embedding", case=_embedding_case,
           ref=lambda d, w, input_dim, **kw: w[np.clip(d, 0, input_dim - 1)]),
    OpSpec("batch_take", case=_batch_take_case, ref=_batch_take_ref,
           nondiff="no gradient (MXNet registers none; batch_take is deprecated)"),
    OpSpec("pick", case=_pick_case, ref=_pick_ref),
    OpSpec("_backward_pick", case=_backward_pick_case, ref=_backward_pick_ref, grad_inputs=(0,)),
    OpSpec("one_hot", case=_one_hot_case, ref=_one_hot_ref, nondiff="zero gradient (index input)"),
    OpSpec("where", case=_where_case, ref=_where_ref),
    OpSpec("gather_nd", case=_gather_case, ref=_gather_ref),
    OpSpec("_backward_gather_nd", case=_backward_gather_case, ref=_backward_gather_ref, grad_inputs=(0,)),
    OpSpec("scatter_nd", case=_scatter_case, ref=_scatter_ref),
    OpSpec("SequenceMask", case=_seq_mask_case, ref=_seq_mask_ref),
    OpSpec("SequenceLast", case=_seq_case((0, 1)), ref=_seq_last_ref),
    OpSpec("_backward_SequenceLast", case=_backward_seq_last_case, ref=_backward_seq_last_ref,
           grad_inputs=(0,)),
    OpSpec("SequenceReverse", case=_seq_case((0,)), ref=_seq_reverse_ref),
]
