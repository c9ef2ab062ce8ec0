"""The compiled Winograd F(4x4, 3x3) transforms (nd/ops/winograd4_jit.py, the optional [jit]
extra) against numpy's GEMM transforms, the reference path: same convolution within the
F(4x4) error bound, the fused epilogue (bias, residual, ReLU) in MXNet's order, and where
plans use F(4x4) when they are installed."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridgraph.nd.ops import winograd4 as w4
from hybridgraph.nd.ops import jit, winograd4_jit
from tests.nd.gemm_rounding import assert_equal_up_to_gemm_rounding

pytest.importorskip("numba", reason="the optional [jit] extra (numba) is not installed")


@pytest.fixture(autouse=True)
def _compiled_kernels_on(monkeypatch):
    """These tests are about the compiled kernels: on even where the suite runs with
    HYBRIDGRAPH_JIT=0 (tests that compare with numpy's path switch it per call)."""
    monkeypatch.setenv("HYBRIDGRAPH_JIT", "1")


def _run(jit: bool, x, u, b, pad, residual=None, relu=False):
    n, _, h, wd = x.shape
    out = np.full((n, u.shape[2], h + 2 * pad[0] - 2, wd + 2 * pad[1] - 2), np.nan, np.float32)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HYBRIDGRAPH_JIT", "1" if jit else "0")
        w4.winograd4_forward(np, x, u, b, pad, out, residual, relu)
    return out


@settings(deadline=None)
@given(n=st.integers(1, 3), c=st.integers(1, 40), o=st.integers(1, 40), h=st.integers(3, 13),
       wd=st.integers(3, 13), pad=st.sampled_from([(0, 0), (1, 1), (1, 0), (2, 1)]),
       bias=st.booleans(), residual=st.booleans(), relu=st.booleans(), seed=st.integers(0, 2**16))
def test_compiled_transforms_equal_numpys(n, c, o, h, wd, pad, bias, residual, relu, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, h, wd)).astype(np.float32)
    w = (rng.standard_normal((o, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float32)
    u = w4.weight4(w)
    b = rng.standard_normal(o).astype(np.float32) if bias else None
    shape = (n, o, h + 2 * pad[0] - 2, wd + 2 * pad[1] - 2)
    res = rng.standard_normal(shape).astype(np.float32) if residual else None
    want = _run(False, x, u, b, pad, res, relu)
    got = _run(True, x, u, b, pad, res, relu)
    assert not np.isnan(got).any()                       # every output written, none beyond
    # each path is within ERROR_BOUND x sum(|x| |w|) (+ |b| + |residual|) of the exact result
    mag = _run(False, np.abs(x), w4.weight4(np.abs(w)), None if b is None else np.abs(b), pad,
               None if res is None else np.abs(res))
    assert (np.abs(got - want) <= 2 * w4.ERROR_BOUND * mag + 1e-6).all()
    if relu:
        assert (got >= 0).all()


def test_chunks_do_not_change_the_result(monkeypatch):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 16, 9, 11)).astype(np.float32)
    u = w4.weight4(rng.standard_normal((24, 16, 3, 3)).astype(np.float32))
    whole = _run(True, x, u, None, (1, 1))
    monkeypatch.setattr(w4, "JIT_CHUNK_BYTES", 1)          # one image per chunk
    monkeypatch.setattr(w4, "JIT_MIN_CHUNK_TILES", 1)
    # equal up to the rounding of its 36 GEMMs in another shape (gemm_rounding.py)
    assert_equal_up_to_gemm_rounding(_run(True, x, u, None, (1, 1)), whole)


def test_relu_keeps_nan_as_numpys_maximum(monkeypatch):
    x = np.ones((1, 2, 4, 4), np.float32)
    x[0, 0, 1, 1] = np.nan
    u = w4.weight4(np.ones((3, 2, 3, 3), np.float32))
    got = _run(True, x, u, None, (1, 1), relu=True)
    want = _run(False, x, u, None, (1, 1), relu=True)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got).any()


def test_the_switch_turns_the_kernels_off(monkeypatch):
    monkeypatch.setenv("HYBRIDGRAPH_JIT", "0")
    assert winograd4_jit.kernels() is None and not jit.available()
    monkeypatch.setenv("HYBRIDGRAPH_JIT", "1")
    assert winograd4_jit.kernels() is not None and jit.available()


