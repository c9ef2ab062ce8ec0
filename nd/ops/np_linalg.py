"""`mx.np.linalg`'s operators with MXNet 1.9.1's names and attributes: `_npi_cholesky`,
`_npi_svd`, `_npi_eig`, `_npi_eigh`, `_npi_eigvals`, `_npi_eigvalsh`, `_npi_pinv`,
`_npi_pinv_scalar_rcond`, `_npi_slogdet`, `_npi_solve`, `_npi_tensorinv`, `_npi_tensorsolve`.

Kernels are the backend's LAPACK routines (`xp.linalg`) over the trailing two axes, with the
leading axes as a batch; zero-size batches and matrices give empty results, as in MXNet.
Gradients follow MXNet: cholesky shares the legacy `_backward_linalg_potrf`; svd, slogdet,
solve, tensorinv and tensorsolve have hidden backward operators; the eigen-solvers and pinv
have zero gradients (MXNet's `MakeZeroGradNodes`).
"""
from __future__ import annotations

import math

import numpy as np

from ..attrs import Attr
from ..errors import DTypeError, ShapeError
from ..registry import ZERO_GRAD, register
from .linalg import LinAlgError

_FLOATS = (np.dtype("float32"), np.dtype("float64"))


def _lapack(op: str, fn, *args, **kwargs):
    """Run an xp.linalg routine, turning LAPACK failures into linalg errors naming the op."""
    try:
        return fn(*args, **kwargs)
    except np.linalg.LinAlgError as exc:
        raise LinAlgError(f"operator {op}: {exc}") from None


def _float_only(op: str):
    """Type rule: float32 / float64 inputs (all the same), outputs of that dtype."""
    def infer(a, *dtypes):
        known = [d for d in dtypes if d is not None]
        if not known:
            return None
        t = np.dtype(known[0])
        for i, d in enumerate(dtypes):
            if d is not None and np.dtype(d) != t:
                raise DTypeError(f"operator {op}: input {i} has dtype {np.dtype(d)}, expected {t}")
        if t not in _FLOATS:
            raise DTypeError(f"operator {op}: dtype {t} is not supported; expected float32 or float64")
        return [t] * len(dtypes), [t]
    return infer


def _with_outputs(rule, n_out: int):
    def infer(a, *dtypes):
        res = rule(a, *dtypes)
        return None if res is None else (res[0], [res[0][0]] * n_out)
    return infer


def _solve_type(op: str):
    """MXNet's solve / tensorsolve type rule: two float32 inputs give float32, anything else
    (float64, integers) float64; float16 is refused."""
    def infer(a, ta, tb):
        if ta is None or tb is None:
            return None
        for t in (ta, tb):
            if np.dtype(t) == np.float16 or np.dtype(t).kind not in "fiub":
                raise DTypeError(f"operator {op}: array type {np.dtype(t)} is unsupported in linalg")
        out = np.dtype("float32") if np.dtype(ta) == np.dtype(tb) == np.float32 else np.dtype("float64")
        return [ta, tb], [out]
    return infer


def _solve_dtype(A, B):
    return np.dtype("float32") if A.dtype == B.dtype == np.float32 else np.dtype("float64")


def _float_or_int(op: str, n_out: int = 1):
    """Type rule of the eigen-solvers and tensorinv: floats keep their dtype, integers give
    float64 (as MXNet); float16 is refused."""
    def infer(a, t):
        if t is None:
            return None
        t = np.dtype(t)
        if t == np.float16 or t.kind not in "fiub":
            raise DTypeError(f"operator {op}: array type {t} is unsupported in linalg")
        out = t if t in _FLOATS else np.dtype("float64")
        return [t], [out] * n_out
    return infer


def _square(op: str, shape: tuple, name: str = "A") -> None:
    if len(shape) < 2:
        raise ShapeError(f"operator {op}: {name} must be at least two-dimensional, got shape {tuple(shape)}")
    if shape[-1] != shape[-2]:
        raise ShapeError(f"operator {op}: {name} must hold square matrices in its last two axes, "
                         f"got shape {tuple(shape)}")


