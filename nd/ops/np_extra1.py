"""`mx.np` operators with numpy's semantics: `_npi_pad`, `_npi_unique`, `_npi_delete`,
`_npi_bincount` and `_npi_einsum` (MXNet 1.9.1's names and attributes).

Kernels are numpy's functions on the backend array module. unique, bincount and delete by an
index array have an output shape that depends on the data: their shape inference answers
"unknown" and the shape is known once the kernel ran (as MXNet's dynamic-shape operators).
Gradients: pad (constant, edge, reflect, symmetric: the head gradient summed back onto the
element each output copies) and einsum (one einsum per operand).
"""
from __future__ import annotations

import ast
from collections import Counter

import numpy as np

from ..attrs import Attr
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import ZERO_GRAD, register

# -- pad ------------------------------------------------------------------------------------------


def nested_int_pairs(v) -> tuple:
    """((before_1, after_1), ...) as nested int tuples; numpy broadcasting applies at use."""
    if isinstance(v, str):
        v = ast.literal_eval(v.strip())
    arr = np.asarray(v)
    if arr.dtype.kind not in "iu" or arr.ndim > 2:
        raise ValueError(f"expected integer pad widths like ((1, 2), (0, 1)), got {v!r}")
    return tuple(tuple(int(x) for x in row) for row in np.atleast_2d(arr))


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "maximum", "minimum")
_PAD_ATTRS = {"pad_width": Attr(nested_int_pairs, doc="Widths ((before_1, after_1), ... (before_N, after_N)).",
                                fmt=str),
              "mode": Attr("str", "constant", "The padding mode.", choices=_PAD_MODES),
              "constant_value": Attr("float", 0.0, "The value of the padded elements in 'constant' mode."),
              "reflect_type": Attr("str", "even", "'reflect'/'symmetric': only 'even' (as MXNet).")}


def _widths(a, ndim: int) -> list:
    try:
        pw = np.broadcast_to(np.asarray(a.pad_width, dtype=np.int64), (ndim, 2))
    except ValueError:
        raise ShapeError(f"operator _npi_pad: pad_width {a.pad_width} does not fit an input of "
                         f"{ndim} dimensions") from None
    if (pw < 0).any():
        raise ValueError(f"operator _npi_pad: pad widths must be >= 0, got {a.pad_width}")
    if a.reflect_type != "even":
        raise NotImplementedError(f"operator _npi_pad: MXNet 1.9.1 supports reflect_type='even' only, "
                                  f"got {a.reflect_type!r}")
    return [tuple(int(v) for v in row) for row in pw]


def _pad_shape(a, s):
    if s is None:
        return None
    return [s], [tuple(d + b + e for d, (b, e) in zip(s, _widths(a, len(s))))]


@register("_npi_pad", hint="pad", attrs=dict(_PAD_ATTRS), infer_shape=_pad_shape)
def _npi_pad(xp, a, x):
    """numpy's pad in one of MXNet's six modes."""
    pw = _widths(a, x.ndim)
    if a.mode == "constant":
        out = xp.pad(x, pw, mode="constant", constant_values=a.constant_value)
    elif x.size == 0 and any(b or e for b, e in pw):
        raise ShapeError(f"operator _npi_pad: mode {a.mode!r} cannot pad an empty input of shape {x.shape}")
    else:
        out = xp.pad(x, pw, mode=a.mode)
    return (out.astype(x.dtype, copy=False),)


@_npi_pad.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_npi_pad(ograds[0], **a.values())]


def _pad_back_shape(a, g):
    if g is None:
        return None
    out = tuple(d - b - e for d, (b, e) in zip(g, _widths(a, len(g))))
    if any(d < 0 for d in out):
        raise ShapeError(f"operator _backward_npi_pad: head gradient shape {tuple(g)} is smaller than the "
                         f"padding {a.pad_width}")
    return [g], [out]


@register("_backward_npi_pad", inputs=("ograd",), attrs=dict(_PAD_ATTRS), public=False, fluent=False,
          infer_shape=_pad_back_shape)