def test_plans_use_f4x4_with_fewer_tiles_when_compiled_but_not_for_huge_weights(monkeypatch):
    from hybridgraph.nd.registry import get_op
    a = get_op("Convolution").parse_attrs({"kernel": (3, 3), "num_filter": 256, "pad": (1, 1)})
    layer3_b1 = ((1, 256, 14, 14), (256, 256, 3, 3), np.float32, a)      # 16 tiles for 256 channels
    monkeypatch.setenv("HYBRIDGRAPH_JIT", "0")
    assert not w4.use_winograd4(*layer3_b1)
    monkeypatch.setenv("HYBRIDGRAPH_JIT", "1")
    assert w4.use_winograd4(*layer3_b1)
    a512 = get_op("Convolution").parse_attrs({"kernel": (3, 3), "num_filter": 512, "pad": (1, 1)})
    assert not w4.use_winograd4((8, 512, 7, 7), (512, 512, 3, 3), np.float32, a512)  # 38 MB of U


def test_convolutions_outside_plans_run_f4x4_within_its_bound(monkeypatch):
    """With the compiled transforms, conv_forward (eager and training convolutions, and the
    data gradient's flipped convolution) runs 64-128-channel 3x3 layers by F(4x4), the weight
    transformed per call; the result stays within the bound of float64's."""
    from hybridgraph.nd.ops import conv_kernels as ck
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 64, 13, 12)).astype(np.float32)           # 36 tiles
    w = (rng.standard_normal((96, 64, 3, 3)) / 24).astype(np.float32)
    b = rng.standard_normal(96).astype(np.float32)
    geo = ck.Geometry((3, 3), (1, 1), (1, 1), (1, 1), 1)
    monkeypatch.setenv("HYBRIDGRAPH_JIT", "1")
    assert w4.use_winograd4_direct(x, w, geo, None)
    got = ck.conv_forward(np, x, w, b, geo)
    exact = ck.conv_forward(np, x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), geo)
    mag = ck.conv_forward(np, np.abs(x).astype(np.float64), np.abs(w).astype(np.float64),
                          np.abs(b).astype(np.float64), geo)
    assert (np.abs(got - exact) <= w4.ERROR_BOUND * mag).all()
    g = rng.standard_normal(got.shape).astype(np.float32)
    dx = ck.conv_data_grad(np, g, w, x.shape, geo)
    dx_exact = ck.conv_data_grad(np, g.astype(np.float64), w.astype(np.float64), x.shape, geo)
    dx_mag = ck.conv_data_grad(np, np.abs(g).astype(np.float64), np.abs(w).astype(np.float64), x.shape, geo)
    assert (np.abs(dx - dx_exact) <= w4.ERROR_BOUND * dx_mag).all()
    assert not w4.use_winograd4_direct(x, w, geo, finish=lambda dst, where: None)   # epilogues: GEMM paths
    assert not w4.use_winograd4_direct(x[:2], w, geo, None)              # 24 tiles: the transform costs more
    w256 = np.ones((256, 256, 3, 3), np.float32)
    assert w4.use_winograd4_direct(np.ones((8, 256, 14, 14), np.float32), w256, geo, None)      # 128 tiles
    assert not w4.use_winograd4_direct(np.ones((1, 256, 14, 14), np.float32), w256, geo, None)  # 16
    assert not w4.use_winograd4_direct(np.ones((8, 512, 7, 7), np.float32), np.ones((512, 512, 3, 3), np.float32),
                                       geo, None)                                             # U: 38 MB
    monkeypatch.setenv("HYBRIDGRAPH_WINOGRAD4", "0")
    assert not w4.use_winograd4_direct(x, w, geo, None)
    monkeypatch.setenv("HYBRIDGRAPH_WINOGRAD4", "1")
    monkeypatch.setenv("HYBRIDGRAPH_JIT", "0")
    assert not w4.use_winograd4_direct(x, w, geo, None)


def test_a_kernel_build_failure_falls_back_to_numpy_with_a_warning(monkeypatch):
    monkeypatch.setattr(jit, "_built", {})

    def broken():
        raise RuntimeError("LLVM could not start")
    with pytest.warns(RuntimeWarning, match="could not be built .*LLVM could not start.*numpy's paths run"):
        assert jit.kernels("broken", broken) is None
    assert jit.kernels("broken", broken) is None          # once: no second warning, no retry