def _check_kernel_float(op: str, *xs) -> None:
    for x in xs:
        if x.dtype not in _FLOATS:
            raise DTypeError(f"operator {op}: dtype {x.dtype} is not supported; expected float32 or float64")


def _swap(xp, x):
    return xp.swapaxes(x, -1, -2)


# -- cholesky ---------------------------------------------------------------------------------

def _cholesky_shape(a, s):
    if s is None:
        return None
    _square("_npi_cholesky", s)
    return [s], [s]


@register("_npi_cholesky", inputs=("A",), hint="cholesky",
          attrs={"lower": Attr("bool", True, "True: the lower factor L (A = L L^T); False: the upper "
                                             "factor U (A = U^T U).")},
          infer_shape=_cholesky_shape, infer_type=_float_only("_npi_cholesky"))
def _npi_cholesky(xp, a, A):
    """numpy's linalg.cholesky (MXNet adds `lower=False` for the upper factor)."""
    _check_kernel_float("_npi_cholesky", A)
    _cholesky_shape(a, A.shape)
    L = _lapack("_npi_cholesky", xp.linalg.cholesky, A) if A.size else xp.zeros_like(A)
    return ((L if a.lower else _swap(xp, L)).astype(A.dtype, copy=False),)


@_npi_cholesky.def_gradient
def _(F, a, inputs, outputs, ograds):
    if a.lower:
        return [F._backward_linalg_potrf(ograds[0], outputs[0])]
    return [F._backward_linalg_potrf(F._npi_transpose_last2(ograds[0]), F._npi_transpose_last2(outputs[0]))]


@register("_npi_transpose_last2", inputs=("data",), hint="transpose_last2", public=False, fluent=False,
          infer_shape=lambda a, s: None if s is None else ([s], [tuple(s[:-2]) + (s[-1], s[-2])]))
def _npi_transpose_last2(xp, a, x):
    """Swap the last two axes (used by the upper-factor Cholesky gradient)."""
    if x.ndim < 2:
        raise ShapeError(f"operator _npi_transpose_last2: needs at least two axes, got shape {x.shape}")
    return (xp.ascontiguousarray(_swap(xp, x)),)


_npi_transpose_last2.def_gradient(
    lambda F, a, inputs, outputs, ograds: [F._npi_transpose_last2(ograds[0])])


# -- svd --------------------------------------------------------------------------------------

def _svd_shape(a, s):
    if s is None:
        return None
    if len(s) < 2:
        raise ShapeError(f"operator _npi_svd: A must be at least two-dimensional, got shape {tuple(s)}")
    m, n = s[-2], s[-1]
    if m > n:
        raise ShapeError(f"operator _npi_svd: Input A shape wrong: the second to last dimension must be "
                         f"less than or equal to the last dimension, got shape {tuple(s)}")
    batch = tuple(s[:-2])
    return [s], [batch + (m, m), batch + (m,), tuple(s)]


@register("_npi_svd", inputs=("A",), outputs=("UT", "L", "V"), hint="svd", infer_shape=_svd_shape,
          infer_type=_with_outputs(_float_only("_npi_svd"), 3))
def _npi_svd(xp, a, A):
    """A = UT @ diag(L) @ V for (..., M, N) with M <= N: UT (M, M) orthogonal, L the singular
    values in descending order, V (M, N) with orthonormal rows."""
    _check_kernel_float("_npi_svd", A)
    _svd_shape(a, A.shape)
    if A.size == 0:
        m = A.shape[-2]
        return (xp.zeros(A.shape[:-2] + (m, m), A.dtype), xp.zeros(A.shape[:-1], A.dtype),
                xp.zeros(A.shape, A.dtype))
    u, s, vh = _lapack("_npi_svd", xp.linalg.svd, A, full_matrices=False)
    return u.astype(A.dtype, copy=False), s.astype(A.dtype, copy=False), vh.astype(A.dtype, copy=False)