def _backward_npi_pad(xp, a, g):
    """Each input element's gradient: the head gradients of the outputs that copy it."""
    pw = _widths(a, g.ndim)
    shape = _pad_back_shape(a, g.shape)[1][0]
    if a.mode == "constant":
        return (xp.ascontiguousarray(g[tuple(slice(b, b + d) for d, (b, _) in zip(shape, pw))]),)
    if a.mode in ("maximum", "minimum"):
        raise NotImplementedError(f"operator _npi_pad: no gradient in mode {a.mode!r} (MXNet 1.9.1 has "
                                  "gradients for constant mode only); use mode='edge' or stop the gradient")
    size = int(np.prod(shape))
    if size == 0:
        return (xp.zeros(shape, dtype=g.dtype),)
    idx = xp.pad(xp.arange(size).reshape(shape), pw, mode=a.mode)
    flat = xp.bincount(idx.reshape(-1), weights=g.reshape(-1).astype(np.float64), minlength=size)
    return (flat.reshape(shape).astype(g.dtype),)


# -- unique ---------------------------------------------------------------------------------------

_UNIQUE_ATTRS = {"return_index": Attr("bool", False, "Also return the indices of the first occurrences."),
                 "return_inverse": Attr("bool", False, "Also return the indices that rebuild the input."),
                 "return_counts": Attr("bool", False, "Also return how often each unique value occurs."),
                 "axis": Attr("int", None, "The axis to take unique slices along (None: flattened).")}


def _unique_outputs(a) -> tuple:
    return ("output",) + tuple(n for n, on in (("indices", a.return_index), ("inverse", a.return_inverse),
                                               ("counts", a.return_counts)) if on)


def _unique_type(a, t):
    n = len(_unique_outputs(a))
    return None if t is None else ([t], [t] + [np.dtype(np.int64)] * (n - 1))


@register("_npi_unique", hint="unique", attrs=dict(_UNIQUE_ATTRS), outputs=_unique_outputs, gradient=ZERO_GRAD,
          infer_shape=lambda a, s: None, infer_type=_unique_type)
def _npi_unique(xp, a, x):
    """numpy's unique (sorted), with the first-occurrence indices, inverse and counts asked for."""
    if a.axis is not None and not -max(x.ndim, 1) <= a.axis < max(x.ndim, 1):
        raise ShapeError(f"operator _npi_unique: axis {a.axis} is out of range for shape {x.shape}")
    res = xp.unique(x if x.ndim or a.axis is None else x.reshape(1), return_index=a.return_index,
                    return_inverse=a.return_inverse, return_counts=a.return_counts, axis=a.axis)
    res = res if isinstance(res, tuple) else (res,)
    out = [res[0].astype(x.dtype, copy=False)]
    out += [r.astype(np.int64, copy=False) for r in res[1:]]   # the inverse's shape is numpy's
    return tuple(out)


# -- delete ---------------------------------------------------------------------------------------

_DELETE_ATTRS = {"start": Attr("int", None, "A slice obj's start."), "stop": Attr("int", None, "A slice obj's stop."),
                 "step": Attr("int", None, "A slice obj's step."),
                 "int_ind": Attr("int", None, "An int obj: the index to delete."),
                 "axis": Attr("int", None, "The axis to delete along (None: the flattened array).")}


def _delete_by_index(a) -> bool:
    return a.start is None and a.stop is None and a.step is None and a.int_ind is None


def _delete_obj(a):
    return a.int_ind if a.int_ind is not None else slice(a.start, a.stop, a.step)


def _delete_shape(a, s, *rest):
    if s is None or _delete_by_index(a):
        return None
    given = tuple(s)
    if a.axis is None:
        s, axis = (int(np.prod(s)),), 0
    else:
        if not -len(s) <= a.axis < len(s):
            raise ShapeError(f"operator _npi_delete: axis {a.axis} is out of range for shape {tuple(s)}")
        axis = a.axis % len(s)
    out = list(s)
    obj = _delete_obj(a)
    if isinstance(obj, int):
        if not -s[axis] <= obj < s[axis]:
            raise IndexError(f"operator _npi_delete: index {obj} is out of bounds for axis {axis} with size {s[axis]}")
        out[axis] -= 1
    else:
        out[axis] -= len(range(*obj.indices(s[axis])))
    return [given, *rest], [tuple(out)]


@register("_npi_delete", hint="delete", attrs=dict(_DELETE_ATTRS), gradient=ZERO_GRAD,
          inputs=lambda a: ("arr", "obj") if _delete_by_index(a) else ("arr",),
          infer_shape=_delete_shape, infer_type=lambda a, t, *r: None if t is None else ([t, *r], [t]))
