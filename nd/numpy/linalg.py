"""`mx.np.linalg`: norm (written with registry ops, so it differentiates and exports), det and inv
(the legacy `_linalg_det` / `_linalg_inverse` kernels, registered as `_npi_det` / `_npi_inv`)."""
from __future__ import annotations

import numpy as onp

from .multiarray import call, ndarray


def norm(x, ord=None, axis=None, keepdims=False) -> ndarray:  # noqa: A002 - numpy's name
    """Vector and matrix norms: None / 'fro' / 2 (vectors) / 1 / inf / -inf / p (vectors)."""
    from . import functions as F  # noqa: PLC0415, N812 - functions imports multiarray
    if isinstance(axis, int):
        axis = (axis,)
    vector = axis is not None and len(axis) == 1 or (axis is None and x.ndim == 1 and ord is not None)
    if ord is None or ord == "fro" or (ord == 2 and vector):
        return F.sqrt(F.sum(x * x, axis=axis, keepdims=keepdims))
    if not vector:
        raise NotImplementedError(f"np.linalg.norm: matrix norm ord={ord!r} is not supported; "
                                  "use ord=None or 'fro', or a vector norm with one axis")
    a = F.absolute(x)
    if ord == onp.inf:
        return F.max(a, axis=axis, keepdims=keepdims)
    if ord == -onp.inf:
        return F.min(a, axis=axis, keepdims=keepdims)
    if ord == 1:
        return F.sum(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return F.sum(F.not_equal(x, 0).astype(x.dtype), axis=axis, keepdims=keepdims)
    return F.power(F.sum(F.power(a, float(ord)), axis=axis, keepdims=keepdims), 1.0 / ord)


def det(a) -> ndarray:
    return call("_npi_det", [a], {})


def inv(a) -> ndarray:
    return call("_npi_inv", [a], {})