@_npi_svd.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_npi_svd(ograds[0], ograds[1], ograds[2], *outputs)]


@register("_backward_npi_svd", inputs=("dUT", "dL", "dV", "UT", "L", "V"), public=False, fluent=False,
          infer_shape=lambda a, *s: None if s[5] is None else (list(s), [s[5]]),
          infer_type=lambda a, *t: None if t[5] is None else (list(t), [t[5]]))
def _backward_npi_svd(xp, a, dut, dl, dv, ut, lv, v):
    """MXNet's gesvd gradient: with E_ij = 1 / ((L_i - L_j)(L_i + L_j)) (i < j, antisymmetric),
    G1 = (dV V^T / L) * L_j + dUT^T UT, X = G1 * E,
    G2 = diag(dL) + (X + X^T) * L_j - diag(dV V^T / L), dA = UT (G2 V + dV / L)."""
    if v.size == 0:
        return (xp.zeros_like(v),)
    m = v.shape[-2]
    tiny = 1e-20
    li, lj = lv[..., :, None], lv[..., None, :]
    upper = np.triu(np.ones((m, m), dtype=bool), 1)
    e = 1.0 / xp.maximum(li - lj, tiny) / xp.maximum(li + lj, tiny)
    e = xp.where(upper, e, 0)
    e = e - _swap(xp, e)
    inv_l = 1.0 / li
    dvvt = xp.matmul(dv, _swap(xp, v))
    g1 = xp.matmul(inv_l * dv, _swap(xp, v)) * lj + xp.matmul(_swap(xp, dut), ut)
    x = g1 * e
    eye = xp.eye(m, dtype=v.dtype)
    g2 = eye * dl[..., None, :] + (x + _swap(xp, x)) * lj - inv_l * dvvt * eye
    da = xp.matmul(ut, xp.matmul(g2, v) + inv_l * dv)
    return (da.astype(v.dtype, copy=False),)


# -- eigen-solvers (zero gradients, as MXNet) -------------------------------------------------

def _eig_shape(op: str, vectors: bool):
    def infer(a, s):
        if s is None:
            return None
        _square(op, s)
        return [s], [tuple(s[:-1])] + ([tuple(s)] if vectors else [])
    return infer


def _as_float(xp, A):
    return A if A.dtype in _FLOATS else A.astype(np.float64)


def _real_eig(op: str, xp, A, vectors: bool):
    x = _as_float(xp, A)
    if x.size == 0:
        w = xp.zeros(x.shape[:-1], x.dtype)
        return (w, xp.zeros(x.shape, x.dtype)) if vectors else (w,)
    res = _lapack(op, xp.linalg.eig if vectors else xp.linalg.eigvals, x)
    w = res[0] if vectors else res
    if xp.iscomplexobj(w) and bool(xp.any(xp.abs(w.imag) > 1e-15)):
        raise LinAlgError(f"operator {op}: complex eigenvalues are not supported (MXNet's linalg works "
                          "on real values only)")
    out = (xp.real(w).astype(x.dtype),)
    if vectors:
        out += (xp.real(res[1]).astype(x.dtype),)
    return out


@register("_npi_eig", inputs=("A",), outputs=("w", "v"), hint="eig", gradient=ZERO_GRAD,
          infer_shape=_eig_shape("_npi_eig", True), infer_type=_float_or_int("_npi_eig", 2))
def _npi_eig(xp, a, A):
    """Eigenvalues and right eigenvectors (columns) of real square matrices with real spectra."""
    _eig_shape("_npi_eig", True)(a, A.shape)
    return _real_eig("_npi_eig", xp, A, True)


@register("_npi_eigvals", inputs=("A",), hint="eigvals", gradient=ZERO_GRAD,
          infer_shape=_eig_shape("_npi_eigvals", False), infer_type=_float_or_int("_npi_eigvals"))
def _npi_eigvals(xp, a, A):
    """Eigenvalues of real square matrices with real spectra."""
    _eig_shape("_npi_eigvals", False)(a, A.shape)
    return _real_eig("_npi_eigvals", xp, A, False)


