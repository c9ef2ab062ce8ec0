"""Specs for nd/ops/contrib_misc.py: quadratic, all_finite, multi_all_finite,
index_array, ravel_multi_index, unravel_index, khatri_rao, round_ste, sign_ste, gradientmultiplier
(forward values checked by MXNet 1.9.1)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, ints, shapes

_ZERO = "zero gradient (MXNet's MakeZeroGradNodes)"


def _quad_case(draw):
    coef = st.floats(-2.0, 2.0, allow_nan=False, width=32)
    return [draw(arr(shapes()))], {"a": draw(coef), "b": draw(coef), "c": draw(coef)}


def _finite_ref(*xs, **_):
    return np.array([float(all(np.isfinite(x).all() for x in xs))], dtype=np.float32)


def _with_nan(draw):
    # nan only: the paths harness casts inputs to int, which inf cannot survive (inf: tests/compat)
    x = draw(arr(shapes(max_dims=2)))
    if draw(st.booleans()):
        x.flat[draw(st.integers(0, x.size - 1))] = np.nan
    return x


def _index_case(draw):
    x = draw(arr(shapes(max_dims=3)))
    axes = draw(st.one_of(st.none(), st.lists(st.integers(-x.ndim, x.ndim - 1), min_size=1, max_size=3)))
    return [x], ({} if axes is None else {"axes": tuple(axes)})


def _index_ref(x, axes=None):
    grid = np.stack(np.indices(x.shape), axis=-1)
    return grid if axes is None else grid[..., list(axes)]


def _ravel_case(draw):
    shape = draw(shapes(max_dims=3))
    n = draw(st.integers(1, 5))
    idx = np.stack([draw(ints((n,), 0, d - 1)) for d in shape]).astype(np.float64)
    return [idx], {"shape": shape}


def _unravel_case(draw):
    shape = draw(shapes(max_dims=3))
    return [draw(ints((draw(st.integers(1, 5)),), 0, int(np.prod(shape)) - 1)).astype(np.float64)], {"shape": shape}


def _krprod_case(draw):
    cols, n = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    return [draw(arr((draw(st.integers(1, 3)), cols))) for _ in range(n)], {"num_args": n}


def _krprod_ref(*mats, num_args):
    out = mats[0]
    for m in mats[1:]:
        out = np.einsum("ik,jk->ijk", out, m).reshape(-1, m.shape[1])
    return out


SPECS = [
    OpSpec("_contrib_quadratic", case=_quad_case, ref=lambda x, a, b, c: a * x * x + b * x + c),
    OpSpec("all_finite", case=lambda draw: ([_with_nan(draw)], {}), ref=_finite_ref, nondiff=_ZERO),
    OpSpec("multi_all_finite", case=lambda draw: ([_with_nan(draw), _with_nan(draw)], {"num_arrays": 2}),
           ref=_finite_ref, nondiff=_ZERO),
    OpSpec("_contrib_index_array", case=_index_case, ref=_index_ref, nondiff=_ZERO),
    OpSpec("_ravel_multi_index", case=_ravel_case,
           ref=lambda x, shape: np.ravel_multi_index(x.astype(np.int64), shape).astype(x.dtype), nondiff=_ZERO),
    OpSpec("_unravel_index", case=_unravel_case,
           ref=lambda x, shape: np.stack(np.unravel_index(x.astype(np.int64), shape)).astype(x.dtype),
           nondiff=_ZERO),
    OpSpec("khatri_rao", case=_krprod_case, ref=_krprod_ref,
           nondiff="no gradient in MXNet 1.9.1 (krprod.cc registers no FGradient)"),
    # straight-through estimators: the gradient is the identity, not round's/sign's (zero) derivative,
    # so the finite-difference check does not apply; tests/nd/test_contrib_ste.py checks it
    OpSpec("_contrib_round_ste", case=lambda draw: ([draw(arr(shapes()))], {}),
           ref=lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), nondiff="straight-through gradient (identity)"),
    OpSpec("_contrib_sign_ste", case=lambda draw: ([draw(arr(shapes()))], {}), ref=np.sign,
           nondiff="straight-through gradient (identity)"),
    OpSpec("_contrib_gradientmultiplier", case=lambda draw: ([draw(arr(shapes()))], {"scalar": 1.0}),
           ref=lambda x, scalar: x),
]
