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
