"""The `_linalg_*` operators on square matrices in the trailing two axes
(MXNet 1.9.1 semantics): potrf, trsm, syrk, det, inverse and sumlogdiag.

As MXNet, they accept only float32 and float64. Gradients of syrk and inverse
are written with registry operators, so higher-order gradients work; potrf,
trsm, det and sumlogdiag use hidden backward operators computed directly
(MXNet has no higher-order gradients for them either). A factorisation or
inverse that does not exist raises linalg.LinAlgError.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import ShapeError
from ..registry import register
from .linalg import LinAlgError, _LINALG_FLOATS, _backward_dot_type, _dims_match, _float_type, _t, check_float


# ---------------------------------------------------------------------------
# square-matrix operators on the trailing two axes


def _square(op: str, shape, name: str = "A"):
    if len(shape) < 2:
        raise ShapeError(f"operator {op}: input {name!r} must have rank >= 2, got {tuple(shape)}")
    if not _dims_match(shape[-1], shape[-2]):
        raise ShapeError(f"operator {op}: input {name!r} must hold square matrices in its last "
                         f"two axes, got {tuple(shape)}")


def _same_square_shape(op: str):
    def infer(a, shape):
        if shape is None:
            return None
        _square(op, shape)
        return [shape], [shape]
    return infer


def _batch_scalar_shape(shape: tuple) -> tuple:
    """Shape of a per-matrix scalar: the batch axes, or (1,) for a single matrix."""
    return tuple(shape[:-2]) or (1,)


def _scalar_per_matrix_shape(op: str):
    def infer(a, shape):
        if shape is None:
            return None
        _square(op, shape)
        return [shape], [_batch_scalar_shape(shape)]
    return infer


def _linalg_call(op: str, fn, *args):
    """Run an xp.linalg routine on float32/float64 inputs, turning LAPACK failures
    into a clear error."""
    check_float(op, _LINALG_FLOATS, *args)
    try:
        return fn(*args)
    except np.linalg.LinAlgError as exc:
        raise LinAlgError(f"operator {op}: {exc}") from None


def _linalg_op(name: str, extra_aliases: tuple = (), **kwargs):
    """register() with the alias, hint and float32/float64 type rule the
    one-input linalg ops share."""
    short = name[len("_linalg_"):]
    kwargs.setdefault("infer_type", _float_type(name, _LINALG_FLOATS))
    return register(name, aliases=("linalg_" + short, *extra_aliases), inputs=("A",), hint=short,
                    **kwargs)


# -- potrf ------------------------------------------------------------------


_CHOLESKY_LOWER = {"lower": Attr("bool", True, "True if the triangular matrix is lower triangular, "
                                  "false if upper.")}


@_linalg_op("_linalg_potrf", infer_shape=_same_square_shape("_linalg_potrf"), attrs=dict(_CHOLESKY_LOWER))
def _linalg_potrf(xp, a, A):
    """Cholesky factor of symmetric positive-definite matrices: L lower triangular with
    A = L L^T (lower=True, only A's lower triangle is read), or U upper with A = U^T U
    (lower=False, only the upper triangle is read)."""
    if a.lower:
        return (_linalg_call("_linalg_potrf", xp.linalg.cholesky, A).astype(A.dtype, copy=False),)
    low = _linalg_call("_linalg_potrf", xp.linalg.cholesky, xp.swapaxes(A, -1, -2))
    return (xp.ascontiguousarray(xp.swapaxes(low, -1, -2)).astype(A.dtype, copy=False),)


@_linalg_potrf.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_linalg_potrf(ograds[0], outputs[0], lower=a.lower)]


@register("_backward_linalg_potrf", inputs=("ograd", "L"), attrs=dict(_CHOLESKY_LOWER),
          infer_shape=lambda a, g, L: [[L, L], [L]] if L is not None else None,
          infer_type=_float_type("_backward_linalg_potrf", _LINALG_FLOATS))
def _backward_linalg_potrf(xp, a, ograd, L):
    """dA of A = L L^T (symmetric, as MXNet):
    S = L^-T Phi(L^T tril(dL)) L^-1 with Phi = lower triangle, halved diagonal;
    dA = (S + S^T) / 2. The upper factor U = L^T uses the same formula transposed."""
    if not a.lower:
        L, ograd = xp.swapaxes(L, -1, -2), xp.swapaxes(ograd, -1, -2)
    li = _linalg_call("_linalg_potrf", xp.linalg.inv, L)
    p = xp.matmul(xp.swapaxes(L, -1, -2), xp.tril(ograd))
    phi = xp.tril(p) - 0.5 * xp.tril(xp.triu(p))
    s = xp.matmul(xp.matmul(xp.swapaxes(li, -1, -2), phi), li)
    return ((0.5 * (s + xp.swapaxes(s, -1, -2))).astype(L.dtype, copy=False),)


# -- trsm -------------------------------------------------------------------


def _trsm_shape(a, ashape, bshape):
    if ashape is None or bshape is None:
        return None
    _square("_linalg_trsm", ashape)
    if len(bshape) != len(ashape):
        raise ShapeError(f"operator _linalg_trsm: A {tuple(ashape)} and B {tuple(bshape)} must "
                         "have the same rank")
    k = bshape[-1] if a.rightside else bshape[-2]
    if not _dims_match(k, ashape[-1]) or not all(
            _dims_match(p, q) for p, q in zip(ashape[:-2], bshape[:-2])):
        raise ShapeError(f"operator _linalg_trsm: B {tuple(bshape)} does not fit the triangular "
                         f"matrix A {tuple(ashape)} (rightside={a.rightside})")
    return [ashape, bshape], [bshape]


def _triangle(xp, A, lower: bool):
    return xp.tril(A) if lower else xp.triu(A)


def _trsm_solve(xp, a, A, B):
    """alpha * op(T)^-1 B (left) or alpha * B op(T)^-1 (right), T the given triangle of A."""
    m = _t(xp, _triangle(xp, A, a.lower), a.transpose)
    scaled = B * B.dtype.type(a.alpha)
    if a.rightside:   # X m = aB  <=>  m^T X^T = aB^T
        x = _linalg_call("_linalg_trsm", xp.linalg.solve, xp.swapaxes(m, -1, -2),
                         xp.swapaxes(scaled, -1, -2))
        return xp.swapaxes(x, -1, -2)
    return _linalg_call("_linalg_trsm", xp.linalg.solve, m, scaled)


_TRI_ATTRS = {
    "transpose": Attr("bool", False, "Use transposed of the triangular matrix."),
    "rightside": Attr("bool", False, "Multiply triangular matrix from the right to non-triangular one."),
    "lower": Attr("bool", True, "True if the triangular matrix is lower triangular, false if upper."),
    "alpha": Attr("float", 1.0, "Scalar factor to be applied to the result."),
}


@register("_linalg_trsm", aliases=("linalg_trsm",), inputs=("A", "B"), hint="trsm",
          attrs=dict(_TRI_ATTRS), infer_shape=_trsm_shape,
          infer_type=_float_type("_linalg_trsm", _LINALG_FLOATS))
def _linalg_trsm(xp, a, A, B):
    """Solves op(A) X = alpha B (or X op(A) = alpha B with rightside) for triangular A."""
    return (xp.ascontiguousarray(_trsm_solve(xp, a, A, B)).astype(B.dtype, copy=False),)


@_linalg_trsm.def_gradient
def _(F, a, inputs, outputs, ograds):
    A, B = inputs
    grads = F._backward_linalg_trsm(ograds[0], A, outputs[0], transpose=a.transpose,
                                    rightside=a.rightside, lower=a.lower, alpha=a.alpha)
    return [grads[0], grads[1]]


@register("_backward_linalg_trsm", inputs=("ograd", "A", "X"), outputs=("A_grad", "B_grad"),
          attrs=dict(_TRI_ATTRS),
          infer_shape=lambda a, g, A, X: [[g, A, X], [A, X]] if A is not None and X is not None else None,
          infer_type=lambda a, *t: _backward_dot_type(t))
def _backward_linalg_trsm(xp, a, ograd, A, X):
    """Gradients of trsm for A (restricted to its triangle) and B.

    With M = op(T): left side X = alpha M^-1 B gives Y = M^-T g, dB = alpha Y,
    dM = -Y X^T; right side X = alpha B M^-1 gives Y = g M^-T, dB = alpha Y,
    dM = -X^T Y.
    """
    m = _t(xp, _triangle(xp, A, a.lower), a.transpose)
    mt = xp.swapaxes(m, -1, -2)
    if a.rightside:   # Y = g M^-T  <=>  M Y^T = g^T
        y = xp.swapaxes(_linalg_call("_linalg_trsm", xp.linalg.solve, m, xp.swapaxes(ograd, -1, -2)), -1, -2)
        dm = -xp.matmul(xp.swapaxes(X, -1, -2), y)
    else:
        y = _linalg_call("_linalg_trsm", xp.linalg.solve, mt, ograd)
        dm = -xp.matmul(y, xp.swapaxes(X, -1, -2))
    da = _triangle(xp, _t(xp, dm, a.transpose), a.lower)
    db = y * X.dtype.type(a.alpha)
    return da.astype(A.dtype, copy=False), db.astype(X.dtype, copy=False)


# -- syrk -------------------------------------------------------------------


def _syrk_shape(a, shape):
    if shape is None:
        return None
    if len(shape) < 2:
        raise ShapeError(f"operator _linalg_syrk: input 'A' must have rank >= 2, got {tuple(shape)}")
    n = shape[-1] if a.transpose else shape[-2]
    return [shape], [tuple(shape[:-2]) + (n, n)]


@_linalg_op("_linalg_syrk", infer_shape=_syrk_shape,
            attrs={"transpose": Attr("bool", False, "Use transpose of input matrix."),
                   "alpha": Attr("float", 1.0, "Scalar factor to be applied to the result.")})
def _linalg_syrk(xp, a, A):
    """out = alpha * A A^T (or alpha * A^T A with transpose)."""
    check_float("_linalg_syrk", _LINALG_FLOATS, A)
    at = xp.swapaxes(A, -1, -2)
    prod = xp.matmul(at, A) if a.transpose else xp.matmul(A, at)
    return (prod * A.dtype.type(a.alpha),)


@_linalg_syrk.def_gradient
def _(F, a, inputs, outputs, ograds):
    A, g = inputs[0], ograds[0]
    if a.transpose:   # dA = alpha * A (g + g^T)
        sym = F._linalg_gemm2(A, g, transpose_b=True, alpha=a.alpha)
        return [F._linalg_gemm(A, g, sym, alpha=a.alpha, beta=1.0)]
    # dA = alpha * (g + g^T) A
    sym = F._linalg_gemm2(g, A, transpose_a=True, alpha=a.alpha)
    return [F._linalg_gemm(g, A, sym, alpha=a.alpha, beta=1.0)]


# -- det / inverse / sumlogdiag -------------------------------------------------


def lu_factor(xp, A):
    """Batched LU factorisation with partial pivoting in LAPACK getrf's layout:
    (packed L\\U, 1-based int32 pivot rows). One vectorised step per column."""
    n = A.shape[-1]
    lu = A.reshape((-1, n, n)).copy()
    piv = xp.zeros((lu.shape[0], n), dtype=np.int32)
    mats = xp.arange(lu.shape[0])
    for k in range(n):  # over the matrix size, not over elements
        p = k + xp.argmax(xp.abs(lu[:, k:, k]), axis=1)
        piv[:, k] = p + 1
        row_k = lu[mats, k].copy()
        lu[mats, k] = lu[mats, p]
        lu[mats, p] = row_k
        pivot = lu[:, k, k]
        lu[:, k + 1:, k] /= xp.where(pivot == 0, 1, pivot)[:, None]   # a zero column stays zero
        lu[:, k + 1:, k + 1:] -= lu[:, k + 1:, k, None] * lu[:, k, None, k + 1:]
    return lu.reshape(A.shape), piv.reshape(A.shape[:-1])


def _det_shape(a, shape):
    if shape is None:
        return None
    _square("_linalg_det", shape)
    return [shape], [_batch_scalar_shape(shape), tuple(shape), tuple(shape[:-1])]


def _det_type(a, t):
    if t is None:
        return None
    _float_type("_linalg_det", _LINALG_FLOATS)(a, t)
    return [t], [t, t, np.dtype("int32")]


@_linalg_op("_linalg_det", extra_aliases=("_npi_det",), outputs=("output0", "output1", "output2"),
            num_visible_outputs=1, infer_shape=_det_shape, infer_type=_det_type)
def _linalg_det(xp, a, A):
    """Determinant of each square matrix: shape A.shape[:-2], or (1,) for one matrix.

    As MXNet, two hidden outputs carry the LU factors and the pivots it came from.
    """
    check_float("_linalg_det", _LINALG_FLOATS, A)
    lu, piv = lu_factor(xp, A)
    n = A.shape[-1]
    swaps = (piv != xp.arange(1, n + 1, dtype=np.int32)).sum(axis=-1)
    sign = 1 - 2 * (swaps % 2)
    det = xp.diagonal(lu, axis1=-2, axis2=-1).prod(axis=-1) * sign
    return det.astype(A.dtype).reshape(_batch_scalar_shape(A.shape)), lu, piv


@_linalg_det.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_linalg_det(ograds[0], inputs[0], outputs[0])]


@register("_backward_linalg_det", inputs=("ograd", "A", "det"),
          infer_shape=lambda a, g, A, d: [[g, A, d], [A]] if A is not None else None,
          infer_type=_float_type("_backward_linalg_det", _LINALG_FLOATS))
def _backward_linalg_det(xp, a, ograd, A, det):
    """dA = g * det(A) * A^-T (MXNet's rule; A must be invertible)."""
    inv = _linalg_call("_linalg_det", xp.linalg.inv, A)
    scale = (ograd * det).reshape(A.shape[:-2] + (1, 1))
    return ((scale * xp.swapaxes(inv, -1, -2)).astype(A.dtype, copy=False),)


def _slogdet_shape(a, shape):
    if shape is None:
        return None
    _square("_linalg_slogdet", shape)
    batch = _batch_scalar_shape(shape)
    return [shape], [batch, batch, tuple(shape), tuple(shape[:-1])]


def _slogdet_type(a, t):
    if t is None:
        return None
    _float_type("_linalg_slogdet", _LINALG_FLOATS)(a, t)
    return [t], [t, t, t, np.dtype("int32")]


@_linalg_op("_linalg_slogdet", outputs=("output0", "output1", "output2", "output3"), num_visible_outputs=2,
            infer_shape=_slogdet_shape, infer_type=_slogdet_type)
def _linalg_slogdet(xp, a, A):
    """Sign and natural log of the absolute determinant of each square matrix: two arrays of
    shape A.shape[:-2], or (1,) for one matrix. As MXNet, two hidden outputs carry the LU factors
    and pivots. (mx.np's slogdet, `_npi_slogdet`, keeps numpy's shapes and is declared apart.)"""
    check_float("_linalg_slogdet", _LINALG_FLOATS, A)
    lu, piv = lu_factor(xp, A)
    n = A.shape[-1]
    swaps = (piv != xp.arange(1, n + 1, dtype=np.int32)).sum(axis=-1)
    diag = xp.diagonal(lu, axis1=-2, axis2=-1)
    sign = (1 - 2 * (swaps % 2)) * xp.sign(diag).prod(axis=-1)
    with np.errstate(divide="ignore"):
        logabs = xp.log(xp.abs(diag)).sum(axis=-1)
    shape = _batch_scalar_shape(A.shape)
    return sign.astype(A.dtype).reshape(shape), logabs.astype(A.dtype).reshape(shape), lu, piv


@_linalg_slogdet.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_linalg_slogdet(ograds[1], inputs[0])]


@register("_backward_linalg_slogdet", inputs=("ograd", "A"), public=False, fluent=False,
          infer_shape=lambda a, g, A: [[g, A], [A]] if A is not None else None,
          infer_type=_float_type("_backward_linalg_slogdet", _LINALG_FLOATS))
def _backward_linalg_slogdet(xp, a, ograd, A):
    """dA = g_logabsdet * A^-T (MXNet's rule: the sign is piecewise constant; A must be invertible)."""
    inv = _linalg_call("_linalg_slogdet", xp.linalg.inv, A)
    return ((ograd.reshape(A.shape[:-2] + (1, 1)) * xp.swapaxes(inv, -1, -2)).astype(A.dtype, copy=False),)


@_linalg_op("_linalg_inverse", extra_aliases=("_npi_inv",), infer_shape=_same_square_shape("_linalg_inverse"))
def _linalg_inverse(xp, a, A):
    """Inverse of each square matrix."""
    return (_linalg_call("_linalg_inverse", xp.linalg.inv, A).astype(A.dtype, copy=False),)


@_linalg_inverse.def_gradient
def _(F, a, inputs, outputs, ograds):
    # dA = -Y^T g Y^T with Y = A^-1
    y = outputs[0]
    return [F._linalg_gemm2(F._linalg_gemm2(y, ograds[0], transpose_a=True), y,
                            transpose_b=True, alpha=-1.0)]


@_linalg_op("_linalg_sumlogdiag", infer_shape=_scalar_per_matrix_shape("_linalg_sumlogdiag"))
def _linalg_sumlogdiag(xp, a, A):
    """Sum of the logarithms of the diagonal of each square matrix."""
    check_float("_linalg_sumlogdiag", _LINALG_FLOATS, A)
    diag = xp.diagonal(A, axis1=-2, axis2=-1)
    return (xp.log(diag).sum(axis=-1).reshape(_batch_scalar_shape(A.shape)),)


@_linalg_sumlogdiag.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_linalg_sumlogdiag(ograds[0], inputs[0])]


@register("_backward_linalg_sumlogdiag", inputs=("ograd", "A"),
          infer_shape=lambda a, g, A: [[g, A], [A]] if A is not None else None,
          infer_type=_float_type("_backward_linalg_sumlogdiag", _LINALG_FLOATS))
def _backward_linalg_sumlogdiag(xp, a, ograd, A):
    """dA = diag(g / diag(A)): non-zero only on the diagonal."""
    n = A.shape[-1]
    diag = xp.diagonal(A, axis1=-2, axis2=-1)
    scale = ograd.reshape(A.shape[:-2] + (1,)) / diag
    return ((xp.eye(n, dtype=A.dtype) * scale[..., None, :]).astype(A.dtype, copy=False),)