_UPLO = {"UPLO": Attr("str", "L", "Which triangle of the (symmetric) matrices is read: 'L' or 'U'.")}


def _uplo(op: str, a) -> str:
    if a.UPLO not in ("L", "U"):
        raise ValueError(f"operator {op}: UPLO must be 'L' or 'U', got {a.UPLO!r}")
    return a.UPLO


@register("_npi_eigh", inputs=("A",), outputs=("w", "V"), hint="eigh", attrs=dict(_UPLO), gradient=ZERO_GRAD,
          infer_shape=_eig_shape("_npi_eigh", True), infer_type=_float_or_int("_npi_eigh", 2))
def _npi_eigh(xp, a, A):
    """Eigenvalues (ascending) and orthonormal eigenvectors of symmetric matrices."""
    _eig_shape("_npi_eigh", True)(a, A.shape)
    x = _as_float(xp, A)
    if x.size == 0:
        return xp.zeros(x.shape[:-1], x.dtype), xp.zeros(x.shape, x.dtype)
    w, v = _lapack("_npi_eigh", xp.linalg.eigh, x, UPLO=_uplo("_npi_eigh", a))
    return w.astype(x.dtype, copy=False), v.astype(x.dtype, copy=False)


@register("_npi_eigvalsh", inputs=("A",), hint="eigvalsh", attrs=dict(_UPLO), gradient=ZERO_GRAD,
          infer_shape=_eig_shape("_npi_eigvalsh", False), infer_type=_float_or_int("_npi_eigvalsh"))
def _npi_eigvalsh(xp, a, A):
    """Eigenvalues (ascending) of symmetric matrices."""
    _eig_shape("_npi_eigvalsh", False)(a, A.shape)
    x = _as_float(xp, A)
    if x.size == 0:
        return (xp.zeros(x.shape[:-1], x.dtype),)
    return (_lapack("_npi_eigvalsh", xp.linalg.eigvalsh, x, UPLO=_uplo("_npi_eigvalsh", a)).astype(x.dtype),)


# -- pinv (zero gradient, as MXNet) -------------------------------------------------------------

def _pinv_out(op: str, s: tuple) -> tuple:
    if len(s) < 2:
        raise ShapeError(f"operator {op}: A must be at least two-dimensional, got shape {tuple(s)}")
    return tuple(s[:-2]) + (s[-1], s[-2])


def _pinv(xp, A, rcond, hermitian: bool):
    out_shape = _pinv_out("_npi_pinv", A.shape)
    if A.size == 0:
        return (xp.zeros(out_shape, A.dtype),)
    return (_lapack("_npi_pinv", xp.linalg.pinv, A, rcond, hermitian=hermitian).astype(A.dtype, copy=False),)


_HERMITIAN = Attr("bool", False, "If True, A is assumed symmetric (Hermitian if complex).")


def _pinv_shape(a, s, r):
    if s is None:
        return None
    out = _pinv_out("_npi_pinv", s)
    if r is not None and tuple(r) not in ((), tuple(s[:-2])) and len(r) > len(s) - 2:
        raise ShapeError(f"operator _npi_pinv: rcond of shape {tuple(r)} does not match the batch of A {tuple(s)}")
    return [s, r], [out]


@register("_npi_pinv", inputs=("A", "rcond"), hint="pinv", attrs={"hermitian": _HERMITIAN}, gradient=ZERO_GRAD,
          infer_shape=_pinv_shape, infer_type=_with_outputs(_float_only("_npi_pinv"), 1))
def _npi_pinv(xp, a, A, rcond):
    """Moore-Penrose pseudo-inverse; singular values below rcond * the largest are cut
    (rcond an array broadcast over the batch)."""
    _check_kernel_float("_npi_pinv", A, rcond)
    _pinv_shape(a, A.shape, rcond.shape)
    return _pinv(xp, A, rcond, a.hermitian)


