"""Indexing operators: take, batch_take, pick, one_hot, where, gather_nd,
scatter_nd and Embedding (MXNet 1.9.1 semantics), and the index helpers the
Sequence* family (sequence.py) shares.

Index inputs may have any dtype; float indices are truncated toward zero
(MXNet's `static_cast<int>`). Out-of-range handling follows each operator's
`mode` (clip / wrap / raise). Index inputs never get a gradient.

The gradients that scatter values back (take, Embedding, pick, gather_nd)
use hidden registry operators (`_backward_take`, ...); they are
linear in their head gradient, so they have gradient rules of their own and
higher-order gradients work.
"""
from __future__ import annotations

import math

import numpy as np

from ..attrs import Attr
from ..errors import AttrError, DTypeError, MXNetError, ShapeError
from ..fastpath import clip_index, scatter_last_axis, take_last_axis
from ..registry import ZERO_GRAD, merge_shape, register, shape_known

# dtypes MXNet's dtype enums accept (bfloat16 has no numpy equivalent here)
DTYPE_CHOICES = ("bfloat16", "float16", "float32", "float64", "int32", "int64", "int8", "uint8")


class IndexOutOfBounds(MXNetError, IndexError):
    """An index outside its axis where the operator does not clip or wrap."""


def parse_dtype_name(v) -> str:
    """A dtype attribute kept as MXNet's enum string (`"float32"`)."""
    return v.strip() if isinstance(v, str) else np.dtype(v).name


def numpy_dtype(op: str, name: str) -> np.dtype:
    """The numpy dtype of an enum string; bfloat16 is rejected clearly."""
    if name == "bfloat16":
        raise DTypeError(f"operator {op}: dtype 'bfloat16' is not supported by hybridgraph "
                         "(numpy has no bfloat16); use float16 or float32")
    return np.dtype(name)


# -- shared helpers ----------------------------------------------------------

def as_index(xp, idx):
    """Integer positions from an index array of any dtype (the float -> int cast
    truncates toward zero, as MXNet's `static_cast<int>`)."""
    return idx.astype(np.int64, copy=False)


def apply_mode(xp, op: str, idx, n: int, mode: str):
    """Bring integer positions into [0, n) the way `mode` says."""
    if mode == "clip":
        return clip_index(xp, idx, max(n - 1, 0))
    if mode == "wrap":
        return xp.mod(idx, n)
    if idx.size and bool(xp.any((idx < 0) | (idx >= n))):
        raise IndexOutOfBounds(f"operator {op}: indices out of bound for an axis of size {n} "
                               "(mode='raise')")
    return idx


def norm_axis(op: str, axis: int, ndim: int, what: str = "axis") -> int:
    """A possibly negative axis as a position in [0, ndim)."""
    if not -ndim <= axis < ndim:
        raise AttrError(f"operator {op}: {what} {axis} is out of range for an input of "
                        f"rank {ndim}; expected an axis in [{-ndim}, {ndim - 1}]")
    return axis + ndim if axis < 0 else axis


def check_shape(op: str, name: str, want, got):
    """Merge a given shape with the expected one or raise naming the input."""
    try:
        return merge_shape(got, want)
    except ShapeError:
        raise ShapeError(f"operator {op}: input {name!r} expected shape {tuple(want)}, "
                         f"got {tuple(got)}") from None


def scatter_add(xp, target, index, values):
    """`target[index] += values` along the first axis, accumulating repeated
    indices (np.add.at); `values` has shape `index.shape + target.shape[1:]`."""
    at = getattr(xp.add, "at", None)
    if at is not None:
        at(target, index, values)
        return target
    # array modules without ufunc.at: accumulate through a one-hot product
    onehot = (index.reshape(-1, 1) == xp.arange(target.shape[0])).astype(target.dtype)
    flat = values.reshape(index.size, math.prod(target.shape[1:]))
    target += (onehot.T @ flat).reshape(target.shape)
    return target


