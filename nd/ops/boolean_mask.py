"""contrib.boolean_mask (MXNet 1.9.1's `_contrib_boolean_mask`, alias `_npi_boolean_mask`): the
rows of `data` whose entry in the 1-D `index` is non-zero, in order. The output's first
dimension depends on the values of `index` (a dynamic shape). The gradient scatters the head
gradient back to the selected rows and zeros elsewhere; `index` gets none.
"""
from __future__ import annotations

from ..attrs import Attr
from ..errors import AttrError, ShapeError
from ..registry import ZERO_GRAD, register

_ATTRS = {"axis": Attr("int", 0, "An integer that represents the axis in NDArray to mask from.")}


def _selected(xp, a, data, index):
    """The boolean row selector, after MXNet's checks."""
    if a.axis != 0:
        raise AttrError(f"operator _contrib_boolean_mask: only axis=0 is supported (as MXNet 1.9.1), got "
                        f"axis={a.axis}")
    if index.ndim != 1:
        raise ShapeError(f"operator _contrib_boolean_mask: index must be 1-D, got shape {index.shape}")
    if data.ndim < 1 or data.shape[0] != index.shape[0]:
        raise ShapeError(f"operator _contrib_boolean_mask: index has {index.shape[0]} entries but data's first "
                         f"dimension is {data.shape[:1]} (data shape {data.shape})")
    return index != 0


def _mask_type(a, t_data, t_index):
    return None if t_data is None else ([t_data, t_index if t_index is not None else t_data], [t_data])


@register("_contrib_boolean_mask", aliases=("_npi_boolean_mask",), hint="boolean_mask", inputs=("data", "index"),
          attrs=dict(_ATTRS), infer_shape=lambda a, *s: None, infer_type=_mask_type)
def boolean_mask(xp, a, data, index):
    """The rows of `data` where `index` is non-zero."""
    return (data[_selected(xp, a, data, index)],)


@boolean_mask.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_contrib_boolean_mask(ograds[0], inputs[0], inputs[1], **a.given), None]


@register("_backward_contrib_boolean_mask", inputs=("ograd", "data", "index"), outputs=("data_grad",),
          attrs=dict(_ATTRS), gradient=ZERO_GRAD,
          infer_shape=lambda a, g, d, i: None if d is None else ([g, d, i], [d]),
          infer_type=lambda a, g, d, i: None if d is None else ([d, d, i if i is not None else d], [d]))
def _backward_contrib_boolean_mask(xp, a, ograd, data, index):
    """The head gradient in the selected rows, zeros in the others."""
    keep = _selected(xp, a, data, index)
    if ograd.shape != (int(keep.sum()), *data.shape[1:]):
        raise ShapeError(f"operator _backward_contrib_boolean_mask: head gradient shape {ograd.shape} does not "
                         f"match the {int(keep.sum())} selected rows of data {data.shape}")
    out = xp.zeros(data.shape, dtype=data.dtype)
    out[keep] = ograd
    return (out,)
