"""Specs for `mx.np.linalg`'s operators (nd/ops/np_linalg.py) and the tensor products
(nd/ops/np_products.py): forward against numpy, gradients by finite differences where MXNet
has them (well-conditioned draws keep the factorisations smooth)."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr

_ZERO = "zero gradient (MXNet's MakeZeroGradNodes)"
_KERNEL = "a gradient kernel (checked through its forward operator)"


def _batch(draw) -> tuple:
    return draw(st.sampled_from([(), (2,), (1, 2)]))


def _well_conditioned(draw, shape, spd=False):
    """Q diag(d) R with orthogonal Q, R from a drawn matrix and |d| in [1, 2] (or Q diag(d) Q^T)."""
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    n = shape[-1]
    q = np.linalg.qr(rng.standard_normal(shape[:-2] + (n, n)))[0]
    d = rng.uniform(1.0, 2.0, shape[:-2] + (n,)) * (1 if spd else rng.choice([-1.0, 1.0], shape[:-2] + (n,)))
    r = q if spd else np.linalg.qr(rng.standard_normal(shape[:-2] + (n, n)))[0]
    return np.matmul(q * d[..., None, :], np.swapaxes(r, -1, -2))


def _square_case(spd=False):
    def case(draw):
        n = draw(st.integers(1, 4))
        return [_well_conditioned(draw, _batch(draw) + (n, n), spd)], {}
    return case


def _svd_case(draw):
    m = draw(st.integers(1, 3))
    n = draw(st.integers(m, 4))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    shape = _batch(draw)
    u = np.linalg.qr(rng.standard_normal(shape + (m, m)))[0]
    v = np.linalg.qr(rng.standard_normal(shape + (n, n)))[0][..., :m, :]
    s = np.sort(rng.uniform(1.0, 2.0, shape + (m,)) + np.arange(m)[::-1], axis=-1)[..., ::-1]
    return [np.matmul(u * s[..., None, :], v)], {}


def _eigh_case(draw):
    (x,), _ = _square_case()(draw)
    return [x + np.swapaxes(x, -1, -2)], {"UPLO": draw(st.sampled_from(["L", "U"]))}


def _pinv_case(draw):
    m, n = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    return [draw(arr(_batch(draw) + (m, n)))], {"hermitian": False}


def _solve_case(draw):
    (a,), _ = _square_case()(draw)
    vec = draw(st.booleans())
    b = draw(arr(a.shape[:-1] if vec else a.shape[:-1] + (draw(st.integers(1, 3)),)))
    return [a, b], {}


def _solve_ref(a, b, **kw):
    return np.linalg.solve(a, b[..., None])[..., 0] if b.ndim == a.ndim - 1 else np.linalg.solve(a, b)


def _tensorinv_case(draw):
    ind = draw(st.integers(1, 2))
    lead, trail = draw(st.sampled_from([((4,), (2, 2)), ((3,), (3,)), ((6,), (2, 3))] if ind == 1 else
                                       [((2, 2), (4,)), ((1, 3), (3,)), ((2, 3), (3, 2))]))
    x = _well_conditioned(draw, (math.prod(lead),) * 2)
    return [x.reshape(lead + trail)], {"ind": ind}


def _tensorsolve_case(draw):
    b_shape = draw(st.sampled_from([(2,), (2, 2), (3,)]))
    x_shape = draw(st.sampled_from([(math.prod(b_shape),), (1, math.prod(b_shape))]))
    n = math.prod(b_shape)
    a = _well_conditioned(draw, (n, n)).reshape(b_shape + x_shape)
    axes = None
    if a.ndim >= 3 and draw(st.booleans()):
        axes = (0,)
        a = np.moveaxis(a, -1, 0)   # a_axes=(0,) moves axis 0 back to the end
    return [a, draw(arr(b_shape))], {"a_axes": axes if axes is not None else ()}


def _tensorsolve_ref(a, b, a_axes, **kw):
    return np.linalg.tensorsolve(a, b, axes=a_axes or None)


def _tensordot_case(draw):
    k = draw(st.integers(0, 2))
    a_free = draw(st.lists(st.integers(1, 3), max_size=2))
    b_free = draw(st.lists(st.integers(1, 3), max_size=2))
    summed = draw(st.lists(st.integers(1, 3), min_size=k, max_size=k))
    a_shape = list(a_free) + summed
    perm_a = draw(st.permutations(range(len(a_shape))))
    b_shape = summed[::-1] + list(b_free)
    a = draw(arr(tuple(a_shape[i] for i in perm_a)))
    b = draw(arr(tuple(b_shape)))
    inv = list(np.argsort(perm_a))
    a_axes = tuple(inv[len(a_free) + i] for i in range(k))
    b_axes = tuple(k - 1 - i for i in range(k))
    return [a, b], {"a_axes_summed": a_axes, "b_axes_summed": b_axes}


def _tensordot_int_case(draw):
    k = draw(st.integers(0, 2))
    summed = tuple(draw(st.lists(st.integers(1, 3), min_size=k, max_size=k)))
    a = draw(arr(tuple(draw(st.lists(st.integers(1, 3), max_size=2))) + summed))
    b = draw(arr(summed + tuple(draw(st.lists(st.integers(1, 3), max_size=2)))))
    return [a, b], {"axes": k}


def _kernel_case(case, fwd, keep_inputs=True, keep_outputs=False):
    """A gradient kernel's inputs: head gradients shaped like the forward's outputs, then the
    forward's inputs and/or outputs (whatever the kernel reads)."""
    def build(draw):
        inputs, attrs = case(draw)
        outs = fwd(*inputs, **attrs)
        outs = list(outs) if isinstance(outs, tuple) else [outs]
        heads = [draw(arr(np.shape(o))) for o in outs]
        return heads + (list(inputs) if keep_inputs else []) + (outs if keep_outputs else []), attrs
    return build


