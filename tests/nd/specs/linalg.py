"""Specs for nd/ops/linalg.py: dot, batch_dot, the `_linalg_*` operators and
their hidden backward operators."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, shapes

_HIDDEN = "hidden backward op without a gradient of its own (as MXNet)"


def _side(draw, k, lead_first):
    """A dot operand of rank 1-3 whose contracted axis (first or last) has size k."""
    rest = draw(shapes(min_dims=0, max_dims=2, max_side=3))
    return (k,) + tuple(rest) if lead_first else tuple(rest) + (k,)


def _dot_case(draw):
    k = draw(st.integers(1, 4))
    ta, tb = draw(st.booleans()), draw(st.booleans())
    lshape, rshape = _side(draw, k, ta), _side(draw, k, not tb)
    if len(lshape) == 1 and len(rshape) == 1:
        ta = tb = False
    return [draw(arr(lshape)), draw(arr(rshape))], {"transpose_a": ta, "transpose_b": tb}


def _dot_ref(lhs, rhs, transpose_a, transpose_b):
    out = np.tensordot(lhs, rhs, axes=([0 if transpose_a else -1], [-1 if transpose_b else 0]))
    return out.reshape(1) if out.ndim == 0 else out


def _backward_dot_case(draw):
    (lhs, rhs), attrs = _dot_case(draw)
    return [draw(arr(_dot_ref(lhs, rhs, **attrs).shape)), lhs, rhs], attrs


def _backward_dot_ref(g, lhs, rhs, transpose_a, transpose_b):
    if lhs.ndim == 1 and rhs.ndim == 1:
        return g[0] * rhs, g[0] * lhs
    la = 0 if transpose_a else lhs.ndim - 1
    rb = rhs.ndim - 1 if transpose_b else 0
    lkeep = [i for i in range(lhs.ndim) if i != la]
    rkeep = [i for i in range(rhs.ndim) if i != rb]
    g = g.reshape(tuple(lhs.shape[i] for i in lkeep) + tuple(rhs.shape[i] for i in rkeep))
    nl = len(lkeep)
    dl = np.tensordot(g, rhs, axes=(list(range(nl, g.ndim)), rkeep))      # lkeep... + (k,)
    dr = np.tensordot(lhs, g, axes=(lkeep, list(range(nl))))              # (k,) + rkeep...
    return np.moveaxis(dl, -1, la), np.moveaxis(dr, 0, rb)


def _t(x, flag):
    return np.swapaxes(x, -1, -2) if flag else x


def _batch_dot_case(draw):
    batch = draw(shapes(min_dims=1, max_dims=2, max_side=3))
    m, k, n = (draw(st.integers(1, 4)) for _ in range(3))
    ta, tb = draw(st.booleans()), draw(st.booleans())
    lshape = batch + ((k, m) if ta else (m, k))
    rshape = batch + ((n, k) if tb else (k, n))
    return [draw(arr(lshape)), draw(arr(rshape))], {"transpose_a": ta, "transpose_b": tb}


def _gemm_case(with_c):
    def case(draw):
        batch = draw(shapes(min_dims=0, max_dims=2, max_side=3))
        m, k, n = (draw(st.integers(1, 4)) for _ in range(3))
        ta, tb = draw(st.booleans()), draw(st.booleans())
        ndim = len(batch) + 2
        row = draw(st.integers(0, ndim - 2))           # the row axis, columns stay last

        def place(rows, cols):   # (batch..., rows, cols) with the rows moved to `row`
            s = list(batch) + [cols]
            s.insert(row, rows)
            return tuple(s)
        a_rc, b_rc = ((k, m) if ta else (m, k)), ((n, k) if tb else (k, n))
        inputs = [draw(arr(place(*a_rc))), draw(arr(place(*b_rc)))]
        attrs = {"transpose_a": ta, "transpose_b": tb, "alpha": draw(st.sampled_from([1.0, -0.5, 2.0])),
                 "axis": row - ndim if draw(st.booleans()) else row}
        if with_c:
            inputs.append(draw(arr(place(m, n))))
            attrs["beta"] = draw(st.sampled_from([1.0, 0.0, -1.5]))
        return inputs, attrs
    return case


def _gemm_ref(A, B, C=None, transpose_a=False, transpose_b=False, alpha=1.0, beta=1.0, axis=-2):
    ax = axis % A.ndim
    am, bm = np.moveaxis(A, ax, -2), np.moveaxis(B, ax, -2)
    out = alpha * np.matmul(_t(am, transpose_a), _t(bm, transpose_b))
    out = np.moveaxis(out, -2, ax)
    return out if C is None else out + beta * C


def _square_case(low=-1.0, high=1.0, shift=None):
    """Square matrices; `shift` * I added (None: n + 1, strictly diagonally dominant for entries in
    [-1, 1], so invertible and well conditioned for finite differences)."""
    def case(draw):
        n = draw(st.integers(1, 4))
        batch = draw(shapes(min_dims=0, max_dims=1, max_side=3))
        return [draw(arr(batch + (n, n), low, high)) + (n + 1.0 if shift is None else shift) * np.eye(n)], {}
    return case


def _spd_case(draw):
    (m,), _ = _square_case(shift=0.0)(draw)
    n = m.shape[-1]
    return [m @ np.swapaxes(m, -1, -2) + n * np.eye(n)], {"lower": draw(st.booleans())}


def _potrf_ref(a, lower=True):
    low = np.linalg.cholesky(a)
    return low if lower else np.swapaxes(low, -1, -2)


def _potrf_backward_case(draw):
    (a,), attrs = _spd_case(draw)
    return [draw(arr(a.shape)), _potrf_ref(a, **attrs)], attrs


def _potrf_backward_ref(g, L, lower=True):
    if not lower:
        L, g = np.swapaxes(L, -1, -2), np.swapaxes(g, -1, -2)
    li = np.linalg.inv(L)
    p = np.swapaxes(L, -1, -2) @ np.tril(g)
    phi = np.tril(p) - 0.5 * (np.eye(L.shape[-1]) * p)
    s = np.swapaxes(li, -1, -2) @ phi @ li
    return 0.5 * (s + np.swapaxes(s, -1, -2))


def _trsm_case(draw):
    n, k = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    batch = draw(shapes(min_dims=0, max_dims=1, max_side=2))
    right = draw(st.booleans())
    a = draw(arr(batch + (n, n), -1, 1)) + 3 * np.eye(n)
    b = draw(arr(batch + ((k, n) if right else (n, k))))
    return [a, b], {"transpose": draw(st.booleans()), "rightside": right, "lower": draw(st.booleans()),
                    "alpha": draw(st.sampled_from([1.0, -0.7, 2.0]))}


def _tri(a, lower):
    return np.tril(a) if lower else np.triu(a)


def _trsm_ref(A, B, transpose, rightside, lower, alpha):
    m = _t(_tri(A, lower), transpose)
    if rightside:
        return alpha * B @ np.linalg.inv(m)
    return alpha * np.linalg.inv(m) @ B


def _trsm_backward_case(draw):
    (a, b), attrs = _trsm_case(draw)
    x = _trsm_ref(a, b, **attrs)
    return [draw(arr(x.shape)), a, x], attrs


def _trsm_backward_ref(g, A, X, transpose, rightside, lower, alpha):
    mi = np.linalg.inv(_t(_tri(A, lower), transpose))
    if rightside:
        y = g @ np.swapaxes(mi, -1, -2)
        dm = -np.swapaxes(X, -1, -2) @ y
    else:
        y = np.swapaxes(mi, -1, -2) @ g
        dm = -y @ np.swapaxes(X, -1, -2)
    return _tri(_t(dm, transpose), lower), alpha * y


def _syrk_case(draw):
    a = draw(arr(shapes(min_dims=2, max_dims=3, max_side=4)))
    return [a], {"transpose": draw(st.booleans()), "alpha": draw(st.sampled_from([1.0, -0.5, 2.0]))}


def _syrk_ref(A, transpose, alpha):
    at = np.swapaxes(A, -1, -2)
    return alpha * (at @ A if transpose else A @ at)


def _per_matrix(values, a):
    return values.reshape(a.shape[:-2] or (1,))


def _det_backward_case(draw):
    (a,), _ = _square_case()(draw)
    return [draw(arr(a.shape[:-2] or (1,))), a, _per_matrix(np.linalg.det(a), a)], {}


def _sld_backward_case(draw):
    (a,), _ = _square_case()(draw)
    return [draw(arr(a.shape[:-2] or (1,))), a], {}


SPECS = [
    OpSpec("dot", case=_dot_case, ref=_dot_ref),
    OpSpec("_backward_dot", case=_backward_dot_case, ref=_backward_dot_ref),
    OpSpec("batch_dot", case=_batch_dot_case,
           ref=lambda lhs, rhs, transpose_a, transpose_b: _t(lhs, transpose_a) @ _t(rhs, transpose_b)),
    OpSpec("_linalg_gemm", case=_gemm_case(True), ref=_gemm_ref),
    OpSpec("_linalg_gemm2", case=_gemm_case(False), ref=_gemm_ref),
    OpSpec("_linalg_potrf", case=_spd_case, ref=_potrf_ref,
           nondiff="MXNet's gradient is the symmetric one: checked along symmetric directions "
                   "in tests/nd/test_linalg.py"),
    OpSpec("_backward_linalg_potrf", case=_potrf_backward_case, ref=_potrf_backward_ref, nondiff=_HIDDEN),
    OpSpec("_linalg_trsm", case=_trsm_case, ref=_trsm_ref),
    OpSpec("_backward_linalg_trsm", case=_trsm_backward_case, ref=_trsm_backward_ref, nondiff=_HIDDEN),
    OpSpec("_linalg_syrk", case=_syrk_case, ref=_syrk_ref),
    OpSpec("_linalg_det", case=_square_case(), ref=lambda a: _per_matrix(np.linalg.det(a), a)),
    OpSpec("_backward_linalg_det", case=_det_backward_case, nondiff=_HIDDEN,
           ref=lambda g, a, d: (g * d).reshape(a.shape[:-2] + (1, 1)) * np.swapaxes(np.linalg.inv(a), -1, -2)),
    OpSpec("_linalg_inverse", case=_square_case(), ref=np.linalg.inv),
    OpSpec("_linalg_sumlogdiag", case=_square_case(),
           ref=lambda a: _per_matrix(np.log(np.diagonal(a, axis1=-2, axis2=-1)).sum(-1), a)),
    OpSpec("_backward_linalg_sumlogdiag", case=_sld_backward_case, nondiff=_HIDDEN,
           ref=lambda g, a: np.eye(a.shape[-1]) * (g.reshape(a.shape[:-2] + (1,))
                                                    / np.diagonal(a, axis1=-2, axis2=-1))[..., None, :]),
]
