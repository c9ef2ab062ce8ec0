"""Specs for nd/ops/reduce.py: reductions, norm, arg-reductions, ordering, broadcasting, add_n
and the hidden gradient helpers."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, distinct, shapes

# -- numpy references with MXNet's axis semantics -----------------------------


def np_axes(ndim: int, axis, exclude: bool) -> tuple:
    """The axes MXNet reduces: None/() -> all (even with exclude), else axis or its complement."""
    if axis is None or axis == ():
        return tuple(range(ndim))
    axes = {a % ndim for a in ((axis,) if isinstance(axis, int) else axis)}
    return tuple(i for i in range(ndim) if (i in axes) != exclude)


def np_reduce(fn):
    def ref(x, axis=None, keepdims=False, exclude=False, **kw):
        axes = np_axes(x.ndim, axis, exclude)
        out = fn(x, axis=axes, keepdims=True)
        if keepdims:
            return out
        return out.reshape(tuple(d for i, d in enumerate(x.shape) if i not in axes) or (1,))
    return ref


def _l2(x, axis, keepdims):
    return np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims))


def _l1(x, axis, keepdims):
    return np.sum(np.abs(x), axis=axis, keepdims=keepdims)


def _axis_attrs(draw, ndim: int, with_exclude: bool = True) -> dict:
    """axis None / () / an int / a tuple (negative entries allowed), keepdims, exclude."""
    kind = draw(st.sampled_from(["none", "empty", "int", "tuple"]))
    attrs = {"keepdims": draw(st.booleans())}
    if with_exclude:
        attrs["exclude"] = draw(st.booleans())
    if kind == "empty":
        attrs["axis"] = ()
    elif kind == "int":
        attrs["axis"] = draw(st.integers(-ndim, ndim - 1))
    elif kind == "tuple":
        chosen = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
        attrs["axis"] = tuple(a - ndim if draw(st.booleans()) else a for a in chosen)
    return attrs


def _reduce_case(values):
    def case(draw):
        x = draw(values(draw(shapes(max_dims=3, max_side=4))))
        return [x], _axis_attrs(draw, x.ndim)
    return case


def _with_nans(draw, shape):
    x = draw(arr(shape, away_from=0.0))
    mask = draw(st.lists(st.booleans(), min_size=x.size, max_size=x.size))
    return np.where(np.array(mask, dtype=bool).reshape(shape) & (np.arange(x.size).reshape(shape) % 3 == 0),
                    np.nan, x)


def _nan_case(draw):
    x = _with_nans(draw, draw(shapes(max_dims=3, max_side=4)))
    return [x], _axis_attrs(draw, x.ndim)


REDUCE_SPECS = [
    OpSpec("sum", case=_reduce_case(arr), ref=np_reduce(np.sum)),
    OpSpec("mean", case=_reduce_case(arr), ref=np_reduce(np.mean)),
    OpSpec("prod", case=_reduce_case(lambda s: arr(s, 0.5, 1.5)), ref=np_reduce(np.prod)),
    OpSpec("max", case=_reduce_case(distinct), ref=np_reduce(np.max)),
    OpSpec("min", case=_reduce_case(distinct), ref=np_reduce(np.min)),
    OpSpec("nansum", case=_nan_case, ref=np_reduce(np.nansum)),
    OpSpec("nanprod", case=_nan_case, ref=np_reduce(np.nanprod)),
]


def _norm_case(draw):
    x = draw(arr(draw(shapes(max_dims=3, max_side=4)), away_from=0.0))
    attrs = _axis_attrs(draw, x.ndim, with_exclude=False)
    attrs["ord"] = draw(st.sampled_from([1, 2]))
    return [x], attrs


def _norm_ref(x, ord=2, axis=None, keepdims=False):  # noqa: A002 - MXNet's attribute name
    return np_reduce(_l1 if ord == 1 else _l2)(x, axis=axis, keepdims=keepdims)


# -- argmax / argmin / argmax_channel ----------------------------------------


def _arg_case(draw):
    x = draw(distinct(shapes(max_dims=3, max_side=4)))
    attrs = {"keepdims": draw(st.booleans())}
    if draw(st.booleans()):
        attrs["axis"] = draw(st.integers(-x.ndim, x.ndim - 1))
    return [x], attrs


def _arg_ref(fn):
    def ref(x, axis=None, keepdims=False):
        if axis is None or x.ndim == 1:
            out = fn(x.reshape(-1))
            return np.full((1,) * x.ndim if keepdims else (1,), out, dtype=x.dtype)
        return fn(x, axis=axis, keepdims=keepdims).astype(x.dtype)
    return ref


# -- ordering -----------------------------------------------------------------


def _order_attrs(draw, ndim: int) -> dict:
    return {"axis": draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1)))}


def _stable_order(x, axis, ascend):
    """Reference ordering: stable, and ties keep index order when descending too."""
    flat = x.reshape(-1) if axis is None else x
    ax = 0 if axis is None else axis
    key = flat if ascend else -flat
    return flat, ax, np.argsort(key, axis=ax, kind="stable")


def _topk_case(ret_types):
    def case(draw):
        x = draw(distinct(shapes(max_dims=3, max_side=4)))
        attrs = _order_attrs(draw, x.ndim)
        n = x.size if attrs["axis"] is None else x.shape[attrs["axis"]]
        attrs.update(k=draw(st.integers(0, n)), ret_typ=draw(st.sampled_from(ret_types)),
                     is_ascend=draw(st.booleans()), dtype=draw(st.sampled_from(["float32", "int32", "int64"])))
        return [x], attrs
    return case


def _topk_ref(x, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32"):
    flat, ax, order = _stable_order(x, axis, is_ascend)
    k = flat.shape[ax] if k <= 0 else k
    idx = np.take(order, np.arange(k), axis=ax)
    values = np.take_along_axis(flat, idx, axis=ax)
    if ret_typ == "mask":
        mask = np.zeros(flat.shape, x.dtype)
        np.put_along_axis(mask, idx, 1, axis=ax)
        return mask.reshape(x.shape)
    if ret_typ == "indices":
        return idx.astype(dtype)
    return (values, idx.astype(dtype)) if ret_typ == "both" else values


def _sort_case(draw):
    x = draw(distinct(shapes(max_dims=3, max_side=4)))
    return [x], dict(_order_attrs(draw, x.ndim), is_ascend=draw(st.booleans()))


def _argsort_case(draw):
    inputs, attrs = _sort_case(draw)
    return inputs, dict(attrs, dtype=draw(st.sampled_from(["float32", "int32", "int64", "float64"])))


def _sort_ref(x, axis=-1, is_ascend=True):
    flat, ax, order = _stable_order(x, axis, is_ascend)
    return np.take_along_axis(flat, order, axis=ax)


def _argsort_ref(x, axis=-1, is_ascend=True, dtype="float32"):
    return _stable_order(x, axis, is_ascend)[2].astype(dtype)


# -- broadcasting -------------------------------------------------------------


def _ones_mask(draw, shape):
    return tuple(1 if draw(st.booleans()) else d for d in shape)


def _broadcast_to_case(draw):
    target = draw(shapes(max_dims=4, max_side=4))
    src = _ones_mask(draw, target)
    shape = tuple(0 if s == t and draw(st.booleans()) else t for s, t in zip(src, target))
    return [draw(arr(src))], {"shape": shape}


def _broadcast_to_ref(x, shape):
    return np.broadcast_to(x, tuple(d if s == 0 else s for d, s in zip(x.shape, shape))).copy()


def _broadcast_like_case(draw):
    target = draw(shapes(max_dims=4, max_side=4))
    src = _ones_mask(draw, target)
    if draw(st.booleans()):
        return [draw(arr(src)), draw(arr(target))], {}
    ones = [i for i, d in enumerate(src) if d == 1] or [0]
    lhs_axes = tuple(draw(st.lists(st.sampled_from(ones), min_size=1, max_size=len(ones), unique=True)))
    src = tuple(1 if i in lhs_axes else d for i, d in enumerate(src))
    rhs = draw(shapes(min_dims=1, max_dims=3, max_side=4))
    rhs_axes = tuple(draw(st.integers(-len(rhs), len(rhs) - 1)) for _ in lhs_axes)
    return [draw(arr(src)), draw(arr(rhs))], {"lhs_axes": lhs_axes, "rhs_axes": rhs_axes}


def _broadcast_like_ref(lhs, rhs, lhs_axes=None, rhs_axes=None):
    if lhs_axes is None:
        return np.broadcast_to(lhs, rhs.shape).copy()
    shape = list(lhs.shape)
    for la, ra in zip(lhs_axes, rhs_axes):
        shape[la] = rhs.shape[ra]
    return np.broadcast_to(lhs, tuple(shape)).copy()


def _broadcast_axis_case(draw):
    target = draw(shapes(max_dims=4, max_side=4))
    axes = draw(st.lists(st.integers(0, len(target) - 1), max_size=len(target), unique=True))
    src = tuple(1 if i in axes else d for i, d in enumerate(target))
    return [draw(arr(src))], {"axis": tuple(axes), "size": tuple(target[a] for a in axes)}


def _broadcast_axis_ref(x, axis, size):
    shape = list(x.shape)
    for a, s in zip(axis, size):
        shape[a] = s
    return np.broadcast_to(x, tuple(shape)).copy()


def _add_n_case(draw):
    s = draw(shapes())
    n = draw(st.integers(1, 4))
    return [draw(arr(s)) for _ in range(n)], {"num_args": n}


# -- hidden helpers -----------------------------------------------------------


def _unreduce_case(draw):
    like = draw(arr(draw(shapes(max_dims=3, max_side=4))))
    attrs = _axis_attrs(draw, like.ndim)
    attrs["normalize"] = draw(st.booleans())
    reduced = np_reduce(np.sum)(like, **{k: v for k, v in attrs.items() if k != "normalize"})
    return [draw(arr(reduced.shape)), like], attrs


def _unreduce_ref(data, like, axis=None, keepdims=False, exclude=False, normalize=False):
    axes = np_axes(like.ndim, axis, exclude)
    kshape = tuple(1 if i in axes else d for i, d in enumerate(like.shape))
    out = np.broadcast_to(data.reshape(kshape), like.shape)
    return out / max(1, int(np.prod([like.shape[i] for i in axes]))) if normalize else out


def _gather_case(draw):
    x = draw(arr(draw(shapes(max_dims=3, max_side=4))))
    axis = draw(st.one_of(st.none(), st.integers(0, x.ndim - 1)))
    perm_src = draw(distinct(st.just(x.shape)))
    flat = perm_src.reshape(-1) if axis is None else perm_src
    index = np.argsort(flat, axis=0 if axis is None else axis, kind="stable")
    return x, index, axis


def _gather_spec_case(draw):
    x, index, axis = _gather_case(draw)
    return [x, index], {"axis": axis}


def _gather_ref(data, index, axis=None):
    flat = data.reshape(-1) if axis is None else data
    return np.take_along_axis(flat, index, axis=0 if axis is None else axis)


def _scatter_spec_case(draw):
    like, index, axis = _gather_case(draw)
    return [draw(arr(index.shape)), index, like], {"axis": axis}


def _scatter_ref(data, index, like, axis=None):
    out = np.zeros(like.size if axis is None else like.shape, data.dtype)
    np.put_along_axis(out, index, data, axis=0 if axis is None else axis)
    return out.reshape(like.shape)


SPECS = REDUCE_SPECS + [
    OpSpec("norm", case=_norm_case, ref=_norm_ref),
    OpSpec("argmax", case=_arg_case, ref=_arg_ref(np.argmax), nondiff="zero gradient (indices)"),
    OpSpec("argmin", case=_arg_case, ref=_arg_ref(np.argmin), nondiff="zero gradient (indices)"),
    OpSpec("argmax_channel", case=lambda draw: ([draw(distinct(shapes(min_dims=2, max_dims=3)))], {}),
           ref=lambda x: np.argmax(x, axis=1).astype(x.dtype),
           nondiff="non-differentiable (MXNet registers no gradient)"),
    OpSpec("topk", case=_topk_case(["value", "both"]), ref=_topk_ref),
    OpSpec("topk", case=_topk_case(["indices", "mask"]), ref=_topk_ref, nondiff="zero gradient (indices / mask)"),
    OpSpec("sort", case=_sort_case, ref=_sort_ref),
    OpSpec("argsort", case=_argsort_case, ref=_argsort_ref, nondiff="zero gradient (indices)"),
    OpSpec("broadcast_to", case=_broadcast_to_case, ref=_broadcast_to_ref),
    OpSpec("broadcast_like", case=_broadcast_like_case, ref=_broadcast_like_ref, grad_inputs=(0,)),
    OpSpec("broadcast_axis", case=_broadcast_axis_case, ref=_broadcast_axis_ref),
    OpSpec("add_n", case=_add_n_case, ref=lambda *xs, num_args: sum(xs)),
    OpSpec("_unreduce", case=_unreduce_case, ref=_unreduce_ref, grad_inputs=(0,)),
    OpSpec("_fill_nan", case=lambda draw: ([_with_nans(draw, draw(shapes()))], {"value": 1.5}),
           ref=lambda x, value: np.where(np.isnan(x), value, x)),
    OpSpec("_ordering_gather", case=_gather_spec_case, ref=_gather_ref, grad_inputs=(0,)),
    OpSpec("_ordering_scatter", case=_scatter_spec_case, ref=_scatter_ref, grad_inputs=(0,)),
]