def _npi_delete(xp, a, x, obj=None):
    """numpy's delete: the array without the sub-arrays at an int, a slice or an index/bool array."""
    if obj is None:
        if _delete_by_index(a):
            raise AttrError("operator _npi_delete: give obj as an input, or one of int_ind / start, stop, step")
        ind = _delete_obj(a)
        _delete_shape(a, x.shape)
    else:
        ind = obj if obj.dtype == np.bool_ else obj.reshape(-1).astype(np.int64)
        if obj.dtype != np.bool_:   # MXNet ignores the indices outside [0, size), negative ones too
            n = x.size if a.axis is None else x.shape[a.axis]
            ind = ind[(ind >= 0) & (ind < n)]
    if a.axis is not None and not -max(x.ndim, 1) <= a.axis < max(x.ndim, 1):
        raise ShapeError(f"operator _npi_delete: axis {a.axis} is out of range for shape {x.shape}")
    return (xp.ascontiguousarray(xp.delete(x, ind, axis=a.axis)),)


# -- bincount -------------------------------------------------------------------------------------

_BINCOUNT_ATTRS = {"minlength": Attr("int", 0, "The least number of bins."),
                   "has_weights": Attr("bool", False, "Whether a weights input follows the data.")}


def _bincount_type(a, t, *w):
    if t is not None and np.dtype(t).kind not in "iub":
        raise DTypeError(f"operator _npi_bincount: input data should be int type, got {np.dtype(t)}")
    if a.has_weights:
        return None if not w or w[0] is None else ([t, w[0]], [w[0]])
    return [t], [np.dtype(np.int64)]


@register("_npi_bincount", hint="bincount", attrs=dict(_BINCOUNT_ATTRS), gradient=ZERO_GRAD,
          inputs=lambda a: ("data", "weights") if a.has_weights else ("data",),
          infer_shape=lambda a, *s: None, infer_type=_bincount_type)
def _npi_bincount(xp, a, x, w=None):
    """numpy's bincount of non-negative ints, optionally weighted (output in the weights' dtype)."""
    _bincount_type(a, x.dtype, *(() if w is None else (w.dtype,)))
    if a.minlength < 0:
        raise ValueError(f"operator _npi_bincount: minlength must be >= 0, got {a.minlength}")
    if x.ndim > 1:
        raise ShapeError(f"operator _npi_bincount: the data must be 1-D, got shape {x.shape}")
    if w is not None and w.shape != x.shape:
        raise ShapeError(f"operator _npi_bincount: weights shape {w.shape} differs from data shape {x.shape}")
    if x.size and x.min() < 0:
        raise ValueError("operator _npi_bincount: the data must be non-negative")
    x = x.reshape(-1).astype(np.int64)
    if w is None:
        return (xp.bincount(x, minlength=a.minlength).astype(np.int64),)
    return (xp.bincount(x, weights=w.reshape(-1), minlength=a.minlength).astype(w.dtype),)


# -- einsum ---------------------------------------------------------------------------------------

_EINSUM_ATTRS = {"num_args": Attr("int", doc="Number of input arrays."),
                 "subscripts": Attr("str", "", "The subscripts, numpy's notation ('ij,jk->ik', '...ii->...i')."),
                 "optimize": Attr("int", 0, "Whether to order the contraction (numpy's optimize; same result).")}


def _explicit(subscripts: str, shapes) -> tuple:
    """The subscripts with '...' spelt out as letters and the output given: (terms, output)."""
    s = subscripts.replace(" ", "")
    lhs, arrow, rhs = s.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ShapeError(f"operator _npi_einsum: subscripts {subscripts!r} name {len(terms)} operands, "
                         f"got {len(shapes)}")
    used = set(s)
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used]
    nell = max((len(shp) - len(t.replace("...", "")) for t, shp in zip(terms, shapes) if "..." in t), default=0)
    ell = "".join(spare[:nell])
    out_terms = []
    for t, shp in zip(terms, shapes):
        if "..." in t:
            k = len(shp) - len(t.replace("...", ""))
            t = t.replace("...", ell[nell - k:] if k else "")
        if len(t) != len(shp) or not all(c.isalpha() for c in t):
            raise ShapeError(f"operator _npi_einsum: term {t!r} of {subscripts!r} does not fit shape {tuple(shp)}")
        out_terms.append(t)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        counts = Counter("".join(out_terms))
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return out_terms, out