@register("_npi_pinv_scalar_rcond", inputs=("A",), hint="pinv_scalar_rcond", gradient=ZERO_GRAD,
          attrs={"rcond": Attr("float", 1e-15, "Cutoff for small singular values."), "hermitian": _HERMITIAN},
          infer_shape=lambda a, s: None if s is None else ([s], [_pinv_out("_npi_pinv_scalar_rcond", s)]),
          infer_type=_float_only("_npi_pinv_scalar_rcond"))
def _npi_pinv_scalar_rcond(xp, a, A):
    """Moore-Penrose pseudo-inverse with one cutoff for every matrix."""
    _check_kernel_float("_npi_pinv_scalar_rcond", A)
    return _pinv(xp, A, a.rcond, a.hermitian)


# -- slogdet ------------------------------------------------------------------------------------

def _slogdet_shape(a, s):
    if s is None:
        return None
    _square("_npi_slogdet", s)
    return [s], [tuple(s[:-2])] * 2


@register("_npi_slogdet", inputs=("A",), outputs=("sign", "logabsdet"), hint="slogdet",
          infer_shape=_slogdet_shape, infer_type=_with_outputs(_float_only("_npi_slogdet"), 2))
def _npi_slogdet(xp, a, A):
    """Sign and log of the absolute determinant of each square matrix (numpy's slogdet)."""
    _check_kernel_float("_npi_slogdet", A)
    _slogdet_shape(a, A.shape)
    if A.size == 0:
        batch = A.shape[:-2]
        return xp.ones(batch, A.dtype), xp.zeros(batch, A.dtype)
    sign, logdet = _lapack("_npi_slogdet", xp.linalg.slogdet, A)
    return xp.asarray(sign).astype(A.dtype), xp.asarray(logdet).astype(A.dtype)


@_npi_slogdet.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_npi_slogdet(ograds[1], inputs[0])]


@register("_backward_npi_slogdet", inputs=("ograd", "A"), public=False, fluent=False,
          infer_shape=lambda a, g, s: None if s is None else ([g, s], [s]),
          infer_type=lambda a, g, t: None if t is None else ([g, t], [t]))
def _backward_npi_slogdet(xp, a, g, A):
    """d log|det A| / dA = A^-T (the sign is piecewise constant)."""
    if A.size == 0:
        return (xp.zeros_like(A),)
    inv = _lapack("_npi_slogdet", xp.linalg.inv, A)
    return ((g[..., None, None] * _swap(xp, inv)).astype(A.dtype, copy=False),)


# -- solve --------------------------------------------------------------------------------------

def _solve_check(sa: tuple, sb: tuple) -> bool:
    """Whether B is a stack of vectors (B.ndim == A.ndim - 1); raises on mismatched shapes."""
    _square("_npi_solve", sa)
    vec = len(sb) == len(sa) - 1
    if not vec and len(sb) != len(sa):
        raise ShapeError(f"operator _npi_solve: A's and B's dimensions don't match: {tuple(sa)} and {tuple(sb)}")
    lead = tuple(sb) if vec else tuple(sb[:-1])
    if lead != tuple(sa[:-1]):
        raise ShapeError(f"operator _npi_solve: A's and B's dimensions don't match: {tuple(sa)} and {tuple(sb)}")
    return vec


def _solve_shape(a, sa, sb):
    if sa is None or sb is None:
        return None
    _solve_check(sa, sb)
    return [sa, sb], [sb]


def _solve(xp, A, B, vec: bool):
    if A.size == 0 or B.size == 0:
        return xp.zeros(B.shape, A.dtype)
    x = _lapack("_npi_solve", xp.linalg.solve, A, B[..., None] if vec else B)
    return x[..., 0] if vec else x


@register("_npi_solve", inputs=("A", "B"), hint="solve", infer_shape=_solve_shape,
          infer_type=_solve_type("_npi_solve"))
def _npi_solve(xp, a, A, B):
    """X with A X = B (B a stack of matrices, or of vectors when it has one axis fewer)."""
    _solve_type("_npi_solve")(a, A.dtype, B.dtype)
    vec = _solve_check(A.shape, B.shape)
    dt = _solve_dtype(A, B)
    return (_solve(xp, A.astype(dt, copy=False), B.astype(dt, copy=False), vec).astype(dt, copy=False),)


