"""contrib.index_copy (MXNet 1.9.1): a copy of `old_tensor` whose rows (axis 0) `index_vector`
are replaced by the rows of `new_tensor`; for repeated indices the last row wins.

Gradients, as MXNet's `_contrib_backward_index_copy`: new_tensor's row i gets the output
gradient's row index[i]; old_tensor gets the output gradient with those rows zeroed; the
index none. Indices are truncated toward zero; one outside [0, rows) raises (MXNet writes
out of bounds).
"""
from __future__ import annotations

from ..errors import OutOfRangeError, ShapeError
from ..registry import register


def _shape(a, old, index, new):
    if old is None or new is None:
        return None
    if index is not None and len(index) != 1:
        raise ShapeError(f"operator _contrib_index_copy: index_vector must be 1-D, got {tuple(index)}")
    if len(old) != len(new) or any(o != n for o, n in zip(old[1:], new[1:])) or new[0] > old[0]:
        raise ShapeError(f"operator _contrib_index_copy: new_tensor {tuple(new)} must have old_tensor's "
                         f"{tuple(old)} shape except a first dimension no larger")
    if index is not None and index[0] != new[0]:
        raise ShapeError(f"operator _contrib_index_copy: index_vector has {index[0]} entries for "
                         f"{new[0]} rows of new_tensor")
    return [tuple(old), (new[0],), tuple(new)], [tuple(old)]


def _rows(xp, index, n: int):
    rows = index.astype("int64")
    if rows.size and (int(rows.min()) < 0 or int(rows.max()) >= n):
        raise OutOfRangeError(f"operator _contrib_index_copy: index_vector {rows.tolist()} out of range "
                              f"for {n} rows")
    return rows


@register("_contrib_index_copy", inputs=("old_tensor", "index_vector", "new_tensor"), infer_shape=_shape,
          infer_type=lambda a, o, i, n: None if o is None else ([o, i if i is not None else o, o], [o]),
          hint="index_copy")
def _contrib_index_copy(xp, a, old, index, new):
    """old_tensor with rows index_vector replaced by new_tensor's rows."""
    _shape(a, old.shape, index.shape, new.shape)
    out = old.copy()
    out[_rows(xp, index, old.shape[0])] = new.astype(old.dtype, copy=False)
    return (out,)


@_contrib_index_copy.def_gradient
def _(F, a, inputs, outputs, ograds):
    grads = F._contrib_backward_index_copy(ograds[0], inputs[1], inputs[2])
    return [grads[0], None, grads[1]]


@register("_contrib_backward_index_copy", inputs=("ograd", "index_vector", "new_tensor"),
          outputs=("old_grad", "new_grad"),
          infer_shape=lambda a, g, i, n: None if g is None or n is None else ([g, (n[0],), n], [g, n]),
          infer_type=lambda a, g, i, n: None if g is None else ([g, i if i is not None else g, g], [g, g]))
def _contrib_backward_index_copy(xp, a, ograd, index, new):
    """(output gradient with the copied rows zeroed, output gradient's rows index_vector)."""
    rows = _rows(xp, index, ograd.shape[0])
    old_grad = ograd.copy()
    old_grad[rows] = 0
    return old_grad, ograd[rows].astype(ograd.dtype, copy=False)