def _sizes(a, terms, shapes) -> dict:
    """Each index letter's size (a size-1 dimension broadcasts)."""
    sizes = {}
    for t, shp in zip(terms, shapes):
        for c, d in zip(t, shp):
            if sizes.get(c, d) != d and 1 not in (d, sizes[c]):
                raise ShapeError(f"operator _npi_einsum: index {c!r} of {a.subscripts!r} has sizes {sizes[c]} and {d}")
            sizes[c] = d if sizes.get(c, 1) == 1 else sizes[c]
    return sizes


def _einsum_shape(a, *shapes):
    if any(s is None for s in shapes):
        return None
    terms, out = _explicit(a.subscripts, shapes)
    sizes = _sizes(a, terms, shapes)
    if any(c not in sizes for c in out):
        raise ShapeError(f"operator _npi_einsum: output subscript of {a.subscripts!r} names an unknown index")
    return list(shapes), [tuple(sizes[c] for c in out)]


def _einsum_type(a, *t):
    if any(x is None for x in t):
        return None
    return list(t), [np.result_type(*t)]


def _einsum_inputs(a) -> tuple:
    return tuple(f"data{i}" for i in range(a.num_args))


@register("_npi_einsum", monitor_inputs="arg", hint="einsum", attrs=dict(_EINSUM_ATTRS), inputs=_einsum_inputs,
          key_var_num_args="num_args", infer_shape=_einsum_shape, infer_type=_einsum_type)
def _npi_einsum(xp, a, *ops):
    """numpy's einsum (Einstein summation) of num_args operands."""
    _einsum_shape(a, *(x.shape for x in ops))
    dt = np.result_type(*(x.dtype for x in ops))
    return (xp.asarray(xp.einsum(a.subscripts, *ops, optimize=bool(a.optimize)), dtype=dt),)


@_npi_einsum.def_gradient
def _(F, a, inputs, outputs, ograds):
    grads = F._backward_npi_einsum(ograds[0], *inputs, **a.values())
    return list(grads) if len(inputs) > 1 else [grads]


@register("_backward_npi_einsum", inputs=lambda a: ("ograd",) + _einsum_inputs(a),
          outputs=lambda a: tuple(f"data{i}_grad" for i in range(a.num_args)), attrs=dict(_EINSUM_ATTRS),
          public=False, fluent=False, infer_shape=lambda a, g, *s: None if None in s else ([g, *s], list(s)),
          infer_type=lambda a, g, *t: None if None in t else ([g, *t], list(t)))
def _backward_npi_einsum(xp, a, g, *ops):
    """d out / d operand i: the head gradient contracted with the other operands, onto the
    operand's indices (repeated indices - a diagonal - get it on the diagonal only)."""
    terms, out = _explicit(a.subscripts, [x.shape for x in ops])
    sizes = _sizes(a, terms, [x.shape for x in ops])
    grads = []
    for i, (t, x) in enumerate(zip(terms, ops)):
        letters = "".join(dict.fromkeys(t))   # t's indices, each once
        others = [terms[j] for j in range(len(ops)) if j != i]
        ones = xp.ones(tuple(sizes[c] for c in letters), dtype=g.dtype)
        spec = ",".join([out, *others, letters]) + "->" + letters
        gi = xp.einsum(spec, g, *(ops[j] for j in range(len(ops)) if j != i), ones)
        if letters != t:   # put the gradient on the diagonal the term reads
            full = xp.zeros(tuple(sizes[c] for c in t), dtype=gi.dtype)
            grid = xp.indices(gi.shape)
            full[tuple(grid[letters.index(c)] for c in t)] = gi
            gi = full
        gi = _unbroadcast(xp, gi, x.shape)
        grads.append(gi.astype(x.dtype, copy=False))
    return tuple(grads)


def _unbroadcast(xp, gi, shape):
    """Sum over the axes an operand of size 1 was broadcast along."""
    axes = tuple(k for k, (d, e) in enumerate(zip(shape, gi.shape)) if d == 1 and e != 1)
    return gi.sum(axis=axes, keepdims=True) if axes else gi