def _index_type(a, data_t, index_t):
    """Data-typed output, index input of any dtype."""
    if data_t is None:
        return None
    return [data_t, index_t], [data_t]


# ---------------------------------------------------------------------------
# take

_MODE_DOC = ("How out-of-bound indices behave: 'clip' clamps to the range, 'wrap' "
             "wraps around, 'raise' raises an error.")


def _take_shape(a, ashape, ishape):
    if ashape is None or ishape is None:
        return None
    ax = norm_axis("take", a.axis, len(ashape))
    return [ashape, ishape], [tuple(ashape[:ax]) + tuple(ishape) + tuple(ashape[ax + 1:])]


@register("take", aliases=("_npi_take",), inputs=("a", "indices"),
          attrs={"axis": Attr("int", 0, "The axis of input array to be taken; in [-r, r-1]."),
                 "mode": Attr("str", "clip", _MODE_DOC, choices=("clip", "raise", "wrap"))},
          infer_shape=_take_shape, infer_type=_index_type)
def take(xp, a, arr, indices):
    """Takes elements from an input array along an axis, at the given indices."""
    ax = norm_axis("take", a.axis, arr.ndim)
    idx = apply_mode(xp, "take", as_index(xp, indices), arr.shape[ax], a.mode)
    return (xp.take(arr, idx, axis=ax),)


@take.def_gradient
def _(F, a, inputs, outputs, ograds):
    arr, indices = inputs
    return [F._backward_take(ograds[0], indices, arr, axis=a.axis, mode=a.mode), None]


def _backward_take_shape(a, gshape, ishape, ashape):
    return [gshape, ishape, ashape], [ashape]


def _backward_take_type(a, gt, it, at):
    t = gt or at
    return None if t is None else ([t, it, t], [t])


@register("_backward_take", inputs=("ograd", "indices", "a"),
          attrs={"axis": Attr("int", 0, "The axis `take` picked along."),
                 "mode": Attr("str", "clip", _MODE_DOC, choices=("clip", "raise", "wrap"))},
          infer_shape=_backward_take_shape, infer_type=_backward_take_type)
def _backward_take(xp, a, ograd, indices, arr):
    """Gradient of `take` for its array: the head gradient summed back into the
    rows it was taken from (repeated indices accumulate). `a` gives the shape."""
    ax = norm_axis("take", a.axis, arr.ndim)
    n = arr.shape[ax]
    idx = apply_mode(xp, "take", as_index(xp, indices), n, a.mode).reshape(-1)
    # ograd: arr.shape[:ax] + indices.shape + arr.shape[ax+1:] -> (k, lead, trail)
    lead, trail = arr.shape[:ax], arr.shape[ax + 1:]
    g = ograd.reshape(lead + (idx.size,) + trail)
    g = xp.moveaxis(g, ax, 0)
    grad = xp.zeros((n,) + lead + trail, dtype=arr.dtype)
    scatter_add(xp, grad, idx, g.astype(arr.dtype, copy=False))
    return (xp.ascontiguousarray(xp.moveaxis(grad, 0, ax)),)


@_backward_take.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F.take(ograds[0], inputs[1], axis=a.axis, mode=a.mode), None, None]


# ---------------------------------------------------------------------------
# Embedding


def _embedding_shape(a, dshape, wshape):
    if a.input_dim <= 0 or a.output_dim <= 0:
        raise AttrError(f"operator Embedding: input_dim and output_dim must be positive, got "
                        f"input_dim={a.input_dim}, output_dim={a.output_dim}")
    w = check_shape("Embedding", "weight", (a.input_dim, a.output_dim),
                    wshape if wshape is not None else (0, 0))
    out = None if dshape is None else tuple(dshape) + (a.output_dim,)
    return [dshape, w], [out]


