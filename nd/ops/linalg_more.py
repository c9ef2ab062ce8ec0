"""More `_linalg_*` operators (MXNet 1.9.1 semantics): potri, trmm, gelqf, syevd, and the
diagonal/triangle copies extractdiag, makediag, extracttrian, maketrian.

Like the rest of the family they work on the trailing two axes and accept float32 and
float64 only. potri, trmm, gelqf and syevd differentiate through hidden backward operators
computed directly with MXNet's formulas (la_op-inl.h); the four copy operators are each
other's gradients, so their higher-order gradients work too. syevd returns eigenvectors as
rows, eigenvalues ascending, each row's largest-magnitude entry positive (MXNet's sign
rule); gelqf's factors follow LAPACK's Householder signs (numpy's QR of the transpose).
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import ShapeError
from ..registry import register
from .linalg import _LINALG_FLOATS, _backward_dot_type, _dims_match, _float_type, _t, check_float
from .linalg_square import _linalg_call, _linalg_op, _same_square_shape, _square, _triangle

_LOWER = Attr("bool", True, "True if the triangular matrix is lower triangular, false if upper.")


def _sym_from_lower(xp, m):
    """MXNet's copyLTU: the symmetric matrix with m's lower triangle (and diagonal)."""
    low = xp.tril(m)
    return low + xp.swapaxes(xp.tril(m, -1), -1, -2)


# -- potri --------------------------------------------------------------------


@_linalg_op("_linalg_potri", infer_shape=_same_square_shape("_linalg_potri"), attrs={"lower": _LOWER})
def _linalg_potri(xp, a, A):
    """Inverse of B B^T (lower) or B^T B (upper) from its Cholesky factor B; only B's
    triangle is read."""
    b = _triangle(xp, A, a.lower)
    full = xp.matmul(b, xp.swapaxes(b, -1, -2)) if a.lower else xp.matmul(xp.swapaxes(b, -1, -2), b)
    return (_linalg_call("_linalg_potri", xp.linalg.inv, full).astype(A.dtype, copy=False),)


@_linalg_potri.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_linalg_potri(ograds[0], inputs[0], outputs[0], lower=a.lower)]


@register("_backward_linalg_potri", inputs=("ograd", "B", "A"), attrs={"lower": _LOWER},
          infer_shape=lambda a, g, B, A: [[B, B, B], [B]] if B is not None else None,
          infer_type=_float_type("_backward_linalg_potri", _LINALG_FLOATS))
def _backward_linalg_potri(xp, a, ograd, B, A):
    """dB = -tril(A (g + g^T) B^-T) (lower); dB = -triu(B^-T (g + g^T) A) (upper)."""
    b = _triangle(xp, B, a.lower)
    sym = ograd + xp.swapaxes(ograd, -1, -2)
    binv_t = xp.swapaxes(_linalg_call("_linalg_potri", xp.linalg.inv, b), -1, -2)
    if a.lower:
        return ((-xp.tril(xp.matmul(xp.matmul(A, sym), binv_t))).astype(B.dtype, copy=False),)
    return ((-xp.triu(xp.matmul(xp.matmul(binv_t, sym), A))).astype(B.dtype, copy=False),)


# -- trmm ---------------------------------------------------------------------


def _trmm_shape(a, ashape, bshape):
    if ashape is None or bshape is None:
        return None
    _square("_linalg_trmm", ashape)
    if len(bshape) != len(ashape):
        raise ShapeError(f"operator _linalg_trmm: A {tuple(ashape)} and B {tuple(bshape)} must "
                         "have the same rank")
    k = bshape[-1] if a.rightside else bshape[-2]
    if not _dims_match(k, ashape[-1]) or not all(
            _dims_match(p, q) for p, q in zip(ashape[:-2], bshape[:-2])):
        raise ShapeError(f"operator _linalg_trmm: B {tuple(bshape)} does not fit the triangular "
                         f"matrix A {tuple(ashape)} (rightside={a.rightside})")
    return [ashape, bshape], [bshape]


_TRMM_ATTRS = {
    "transpose": Attr("bool", False, "Use transposed of the triangular matrix."),
    "rightside": Attr("bool", False, "Multiply triangular matrix from the right to non-triangular one."),
    "lower": _LOWER,
    "alpha": Attr("float", 1.0, "Scalar factor to be applied to the result."),
}


def _trmm(xp, A, B, transpose: bool, rightside: bool, lower: bool, alpha: float):
    m = _t(xp, _triangle(xp, A, lower), transpose)
    prod = xp.matmul(B, m) if rightside else xp.matmul(m, B)
    return prod * B.dtype.type(alpha)


@register("_linalg_trmm", aliases=("linalg_trmm",), inputs=("A", "B"), hint="trmm",
          attrs=dict(_TRMM_ATTRS), infer_shape=_trmm_shape,
          infer_type=_float_type("_linalg_trmm", _LINALG_FLOATS))
def _linalg_trmm(xp, a, A, B):
    """alpha * op(A) B (or alpha * B op(A) with rightside) for triangular A."""
    check_float("_linalg_trmm", _LINALG_FLOATS, A, B)
    return (_trmm(xp, A, B, a.transpose, a.rightside, a.lower, a.alpha),)


@_linalg_trmm.def_gradient
def _(F, a, inputs, outputs, ograds):
    grads = F._backward_linalg_trmm(ograds[0], inputs[0], inputs[1], **a.given)
    return [grads[0], grads[1]]


@register("_backward_linalg_trmm", inputs=("ograd", "A", "B"), outputs=("A_grad", "B_grad"),
          attrs=dict(_TRMM_ATTRS),
          infer_shape=lambda a, g, A, B: [[B, A, B], [A, B]] if A is not None and B is not None else None,
          infer_type=lambda a, *t: _backward_dot_type(t))
def _backward_linalg_trmm(xp, a, ograd, A, B):
    """dA = alpha * (g B^T, B^T g, g^T B or B g^T by side and transpose) on A's triangle;
    dB = trmm(A, g) with the transpose flipped."""
    alpha = B.dtype.type(a.alpha)
    bt, gt = xp.swapaxes(B, -1, -2), xp.swapaxes(ograd, -1, -2)
    if a.rightside == a.transpose:
        da = xp.matmul(gt, B) if a.transpose else xp.matmul(ograd, bt)
    else:
        da = xp.matmul(B, gt) if a.transpose else xp.matmul(bt, ograd)
    db = _trmm(xp, A, ograd, not a.transpose, a.rightside, a.lower, a.alpha)
    return (_triangle(xp, da * alpha, a.lower).astype(A.dtype, copy=False), db.astype(B.dtype, copy=False))


# -- gelqf --------------------------------------------------------------------


def _gelqf_shape(a, shape):
    if shape is None:
        return None
    if len(shape) < 2:
        raise ShapeError(f"operator _linalg_gelqf: input 'A' must have rank >= 2, got {tuple(shape)}")
    m, n = shape[-2], shape[-1]
    if m > n:
        raise ShapeError(f"operator _linalg_gelqf: the matrices must have no more rows than "
                         f"columns, got {tuple(shape)}")
    return [shape], [shape, tuple(shape[:-2]) + (m, m)]


def _two_outputs_type(op: str):
    def infer(a, t):
        if t is None:
            return None
        _float_type(op, _LINALG_FLOATS)(a, t)
        return [t], [t, t]
    return infer


@_linalg_op("_linalg_gelqf", outputs=("output0", "output1"), infer_shape=_gelqf_shape,
            infer_type=_two_outputs_type("_linalg_gelqf"))
def _linalg_gelqf(xp, a, A):
    """LQ factorisation A = L Q: Q (m, n) with orthonormal rows, L (m, m) lower triangular."""
    check_float("_linalg_gelqf", _LINALG_FLOATS, A)
    q, r = xp.linalg.qr(xp.swapaxes(A, -1, -2))
    return (xp.ascontiguousarray(xp.swapaxes(q, -1, -2)).astype(A.dtype, copy=False),
            xp.ascontiguousarray(xp.swapaxes(r, -1, -2)).astype(A.dtype, copy=False))


@_linalg_gelqf.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_linalg_gelqf(ograds[0], ograds[1], outputs[0], outputs[1])]


@register("_backward_linalg_gelqf", inputs=("dQ", "dL", "Q", "L"),
          infer_shape=lambda a, dq, dl, q, L: [[q, L, q, L], [q]] if q is not None and L is not None else None,
          infer_type=_float_type("_backward_linalg_gelqf", _LINALG_FLOATS))
def _backward_linalg_gelqf(xp, a, dq, dl, Q, L):
    """dA = L^-T (dQ + copyLTU(M) Q) with M = L^T dL - dQ Q^T (MXNet's formula)."""
    m = xp.matmul(xp.swapaxes(L, -1, -2), dl) - xp.matmul(dq, xp.swapaxes(Q, -1, -2))
    rhs = dq + xp.matmul(_sym_from_lower(xp, m), Q)
    da = _linalg_call("_linalg_gelqf", xp.linalg.solve, xp.swapaxes(L, -1, -2), rhs)
    return (da.astype(Q.dtype, copy=False),)


# -- syevd --------------------------------------------------------------------


def _syevd_shape(a, shape):
    if shape is None:
        return None
    _square("_linalg_syevd", shape)
    return [shape], [shape, tuple(shape[:-1])]


@_linalg_op("_linalg_syevd", outputs=("output0", "output1"), infer_shape=_syevd_shape,
            infer_type=_two_outputs_type("_linalg_syevd"))
def _linalg_syevd(xp, a, A):
    """Symmetric eigendecomposition A = U^T diag(L) U; only A's lower triangle is read."""
    check_float("_linalg_syevd", _LINALG_FLOATS, A)
    lam, vec = _linalg_call("_linalg_syevd", lambda x: xp.linalg.eigh(x, UPLO="L"), A)
    u = xp.swapaxes(vec, -1, -2)
    idx = xp.argmax(xp.abs(u), axis=-1)[..., None]        # first largest magnitude per row
    sign = xp.where(xp.take_along_axis(u, idx, axis=-1) < 0, -1, 1).astype(u.dtype)
    return xp.ascontiguousarray(u * sign).astype(A.dtype, copy=False), lam.astype(A.dtype, copy=False)


@_linalg_syevd.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_linalg_syevd(ograds[0], ograds[1], outputs[0], outputs[1])]


