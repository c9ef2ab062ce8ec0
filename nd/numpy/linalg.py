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


def cholesky(a) -> ndarray:
    """The lower Cholesky factor L of symmetric positive-definite matrices (A = L L^T)."""
    return call("_npi_cholesky", [a], {})


def svd(a) -> tuple:
    """(UT, L, V) with a = UT @ diag(L) @ V for (..., M, N) inputs with M <= N (MXNet's order)."""
    return tuple(call("_npi_svd", [a], {}))


def eig(a) -> tuple:
    """(w, v): eigenvalues and right eigenvectors (real spectra only, as MXNet)."""
    w, v = call("_npi_eig", [a], {})
    return w, v


def eigh(a, UPLO="L") -> tuple:  # noqa: N803 - numpy's name
    """(w, v) of symmetric matrices: ascending eigenvalues, orthonormal eigenvectors."""
    w, v = call("_npi_eigh", [a], {"UPLO": UPLO})
    return w, v


def eigvals(a) -> ndarray:
    return call("_npi_eigvals", [a], {})


def eigvalsh(a, UPLO="L") -> ndarray:  # noqa: N803
    return call("_npi_eigvalsh", [a], {"UPLO": UPLO})


def pinv(a, rcond=1e-15, hermitian=False) -> ndarray:
    """Moore-Penrose pseudo-inverse (rcond a number or an array over the batch)."""
    if isinstance(rcond, (int, float, onp.number)):
        return call("_npi_pinv_scalar_rcond", [a], {"rcond": float(rcond), "hermitian": hermitian})
    return call("_npi_pinv", [a, rcond], {"hermitian": hermitian})


def slogdet(a) -> tuple:
    """(sign, logabsdet) of each square matrix."""
    sign, logdet = call("_npi_slogdet", [a], {})
    return sign, logdet


def solve(a, b) -> ndarray:
    return call("_npi_solve", [a, b], {})


def tensorinv(a, ind=2) -> ndarray:
    return call("_npi_tensorinv", [a], {"ind": ind})


def tensorsolve(a, b, axes=None) -> ndarray:
    return call("_npi_tensorsolve", [a, b], {"a_axes": () if axes is None else tuple(axes)})