def _embedding_type(a, dt, wt):
    # the weight's own dtype wins; the `dtype` attribute fills it when unknown (as MXNet)
    w = wt if wt is not None else numpy_dtype("Embedding", a.dtype)
    return [dt, w], [w]


@register("Embedding", aliases=("_npx_embedding", "_sparse_Embedding"), inputs=("data", "weight"),
          learnable=("weight",), hint="embedding",
          attrs={"input_dim": Attr("int", doc="Vocabulary size of the input indices."),
                 "output_dim": Attr("int", doc="Dimension of the embedding vectors."),
                 "dtype": Attr(parse_dtype_name, "float32", "Data type of weight.",
                               choices=DTYPE_CHOICES),
                 "sparse_grad": Attr("bool", False, "Compute a row-sparse gradient (the values "
                                     "are the same; hybridgraph stores it dense).")},
          infer_shape=_embedding_shape, infer_type=_embedding_type)
def Embedding(xp, a, data, weight):  # noqa: N802 - MXNet's operator name
    """Maps integer indices to vector representations: rows of `weight`
    (indices are clipped to [0, input_dim - 1])."""
    idx = xp.clip(as_index(xp, data), 0, weight.shape[0] - 1)
    return (xp.take(weight, idx, axis=0),)


@Embedding.def_gradient
def _(F, a, inputs, outputs, ograds):
    data, weight = inputs
    return [None, F._backward_take(ograds[0], data, weight, axis=0, mode="clip")]


# ---------------------------------------------------------------------------
# batch_take


def _batch_take_shape(a, ashape, ishape):
    if ashape is None:
        return None
    if len(ashape) < 2:
        raise ShapeError(f"operator batch_take: input 'a' must have at least 2 dimensions, "
                         f"got shape {tuple(ashape)}")
    if ishape is None:
        return None
    n = math.prod(ashape[:-1])
    if shape_known(ashape) and shape_known(ishape) and math.prod(ishape) != n:
        raise ShapeError(f"operator batch_take: input 'indices' must have {n} elements "
                         f"(a.shape[:-1] of {tuple(ashape)}), got shape {tuple(ishape)}")
    return [ashape, ishape], [tuple(ishape)]


def _batch_take_type(a, at, it):
    i32 = np.dtype("int32")
    if it is not None and it != i32:
        raise DTypeError(f"operator batch_take: input 'indices' must be int32, got {it}")
    return None if at is None else ([at, i32], [at])


@register("batch_take", inputs=("a", "indices"), infer_shape=_batch_take_shape,
          infer_type=_batch_take_type)
def batch_take(xp, a, arr, indices):
    """`out[i] = a[i, indices[i]]` for a batch of rows (indices clipped to the row).

    `a` is treated as rows of its last axis, one index per row. (MXNet 1.9.1
    reads past the buffer for inputs of rank > 2; here every rank is correct.)
    """
    m = arr.shape[-1]
    rows = arr.reshape(-1, m)
    idx = xp.clip(as_index(xp, indices).reshape(-1), 0, m - 1)
    return (rows[xp.arange(rows.shape[0]), idx].reshape(indices.shape),)


# ---------------------------------------------------------------------------
# pick


def _pick_axis(a, ndim: int) -> int:
    if a.axis is None:
        raise AttrError("operator pick: axis=None is not supported by pick (as in MXNet 1.9.1); "
                        "give an integer axis")
    return norm_axis("pick", a.axis, ndim)


def _pick_shapes(a, dshape):
    """(output shape, index shape without keepdims, index shape with keepdims)."""
    ax = _pick_axis(a, len(dshape))
    kept = tuple(dshape[:ax]) + (1,) + tuple(dshape[ax + 1:])
    reduced = tuple(dshape[:ax]) + tuple(dshape[ax + 1:])
    reduced = reduced or (1,)
    return (kept if a.keepdims else reduced), reduced, kept


