"""Specs for nd/ops/np_extra1.py: pad, unique, delete, bincount, einsum against numpy;
gradients (pad, einsum) by finite differences."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, ints, shapes

_INT = "integer / index output"


def _pad_case(draw):
    s = draw(shapes(max_dims=3))
    pw = tuple((draw(st.integers(0, 3)), draw(st.integers(0, 3))) for _ in s)
    mode = draw(st.sampled_from(["constant", "edge", "reflect", "symmetric"]))
    return [draw(arr(s))], {"pad_width": pw, "mode": mode, "constant_value": draw(st.sampled_from([0.0, 1.5]))}


def _pad_ref(x, pad_width, mode, constant_value, **kw):
    if mode == "constant":
        return np.pad(x, pad_width, mode=mode, constant_values=constant_value)
    return np.pad(x, pad_width, mode=mode)


def _pad_stat_case(draw):
    s = draw(shapes(max_dims=3))
    pw = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in s)
    return [draw(arr(s))], {"pad_width": pw, "mode": draw(st.sampled_from(["maximum", "minimum"]))}


def _unique_case(draw):
    x = draw(ints(shapes(max_dims=3), -3, 3)).astype(np.float64)
    axis = draw(st.sampled_from([None] + list(range(-x.ndim, x.ndim))))
    return [x], {"return_index": True, "return_inverse": True, "return_counts": True, "axis": axis}


def _unique_ref(x, return_index, return_inverse, return_counts, axis, **kw):
    return np.unique(x, True, True, True, axis=axis)


def _delete_case(draw):
    s = draw(shapes(max_dims=3))
    axis = draw(st.sampled_from([None] + list(range(-len(s), len(s)))))
    n = int(np.prod(s)) if axis is None else s[axis]
    kind = draw(st.sampled_from(["int", "slice"]))
    if kind == "int":
        return [draw(arr(s))], {"int_ind": draw(st.integers(-n, n - 1)), "axis": axis}
    return [draw(arr(s))], {"start": draw(st.sampled_from([None, -2, 0, 1, 4])),
                            "stop": draw(st.sampled_from([None, -1, 2, 5])),
                            "step": draw(st.sampled_from([1, 2, -1, -2])), "axis": axis}


def _delete_ref(x, axis=None, int_ind=None, start=None, stop=None, step=None, **kw):
    return np.delete(x, int_ind if int_ind is not None else slice(start, stop, step), axis=axis)


def _delete_index_case(draw):
    s = draw(shapes(max_dims=3))
    axis = draw(st.sampled_from([None] + list(range(len(s)))))
    n = int(np.prod(s)) if axis is None else s[axis]
    return [draw(arr(s)), draw(ints((draw(st.integers(0, 4)),), -2, n + 1))], {"axis": axis}


def _delete_index_ref(x, obj, axis, **kw):
    n = x.size if axis is None else x.shape[axis]
    return np.delete(x, obj[(obj >= 0) & (obj < n)], axis=axis)


def _bincount_case(draw):
    x = draw(ints((draw(st.integers(0, 8)),), 0, 6))
    if draw(st.booleans()):
        return [x, draw(arr(x.shape))], {"minlength": draw(st.integers(0, 9)), "has_weights": True}
    return [x], {"minlength": draw(st.integers(0, 9)), "has_weights": False}


def _bincount_ref(x, w=None, minlength=0, **kw):
    return np.bincount(x, weights=w, minlength=minlength)


_EINSUM = [("ij,jk->ik", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->", [(2, 3)]),
           ("i,i", [(4,), (4,)]), ("...ij,...jk->...ik", [(2, 2, 3), (1, 3, 2)]), ("ijk->kj", [(2, 3, 4)]),
           ("i,j->ij", [(2,), (3,)]), ("bij,bjk", [(2, 2, 3), (2, 3, 2)]), ("ij,ij->i", [(3, 1), (3, 4)])]


def _einsum_case(draw):
    sub, shps = draw(st.sampled_from(_EINSUM))
    return [draw(arr(s)) for s in shps], {"subscripts": sub, "num_args": len(shps),
                                          "optimize": draw(st.integers(0, 1))}


def _pad_back_case(draw):
    (x,), attrs = _pad_case(draw)
    return [draw(arr(_pad_ref(x, **attrs).shape))], attrs


def _pad_back_ref(g, pad_width, mode, **kw):
    shape = tuple(d - b - e for d, (b, e) in zip(g.shape, pad_width))
    if mode == "constant":
        return g[tuple(slice(b, b + d) for d, (b, _) in zip(shape, pad_width))]
    idx = np.pad(np.arange(int(np.prod(shape))).reshape(shape), pad_width, mode=mode)
    return np.bincount(idx.ravel(), weights=g.ravel(), minlength=int(np.prod(shape))).reshape(shape)


def _einsum_back_case(draw):
    xs, attrs = _einsum_case(draw)
    return [draw(arr(np.einsum(attrs["subscripts"], *xs).shape)), *xs], attrs


def _einsum_back_ref(g, *xs, subscripts, **kw):
    """Each operand's gradient by linearity: the output's dot with g, differentiated by unit
    perturbations of the operand."""
    grads = []
    for i, x in enumerate(xs):
        gi = np.zeros(x.shape)
        for k in np.ndindex(x.shape):
            e = np.zeros(x.shape)
            e[k] = 1.0
            ops = [e if j == i else xj for j, xj in enumerate(xs)]
            gi[k] = (np.einsum(subscripts, *ops) * g).sum()
        grads.append(gi)
    return tuple(grads)


_DYN = "the output shape depends on the values"

SPECS = [
    OpSpec("_npi_pad", case=_pad_case, ref=_pad_ref),
    OpSpec("_npi_pad", case=_pad_stat_case, ref=lambda x, pad_width, mode, **kw: np.pad(x, pad_width, mode=mode),
           nondiff="maximum / minimum modes have no gradient (as MXNet 1.9.1)"),
    OpSpec("_backward_npi_pad", case=_pad_back_case, ref=_pad_back_ref, nondiff="a gradient kernel"),
    OpSpec("_npi_unique", case=_unique_case, ref=_unique_ref, nondiff=_INT, dynamic_shape=_DYN),
    OpSpec("_npi_delete", case=_delete_case, ref=_delete_ref, nondiff="zero gradient as MXNet"),
    OpSpec("_npi_delete", case=_delete_index_case, ref=_delete_index_ref, nondiff="zero gradient as MXNet",
           dynamic_shape=_DYN),
    OpSpec("_npi_bincount", case=_bincount_case, ref=_bincount_ref, nondiff=_INT, dynamic_shape=_DYN),
    OpSpec("_npi_einsum", case=_einsum_case, ref=lambda *xs, subscripts, **kw: np.einsum(subscripts, *xs)),
    OpSpec("_backward_npi_einsum", case=_einsum_back_case, ref=_einsum_back_ref, nondiff="a gradient kernel"),
]
