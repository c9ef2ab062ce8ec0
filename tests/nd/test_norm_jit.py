"""The compiled BatchNorm passes (nd/ops/norm_jit.py, the optional [jit] extra) against
numpy's path, the reference: training forward and backward within float32 rounding (their
sums are float64, numpy's float32), numpy's bits where the statistics are given (inference,
use_global_stats), accurate variances of data far from zero, NaN kept, and numpy's path where
the kernels do not apply."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridgraph.nd.ops import norm_jit
from hybridgraph.nd.registry import get_op

pytest.importorskip("numba", reason="the optional [jit] extra (numba) is not installed")


@pytest.fixture(autouse=True)
def _compiled_kernels_on(monkeypatch):
    """These tests are about the compiled kernels: on even where the suite runs with
    HYBRIDGRAPH_JIT=0 (tests that compare with numpy's path switch it per call)."""
    monkeypatch.setenv("HYBRIDGRAPH_JIT", "1")

BN, BN_BACKWARD = get_op("BatchNorm"), get_op("_backward_BatchNorm")


def _run(jit: bool, attrs: dict, x, g, is_train: bool, seed: int = 0):
    """(out, mean, invstd, dx, dgamma, dbeta, moving_mean, moving_var) of one forward and backward."""
    rng = np.random.default_rng(seed)
    c = x.shape[attrs.get("axis", 1)]
    gamma = rng.uniform(0.5, 2, c).astype(x.dtype)
    beta = rng.standard_normal(c).astype(x.dtype)
    mm, mv = rng.standard_normal(c).astype(x.dtype), rng.uniform(0.5, 2, c).astype(x.dtype)
    a = BN.parse_attrs(attrs)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HYBRIDGRAPH_JIT", "1" if jit else "0")
        out, mean, inv = BN.forward(np, a, x, gamma, beta, mm, mv, is_train=is_train)
        dx, dgamma, dbeta = BN_BACKWARD.forward(np, a, g, x, gamma, mean, inv, mm, mv, is_train=is_train)
    return out, mean, inv, dx, dgamma, dbeta, mm, mv


def _close(got, want, scale, ulps: float = 32):
    """Within `ulps` float32/float64 roundings of `scale`, the magnitude of the terms summed
    (a sum that cancels to a small result has the rounding of its terms, not of the result)."""
    bound = ulps * np.finfo(want.dtype).eps * np.maximum(scale, np.abs(want))
    assert np.all(np.abs(got - want) <= bound), f"max difference {np.abs(got - want).max():.3e}"


def _scales(x, g, inv, gamma_used):
    """Per-output magnitudes of the terms behind out, mean, invstd, dx, dgamma, dbeta, moving stats."""
    axes = (0, *range(2, x.ndim))
    xc = np.abs(x - x.mean(axis=axes, keepdims=True)).astype(np.float64)
    ag = np.abs(g).astype(np.float64)
    big = float(np.abs(x).max())
    return (big * float(inv.max()) * gamma_used, big, float(inv.max()), float(ag.max() * (inv * gamma_used).max()) * 4,
            (xc * ag).sum(axis=axes) * inv, ag.sum(axis=axes), big, big * big)


@settings(deadline=None, max_examples=25)
@given(n=st.integers(1, 4), c=st.integers(1, 9), h=st.integers(4, 12), w=st.integers(4, 12),
       dtype=st.sampled_from([np.float32, np.float64]), fix_gamma=st.booleans(), offset=st.sampled_from([0.0, 30.0]),
       seed=st.integers(0, 2**16))
def test_training_passes_match_numpys_within_rounding(n, c, h, w, dtype, fix_gamma, offset, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((n, c, h, w)) * rng.uniform(0.1, 3) + offset).astype(dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    attrs = {"fix_gamma": fix_gamma, "eps": 1e-5}
    got, want = _run(True, attrs, x, g, True, seed), _run(False, attrs, x, g, True, seed)
    gamma_used = 1.0 if fix_gamma else 2.0
    for a, b, scale in zip(got, want, _scales(x, g, want[2].astype(np.float64), gamma_used)):
        _close(a, b, scale)


@pytest.mark.parametrize("attrs,is_train", [({"fix_gamma": False}, False),
                                            ({"fix_gamma": False, "use_global_stats": True}, True)])
def test_given_statistics_give_numpys_bits(attrs, is_train):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 7, 6)).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    got, want = _run(True, attrs, x, g, is_train), _run(False, attrs, x, g, is_train)
    assert got[0].tobytes() == want[0].tobytes()
    for a, b in zip(got[1:], want[1:]):
        np.testing.assert_array_equal(a, b)


def test_the_variance_of_data_far_from_zero_is_accurate():
    rng = np.random.default_rng(4)
    x = (1e4 + rng.standard_normal((4, 3, 16, 16))).astype(np.float32)
    compiled = norm_jit.kernels()
    mean, var = np.empty(3, np.float32), np.empty(3, np.float32)
    compiled.stats(norm_jit.as_ncs(x), mean, var)
    exact = x.astype(np.float64).var(axis=(0, 2, 3))
    np.testing.assert_allclose(var, exact, rtol=1e-6)
    np.testing.assert_allclose(mean, x.astype(np.float64).mean(axis=(0, 2, 3)), rtol=1e-7)


def test_nan_reaches_its_channel_as_in_numpy():
    x = np.ones((2, 3, 4, 4), np.float32)
    x[1, 1, 2, 3] = np.nan
    g = np.ones_like(x)
    got, want = _run(True, {"fix_gamma": False}, x, g, True), _run(False, {"fix_gamma": False}, x, g, True)
    for a, b in zip(got[:6], want[:6]):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    assert np.isnan(got[0][:, 1]).all() and not np.isnan(got[0][:, [0, 2]]).any()


def test_it_applies_only_where_it_pays():
    x = np.ones((2, 3, 4, 4), np.float32)
    assert norm_jit.applies(x, x)
    assert not norm_jit.applies(np.ones((8, 3), np.float32))                # Dense outputs: runs of 1
    assert not norm_jit.applies(x.astype(np.float16))
    assert not norm_jit.applies(np.ones((2, 3, 4, 8), np.float32)[..., ::2])  # strided
    assert not norm_jit.applies(x, x.astype(np.float64))
    # channel-last BatchNorm (axis 3) and short runs take numpy's path: same results either way
    for shape, attrs in (((2, 4, 4, 3), {"axis": 3}), ((6, 3), {})):
        x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
        got, want = _run(True, attrs, x, x, True), _run(False, attrs, x, x, True)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