def _pick_shape(a, dshape, ishape):
    if dshape is None:
        return None
    out, reduced, kept = _pick_shapes(a, dshape)
    if ishape is None:
        ishape = reduced
    elif tuple(ishape) != kept:
        ishape = check_shape("pick", "index", reduced, ishape)
    return [dshape, ishape], [out]


@register("pick", aliases=("_npx_pick", "choose_element_0index"), inputs=("data", "index"),
          attrs={"axis": Attr("int", -1, "The axis to pick the elements along (None is rejected "
                              "as in MXNet).", optional=True),
                 "keepdims": Attr("bool", False, "Keep the picked axis as a dimension of size one."),
                 "mode": Attr("str", "clip", "How out-of-bound indices behave: 'clip' or 'wrap'.",
                              choices=("clip", "wrap"))},
          infer_shape=_pick_shape, infer_type=_index_type)
def pick(xp, a, data, index):
    """Picks one element per position along `axis`, at the positions in `index`."""
    out_shape, _, kept = _pick_shapes(a, data.shape)
    ax = _pick_axis(a, data.ndim)
    idx = apply_mode(xp, "pick", as_index(xp, index), data.shape[ax], a.mode)
    if ax == data.ndim - 1:
        return (take_last_axis(xp, data, idx.reshape(kept[:-1])).reshape(out_shape),)
    return (xp.take_along_axis(data, idx.reshape(kept), axis=ax).reshape(out_shape),)


@pick.def_gradient
def _(F, a, inputs, outputs, ograds):
    data, index = inputs
    return [F._backward_pick(ograds[0], index, data, axis=a.axis, keepdims=a.keepdims,
                             mode=a.mode), None]


def _backward_pick_shape(a, gshape, ishape, dshape):
    return [gshape, ishape, dshape], [dshape]


@register("_backward_pick", inputs=("ograd", "index", "data"),
          attrs={"axis": Attr("int", -1, "The axis `pick` picked along.", optional=True),
                 "keepdims": Attr("bool", False, "Whether `pick` kept the axis."),
                 "mode": Attr("str", "clip", "Index mode of `pick`.", choices=("clip", "wrap"))},
          infer_shape=_backward_pick_shape, infer_type=_backward_take_type)
def _backward_pick(xp, a, ograd, index, data):
    """Gradient of `pick` for its data: the head gradient placed at the picked
    positions, zeros elsewhere. `data` gives the shape."""
    _, _, kept = _pick_shapes(a, data.shape)
    ax = _pick_axis(a, data.ndim)
    n = data.shape[ax]
    idx = apply_mode(xp, "pick", as_index(xp, index), n, a.mode)
    if ax == data.ndim - 1:
        return (scatter_last_axis(xp, ograd.astype(data.dtype, copy=False), idx.reshape(kept[:-1]),
                                  data.shape, data.dtype),)
    idx = idx.reshape(kept)
    positions = xp.arange(n).reshape((1,) * ax + (n,) + (1,) * (data.ndim - ax - 1))
    g = ograd.reshape(kept).astype(data.dtype, copy=False)
    return (xp.where(positions == idx, g, data.dtype.type(0)),)


@_backward_pick.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F.pick(ograds[0], inputs[1], axis=a.axis, keepdims=a.keepdims, mode=a.mode),
            None, None]


# ---------------------------------------------------------------------------
# one_hot


def _one_hot_shape(a, ishape):
    if a.depth < 0:
        raise AttrError(f"operator one_hot: depth must be >= 0, got {a.depth}")
    return None if ishape is None else ([ishape], [tuple(ishape) + (a.depth,)])


def _one_hot_type(a, it):
    return [it], [numpy_dtype("one_hot", a.dtype)]