@register("_backward_linalg_syevd", inputs=("dU", "dL", "U", "L"),
          infer_shape=lambda a, du, dl, u, L: [[u, L, u, L], [u]] if u is not None and L is not None else None,
          infer_type=_float_type("_backward_linalg_syevd", _LINALG_FLOATS))
def _backward_linalg_syevd(xp, a, du, dl, U, L):
    """dA = U^T Y U with X = dU U^T, Y_ij = (X_ij - X_ji) / (2 max(l_i - l_j, eps)) below the
    diagonal (mirrored above), Y_ii = dL_i (MXNet's formula and eps)."""
    eps = 1e-30 if U.dtype == np.float32 else 1e-100
    x = xp.matmul(du, xp.swapaxes(U, -1, -2))
    gap = xp.maximum(L[..., :, None] - L[..., None, :], eps) * 2
    low = xp.tril((x - xp.swapaxes(x, -1, -2)) / gap, -1)
    y = low + xp.swapaxes(low, -1, -2)
    n = U.shape[-1]
    y = y + xp.eye(n, dtype=U.dtype) * dl[..., None, :]
    da = xp.matmul(xp.matmul(xp.swapaxes(U, -1, -2), y), U)
    return (da.astype(U.dtype, copy=False),)


# -- extractdiag / makediag / extracttrian / maketrian --------------------------

