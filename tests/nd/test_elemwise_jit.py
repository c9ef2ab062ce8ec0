"""The compiled elementwise backward kernels (nd/ops/elemwise_jit.py, the optional [jit]
extra) give numpy's bits: relu's backward with NaN, signed zeros and infinities, into a
given output or a new one, and numpy's path where they do not apply."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridgraph.nd.ops import elemwise, elemwise_jit

pytest.importorskip("numba", reason="the optional [jit] extra (numba) is not installed")

SPECIAL = [np.nan, 0.0, -0.0, np.inf, -np.inf, 1e-40, -1e-40]


def _relu_grad(jit: bool, g, y, out=None):
    with pytest.MonkeyPatch.context() as mp, np.errstate(invalid="ignore"):    # numpy warns on inf * 0
        mp.setenv("HYBRIDGRAPH_JIT", "1" if jit else "0")
        return elemwise._backward_relu(np, None, g, y, out=out)[0]


@settings(deadline=None, max_examples=30)
@given(n=st.integers(elemwise_jit.MIN_SIZE, 3 * elemwise_jit.MIN_SIZE), dtype=st.sampled_from([np.float32, np.float64]),
       into=st.booleans(), seed=st.integers(0, 2**16))
def test_relu_backward_gives_numpys_bits(n, dtype, into, seed):
    rng = np.random.default_rng(seed)
    g = rng.standard_normal(n).astype(dtype)
    y = rng.standard_normal(n).astype(dtype)
    idx = rng.integers(0, n, 64)
    y[idx] = rng.choice(SPECIAL, 64)
    g[idx[::2]] = rng.choice(SPECIAL, 32)
    want = _relu_grad(False, g, y)
    out = (np.full_like(g, 7),) if into else None
    got = _relu_grad(True, g, y, out)
    assert got.tobytes() == want.tobytes()
    if into:
        assert got is out[0]


def test_it_applies_only_to_large_contiguous_float_arrays():
    big = np.ones(elemwise_jit.MIN_SIZE, np.float32)
    assert elemwise_jit.applies(big, big)
    assert not elemwise_jit.applies(big[:-1], big[:-1])                   # below MIN_SIZE
    assert not elemwise_jit.applies(big, big.astype(np.float64))          # mixed dtypes
    assert not elemwise_jit.applies(big.astype(np.int32), big.astype(np.int32))
    wide = np.ones((2, elemwise_jit.MIN_SIZE), np.float32)
    assert not elemwise_jit.applies(wide[:, ::2], wide[:, ::2])           # strided
    # where it does not apply, numpy's path runs: same result
    g, y = wide[:, ::2] * -3, wide[:, ::2]
    np.testing.assert_array_equal(_relu_grad(True, g, y), g)