@register("one_hot", aliases=("_npx_one_hot",), inputs=("indices",), gradient=ZERO_GRAD,
          attrs={"depth": Attr("int", doc="Depth of the one hot dimension."),
                 "on_value": Attr("float", 1.0, "The value at the positions the indices name."),
                 "off_value": Attr("float", 0.0, "The value everywhere else."),
                 "dtype": Attr(parse_dtype_name, "float32", "DType of the output.",
                               choices=DTYPE_CHOICES)},
          infer_shape=_one_hot_shape, infer_type=_one_hot_type)
def one_hot(xp, a, indices):
    """A new trailing axis of length `depth`: `on_value` at each index, `off_value`
    elsewhere (indices outside [0, depth) give an all-`off_value` row)."""
    dt = numpy_dtype("one_hot", a.dtype)
    idx = as_index(xp, indices)[..., None]
    hit = idx == xp.arange(a.depth)
    on = xp.asarray(a.on_value).astype(dt)
    off = xp.asarray(a.off_value).astype(dt)
    return (xp.where(hit, on, off).astype(dt, copy=False),)


# ---------------------------------------------------------------------------
# where


def _where_shape(a, cshape, xshape, yshape):
    try:
        s = merge_shape(xshape, yshape)
    except ShapeError:
        raise ShapeError(f"operator where: inputs 'x' and 'y' must have the same shape, got "
                         f"{tuple(xshape)} and {tuple(yshape)}") from None
    if s is None or not shape_known(cshape):
        return None   # as MXNet's WhereOpShape: nothing is inferred before the condition's shape
    if not _condition_fits(tuple(cshape), tuple(s)):
        raise ShapeError(f"operator where: input 'condition' must have the shape of x {tuple(s)} "
                         f"or be 1-D of length x.shape[0], got {tuple(cshape)}")
    return [cshape, s, s], [s]


def _condition_fits(c: tuple, s: tuple) -> bool:
    """Same shape as x (unknown dims match), or 1-D along x's first axis."""
    if len(c) == len(s) and all(p == q or 0 in (p, q) for p, q in zip(c, s)):
        return True
    return len(c) == 1 and len(s) >= 1 and (c[0] == s[0] or 0 in (c[0], s[0]))


def _where_type(a, ct, xt, yt):
    if xt is not None and yt is not None and xt != yt:
        raise DTypeError(f"operator where: inputs 'x' and 'y' must have one dtype, got {xt} and {yt}")
    t = xt or yt
    return None if t is None else ([ct, t, t], [t])


@register("where", aliases=("_sparse_where",), inputs=("condition", "x", "y"),
          infer_shape=_where_shape, infer_type=_where_type)
def where(xp, a, condition, x, y):
    """Elements of `x` where `condition` is non-zero, else of `y`. A 1-D condition
    of length x.shape[0] selects whole slices along the first axis."""
    c = condition != 0
    if c.ndim == 1 and x.ndim > 1:
        c = c.reshape((-1,) + (1,) * (x.ndim - 1))
    return (xp.where(c, x, y),)


@where.def_gradient
def _(F, a, inputs, outputs, ograds):
    cond = inputs[0]
    g = ograds[0]
    zero = F.zeros_like(g)
    return [None, F.where(cond, g, zero), F.where(cond, zero, g)]


# ---------------------------------------------------------------------------
# gather_nd / scatter_nd


def nd_positions(xp, op: str, indices, shape: tuple):
    """The index tuple `indices` (M, ...) names in an array of `shape`.

    Negative entries count from the end (MXNet adds the axis size before the
    integer cast); anything still outside the axis raises IndexError.
    """
    m = indices.shape[0]
    if m > len(shape):
        raise ShapeError(f"operator {op}: indices.shape[0]={m} exceeds the rank {len(shape)} "
                         f"of the indexed array {tuple(shape)}")
    pos = []
    for j in range(m):  # one entry per indexed axis (M <= ndim), not per element
        v = indices[j]
        if v.dtype.kind in "iu":
            v = v.astype(np.int64)
            v = xp.where(v < 0, v + shape[j], v)
        else:
            v = xp.where(v < 0, v + shape[j], v).astype(np.int64)
        if v.size and bool(xp.any((v < 0) | (v >= shape[j]))):
            raise IndexOutOfBounds(f"operator {op}: an index along axis {j} is out of bounds "
                                   f"for size {shape[j]}")
        pos.append(v)
    return tuple(pos)


