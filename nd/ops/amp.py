"""amp_cast (MXNet 1.9.1's automatic-mixed-precision cast): casts float16/float32 data to
`dtype` and passes every other dtype through unchanged; its gradient casts the head gradient
back to the input's dtype (Cast's `_backward_cast`). bfloat16 does not exist in numpy, so it is
refused as Cast refuses it. A float -> integer amp_cast rounds half to even, as MXNet 1.9.1's
CPU wheel does (its MKLDNN reorder; plain Cast truncates).
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..registry import register, same_shape
from .matrix_misc import _CAST_TYPES, _cast_array, _cast_dtype

_AMP_FLOATS = (np.dtype("float16"), np.dtype("float32"))


def _amp_type(a, data):
    if data is None:
        return None
    return [data], [np.dtype(a.dtype) if np.dtype(data) in _AMP_FLOATS else np.dtype(data)]


@register("amp_cast", infer_shape=same_shape, infer_type=_amp_type,
          attrs={"dtype": Attr(_cast_dtype, doc="Output data type.", choices=_CAST_TYPES)})
def amp_cast(xp, a, x):
    """Cast float16/float32 data to `dtype`; data of any other dtype is returned as it is."""
    if np.dtype(x.dtype) in _AMP_FLOATS:
        if np.dtype(a.dtype).kind in "iu":
            return (_cast_array(xp.rint(x), a.dtype),)
        return (_cast_array(x, a.dtype),)
    return (x.copy(),)


@amp_cast.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_cast(ograds[0], inputs[0])]