_OFFSET = Attr("int", 0, "Offset of the diagonal versus the main diagonal. 0 corresponds to the main "
               "diagonal, a negative/positive value to diagonals below/above the main diagonal.")


def _diag_shape(op: str):
    def infer(a, shape):
        if shape is None:
            return None
        _square(op, shape)
        n = shape[-1] - abs(a.offset)
        if n <= 0:
            raise ShapeError(f"operator {op}: illegal offset {a.offset} for matrices of size {shape[-1]}")
        size = n if op == "_linalg_extractdiag" else n * (n + 1) // 2
        return [shape], [tuple(shape[:-2]) + (size,)]
    return infer


def _diag_index(n: int, k: int):
    """(rows, cols) of the k-th diagonal of an n x n matrix (n counts the full matrix)."""
    steps = np.arange(n - abs(k))
    return steps - min(k, 0), steps + max(k, 0)


def _trian_index(n: int, k: int, lower: bool):
    """(rows, cols) of the triangle in MXNet's packing order: rows of the lower triangle, or
    columns of the upper one (offset > 0, or offset 0 with lower=False)."""
    m = n - abs(k)
    r, c = np.tril_indices(m)
    if k > 0 or (k == 0 and not lower):
        return c, r + abs(k)
    return r + abs(k), c


