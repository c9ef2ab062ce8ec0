"""The weight gradient by Winograd F(4x4, 3x3) (winograd4.winograd4_weight_grad, the optional
[jit] extra): within its measured error bound of float64's on ResNet-18's channel counts and
adversarial data, for any shape, padding and chunking; used by conv_weight_grad (and so by
training) only where it fits and pays, and off with either switch."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridgraph.nd.ops import conv_kernels as ck
from hybridgraph.nd.ops import winograd4 as w4

pytest.importorskip("numba", reason="the optional [jit] extra (numba) is not installed")

RNG = np.random.default_rng(9)


@pytest.fixture(autouse=True)
def compiled(monkeypatch):
    monkeypatch.setenv("HYBRIDGRAPH_JIT", "1")
    monkeypatch.setenv("HYBRIDGRAPH_WINOGRAD4", "1")


def _geo(pad) -> ck.Geometry:
    return ck.Geometry((3, 3), (1, 1), (1, 1), tuple(pad), 1)


def _relative_error(x, g, pad) -> float:
    """max |winograd - exact| / sum(|x| * |g|) over each weight entry's products (float64)."""
    geo, wshape = _geo(pad), (g.shape[1], x.shape[1], 3, 3)
    got = w4.winograd4_weight_grad(x, g, pad)
    assert got.shape == wshape and got.dtype == np.float32
    exact = ck.conv_weight_grad(np, g.astype(np.float64), x.astype(np.float64), wshape, geo)
    mag = ck.conv_weight_grad(np, np.abs(g).astype(np.float64), np.abs(x).astype(np.float64), wshape, geo)
    return float((np.abs(got - exact) / np.maximum(mag, 1e-300)).max())


def _data(shape, kind: str):
    a = RNG.standard_normal(shape)
    if kind == "positive":          # no cancellation between terms: the transforms' worst case
        a = np.abs(a)
    elif kind == "wide-range":      # magnitudes over six orders
        a = a * 10.0 ** RNG.uniform(-3, 3, shape)
    return a.astype(np.float32)


# ResNet-18's 3x3 stride-1 channel counts up to WEIGHT_GRAD_MAX_PAIRS, at reduced map sizes,
# plus partial tiles, no padding and unequal channels
@pytest.mark.parametrize("c,o,hw,pad,n", [(64, 64, 16, 1, 4), (128, 128, 12, 1, 4), (256, 256, 8, 1, 4),
                                          (48, 40, 9, 0, 3), (33, 64, 11, 1, 2)])
@pytest.mark.parametrize("kinds", [("normal", "normal"), ("positive", "positive"), ("wide-range", "normal"),
                                   ("wide-range", "wide-range")])
def test_the_error_bound_holds_against_float64(c, o, hw, pad, n, kinds):
    x = _data((n, c, hw, hw), kinds[0])
    g = _data((n, o, hw + 2 * pad - 2, hw + 2 * pad - 2), kinds[1])
    err = _relative_error(x, g, (pad, pad))
    assert err <= w4.WEIGHT_GRAD_ERROR_BOUND, \
        f"relative error {err:.2e} exceeds the bound {w4.WEIGHT_GRAD_ERROR_BOUND:.0e}"


@settings(deadline=None, max_examples=40)
@given(n=st.integers(1, 3), c=st.integers(1, 12), o=st.integers(1, 12), h=st.integers(3, 14),
       wd=st.integers(3, 14), pad=st.sampled_from([(0, 0), (1, 1), (1, 0), (2, 1)]),
       chunk_tiles=st.sampled_from([1, 5, 392]), seed=st.integers(0, 2**16))
def test_any_shape_padding_and_chunking_is_within_the_bound(n, c, o, h, wd, pad, chunk_tiles, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, h, wd)).astype(np.float32)
    g = rng.standard_normal((n, o, h + 2 * pad[0] - 2, wd + 2 * pad[1] - 2)).astype(np.float32)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(w4, "WEIGHT_GRAD_MIN_CHUNK_TILES", chunk_tiles)
        assert _relative_error(x, g, pad) <= w4.WEIGHT_GRAD_ERROR_BOUND


def test_conv_weight_grad_uses_it_where_it_fits_and_pays(monkeypatch):
    geo = _geo((1, 1))
    x = np.ones((8, 64, 56, 56), np.float32)
    g = np.ones((8, 64, 56, 56), np.float32)
    assert w4.use_winograd4_weight_grad(x, g, geo)                          # ResNet-18 layer 1, batch 8
    x3, g3 = np.ones((8, 256, 14, 14), np.float32), np.ones((8, 256, 14, 14), np.float32)
    assert w4.use_winograd4_weight_grad(x3, g3, geo)                         # layer 3: 128 tiles
    assert not w4.use_winograd4_weight_grad(x3[:1], g3[:1], geo)            # 16 tiles for 256 channels
    x4, g4 = np.ones((8, 512, 7, 7), np.float32), np.ones((8, 512, 7, 7), np.float32)
    assert not w4.use_winograd4_weight_grad(x4, g4, geo)                     # dU would be 38 MB
    assert not w4.use_winograd4_weight_grad(x.astype(np.float64), g.astype(np.float64), geo)
    assert not w4.use_winograd4_weight_grad(x, g[:, :, ::2, ::2], ck.Geometry((3, 3), (2, 2), (1, 1), (1, 1), 1))
    assert not w4.use_winograd4_weight_grad(x, g, ck.Geometry((3, 3), (1, 1), (1, 1), (1, 1), 2))
    monkeypatch.setenv("HYBRIDGRAPH_WINOGRAD4", "0")
    assert not w4.use_winograd4_weight_grad(x, g, geo)
    monkeypatch.setenv("HYBRIDGRAPH_WINOGRAD4", "1")
    monkeypatch.setenv("HYBRIDGRAPH_JIT", "0")
    assert not w4.use_winograd4_weight_grad(x, g, geo)


def test_training_gradients_take_it_within_the_bound(monkeypatch):
    """A float32 Conv2D's weight gradient through autograd (the registry's backward kernel)
    is F(4x4)'s, within the bound of float64's, and the switch gives im2col's back."""
    from hybridgraph import autograd, nd
    from hybridgraph.gluon import nn
    calls = []
    real = w4.winograd4_weight_grad
    monkeypatch.setattr(w4, "winograd4_weight_grad", lambda *a: calls.append(1) or real(*a))
    x = _data((2, 32, 12, 12), "normal")
    g = _data((2, 40, 12, 12), "normal")
    conv = nn.Conv2D(40, 3, padding=1, in_channels=32, use_bias=False)
    conv.initialize()

    def weight_grad():
        xd = nd.array(x)
        with autograd.record():
            y = conv(xd)
        y.backward(nd.array(g))
        return conv.weight.grad().asnumpy()
    got = weight_grad()
    assert calls, "conv_weight_grad did not take F(4x4)"
    wshape = (40, 32, 3, 3)
    exact = ck.conv_weight_grad(np, g.astype(np.float64), x.astype(np.float64), wshape, _geo((1, 1)))
    mag = ck.conv_weight_grad(np, np.abs(g).astype(np.float64), np.abs(x).astype(np.float64), wshape, _geo((1, 1)))
    assert (np.abs(got - exact) <= w4.WEIGHT_GRAD_ERROR_BOUND * mag).all()
    monkeypatch.setenv("HYBRIDGRAPH_WINOGRAD4", "0")
    calls.clear()
    np.testing.assert_allclose(weight_grad(), exact, rtol=1e-4, atol=1e-4)
    assert not calls
