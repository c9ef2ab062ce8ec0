"""MXNet's Python-level NDArray helpers that are not operators (`nd.concatenate`,
`nd.moveaxis`, `nd.onehot_encode`): thin compositions of registry operators, so they
record under autograd like any other call."""
from __future__ import annotations

from typing import Any

import numpy as np

from .dispatch import invoke
from .registry import get_op


def _axes(value: Any, ndim: int, what: str) -> tuple:
    items = [value] if isinstance(value, (int, np.integer)) else list(value)
    out = []
    for a in items:
        if not -ndim <= int(a) < ndim:
            raise ValueError(f"moveaxis: {what} axis {a} is out of range for an array of {ndim} dimensions")
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"moveaxis: repeated axis in {what} {value!r}")
    return tuple(out)


def moveaxis(tensor: Any, source: Any, destination: Any) -> Any:
    """Move axis/axes `source` to position(s) `destination`, the others keeping their order."""
    src = _axes(source, tensor.ndim, "source")
    dst = _axes(destination, tensor.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError("moveaxis: `source` and `destination` arguments must have the same number of elements")
    order = [n for n in range(tensor.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return invoke(get_op("transpose"), [tensor], {"axes": tuple(order)})


def concatenate(arrays: list, axis: int = 0, always_copy: bool = True) -> Any:
    """Join a list of NDArrays along `axis` (MXNet's older spelling of `concat`)."""
    if not arrays:
        raise ValueError("concatenate: expected a non-empty list of NDArrays")
    if not always_copy and len(arrays) == 1:
        return arrays[0]
    dtypes = {np.dtype(a.dtype) for a in arrays}
    if len(dtypes) > 1:
        raise TypeError(f"concatenate: all arrays must have one dtype, got {sorted(map(str, dtypes))}")
    return invoke(get_op("concat"), list(arrays), {"dim": axis, "num_args": len(arrays)})


def onehot_encode(indices: Any, out: Any) -> Any:
    """Write the one-hot rows of `indices` into `out` (shape (n, depth)) and return it."""
    if out.ndim != 2 or indices.shape != (out.shape[0],):
        raise ValueError(f"onehot_encode: expected indices of shape (n,) and out of shape (n, depth), "
                         f"got {indices.shape} and {out.shape}")
    out[:] = invoke(get_op("one_hot"), [indices], {"depth": out.shape[1], "dtype": np.dtype(out.dtype).name})
    return out


def fill_element_0index(lhs: Any, mhs: Any, rhs: Any, out: Any = None) -> Any:
    """A copy of the 2-D `lhs` with `out[i, rhs[i]] = mhs[i]` in every row (MXNet's NDArray
    function; float32 arrays, like MXNet's, and not recorded by autograd, as there)."""
    from .errors import DTypeError, MXNetError, ShapeError  # noqa: PLC0415
    if lhs.ndim != 2 or mhs.shape != (lhs.shape[0],) or rhs.shape != (lhs.shape[0],):
        raise ShapeError(f"fill_element_0index: expected lhs of shape (n, m) and mhs, rhs of shape (n,), "
                         f"got {lhs.shape}, {mhs.shape} and {rhs.shape}")
    for name, a in (("lhs", lhs), ("mhs", mhs), ("rhs", rhs)):
        if np.dtype(a.dtype) != np.float32:
            raise DTypeError(f"fill_element_0index: {name} must be float32 (MXNet's real_t), got "
                             f"{np.dtype(a.dtype).name}")
    xp = lhs.context.xp
    cols = rhs._data.astype(np.int64)
    if cols.size and (int(cols.min()) < 0 or int(cols.max()) >= lhs.shape[1]):
        raise MXNetError(f"fill_element_0index: indices must lie in [0, {lhs.shape[1]}), got "
                         f"[{int(cols.min())}, {int(cols.max())}]")
    data = lhs._data.copy()
    data[xp.arange(lhs.shape[0]), cols] = mhs._data
    if out is None:
        return type(lhs)._wrap(data, lhs.context)
    if out.shape != lhs.shape:
        raise ShapeError(f"fill_element_0index: out has shape {out.shape}, expected {lhs.shape}")
    out._data[...] = data
    return out
