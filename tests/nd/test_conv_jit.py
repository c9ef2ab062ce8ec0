"""The compiled im2col and col2im (nd/ops/conv_jit.py, the optional [jit] extra) against
numpy's, the reference path: the same columns and the same sums, bit for bit, for every 2-D
geometry; and convolution gradients that agree with the extra on and off."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridgraph.nd.ops import conv_jit
from hybridgraph.nd.ops import conv_kernels as ck

pytest.importorskip("numba", reason="the optional [jit] extra (numba) is not installed")


@pytest.fixture(autouse=True)
def _compiled_kernels_on(monkeypatch):
    """These tests are about the compiled kernels: on even where the suite runs with
    HYBRIDGRAPH_JIT=0 (tests that compare with numpy's path switch it per call)."""
    monkeypatch.setenv("HYBRIDGRAPH_JIT", "1")

geometries = st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.integers(1, 3),
                       st.integers(1, 2), st.integers(1, 2), st.integers(0, 3), st.integers(0, 3))


def _numpy(fn, *args):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HYBRIDGRAPH_JIT", "0")
        return fn(*args)


@settings(deadline=None)
@given(n=st.integers(1, 3), c=st.integers(1, 4), h=st.integers(1, 9), w=st.integers(1, 9), geom=geometries,
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**16))
def test_compiled_im2col_and_col2im_equal_numpys(n, c, h, w, geom, dtype, seed):
    kh, kw, sy, sx, dy, dx, py, px = geom
    geo = ck.Geometry((kh, kw), (sy, sx), (dy, dx), (py, px), 1)
    out_sp = geo.out_size((h, w))
    if min(out_sp) < 1:
        return
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    want = _numpy(ck._im2col, np, x, geo, out_sp)
    k = conv_jit.kernels()
    got = np.full((c, kh, kw, n, *out_sp), np.nan, dtype)
    k.im2col(x, geo.stride, geo.dilate, geo.pad, got)
    np.testing.assert_array_equal(got.reshape(want.shape), want)
    cols = rng.standard_normal(want.shape).astype(dtype)
    want_x = _numpy(ck._col2im, np, cols, x.shape, geo, out_sp)
    got_x = np.full(x.shape, np.nan, dtype)
    k.col2im(cols.reshape(got.shape), geo.stride, geo.dilate, geo.pad, got_x)
    np.testing.assert_array_equal(got_x, want_x)


@pytest.mark.parametrize("shape,kernel,stride,pad", [((4, 20, 12, 12), 5, 1, 0), ((2, 8, 9, 9), 3, 2, 1),
                                                      ((2, 3, 16, 16), 7, 2, 3), ((3, 6, 7, 7), 3, 1, 1)])
def test_convolution_gradients_agree_with_the_extra_on_and_off(monkeypatch, shape, kernel, stride, pad):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((10, shape[1], kernel, kernel)).astype(np.float32)
    geo = ck.Geometry((kernel, kernel), (stride, stride), (1, 1), (pad, pad), 1)
    g = rng.standard_normal((shape[0], 10, *geo.out_size(shape[2:]))).astype(np.float32)
    results = {}
    for flag in ("0", "1"):
        monkeypatch.setenv("HYBRIDGRAPH_JIT", flag)
        results[flag] = (ck.conv_forward(np, x, w, None, geo), ck.conv_data_grad(np, g, w, x.shape, geo),
                         ck.conv_weight_grad(np, g, x, w.shape, geo))
    for off, on in zip(results["0"], results["1"]):
        np.testing.assert_allclose(on, off, rtol=1e-5, atol=1e-4)


def test_stride_1_data_gradients_take_col2im_unless_the_flipped_convolution_runs_winograd(monkeypatch):
    """With the compiled col2im, a stride-1 data gradient whose flipped convolution would not
    run by Winograd is W^T @ g + col2im (no flipped weight copy); one that would keeps it.
    Both equal the float64 gradient within float32 rounding."""
    monkeypatch.setenv("HYBRIDGRAPH_JIT", "1")
    rng = np.random.default_rng(11)
    geo = ck.Geometry((3, 3), (1, 1), (1, 1), (1, 1), 1)
    flipped = []
    real = ck._flipped_weight
    monkeypatch.setattr(ck, "_flipped_weight", lambda *a: flipped.append(1) or real(*a))
    for shape, o, want_flip in (((1, 512, 7, 7), 512, False), ((2, 64, 20, 20), 64, True)):
        x_shape = shape
        w = rng.standard_normal((o, shape[1], 3, 3)).astype(np.float32)
        g = rng.standard_normal((shape[0], o, *shape[2:])).astype(np.float32)
        flipped.clear()
        got = ck.conv_data_grad(np, g, w, x_shape, geo)
        assert bool(flipped) == want_flip
        exact = ck.conv_data_grad(np, g.astype(np.float64), w.astype(np.float64), x_shape, geo)
        scale = ck.conv_data_grad(np, np.abs(g).astype(np.float64), np.abs(w).astype(np.float64), x_shape, geo)
        assert (np.abs(got - exact) <= 3e-5 * scale).all()
