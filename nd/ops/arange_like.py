"""`_contrib_arange_like` (MXNet 1.9.1's src/operator/tensor/init_op.cc, RangeLikeParam).

Evenly spaced values with the shape of the input (or the length of one of its axes):
value i is `start + step * (i // repeat)`, computed in float64 and cast to the input's
dtype, as MXNet computes it in double.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import ShapeError
from ..registry import ZERO_GRAD, register
from .init import _ctx_attr


def _axis(a, shape: tuple) -> int | None:
    if a.axis is None:
        return None
    if not -len(shape) <= a.axis < len(shape):
        raise ShapeError(f"operator _contrib_arange_like: axis {a.axis} is out of range for input shape "
                         f"{tuple(shape)}")
    return a.axis % len(shape)


def _shape(a, data):
    if data is None:
        return None
    axis = _axis(a, data)
    return [data], [tuple(data) if axis is None else (data[axis],)]


@register("_contrib_arange_like", monitor_inputs="input", inputs=("data",), gradient=ZERO_GRAD, infer_shape=_shape,
          attrs={"start": Attr("float", 0.0, "Start of interval. The interval includes this value."),
                 "step": Attr("float", 1.0, "Spacing between values."),
                 "repeat": Attr("int", 1, "The repeating time of all elements."),
                 "ctx": _ctx_attr(),
                 "axis": Attr("int", None, "Arange elements according to the size of a certain axis of input "
                              "array; if not given, according to the input shape.")})
def _contrib_arange_like(xp, a, data):
    """Values start + step * (i // repeat) in the shape of `data` (or of its axis `axis`)."""
    if a.repeat < 1:
        raise ShapeError(f"operator _contrib_arange_like: repeat must be >= 1, got {a.repeat}")
    shape = _shape(a, data.shape)[1][0]
    n = int(np.prod(shape, dtype=np.int64))
    vals = a.start + a.step * (xp.arange(n, dtype=np.int64) // a.repeat).astype(np.float64)
    return (vals.astype(data.dtype).reshape(shape),)