@_npi_solve.def_gradient
def _(F, a, inputs, outputs, ograds):
    return list(F._backward_npi_solve(ograds[0], inputs[0], inputs[1], outputs[0]))


@register("_backward_npi_solve", inputs=("ograd", "A", "B", "X"), outputs=("dA", "dB"), public=False, fluent=False,
          infer_shape=lambda a, g, sa, sb, sx: None if sa is None or sb is None else ([g, sa, sb, sx], [sa, sb]),
          infer_type=lambda a, g, ta, tb, tx: None if ta is None else ([g, ta, tb, tx], [ta, tb]))
def _backward_npi_solve(xp, a, g, A, B, X):
    """dB = A^-T dX, dA = -dB X^T."""
    vec = B.ndim == A.ndim - 1
    db = _solve(xp, _swap(xp, A).astype(X.dtype, copy=False), g.astype(X.dtype, copy=False), vec)
    if vec:
        da = -db[..., :, None] * X[..., None, :]
    else:
        da = -xp.matmul(db, _swap(xp, X))
    return da.astype(A.dtype, copy=False), db.astype(B.dtype, copy=False)


# -- tensorinv ----------------------------------------------------------------------------------

def _tensorinv_out(s: tuple, ind: int) -> tuple:
    if ind <= 0:
        raise ShapeError(f"operator _npi_tensorinv: ind must be a positive integer, got {ind}")
    if len(s) < ind:
        raise ShapeError(f"operator _npi_tensorinv: ind={ind} exceeds the dimensions of a {tuple(s)}")
    if math.prod(s[:ind]) != math.prod(s[ind:]):
        raise ShapeError(f"operator _npi_tensorinv: the product of the first {ind} dimensions of {tuple(s)} "
                         "must equal the product of the others")
    return tuple(s[ind:]) + tuple(s[:ind])


@register("_npi_tensorinv", inputs=("a",), hint="tensorinv",
          attrs={"ind": Attr("int", 2, "Number of first indices that are involved in the inverse sum.")},
          infer_shape=lambda a, s: None if s is None else ([s], [_tensorinv_out(s, a.ind)]),
          infer_type=_float_or_int("_npi_tensorinv"))
def _npi_tensorinv(xp, a, x):
    """numpy's tensorinv: the inverse of a reshaped to a square matrix, reshaped back
    (shape a.shape[ind:] + a.shape[:ind])."""
    out = _tensorinv_out(x.shape, a.ind)
    x = _as_float(xp, x)
    n = math.prod(x.shape[:a.ind])
    if n == 0:
        return (xp.zeros(out, x.dtype),)
    inv = _lapack("_npi_tensorinv", xp.linalg.inv, x.reshape(n, n))
    return (inv.reshape(out).astype(x.dtype, copy=False),)


@_npi_tensorinv.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_npi_tensorinv(ograds[0], outputs[0], ind=a.ind)]


@register("_backward_npi_tensorinv", inputs=("ograd", "Y"), public=False, fluent=False,
          attrs={"ind": Attr("int", 2, "The forward's ind.")},
          infer_shape=lambda a, g, s: None if s is None else
          ([g, s], [tuple(s[len(s) - a.ind:]) + tuple(s[:len(s) - a.ind])]),
          infer_type=lambda a, g, t: None if t is None else ([g, t], [t]))
def _backward_npi_tensorinv(xp, a, g, y):
    """With Y the inverse as an n x n matrix: dA = -Y^T dY Y^T."""
    k = y.ndim - a.ind   # the forward input's trailing dimensions lead the output
    shape = tuple(y.shape[k:]) + tuple(y.shape[:k])
    n = math.prod(y.shape[:k])
    if n == 0:
        return (xp.zeros(shape, y.dtype),)
    ym = y.reshape(n, n)
    da = -ym.T @ g.reshape(n, n) @ ym.T
    return (da.reshape(shape).astype(y.dtype, copy=False),)


