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


@register("amp_cast", monitor_inputs="input", infer_shape=same_shape, infer_type=_amp_type,
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


# -- amp_multicast ---------------------------------------------------------------------------------

def _multicast_dtypes(a, dtypes) -> list:
    """MXNet's AMPMultiCastType: float16/float32 inputs all become float32 when any input is float32
    (else the first input's dtype), or float16 with cast_narrow when any is float16 (else float32);
    every other dtype passes through."""
    f16, f32 = _AMP_FLOATS
    known = [np.dtype(d) for d in dtypes if d is not None]
    if a.cast_narrow:
        target = f16 if f16 in known else f32
    else:
        target = f32 if f32 in known else (np.dtype(dtypes[0]) if dtypes[0] is not None else None)
    return [None if d is None else (target if np.dtype(d) in _AMP_FLOATS else np.dtype(d)) for d in dtypes]


def _multicast_check(a, n: int) -> None:
    if a.num_outputs != n:
        from ..errors import ShapeError  # noqa: PLC0415
        raise ShapeError(f"operator amp_multicast: num_outputs={a.num_outputs} but {n} inputs were given")


def _multicast_type(a, *dtypes):
    _multicast_check(a, len(dtypes))
    outs = _multicast_dtypes(a, dtypes)
    return None if any(o is None for o in outs) else (list(dtypes), outs)  # (dtype("float64") == None)


def _multicast_shape(a, *shapes):
    _multicast_check(a, len(shapes))
    return list(shapes), list(shapes)


@register("amp_multicast", inputs=lambda a: tuple(f"data_{i}" for i in range(max(a.num_outputs or 0, 0))),
          outputs=lambda a: tuple(f"output{i}" for i in range(max(a.num_outputs or 0, 0))), fluent=False,
          infer_shape=_multicast_shape, infer_type=_multicast_type, attrs={
              "num_outputs": Attr("int", doc="Number of input/output pairs to be casted to the widest type."),
              "cast_narrow": Attr("bool", False, "Whether to cast to the narrowest type")})
def amp_multicast(xp, a, *xs):
    """Cast float16/float32 inputs to their common widest type (the narrowest with cast_narrow);
    inputs of other dtypes are returned as they are."""
    _multicast_check(a, len(xs))
    targets = _multicast_dtypes(a, [x.dtype for x in xs])
    return tuple(_cast_array(x, t) if np.dtype(x.dtype) != t else x.copy() for x, t in zip(xs, targets))


@amp_multicast.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_cast(g, x) for g, x in zip(ograds, inputs)]