def _gather_nd_shape(a, dshape, ishape):
    if dshape is None or ishape is None:
        return None
    if len(ishape) < 2:
        raise ShapeError(f"operator gather_nd: input 'indices' must have at least 2 dimensions, "
                         f"got shape {tuple(ishape)}")
    m = ishape[0]
    if m > len(dshape):
        raise ShapeError(f"operator gather_nd: indices.shape[0]={m} exceeds the rank of data "
                         f"{tuple(dshape)}")
    return [dshape, ishape], [tuple(ishape[1:]) + tuple(dshape[m:])]


@register("gather_nd", aliases=("_npi_gather_nd", "_npx_gather_nd"), inputs=("data", "indices"),
          infer_shape=_gather_nd_shape, infer_type=_index_type)
def gather_nd(xp, a, data, indices):
    """`out[y...] = data[indices[0, y...], ..., indices[M-1, y...]]`: slices of data
    named by the first axis of `indices`."""
    if indices.ndim < 2:
        raise ShapeError(f"operator gather_nd: input 'indices' must have at least 2 dimensions, "
                         f"got shape {indices.shape}")
    return (data[nd_positions(xp, "gather_nd", indices, data.shape)],)


@gather_nd.def_gradient
def _(F, a, inputs, outputs, ograds):
    data, indices = inputs
    return [F._backward_gather_nd(ograds[0], indices, data), None]


@register("_backward_gather_nd", inputs=("ograd", "indices", "data"),
          infer_shape=_backward_take_shape, infer_type=_backward_take_type)
def _backward_gather_nd(xp, a, ograd, indices, data):
    """Gradient of `gather_nd` for its data: the head gradient summed into the
    positions gathered from (repeats accumulate). `data` gives the shape."""
    grad = xp.zeros(data.shape, dtype=data.dtype)
    pos = nd_positions(xp, "gather_nd", indices, data.shape)
    m = indices.shape[0]
    flat = xp.ravel_multi_index(pos, data.shape[:m]).reshape(-1)
    rows = grad.reshape((-1,) + data.shape[m:])
    scatter_add(xp, rows, flat, ograd.reshape((-1,) + data.shape[m:]).astype(data.dtype, copy=False))
    return (grad,)


@_backward_gather_nd.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F.gather_nd(ograds[0], inputs[1]), None, None]


def _scatter_nd_shape(a, dshape, ishape):
    out = tuple(a.shape)
    if ishape is None:
        return [dshape, ishape], [out]
    if len(ishape) < 1 or ishape[0] > len(out):
        raise ShapeError(f"operator scatter_nd: indices.shape[0] must be <= len(shape)={len(out)}, "
                         f"got indices of shape {tuple(ishape)}")
    want = tuple(ishape[1:]) + out[ishape[0]:]
    d = check_shape("scatter_nd", "data", want, dshape if dshape is not None else (0,) * len(want))
    return [d, ishape], [out]


@register("scatter_nd", inputs=("data", "indices"),
          attrs={"shape": Attr("shape", doc="Shape of output.")},
          infer_shape=_scatter_nd_shape, infer_type=_index_type)
def scatter_nd(xp, a, data, indices):
    """The inverse of gather_nd: an array of `shape`, zeros except `data` at the
    positions `indices` names (a repeated position keeps one of its values)."""
    out = xp.zeros(tuple(a.shape), dtype=data.dtype)
    out[nd_positions(xp, "scatter_nd", indices, out.shape)] = data
    return (out,)


@scatter_nd.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F.gather_nd(ograds[0], inputs[1]), None]