def _slogdet_kernel_case(draw):
    (a,), _ = _square_case()(draw)
    return [draw(arr(a.shape[:-2])), a], {}


def _svd_outputs(a, **kw):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return u, s, vh


def _pinv_array_case(draw):
    (a,), attrs = _pinv_case(draw)
    return [a, np.full(a.shape[:-2], 1e-6)], attrs


def _tensorinv_ref(a, ind, **kw):
    return np.linalg.tensorinv(a, ind)


def _tensordot_ref(a, b, a_axes_summed, b_axes_summed, **kw):
    return np.tensordot(a, b, (a_axes_summed, b_axes_summed))


def _tensordot_int_ref(a, b, axes, **kw):
    return np.tensordot(a, b, axes)


SPECS = [
    OpSpec("_npi_cholesky", case=lambda draw: (_square_case(spd=True)(draw)[0], {"lower": draw(st.booleans())}),
           ref=lambda a, lower, **kw: np.linalg.cholesky(a) if lower else np.swapaxes(np.linalg.cholesky(a), -1, -2),
           nondiff="symmetric gradient (MXNet's potrf rule; tests/numpy/test_np_linalg.py checks it)"),
    OpSpec("_npi_transpose_last2", case=lambda draw: ([draw(arr(_batch(draw) + (2, 3)))], {}),
           ref=lambda x, **kw: np.swapaxes(x, -1, -2)),
    OpSpec("_npi_svd", case=_svd_case, fd_rtol=1e-3, ref=lambda a, **kw: _svd_outputs(a)),
    OpSpec("_backward_npi_svd", case=_kernel_case(_svd_case, _svd_outputs, False, True), nondiff=_KERNEL),
    OpSpec("_npi_eig", case=lambda draw: ([_eigh_case(draw)[0][0]], {}),
           ref=lambda a, **kw: np.linalg.eig(a)[0], compare_outputs=1, nondiff=_ZERO),
    OpSpec("_npi_eigvals", case=lambda draw: ([_eigh_case(draw)[0][0]], {}),
           ref=lambda a, **kw: np.linalg.eigvals(a), nondiff=_ZERO),
    OpSpec("_npi_eigh", case=_eigh_case, ref=lambda a, UPLO, **kw: np.linalg.eigh(a, UPLO)[0],
           compare_outputs=1, nondiff=_ZERO),
    OpSpec("_npi_eigvalsh", case=_eigh_case, ref=lambda a, UPLO, **kw: np.linalg.eigvalsh(a, UPLO),
           nondiff=_ZERO),
    OpSpec("_npi_pinv_scalar_rcond", case=lambda draw: (_pinv_case(draw)[0], {"rcond": 1e-6, "hermitian": False}),
           ref=lambda a, rcond, **kw: np.linalg.pinv(a, rcond), nondiff=_ZERO, rtol=1e-4, atol=1e-5),
    OpSpec("_npi_pinv", case=_pinv_array_case, ref=lambda a, r, **kw: np.linalg.pinv(a, r), nondiff=_ZERO,
           rtol=1e-4, atol=1e-5),
    OpSpec("_npi_slogdet", case=_square_case(), ref=lambda a, **kw: tuple(np.linalg.slogdet(a))),
    OpSpec("_backward_npi_slogdet", case=_slogdet_kernel_case,
           ref=lambda g, a, **kw: g[..., None, None] * np.swapaxes(np.linalg.inv(a), -1, -2),
        nondiff=_KERNEL),
    OpSpec("_npi_solve", case=_solve_case, ref=_solve_ref),
    OpSpec("_backward_npi_solve", case=_kernel_case(_solve_case, _solve_ref, True, True), nondiff=_KERNEL),
    OpSpec("_npi_tensorinv", case=_tensorinv_case, ref=_tensorinv_ref),
    OpSpec("_backward_npi_tensorinv", case=_kernel_case(_tensorinv_case, _tensorinv_ref, False, True),
           nondiff=_KERNEL),
    OpSpec("_npi_tensorsolve", case=_tensorsolve_case, ref=_tensorsolve_ref),
    OpSpec("_backward_npi_tensorsolve", case=_kernel_case(_tensorsolve_case, _tensorsolve_ref, True, True),
           nondiff=_KERNEL),
    OpSpec("_npi_tensordot", case=_tensordot_case, ref=_tensordot_ref),
    OpSpec("_npi_tensordot_int_axes", case=_tensordot_int_case, ref=_tensordot_int_ref),
    OpSpec("_backward_npi_tensordot", case=_kernel_case(_tensordot_case, _tensordot_ref), nondiff=_KERNEL),
    OpSpec("_backward_npi_tensordot_int_axes", case=_kernel_case(_tensordot_int_case, _tensordot_int_ref),
           nondiff=_KERNEL),
]
