"""More of the `mx.np` function namespace (split from functions.py by size): diagonals,
windows, indices, bitwise_not, nan_to_num, rot90, polyval - each one registry operator."""
from __future__ import annotations

import numpy as onp

from ..ndarray import NDArray
from .functions import _check_ufunc_kwargs, _ctx, _dt, sum  # noqa: A004 - numpy's name
from .multiarray import _is_scalar, call, ndarray


def diag(v, k=0) -> ndarray:
    """The diagonal k of a 2-D array, or a matrix with a 1-D array on it (`_np_diag`)."""
    return call("_np_diag", [v], {"k": k})


def diagonal(a, offset=0, axis1=0, axis2=1) -> ndarray:
    return call("_np_diagonal", [a], {"offset": offset, "axis1": axis1, "axis2": axis2})


def diagflat(v, k=0) -> ndarray:
    return call("_np_diagflat", [v], {"k": k})


def diag_indices_from(arr) -> tuple:
    """The indices of the main diagonal of an n-D array with equal dimensions."""
    return tuple(call("_npi_diag_indices_from", [arr], {}))


def trace(a, offset=0, axis1=0, axis2=1, out=None) -> ndarray:
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, out=out)


def _window_fn(name: str):
    def fn(M, dtype=None, ctx=None, device=None) -> ndarray:  # noqa: N803 - numpy's name
        return call(f"_npi_{name}", [], {"M": int(M), "dtype": _dt(dtype), "ctx": _ctx(ctx, device)})
    fn.__name__ = name
    fn.__doc__ = f"numpy's {name} window of M points (`_npi_{name}`)."
    return fn


hanning, hamming, blackman = (_window_fn(n) for n in ("hanning", "hamming", "blackman"))


def indices(dimensions, dtype=None, ctx=None, device=None) -> ndarray:
    """The grid of each axis' index, stacked: shape (len(dimensions),) + dimensions."""
    if not isinstance(dimensions, (tuple, list)):
        raise ValueError("The dimensions must be sequence of ints")
    return call("_npi_indices", [], {"dimensions": tuple(dimensions), "dtype": _dt(dtype, "int32"),
                                     "ctx": _ctx(ctx, device)})


def bitwise_not(x, out=None, **kwargs) -> ndarray:
    _check_ufunc_kwargs("bitwise_not", kwargs)
    if _is_scalar(x):
        return onp.bitwise_not(x)
    return call("_npi_bitwise_not", [x], {}, out=out)


invert = bitwise_not


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None, **kwargs):
    """NaN and infinities replaced by finite numbers; copy=False writes into x (as MXNet)."""
    if _is_scalar(x):
        return onp.nan_to_num(x, copy, nan, posinf, neginf)
    attrs = {"copy": copy, "nan": nan, "posinf": posinf, "neginf": neginf}
    return call("_npi_nan_to_num", [x], attrs, out=None if copy else x)


def rot90(m, k=1, axes=(0, 1)) -> ndarray:
    return call("_npi_rot90", [m], {"k": k, "axes": tuple(axes)})


def polyval(p, x):
    """The polynomial with coefficients p (highest power first) at x."""
    if _is_scalar(p) or _is_scalar(x):
        if isinstance(p, NDArray) or isinstance(x, NDArray):
            raise TypeError("type not supported")
        return onp.polyval(p, x)
    return call("_npi_polyval", [p, x], {})


__all__ = ["diag", "diagonal", "diagflat", "diag_indices_from", "trace", "hanning", "hamming", "blackman",
           "indices", "bitwise_not", "invert", "nan_to_num", "rot90", "polyval"]
