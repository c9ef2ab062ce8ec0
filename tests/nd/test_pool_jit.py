"""The compiled max-pooling gradient (nd/ops/pool_jit.py, the optional [jit] extra) against
numpy's, the reference path: the same positions receive the same gradient (first maximum in
row-major order, ties included), NaN windows pass nothing, and a non-finite output gradient
spreads as numpy's does."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridgraph.nd.ops import pool
from hybridgraph.nd.registry import get_op

pytest.importorskip("numba", reason="the optional [jit] extra (numba) is not installed")


def _grad(jit: bool, a, g, x, y, geo):
    with pytest.MonkeyPatch.context() as mp, np.errstate(invalid="ignore"):   # numpy's path: inf * 0
        mp.setenv("HYBRIDGRAPH_JIT", "1" if jit else "0")
        return pool.pool_backward(np, a, g, x, y, geo)


def _case(shape, k, s, p, convention, x, g_of_y):
    a = get_op("Pooling").parse_attrs({"kernel": k, "stride": s, "pad": p, "pool_type": "max",
                                       "pooling_convention": convention})
    geo = pool.pool_geometry(a, shape[2:])
    y = pool.pool_forward(np, a, x, geo)
    g = g_of_y(y)
    return _grad(False, a, g, x, y, geo), _grad(True, a, g, x, y, geo)


@settings(deadline=None)
@given(n=st.integers(1, 2), c=st.integers(1, 3), h=st.integers(2, 10), w=st.integers(2, 10),
       kh=st.integers(1, 4), kw=st.integers(1, 4), sh=st.integers(1, 3), sw=st.integers(1, 3),
       pad=st.booleans(), convention=st.sampled_from(["valid", "full"]), ties=st.booleans(),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**16))
def test_compiled_gradient_equals_numpys(n, c, h, w, kh, kw, sh, sw, pad, convention, ties, dtype, seed):
    kh, kw = min(kh, h), min(kw, w)
    p = ((kh - 1) // 2, (kw - 1) // 2) if pad else (0, 0)
    rng = np.random.default_rng(seed)
    x = (rng.integers(0, 3, (n, c, h, w)) if ties else rng.standard_normal((n, c, h, w))).astype(dtype)
    want, got = _case(x.shape, (kh, kw), (sh, sw), p, convention, x,
                      lambda y: rng.standard_normal(y.shape).astype(dtype))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)     # overlapping windows: sum order


def test_nan_windows_and_non_finite_gradients_match_numpy():
    x = np.arange(2 * 36, dtype=np.float32).reshape(1, 2, 6, 6) % 7
    x[0, 0, 2, 3] = np.nan

    def grads(y):
        g = np.ones_like(y)
        g[0, 1, 1, 1] = np.inf
        return g
    want, got = _case(x.shape, (3, 3), (2, 2), (1, 1), "valid", x, grads)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got).any()
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok], want[ok])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tiled_2x2_windows_give_numpys_bits(dtype):
    """LeNet's and VGG's 2x2 / 2 pooling (windows tiling the input): ties, NaN windows and
    non-finite gradients give numpy's tiled pass's bits, signed zeros included."""
    rng = np.random.default_rng(7)
    x = rng.integers(0, 3, (3, 4, 8, 10)).astype(dtype)
    x[0, 1, 2:4, 4:6] = np.nan
    x[1, 2, 0, 0] = np.inf

    def grads(y):
        g = rng.standard_normal(y.shape).astype(dtype)
        g[2, 3, 1, 1], g[0, 0, 0, 0] = np.inf, np.nan
        return g
    want, got = _case(x.shape, (2, 2), (2, 2), (0, 0), "valid", x, grads)
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tiled_2x2_forward_gives_numpys_bits(dtype):
    """The compiled 2x2 / 2 max pooling takes np.maximum's order: NaN anywhere in a window and
    the sign of a zero maximum come out as numpy's separable passes give them."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 4, 6, 8)).astype(dtype)
    x[0, 0, 0, 1], x[1, 1, 3, 3] = np.nan, np.nan
    x[2, 2, :2, :2] = [[0.0, -0.0], [-0.0, 0.0]]
    x[2, 3, :2, :2] = [[-0.0, 0.0], [0.0, -0.0]]
    x[0, 3, :2, 2:4] = -np.inf
    a = get_op("Pooling").parse_attrs({"kernel": (2, 2), "stride": (2, 2), "pool_type": "max"})
    geo = pool.pool_geometry(a, x.shape[2:])
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HYBRIDGRAPH_JIT", "0")
        want = pool.pool_forward(np, a, x, geo)
    got = pool.pool_forward(np, a, x, geo)
    assert got.tobytes() == want.tobytes()
    assert np.isnan(got[0, 0, 0, 0]) and np.isnan(got[1, 1, 1, 1])
