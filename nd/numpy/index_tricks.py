"""Index generators of `mx.np`: `unravel_index`, `diag_indices_from`.

Their results are integer index arrays that depend on the input's values (unravel_index) or
only on its shape (diag_indices_from); nothing flows back through them, so they are computed
eagerly with NumPy, as MXNet 1.9.1 computes unravel_index (a NumPy fallback operator there).
On a traced (hybridized) array they raise, naming the alternative.
"""
from __future__ import annotations

from typing import Any

import numpy as onp

from ..backend import to_numpy
from .multiarray import array_from, ndarray


def _eager(fn: str, a: Any) -> None:
    if getattr(a, "_is_symbolic", False):
        raise NotImplementedError(f"np.{fn} of a traced array is not supported (its result depends on "
                                  f"concrete data): compute it outside the hybridized block")


def unravel_index(indices, shape, order: str = "C") -> Any:
    """Flat indices as a tuple of coordinate arrays for `shape` (the result keeps the indices'
    integer dtype, as MXNet's; a Python int gives a tuple of ints)."""
    if order != "C":
        raise NotImplementedError("np.unravel_index: only order='C' (row-major) is supported, as in MXNet")
    if isinstance(indices, (int, onp.integer)):
        return onp.unravel_index(indices, shape)
    _eager("unravel_index", indices)
    data = to_numpy(indices._data)
    if data.dtype.kind not in "iu":
        raise TypeError(f"np.unravel_index: only integer indices are permitted, got dtype {data.dtype}")
    coords = onp.unravel_index(data, shape)
    return tuple(array_from(c.astype(data.dtype), indices.ctx) for c in coords)


def diag_indices_from(arr: ndarray) -> tuple:
    """The indices of the main diagonal of an n-d array whose dimensions are all equal (int64)."""
    _eager("diag_indices_from", arr)
    if arr.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    n = arr.shape[0]
    for i, size in enumerate(arr.shape):
        if size != n:
            raise ValueError(f"All dimensions of input must be of equal length: axis {i} has size {size}, "
                             f"axis 0 has {n}")
    idx = onp.arange(n, dtype=onp.int64)
    return tuple(array_from(idx.copy(), arr.ctx) for _ in range(arr.ndim))


__all__ = ["unravel_index", "diag_indices_from"]
