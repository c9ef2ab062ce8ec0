"""Part of `mx.test_utils` (hybridgraph/test_utils.py re-exports everything):
random arrays, shapes and coordinates for tests, and `np_reduce`, MXNet's
numpy reference for reductions.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.random as rnd

from hybridgraph import nd
from hybridgraph.nd import backend as _backend
from hybridgraph.nd.ndarray import NDArray
from .compare import default_context, default_dtype


# -- random data ---------------------------------------------------------------------------------

def random_arrays(*shapes: Sequence[int]) -> np.ndarray | list[np.ndarray]:
    """Standard-normal numpy arrays of the default dtype, one per shape (a single array for one)."""
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0
              else np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes: Sequence[int], low: float = 0.0, high: float = 1.0,
                          dtype: Any = None) -> list[np.ndarray]:
    """Uniform [low, high) numpy arrays, one per shape (always a list)."""
    dtype = default_dtype() if dtype is None else dtype
    return [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population: list, k: int) -> list:
    """`k` elements of `population` in random order."""
    assert 0 <= k <= len(population)
    population_copy = population[:]
    np.random.shuffle(population_copy)
    return population_copy[0:k]


def rand_ndarray(shape: Sequence[int], stype: str = "default", density: float | None = None,
                 dtype: Any = None, modifier_func: Callable | None = None,
                 shuffle_csr_indices: bool = False, distribution: str | None = None,
                 ctx: _backend.Context | None = None) -> NDArray:
    """A random NDArray of `shape`: standard-normal values for ``stype='default'``; for
    ``'row_sparse'`` / ``'csr'`` a sparse array (nd/sparse.py) whose rows (row_sparse) or
    entries (csr) are kept with probability `density` (random when None) and hold uniform
    [0, 1) values, as MXNet's uniform distribution. `modifier_func` maps each stored value."""
    ctx = ctx if ctx else default_context()
    if stype == "default":
        return nd.array(random_arrays(shape), dtype=dtype, ctx=ctx)
    if stype not in ("row_sparse", "csr"):
        raise ValueError(f"rand_ndarray: unknown storage type {stype!r}")
    if distribution not in (None, "uniform"):
        raise NotImplementedError(f"rand_ndarray: distribution {distribution!r} is not supported; "
                                  "use 'uniform'")
    if stype == "csr" and len(shape) != 2:
        raise ValueError(f"rand_ndarray: csr needs a 2-D shape, got {tuple(shape)}")
    density = rnd.rand() if density is None else density
    dtype = default_dtype() if dtype is None else dtype
    mask_shape = (shape[0],) + (1,) * (len(shape) - 1) if stype == "row_sparse" else tuple(shape)
    kept = rnd.rand(*mask_shape) < density
    values = rnd.rand(*shape).astype(dtype)
    if modifier_func is not None:
        values = np.vectorize(modifier_func)(values).astype(dtype)
    dense = np.where(kept, values, 0).astype(dtype)
    if stype == "row_sparse":
        return nd.sparse.row_sparse_array((dense[kept.reshape(-1)], np.flatnonzero(kept)), shape=tuple(shape),
                                          ctx=ctx, dtype=dtype)
    return nd.sparse.csr_matrix(dense, ctx=ctx, dtype=dtype)


def rand_shape_2d(dim0: int = 10, dim1: int = 10, allow_zero_size: bool = False) -> tuple[int, int]:
    """A random 2-D shape with sizes in [1, dim] (or [0, dim] with allow_zero_size)."""
    low = 0 if allow_zero_size else 1
    return rnd.randint(low, dim0 + 1), rnd.randint(low, dim1 + 1)


def rand_shape_3d(dim0: int = 10, dim1: int = 10, dim2: int = 10,
                  allow_zero_size: bool = False) -> tuple[int, int, int]:
    """A random 3-D shape with sizes in [1, dim] (or [0, dim] with allow_zero_size)."""
    low = 0 if allow_zero_size else 1
    return rnd.randint(low, dim0 + 1), rnd.randint(low, dim1 + 1), rnd.randint(low, dim2 + 1)


def rand_shape_nd(num_dim: int, dim: int = 10, allow_zero_size: bool = False) -> tuple:
    """A random `num_dim`-D shape with sizes in [1, dim] (or [0, dim] with allow_zero_size)."""
    low = 0 if allow_zero_size else 1
    return tuple(rnd.randint(low, dim + 1, size=num_dim))


def rand_coord_2d(x_low: int, x_high: int, y_low: int, y_high: int) -> tuple[int, int]:
    """A random integer point in [x_low, x_high) x [y_low, y_high)."""
    x = np.random.randint(x_low, x_high, dtype=np.int64)
    y = np.random.randint(y_low, y_high, dtype=np.int64)
    return x, y


def np_reduce(dat: np.ndarray, axis: Any, keepdims: bool, numpy_reduce_func: Callable) -> np.ndarray:
    """Reduce `dat` over `axis` (None, int or list) one axis at a time.

    Parameters
    ----------
    dat : np.ndarray
        The data.
    axis : None or int or list-like
        The axes to reduce; None reduces all.
    keepdims : bool
        Keep the reduced axes with size 1.
    numpy_reduce_func : function
        A NumPy reducing function like ``np.sum`` or ``np.max``.
    """
    if isinstance(axis, int):
        axis = [axis]
    else:
        axis = list(axis) if axis is not None else range(len(dat.shape))
    ret = dat
    for i in reversed(sorted(axis)):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        keepdims_shape = list(dat.shape)
        for i in axis:
            keepdims_shape[i] = 1
        ret = ret.reshape(tuple(keepdims_shape))
    return ret
