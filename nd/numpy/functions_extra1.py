"""`mx.np.pad`, `unique`, `delete`, `bincount` and `einsum`: each one registry operator
(nd/ops/np_extra1.py), with MXNet 1.9.1's argument checks."""
from __future__ import annotations

import numpy as onp

from ..ndarray import NDArray
from .multiarray import call, ndarray

_PAD_KWARGS = {"constant": ("constant_values",), "edge": (), "reflect": ("reflect_type",),
               "symmetric": ("reflect_type",), "maximum": ("stat_length",), "minimum": ("stat_length",)}


def _not_array(x) -> bool:
    """Plain Python / NumPy data (refused as MXNet does); NDArrays and traced symbols pass."""
    return isinstance(x, (list, tuple, int, float, complex, onp.ndarray, onp.generic))


def pad(x, pad_width, mode="constant", **kwargs) -> ndarray:
    """Pad an array (modes constant, edge, reflect, symmetric, maximum, minimum; as MXNet, pad_width
    is a tuple of ints and linear_ramp / wrap / mean / median / empty / a function are refused)."""
    if onp.asarray(pad_width).dtype.kind != "i":
        raise TypeError("`pad_width` must be of integral type.")
    if not isinstance(pad_width, tuple):
        raise TypeError("`pad_width` must be tuple.")
    if callable(mode):
        raise ValueError("mode {'<function>'} is not supported.")
    if mode not in _PAD_KWARGS:
        raise ValueError(f"mode {{'{mode}'}} is not supported.")
    unsupported = set(kwargs) - set(_PAD_KWARGS[mode])
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    attrs = {"pad_width": pad_width, "mode": mode}
    if mode == "constant":
        value = kwargs.get("constant_values", 0)
        if isinstance(value, tuple):
            raise TypeError("unsupported constant_values type: {'tuple'}.")
        attrs["constant_value"] = float(value)
    elif mode in ("reflect", "symmetric"):
        if kwargs.get("reflect_type", "even") not in ("even", None):
            raise ValueError(f"unsupported reflect_type '{kwargs['reflect_type']}'")
    elif kwargs.get("stat_length") is not None:
        raise ValueError(f"unsupported stat_length '{kwargs['stat_length']}'")
    return call("_npi_pad", [x], attrs)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    """The sorted unique elements (or slices along axis), plus the indices / inverse / counts asked for."""
    ret = call("_npi_unique", [ar], {"return_index": return_index, "return_inverse": return_inverse,
                                     "return_counts": return_counts, "axis": axis})
    if hasattr(ret, "list_outputs") and len(ret.list_outputs()) > 1:   # a free Symbol: MXNet's list
        return [ret[i] for i in range(len(ret.list_outputs()))]
    return tuple(ret) if isinstance(ret, (list, tuple)) else ret


def delete(arr, obj, axis=None) -> ndarray:
    """The array without the sub-arrays at obj (an int, a slice or an index / bool array) along axis."""
    if _not_array(arr):
        raise TypeError(f"'arr' can not support type {type(arr)}")
    if isinstance(obj, slice):
        return call("_npi_delete", [arr], {"start": obj.start, "stop": obj.stop,
                                           "step": 1 if obj.step is None else obj.step, "axis": axis})
    if isinstance(obj, (int, onp.integer)) and not isinstance(obj, bool):
        return call("_npi_delete", [arr], {"int_ind": int(obj), "axis": axis})
    if isinstance(obj, NDArray):
        return call("_npi_delete", [arr, obj], {"axis": axis})
    raise TypeError(f"'obj' can not support type {type(obj)}")


def bincount(x, weights=None, minlength=0) -> ndarray:
    """How often each non-negative int occurs in x (or the sum of its weights)."""
    if _not_array(x):
        raise TypeError("Input data should be NDarray")
    if minlength < 0:
        raise ValueError("Minlength value should greater than 0")
    if weights is None:
        return call("_npi_bincount", [x], {"minlength": minlength, "has_weights": False})
    return call("_npi_bincount", [x, weights], {"minlength": minlength, "has_weights": True})


def einsum(*operands, **kwargs) -> ndarray:
    """Einstein summation: einsum(subscripts, *arrays, out=None, optimize=False)."""
    optimize = kwargs.pop("optimize", False)
    out = kwargs.pop("out", None)
    if kwargs:
        raise TypeError(f"einsum() got unexpected keyword arguments {sorted(kwargs)}")
    subscripts, arrays = operands[0], list(operands[1:])
    return call("_npi_einsum", arrays, {"subscripts": subscripts, "num_args": len(arrays),
                                        "optimize": int(bool(optimize))}, out=out)


__all__ = ["pad", "unique", "delete", "bincount", "einsum"]
