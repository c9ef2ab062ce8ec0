"""_contrib_boolean_mask (MXNet 1.9.1, src/operator/contrib/boolean_mask*): the rows of `data`
(along axis 0) whose entry of the 1-D `index` is non-zero, in order.

The output's first dimension is the number of non-zero entries, known only from the data
(shape inference gives nothing, like `unique`). MXNet implements axis 0 only and refuses any
other axis; so does this. The gradient scatters the output gradient back to the kept rows
(zero elsewhere); `index` gets a zero gradient.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import AttrError, ShapeError
from ..registry import register

_ATTRS = {"axis": Attr("int", 0, "An integer that represents the axis in NDArray to mask from.")}


def _check(a, data, index) -> None:
    if a.axis != 0:
        raise AttrError(f"operator _contrib_boolean_mask: only axis=0 is supported (as in MXNet 1.9.1), "
                        f"got axis={a.axis}; move the axis first with transpose / swapaxes, mask, and "
                        "move it back")
    if len(index) != 1:
        raise ShapeError(f"operator _contrib_boolean_mask: index must be 1-D, got shape {tuple(index)}")
    if len(data) < 1 or data[0] != index[0]:
        raise ShapeError(f"operator _contrib_boolean_mask: index has {index[0]} entries but data's axis 0 "
                         f"must have that length (data shape {tuple(data)})")


def _shape(a, data, index):
    if data is not None and index is not None and a.axis == 0:   # another axis: the kernel refuses it
        _check(a, data, index)
    # the output's length depends on the index's values


def _type(a, t, ti):
    return None if t is None else ([t, ti], [t])


@register("_contrib_boolean_mask", aliases=("_npi_boolean_mask",), hint="boolean_mask",
          inputs=("data", "index"), attrs=dict(_ATTRS), infer_shape=_shape, infer_type=_type)
def boolean_mask(xp, a, data, index):
    """data[index != 0] along axis 0."""
    _check(a, data.shape, index.shape)
    return (xp.ascontiguousarray(data[index != 0]),)


@boolean_mask.def_gradient
def _(F, a, inputs, outputs, ograds):
    grads = F._backward_contrib_boolean_mask(ograds[0], inputs[0], inputs[1], **a.given)
    return [grads[0], grads[1]]


def _backward_shape(a, g, data, index):
    if data is None or index is None:
        return None
    _check(a, data, index)
    return [g, data, index], [data, index]


@register("_backward_contrib_boolean_mask", inputs=("ograd", "data", "index"),
          outputs=("data_grad", "index_grad"), attrs=dict(_ATTRS), infer_shape=_backward_shape,
          infer_type=lambda a, tg, t, ti: None if t is None or ti is None else ([t, t, ti], [t, ti]))
def _backward_boolean_mask(xp, a, ograd, data, index):
    """The output gradient scattered back to the kept rows; zero for the others and for index."""
    _check(a, data.shape, index.shape)
    keep = index != 0
    kept = int(np.count_nonzero(np.asarray(keep) if xp is np else keep))
    if ograd.shape != (kept, *data.shape[1:]):
        raise ShapeError(f"operator _backward_contrib_boolean_mask: the output gradient has shape "
                         f"{tuple(ograd.shape)}, expected {(kept, *data.shape[1:])}")
    grad = xp.zeros(data.shape, dtype=data.dtype)
    grad[keep] = ograd
    return grad, xp.zeros(index.shape, dtype=index.dtype)
