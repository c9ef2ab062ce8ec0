"""`mx.np.linalg`: norm (written with registry ops, so it differentiates and exports), det and inv
(the legacy `_linalg_det` / `_linalg_inverse` kernels, registered as `_npi_det` / `_npi_inv`)."""
from __future__ import annotations

import numpy as onp

from .multiarray import call, ndarray


def norm(x, ord=None, axis=None, keepdims=False) -> ndarray:  # noqa: A002 - numpy's name
    """numpy's vector and matrix norms (ord None / 'fro' / 'nuc' / inf / -inf / 'inf' / '-inf' /
    integers / floats), written with registry operators: sums and maxima, and `_npi_svd` for the
    spectral (2, -2) and nuclear norms, so they differentiate and trace."""
    from . import functions as F  # noqa: PLC0415, N812 - functions imports multiarray
    ord = {"inf": onp.inf, "-inf": -onp.inf}.get(ord, ord) if isinstance(ord, str) else ord  # noqa: A001
    if isinstance(axis, int):
        axis = (axis,)
    elif axis is not None and not isinstance(axis, tuple):
        raise TypeError("'axis' must be None, an integer or a tuple of integers.")
    if axis is None:
        if ord is None:
            res = F.sqrt(F.sum(x * x))
            return res.reshape((1,) * x.ndim) if keepdims else res
        if x.ndim not in (1, 2):
            raise ValueError("Improper number of dimensions to norm.")
        axis = tuple(range(x.ndim))
    axis = tuple(ax % x.ndim for ax in axis)
    if len(axis) == 1:
        return _vector_norm(F, x, ord, axis, keepdims)
    if len(axis) != 2 or axis[0] == axis[1]:
        raise ValueError("Improper number of dimensions to norm.")
    return _matrix_norm(F, x, ord, axis, keepdims)


def _vector_norm(F, x, ord, axis, keepdims):  # noqa: A002, N803
    if ord is None or ord == 2:
        return F.sqrt(F.sum(x * x, axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
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


def _matrix_norm(F, x, ord, axis, keepdims):  # noqa: A002, N803
    row, col = axis
    if ord is None or ord in ("fro", "f"):
        return F.sqrt(F.sum(x * x, axis=axis, keepdims=keepdims))
    if ord in (1, -1, onp.inf, -onp.inf):
        a = F.absolute(x)
        summed, over = (row, col) if ord in (1, -1) else (col, row)   # 1: max column sum; inf: max row sum
        s = F.sum(a, axis=summed, keepdims=True)
        res = F.max(s, axis=over, keepdims=True) if ord > 0 else F.min(s, axis=over, keepdims=True)
        return res if keepdims else F.squeeze(res, axis=axis)
    if ord in (2, -2, "nuc"):
        m = F.moveaxis(x, (row, col), (-2, -1))
        if m.shape[-2] > m.shape[-1]:   # the singular values of the transpose are the same
            m = F.swapaxes(m, -1, -2)
        sv = svd(m)[1]
        res = F.sum(sv, axis=-1) if ord == "nuc" else F.max(sv, axis=-1) if ord == 2 else F.min(sv, axis=-1)
        if keepdims:
            for ax in sorted(axis):
                res = F.expand_dims(res, ax)
        return res
    raise ValueError(f"Invalid norm order '{ord}' for matrices")


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
