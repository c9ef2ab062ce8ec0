"""numpy's diagonal functions as MXNet 1.9.1's operators: `_np_diag` (k), `_np_diagonal`
(offset, axis1, axis2), `_np_diagflat` (k) and `_npi_diag_indices_from`.

numpy's rules throughout: a diagonal beyond the matrix is empty (not an error), results are
copies. Gradients scatter the head gradient back onto the diagonal (`_backward_np_*`).
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import ShapeError
from ..registry import ZERO_GRAD, register


def _diag_len(rows: int, cols: int, k: int) -> int:
    return max(0, min(rows + min(k, 0), cols - max(k, 0)))


def _diag_shape(a, s):
    if s is None:
        return None
    if len(s) == 1:
        n = s[0] + abs(a.k)
        return [s], [(n, n)]
    if len(s) == 2:
        return [s], [(_diag_len(s[0], s[1], a.k),)]
    raise ShapeError(f"operator _np_diag: the input must be 1-D or 2-D, got shape {tuple(s)}")


def _axes(op: str, a, ndim: int) -> tuple[int, int]:
    if ndim < 2:
        raise ShapeError(f"operator {op}: the input must have at least two dimensions, got {ndim}")
    a1, a2 = a.axis1, a.axis2
    for ax in (a1, a2):
        if not -ndim <= ax < ndim:
            raise ShapeError(f"operator {op}: axis {ax} is out of bounds for an array of dimension {ndim}")
    a1, a2 = a1 % ndim, a2 % ndim
    if a1 == a2:
        raise ShapeError(f"operator {op}: axis1 and axis2 cannot be the same")
    return a1, a2


def _diagonal_shape(a, s):
    if s is None:
        return None
    a1, a2 = _axes("_np_diagonal", a, len(s))
    rest = tuple(d for i, d in enumerate(s) if i not in (a1, a2))
    return [s], [rest + (_diag_len(s[a1], s[a2], a.offset),)]


def _diagflat_shape(a, s):
    if s is None:
        return None
    n = int(np.prod(s)) + abs(a.k)
    return [s], [(n, n)]


def _scatter_diagonal(xp, g, shape: tuple, offset: int, a1: int, a2: int, dtype):
    """A zero array of `shape` with g (diagonal last, as np.diagonal gives it) on the diagonal."""
    z = xp.zeros(shape, dtype=dtype)
    zm = xp.moveaxis(z, (a1, a2), (-2, -1))
    n = g.shape[-1]
    rows = xp.arange(n) + max(-offset, 0)
    cols = xp.arange(n) + max(offset, 0)
    zm[..., rows, cols] = g
    return z


_K = {"k": Attr("int", 0, "The diagonal: 0 the main one, > 0 above it, < 0 below.")}
_DIAGONAL = {"offset": Attr("int", 0, "The diagonal's offset from the main one."),
             "axis1": Attr("int", 0, "The first axis of the 2-D sub-arrays."),
             "axis2": Attr("int", 1, "The second axis of the 2-D sub-arrays.")}


@register("_np_diag", attrs=dict(_K), hint="diag", infer_shape=_diag_shape)
def _np_diag(xp, a, x):
    """numpy's diag: a 1-D input becomes a matrix with it on diagonal k; a 2-D input gives its
    diagonal k (empty when k is beyond the matrix)."""
    _diag_shape(a, x.shape)
    return (xp.array(xp.diag(x, a.k)),)


@_np_diag.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_np_diag(ograds[0], inputs[0], k=a.k)]


@register("_backward_np_diag", inputs=("ograd", "data"), attrs=dict(_K), public=False, fluent=False,
          infer_shape=lambda a, g, s: None if s is None else ([g, s], [s]),
          infer_type=lambda a, g, t: None if t is None else ([g, t], [t]))
def _backward_np_diag(xp, a, g, x):
    """diag's gradient: the diagonal of g (1-D input) or g scattered onto diagonal k (2-D)."""
    if x.ndim == 1:
        return (xp.array(xp.diagonal(g, a.k)).astype(x.dtype, copy=False),)
    return (_scatter_diagonal(xp, g, x.shape, a.k, 0, 1, x.dtype),)


@register("_np_diagonal", attrs=dict(_DIAGONAL), hint="diagonal", infer_shape=_diagonal_shape)
def _np_diagonal(xp, a, x):
    """numpy's diagonal (a copy): the diagonal `offset` of the (axis1, axis2) planes, last."""
    a1, a2 = _axes("_np_diagonal", a, x.ndim)
    return (xp.array(xp.diagonal(x, a.offset, a1, a2)),)


@_np_diagonal.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_np_diagonal(ograds[0], inputs[0], **a.values())]


@register("_backward_np_diagonal", inputs=("ograd", "data"), attrs=dict(_DIAGONAL), public=False, fluent=False,
          infer_shape=lambda a, g, s: None if s is None else ([g, s], [s]),
          infer_type=lambda a, g, t: None if t is None else ([g, t], [t]))
def _backward_np_diagonal(xp, a, g, x):
    """diagonal's gradient: g scattered back onto the diagonal."""
    a1, a2 = _axes("_np_diagonal", a, x.ndim)
    return (_scatter_diagonal(xp, g, x.shape, a.offset, a1, a2, x.dtype),)


@register("_np_diagflat", attrs=dict(_K), hint="diagflat", infer_shape=_diagflat_shape)
def _np_diagflat(xp, a, x):
    """numpy's diagflat: the flattened input on diagonal k of a square matrix."""
    return (xp.diagflat(x, a.k),)


@_np_diagflat.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_np_diagflat(ograds[0], inputs[0], k=a.k)]


@register("_backward_np_diagflat", inputs=("ograd", "data"), attrs=dict(_K), public=False, fluent=False,
          infer_shape=lambda a, g, s: None if s is None else ([g, s], [s]),
          infer_type=lambda a, g, t: None if t is None else ([g, t], [t]))
def _backward_np_diagflat(xp, a, g, x):
    """diagflat's gradient: diagonal k of g, in the input's shape."""
    return (xp.array(xp.diagonal(g, a.k)).reshape(x.shape).astype(x.dtype, copy=False),)


def _diag_indices_shape(a, s):
    if s is None:
        return None
    if len(s) < 2 or len(set(s)) != 1:
        raise ShapeError(f"operator _npi_diag_indices_from: the input must be at least 2-D with all "
                         f"dimensions equal, got shape {tuple(s)}")
    return [s], [(len(s), s[0])]


@register("_npi_diag_indices_from", hint="diag_indices_from", gradient=ZERO_GRAD, infer_shape=_diag_indices_shape,
          infer_type=lambda a, t: None if t is None else ([t], [np.dtype(np.int64)]))
def _npi_diag_indices_from(xp, a, x):
    """The indices of the main diagonal of an n-D array with equal dimensions, one row per axis."""
    (_, ), (out,) = _diag_indices_shape(a, x.shape)
    return (xp.broadcast_to(xp.arange(out[1], dtype=np.int64), out).copy(),)
