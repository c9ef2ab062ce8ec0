"""Specs for nd/ops/linalg_more.py: potri, trmm, gelqf, syevd, the diagonal/triangle copies
and the hidden backward operators (MXNet 1.9.1's own values and gradients are checked in
tests/nd/test_linalg_more.py)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, shapes

_HIDDEN = "hidden backward op without a gradient of its own (as MXNet)"


def _t(x, flag=True):
    return np.swapaxes(x, -1, -2) if flag else x


def _tri(a, lower):
    return np.tril(a) if lower else np.triu(a)


def _batch(draw):
    return draw(shapes(min_dims=0, max_dims=1, max_side=2))


def _triangular_case(draw):
    n = draw(st.integers(1, 4))
    return [draw(arr(_batch(draw) + (n, n), -1, 1)) + 3 * np.eye(n)], {"lower": draw(st.booleans())}


def _potri_ref(b, lower):
    t = _tri(b, lower)
    return np.linalg.inv(t @ _t(t) if lower else _t(t) @ t)


def _trmm_case(draw):
    n, k = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    batch, right = _batch(draw), draw(st.booleans())
    a = draw(arr(batch + (n, n)))
    b = draw(arr(batch + ((k, n) if right else (n, k))))
    return [a, b], {"transpose": draw(st.booleans()), "rightside": right, "lower": draw(st.booleans()),
                    "alpha": draw(st.sampled_from([1.0, -0.7, 2.0]))}


def _trmm_ref(A, B, transpose, rightside, lower, alpha):
    m = _t(_tri(A, lower), transpose)
    return alpha * (B @ m if rightside else m @ B)


def _trmm_backward_case(draw):
    (a, b), attrs = _trmm_case(draw)
    return [draw(arr(_trmm_ref(a, b, **attrs).shape)), a, b], attrs


def _gelqf_case(draw):
    m, extra = draw(st.integers(1, 3)), draw(st.integers(0, 2))
    # full row rank, away from singular L (the gradient solves with L^T), and no exact zeros:
    # LAPACK's Householder step keeps a sign at a zero tail and flips it next to one, so the
    # factors jump there (MXNet's too)
    a = draw(arr(_batch(draw) + (m, m + extra), -1, 1, away_from=0.0))
    return [a + 3 * np.eye(m, m + extra)], {}


def _gelqf_ref(a):
    q, r = np.linalg.qr(_t(a))
    return _t(q), _t(r)


def _separated_symmetric(draw):
    """Symmetric matrices with eigenvalues at least 1 apart (a stable eigenbasis)."""
    n = draw(st.integers(1, 3))
    q, _ = np.linalg.qr(draw(arr((n, n), -1, 1)) + 3 * np.eye(n))
    lam = np.arange(n) * 1.5 + draw(st.floats(-1, 1))
    return q @ np.diag(lam) @ q.T


def _syevd_ref(a):
    lam, vec = np.linalg.eigh(a)
    u = _t(vec)
    idx = np.argmax(np.abs(u), axis=-1)[..., None]
    return u * np.where(np.take_along_axis(u, idx, -1) < 0, -1.0, 1.0), lam


def _square_any(draw):
    n = draw(st.integers(1, 4))
    return draw(arr(_batch(draw) + (n, n))), n


def _extractdiag_case(draw):
    a, n = _square_any(draw)
    return [a], {"offset": draw(st.integers(1 - n, n - 1))}


def _makediag_case(draw):
    return [draw(arr(_batch(draw) + (draw(st.integers(1, 3)),)))], {"offset": draw(st.integers(-2, 2))}


def _makediag_ref(v, offset):
    n = v.shape[-1] + abs(offset)
    out = np.zeros(v.shape[:-1] + (n, n))
    for idx in np.ndindex(v.shape[:-1]):
        out[idx] = np.diagflat(v[idx], k=offset)
    return out


def _packed_positions(n, offset, lower):
    """(row, col) pairs in MXNet's packing order, listed element by element."""
    m, k = n - abs(offset), abs(offset)
    if offset < 0 or (offset == 0 and lower):
        return [(r + k, c) for r in range(m) for c in range(r + 1)]
    return [(c, r + k) for r in range(m) for c in range(r + 1)]


def _extracttrian_case(draw):
    a, n = _square_any(draw)
    return [a], {"offset": draw(st.integers(1 - n, n - 1)), "lower": draw(st.booleans())}


def _extracttrian_ref(a, offset, lower):
    pos = _packed_positions(a.shape[-1], offset, lower)
    return np.stack([a[..., r, c] for r, c in pos], axis=-1)


def _maketrian_case(draw):
    m, offset = draw(st.integers(1, 3)), draw(st.integers(-2, 2))
    return [draw(arr(_batch(draw) + (m * (m + 1) // 2,)))], {"offset": offset, "lower": draw(st.booleans())}


def _maketrian_ref(v, offset, lower):
    m = int(round((np.sqrt(8 * v.shape[-1] + 1) - 1) / 2))
    n = m + abs(offset)
    out = np.zeros(v.shape[:-1] + (n, n))
    for i, (r, c) in enumerate(_packed_positions(n, offset, lower)):
        out[..., r, c] = v[..., i]
    return out


def _potri_backward_case(draw):
    (b,), attrs = _triangular_case(draw)
    return [draw(arr(b.shape)), b, _potri_ref(b, **attrs)], attrs


def _gelqf_backward_case(draw):
    (a,), _ = _gelqf_case(draw)
    q, low = _gelqf_ref(a)
    return [draw(arr(q.shape)), draw(arr(low.shape)), q, low + 3 * np.eye(low.shape[-1])], {}


def _syevd_backward_case(draw):
    u, lam = _syevd_ref(_separated_symmetric(draw))
    return [draw(arr(u.shape)), draw(arr(lam.shape)), u, lam], {}


SPECS = [
    OpSpec("_linalg_potri", case=_triangular_case, ref=_potri_ref),
    OpSpec("_backward_linalg_potri", case=_potri_backward_case, nondiff=_HIDDEN),
    OpSpec("_linalg_trmm", case=_trmm_case, ref=_trmm_ref),
    OpSpec("_backward_linalg_trmm", case=_trmm_backward_case, nondiff=_HIDDEN),
    OpSpec("_linalg_gelqf", case=_gelqf_case, ref=_gelqf_ref),
    OpSpec("_backward_linalg_gelqf", case=_gelqf_backward_case, nondiff=_HIDDEN),
    OpSpec("_linalg_syevd", case=lambda draw: ([_separated_symmetric(draw)], {}), ref=_syevd_ref,
           nondiff="MXNet's gradient is the symmetric one (syevd reads only the lower triangle): "
                   "checked against MXNet in tests/nd/test_linalg_more.py"),
    OpSpec("_backward_linalg_syevd", case=_syevd_backward_case, nondiff=_HIDDEN),
    OpSpec("_linalg_extractdiag", case=_extractdiag_case,
           ref=lambda a, offset: np.diagonal(a, offset, -2, -1)),
    OpSpec("_linalg_makediag", case=_makediag_case, ref=_makediag_ref),
    OpSpec("_linalg_extracttrian", case=_extracttrian_case, ref=_extracttrian_ref),
    OpSpec("_linalg_maketrian", case=_maketrian_case, ref=_maketrian_ref),
]