# -- tensorsolve --------------------------------------------------------------------------------

def _tensorsolve_perm(ndim: int, axes) -> list:
    order = list(range(ndim))
    if axes:
        for k in axes:
            k = k % ndim
            order.remove(k)
            order.append(k)
    return order


def _tensorsolve_shape(a, sa, sb):
    """x's shape as MXNet has it: the last a.ndim - b.ndim axes of a (axes moved; Python slicing,
    so equal ranks give all of a's axes and a smaller a none), with prod(x)^2 == a.size and
    prod(x) == b.size."""
    if sa is None or sb is None:
        return None
    order = _tensorsolve_perm(len(sa), a.a_axes)
    moved = tuple(sa[i] for i in order)
    xs = moved[-(len(sa) - len(sb)):]
    n = math.prod(xs)
    if n * n != math.prod(sa):
        raise ShapeError(f"operator _npi_tensorsolve: a {tuple(sa)} is not square for b {tuple(sb)}")
    if n != math.prod(sb):
        raise ShapeError(f"operator _npi_tensorsolve: a's shape {tuple(sa)} and b's shape {tuple(sb)} dismatch")
    return [sa, sb], [tuple(xs)]


_A_AXES = {"a_axes": Attr("shape", (), "Axes in a to reorder to the right, before inversion.")}


@register("_npi_tensorsolve", inputs=("a", "b"), hint="tensorsolve", attrs=dict(_A_AXES),
          infer_shape=_tensorsolve_shape, infer_type=_solve_type("_npi_tensorsolve"))
def _npi_tensorsolve(xp, a, A, B):
    """numpy's tensorsolve: x with tensordot(a, x, x.ndim) == b."""
    _solve_type("_npi_tensorsolve")(a, A.dtype, B.dtype)
    (_, _), (xs,) = _tensorsolve_shape(a, A.shape, B.shape)
    dt = _solve_dtype(A, B)
    am = xp.transpose(A, _tensorsolve_perm(A.ndim, a.a_axes)).astype(dt, copy=False)
    n = math.prod(xs)
    if n == 0:
        return (xp.zeros(xs, dt),)
    x = _lapack("_npi_tensorsolve", xp.linalg.solve, am.reshape(n, n), B.reshape(n).astype(dt, copy=False))
    return (x.reshape(xs).astype(dt, copy=False),)


@_npi_tensorsolve.def_gradient
def _(F, a, inputs, outputs, ograds):
    return list(F._backward_npi_tensorsolve(ograds[0], inputs[0], inputs[1], outputs[0], a_axes=a.a_axes))


@register("_backward_npi_tensorsolve", inputs=("ograd", "a", "b", "x"), outputs=("da", "db"), public=False,
          fluent=False, attrs=dict(_A_AXES),
          infer_shape=lambda a, g, sa, sb, sx: None if sa is None or sb is None else ([g, sa, sb, sx], [sa, sb]),
          infer_type=lambda a, g, ta, tb, tx: None if ta is None else ([g, ta, tb, tx], [ta, tb]))
def _backward_npi_tensorsolve(xp, a, g, A, B, X):
    """With M the moved a as an n x n matrix: db = M^-T dx, dM = -db x^T (moved back)."""
    order = _tensorsolve_perm(A.ndim, a.a_axes)
    am = xp.transpose(A, order).astype(X.dtype, copy=False)
    g = g.astype(X.dtype, copy=False)
    n = math.prod(X.shape)
    if n == 0:
        return xp.zeros_like(A), xp.zeros_like(B)
    db = _lapack("_npi_tensorsolve", xp.linalg.solve, am.reshape(n, n).T, g.reshape(n))
    dm = -xp.outer(db, X.reshape(n)).reshape(am.shape)
    da = xp.transpose(dm, np.argsort(order))
    return da.astype(A.dtype, copy=False), db.reshape(B.shape).astype(B.dtype, copy=False)
