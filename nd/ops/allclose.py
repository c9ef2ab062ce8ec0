"""contrib.allclose (MXNet 1.9.1): 1 if every element of `a` is close to the same element of `b`
(|a - b| <= atol + rtol * |b|, NaNs equal when `equal_nan`), else 0, as a 0-d uint8 array
(MXNet's CPU output type). Not differentiable (MXNet registers no gradient).
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import ShapeError
from ..registry import register


def _shape(a, sa, sb):
    if sa is not None and sb is not None and tuple(sa) != tuple(sb):
        raise ShapeError(f"operator _contrib_allclose: inputs 'a' {tuple(sa)} and 'b' {tuple(sb)} must "
                         "have the same shape")
    if sa is None and sb is None:
        return None
    s = tuple(sa if sa is not None else sb)
    return [s, s], [()]


@register("_contrib_allclose", inputs=("a", "b"), hint="allclose", infer_shape=_shape,
          infer_type=lambda a, ta, tb: None if ta is None and tb is None else
          ([ta or tb, tb or ta], [np.dtype(np.uint8)]),
          attrs={"rtol": Attr("float", 1e-05, "Relative tolerance."),
                 "atol": Attr("float", 1e-08, "Absolute tolerance."),
                 "equal_nan": Attr("bool", True, "Whether to compare NaN's as equal. If True, NaN's in A "
                                   "will be considered equal to NaN's in B in the output array.")},
          differentiable=False)
def _contrib_allclose(xp, a, x, y):
    """Whether the two arrays are elementwise equal within tolerance (numpy.allclose)."""
    _shape(a, x.shape, y.shape)
    acc = np.float64 if np.float64 in (x.dtype, y.dtype) else np.float32
    xa, ya = x.astype(acc), y.astype(acc)
    rtol, atol = acc(np.float32(a.rtol)), acc(np.float32(a.atol))   # C floats in MXNet
    nan_x, nan_y = xp.isnan(xa), xp.isnan(ya)
    with np.errstate(invalid="ignore"):
        close = (xa == ya) | (xp.abs(xa - ya) <= atol + rtol * xp.abs(ya))
    ok = xp.where(nan_x | nan_y, a.equal_nan & (nan_x == nan_y), close)
    return (xp.asarray(ok.all(), dtype=np.uint8).reshape(()),)
