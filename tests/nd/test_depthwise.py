"""The phase-grid depthwise kernels (nd/ops/depthwise.py) against the direct reference
(forward) and the generic strided-slice depthwise kernels (gradients), over strides,
dilations, paddings, odd and even sizes, 1-D, chunking and both float dtypes."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from hybridgraph.nd.ops import conv_kernels as ck, depthwise as dw
from tests.nd.specs.conv import conv_ref


def _geo(kernel, stride, pad, dilate, groups) -> ck.Geometry:
    return ck.Geometry(tuple(kernel), tuple(stride), tuple(dilate), tuple(pad), groups)


def _case(seed: int, n: int, c: int, sp: tuple, kernel: tuple, dtype=np.float64):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, *sp)).astype(dtype)
    w = rng.standard_normal((c, 1, *kernel)).astype(dtype)
    b = rng.standard_normal(c).astype(dtype)
    return rng, x, w, b


CASES = [  # (spatial, kernel, stride, pad, dilate)
    ((7, 7), (3, 3), (1, 1), (1, 1), (1, 1)),
    ((8, 8), (3, 3), (2, 2), (1, 1), (1, 1)),
    ((7, 9), (3, 3), (2, 2), (1, 1), (1, 1)),
    ((9, 6), (3, 3), (1, 2), (0, 2), (1, 1)),
    ((10, 11), (3, 3), (3, 2), (2, 1), (2, 1)),
    ((6, 6), (5, 5), (1, 1), (2, 2), (1, 1)),
    ((5, 7), (2, 4), (2, 1), (0, 1), (1, 2)),
    ((1, 1), (3, 3), (1, 1), (1, 1), (1, 1)),
    ((2, 3), (3, 3), (2, 2), (1, 1), (1, 1)),
    ((9,), (3,), (2,), (1,), (1,)),
    ((12,), (3,), (1,), (2,), (3,)),
]


@pytest.mark.parametrize("sp,kernel,stride,pad,dilate", CASES)
@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-4), (np.float64, 1e-10)])
def test_forward_matches_reference(sp, kernel, stride, pad, dilate, dtype, tol):
    _, x, w, b = _case(0, 3, 5, sp, kernel, dtype)
    geo = _geo(kernel, stride, pad, dilate, 5)
    assert dw.supports(geo, x.shape, w.shape)
    want = conv_ref(x, w, b, kernel=kernel, num_filter=5, stride=stride, pad=pad, dilate=dilate, num_group=5)
    got = ck.conv_forward(np, x, w, b, geo)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(ck.conv_forward(np, x, w, None, geo),
                               want - b.reshape((1, -1) + (1,) * len(sp)), rtol=tol, atol=tol)


@pytest.mark.parametrize("sp,kernel,stride,pad,dilate", CASES)
def test_gradients_match_the_generic_kernels(sp, kernel, stride, pad, dilate):
    rng, x, w, _ = _case(1, 2, 4, sp, kernel)
    geo = _geo(kernel, stride, pad, dilate, 4)
    g = rng.standard_normal((2, 4, *geo.out_size(sp)))
    np.testing.assert_allclose(ck.conv_data_grad(np, g, w, x.shape, geo),
                               ck._depthwise_data_grad(np, g, w, x.shape, geo), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(ck.conv_weight_grad(np, g, x, w.shape, geo),
                               ck._depthwise_weight_grad(np, g, x, w.shape, geo), rtol=1e-10, atol=1e-10)


def test_chunks_one_plane_at_a_time(monkeypatch):
    """Many chunks reuse one phase grid: its padding must stay zero, every chunk right."""
    monkeypatch.setattr(dw, "DW_CHUNK_BYTES", 1)
    rng, x, w, b = _case(2, 3, 4, (7, 6), (3, 3))
    geo = _geo((3, 3), (2, 2), (1, 1), (1, 1), 4)
    out = np.full((3, 4, 4, 3), np.nan)
    ck.conv_forward(np, x, w, b, geo, out=out)
    want = conv_ref(x, w, b, kernel=(3, 3), num_filter=4, stride=(2, 2), pad=(1, 1), num_group=4)
    np.testing.assert_allclose(out, want, rtol=1e-10, atol=1e-10)
    g = rng.standard_normal(out.shape)
    np.testing.assert_allclose(dw.depthwise_data_grad(np, g, w, x.shape, geo),
                               ck._depthwise_data_grad(np, g, w, x.shape, geo), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dw.depthwise_weight_grad(np, g, x, w.shape, geo),
                               ck._depthwise_weight_grad(np, g, x, w.shape, geo), rtol=1e-10, atol=1e-10)


def test_not_used_with_a_channel_multiplier_or_in_3d():
    assert not dw.supports(_geo((3, 3), (1, 1), (1, 1), (1, 1), 4), (1, 4, 5, 5), (8, 1, 3, 3))
    assert not dw.supports(_geo((3, 3, 3), (1,) * 3, (1,) * 3, (1,) * 3, 4), (1, 4, 5, 5, 5), (4, 1, 3, 3, 3))
    assert not dw.supports(_geo((3, 3), (1, 1), (1, 1), (1, 1), 1), (1, 1, 5, 5), (1, 1, 3, 3))


@given(h=st.integers(1, 9), w_=st.integers(1, 9), k=st.integers(1, 4), s=st.integers(1, 3),
       p=st.integers(0, 2), d=st.integers(1, 2), seed=st.integers(0, 99))
def test_forward_and_adjoint_property(h, w_, k, s, p, d, seed):
    """Forward equals the reference; <conv(x), g> = <x, data_grad(g)> = <w, weight_grad(g)>."""
    ext = d * (k - 1) + 1
    if ext > min(h, w_) + 2 * p:
        return
    rng, x, w, _ = _case(seed, 2, 3, (h, w_), (k, k))
    geo = _geo((k, k), (s, s), (p, p), (d, d), 3)
    y = ck.conv_forward(np, x, w, None, geo)
    want = conv_ref(x, w, None, kernel=(k, k), num_filter=3, stride=(s, s), pad=(p, p), dilate=(d, d),
                    num_group=3)
    np.testing.assert_allclose(y, want, rtol=1e-10, atol=1e-10)
    g = rng.standard_normal(y.shape)
    inner = float((y * g).sum())
    assert np.isclose(inner, float((x * dw.depthwise_data_grad(np, g, w, x.shape, geo)).sum()), rtol=1e-9)
    assert np.isclose(inner, float((w * dw.depthwise_weight_grad(np, g, x, w.shape, geo)).sum()), rtol=1e-9)
