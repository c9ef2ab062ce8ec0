"""conv_kernels' GEMM layouts that skip a reordering copy: per-image GEMMs written straight into
the output (_im2col_forward, images of >= IM2COL_DIRECT_MIN_POSITIONS positions) and weight
gradients computed in the weight's layout (conv_weight_grad, weights of >=
DIRECT_WEIGHT_GRAD_MIN elements) give what the chunked, transposing paths give (up to the
rounding of GEMMs of other shapes: gemm_rounding.py)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridgraph.nd.ops import conv_kernels as ck
from tests.nd.gemm_rounding import assert_equal_up_to_gemm_rounding


@settings(deadline=None, max_examples=25)
@given(n=st.integers(1, 3), c=st.integers(1, 4), o=st.integers(1, 5), hw=st.integers(5, 12),
       k=st.integers(1, 3), stride=st.integers(1, 2), bias=st.booleans(), seed=st.integers(0, 2**16))
def test_per_image_gemms_equal_the_chunked_gemm(n, c, o, hw, k, stride, bias, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, hw, hw)).astype(np.float32)
    w = rng.standard_normal((o, c, k, k)).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32) if bias else None
    geo = ck.Geometry((k, k), (stride, stride), (1, 1), (1, 1), 1)
    out_shape = (n, o, *geo.out_size((hw, hw)))
    outs = []
    for threshold in (1, 10**9):                    # every image direct; never
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(ck, "IM2COL_DIRECT_MIN_POSITIONS", threshold)
            out = np.full(out_shape, np.nan, np.float32)
            ck._im2col_forward(np, x, w, b, geo, out)
            outs.append(out)
    assert not np.isnan(outs[0]).any()              # every element written
    assert_equal_up_to_gemm_rounding(outs[0], outs[1])


@pytest.mark.parametrize("groups", [1, 2])
def test_weight_gradient_in_the_weights_layout_equals_the_transposed_one(monkeypatch, groups):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4, 9, 9)).astype(np.float32)
    geo = ck.Geometry((3, 3), (2, 2), (1, 1), (1, 1), groups)
    w_shape = (6, 4 // groups, 3, 3)
    g = rng.standard_normal((3, 6, *geo.out_size((9, 9)))).astype(np.float32)
    results = []
    for threshold in (1, 10**9):
        monkeypatch.setattr(ck, "DIRECT_WEIGHT_GRAD_MIN", threshold)
        results.append(ck.conv_weight_grad(np, g, x, w_shape, geo))
    assert results[0].shape == w_shape
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-5)


@settings(deadline=None, max_examples=25)
@given(n=st.integers(1, 3), c=st.integers(1, 4), o=st.integers(1, 5), hw=st.integers(5, 12),
       k=st.integers(1, 7), stride=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_per_image_weight_gradients_equal_the_whole_batch_gemm(n, c, o, hw, k, stride, seed):
    """Weight gradients summed from one GEMM per image (images of >=
    PER_IMAGE_WEIGHT_GRAD_MIN_POSITIONS positions, the 7x7 stem's) equal the whole-batch
    GEMM's within float32 rounding of sum(|g| |x|), strided and padded windows included."""
    rng = np.random.default_rng(seed)
    k = min(k, hw)
    x = rng.standard_normal((n, c, hw, hw)).astype(np.float32)
    geo = ck.Geometry((k, k), (stride, stride), (1, 1), (k // 2, k // 2), 1)
    g = rng.standard_normal((n, o, *geo.out_size((hw, hw)))).astype(np.float32)
    w_shape = (o, c, k, k)
    grads, calls = [], []
    real = ck._per_image_weight_grad
    for threshold in (1, 10**9):                    # every image by itself; never
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(ck, "PER_IMAGE_WEIGHT_GRAD_MIN_POSITIONS", threshold)
            mp.setattr(ck, "_per_image_weight_grad", lambda *a: calls.append(threshold) or real(*a))
            mp.setattr(ck, "_flat_grid", lambda *a: None)       # the im2col path, for stride 1 too
            grads.append(ck.conv_weight_grad(np, g, x, w_shape, geo))
    assert calls == [1]
    scale = ck.conv_weight_grad(np, np.abs(g).astype(np.float64), np.abs(x).astype(np.float64), w_shape, geo)
    assert (np.abs(grads[0] - grads[1]) <= 1e-6 * scale + 1e-30).all()