@_linalg_op("_linalg_extractdiag", infer_shape=_diag_shape("_linalg_extractdiag"), attrs={"offset": _OFFSET})
def _linalg_extractdiag(xp, a, A):
    """The `offset` diagonal of each square matrix."""
    check_float("_linalg_extractdiag", _LINALG_FLOATS, A)
    _diag_shape("_linalg_extractdiag")(a, A.shape)
    rows, cols = _diag_index(A.shape[-1], a.offset)
    return (xp.ascontiguousarray(A[..., rows, cols]),)


@_linalg_extractdiag.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._linalg_makediag(ograds[0], offset=a.offset)]


def _make_shape(op: str):
    def infer(a, shape):
        if shape is None:
            return None
        if len(shape) < 1:
            raise ShapeError(f"operator {op}: input 'A' must have rank >= 1")
        if op == "_linalg_makediag":
            n = shape[-1] + abs(a.offset)
        else:
            m = int(np.floor(0.5 + (np.sqrt(8 * shape[-1] + 1) - 1.0) * 0.5))
            if m * (m + 1) // 2 != shape[-1]:
                raise ShapeError(f"operator {op}: the last axis ({shape[-1]}) is not a triangular "
                                 "number m(m+1)/2")
            n = m + abs(a.offset)
        return [shape], [tuple(shape[:-1]) + (n, n)]
    return infer


def _scatter(xp, v, out_shape, rows, cols):
    out = xp.zeros(out_shape, dtype=v.dtype)
    out[..., rows, cols] = v
    return out


@_linalg_op("_linalg_makediag", infer_shape=_make_shape("_linalg_makediag"), attrs={"offset": _OFFSET})
def _linalg_makediag(xp, a, A):
    """Square matrices with A's last axis on their `offset` diagonal, zeros elsewhere."""
    check_float("_linalg_makediag", _LINALG_FLOATS, A)
    n = A.shape[-1] + abs(a.offset)
    return (_scatter(xp, A, A.shape[:-1] + (n, n), *_diag_index(n, a.offset)),)


@_linalg_makediag.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._linalg_extractdiag(ograds[0], offset=a.offset)]


_TRIAN_ATTRS = {"offset": _OFFSET, "lower": Attr("bool", True, "Refer to the lower triangular matrix "
                                                 "if lower=true, refer to the upper otherwise. Only "
                                                 "relevant when offset=0")}


@_linalg_op("_linalg_extracttrian", infer_shape=_diag_shape("_linalg_extracttrian"), attrs=dict(_TRIAN_ATTRS))
def _linalg_extracttrian(xp, a, A):
    """The triangle below (offset < 0) or above (offset > 0) the `offset` diagonal, packed."""
    check_float("_linalg_extracttrian", _LINALG_FLOATS, A)
    _diag_shape("_linalg_extracttrian")(a, A.shape)
    rows, cols = _trian_index(A.shape[-1], a.offset, a.lower)
    return (xp.ascontiguousarray(A[..., rows, cols]),)


@_linalg_extracttrian.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._linalg_maketrian(ograds[0], offset=a.offset, lower=a.lower)]


@_linalg_op("_linalg_maketrian", infer_shape=_make_shape("_linalg_maketrian"), attrs=dict(_TRIAN_ATTRS))
def _linalg_maketrian(xp, a, A):
    """Square matrices with the packed triangle A unpacked, zeros elsewhere."""
    check_float("_linalg_maketrian", _LINALG_FLOATS, A)
    n = _make_shape("_linalg_maketrian")(a, A.shape)[1][0][-1]
    return (_scatter(xp, A, A.shape[:-1] + (n, n), *_trian_index(n, a.offset, a.lower)),)


@_linalg_maketrian.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._linalg_extracttrian(ograds[0], offset=a.offset, lower=a.lower)]
