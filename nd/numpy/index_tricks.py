"""`mx.np.unravel_index`: flat indices to coordinate arrays.

The result depends on the indices' values and nothing flows back through it, so it is computed
eagerly with NumPy, as MXNet 1.9.1 computes it (a NumPy fallback operator there). On a traced
(hybridized) array it raises, naming the alternative.
"""
from __future__ import annotations

from typing import Any

import numpy as onp

from ..backend import to_numpy
from .multiarray import array_from


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


__all__ = ["unravel_index"]
