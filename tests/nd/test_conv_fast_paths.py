"""The convolution fast paths against the direct reference: Winograd F(2x2, 3x3) (forced on
small shapes), its weight transform, the stride-phase im2col gather and the chunked im2col
forward with reused buffers."""
from __future__ import annotations

import numpy as np
import pytest

from hybridgraph.nd.ops import blas, conv_kernels as ck, winograd
from tests.nd.specs.conv import conv_ref


def _geo(kernel, stride=None, pad=None, dilate=None, groups=1) -> ck.Geometry:
    n = len(kernel)
    return ck.Geometry(tuple(kernel), tuple(stride or (1,) * n), tuple(dilate or (1,) * n),
                       tuple(pad or (0,) * n), groups)


def _case(rng, n, c, o, sp, k, dtype):
    x = rng.standard_normal((n, c, *sp)).astype(dtype)
    w = rng.standard_normal((o, c, *k)).astype(dtype)
    b = rng.standard_normal(o).astype(dtype)
    return x, w, b


@pytest.fixture
def force_winograd(monkeypatch):
    monkeypatch.setattr(winograd, "WINO_MIN_CHANNELS", 1)
    monkeypatch.setattr(winograd, "WINO_MIN_TILES_PER_CHANNEL", 0)


@pytest.mark.parametrize("sp,pad", [((6, 6), 1), ((7, 5), 1), ((5, 8), 0), ((4, 3), 2), ((1, 1), 1)])
@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-4), (np.float64, 1e-10)])
@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.usefixtures("force_winograd")
def test_winograd_matches_reference(sp, pad, dtype, tol, with_bias):
    rng = np.random.default_rng(0)
    x, w, b = _case(rng, 3, 5, 4, sp, (3, 3), dtype)
    b = b if with_bias else None
    geo = _geo((3, 3), pad=(pad, pad))
    assert winograd.use_winograd(x, w, geo.kernel, geo.stride, geo.dilate, geo.groups, geo.out_size(sp))
    got = ck.conv_forward(np, x, w, b, geo)
    want = conv_ref(x, w, b, kernel=(3, 3), num_filter=4, pad=(pad, pad))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    assert got.dtype == dtype


@pytest.mark.usefixtures("force_winograd")
def test_winograd_chunks_and_out_buffer(monkeypatch):
    """Several chunks of images, written into a given output buffer."""
    monkeypatch.setattr(winograd, "WINO_MIN_CHUNK_TILES", 1)
    monkeypatch.setattr(winograd, "WINO_CHUNK_BYTES", 1)
    rng = np.random.default_rng(1)
    x, w, b = _case(rng, 5, 6, 7, (9, 10), (3, 3), np.float64)
    geo = _geo((3, 3), pad=(1, 1))
    out = np.full((5, 7, 9, 10), np.nan)
    assert ck.conv_forward(np, x, w, b, geo, out=out) is out
    np.testing.assert_allclose(out, conv_ref(x, w, b, kernel=(3, 3), num_filter=7, pad=(1, 1)), rtol=1e-10)


def test_winograd_weight_is_g_w_gt():
    rng = np.random.default_rng(2)
    w = rng.standard_normal((4, 3, 3, 3))
    u = winograd.winograd_weight(np, w)                        # (16, O, C)
    want = np.einsum("ik,ockl,jl->ijoc", winograd.WINO_G, w, winograd.WINO_G).reshape(16, 4, 3)
    np.testing.assert_allclose(u, want, rtol=1e-12)


def test_winograd_is_not_used_where_it_does_not_fit():
    x = np.zeros((8, 128, 28, 28), np.float32)
    w = np.zeros((128, 128, 3, 3), np.float32)
    assert winograd.use_winograd(x, w, (3, 3), (1, 1), (1, 1), 1, (28, 28))
    assert not winograd.use_winograd(x, w, (3, 3), (2, 2), (1, 1), 1, (14, 14))
    assert not winograd.use_winograd(x, w, (3, 3), (1, 1), (2, 2), 1, (26, 26))
    assert not winograd.use_winograd(x.astype(np.float16), w.astype(np.float16), (3, 3), (1, 1), (1, 1), 1,
                                     (28, 28))
    few_tiles = np.zeros((1, 512, 7, 7), np.float32)
    assert not winograd.use_winograd(few_tiles, np.zeros((512, 512, 3, 3), np.float32), (3, 3), (1, 1),
                                     (1, 1), 1, (7, 7))


def _window_cols(x, geo, out_sp):
    """The plain window copy that _gather_by_phase replaces."""
    nsp = len(geo.kernel)
    xpad = ck.pad_spatial(np, x, geo.pad, geo.pad)
    win = ck.window_view(np, xpad, out_sp, geo.kernel, geo.stride, geo.dilate)
    cols = np.ascontiguousarray(win.transpose((1, *range(2 + nsp, 2 + 2 * nsp), 0, *range(2, 2 + nsp))))
    return cols.reshape(geo.groups, -1, x.shape[0] * ck.prod(out_sp))


@pytest.mark.parametrize("sp,kernel,stride,pad", [
    ((23, 20), (7, 7), (2, 2), (3, 3)),
    ((11, 12), (5, 4), (2, 2), (1, 2)),
    ((17,), (12,), (3,), (0,)),
    ((7, 6, 8), (4, 4, 4), (2, 1, 2), (1, 0, 2)),
])
def test_phase_gather_equals_the_window_copy(sp, kernel, stride, pad):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, *sp))
    geo = _geo(kernel, stride, pad)
    assert ck._phase_gather_pays(geo)
    out_sp = geo.out_size(sp)
    buf = np.full(3 * ck.prod(kernel) * 2 * ck.prod(out_sp) + 5, np.nan)
    np.testing.assert_array_equal(ck._im2col(np, x, geo, out_sp, buf), _window_cols(x, geo, out_sp))


@pytest.mark.parametrize("kernel,stride,pad,groups", [((7, 7), (2, 2), (3, 3), 1), ((3, 3), (2, 2), (1, 1), 2)])
def test_chunked_im2col_forward_matches_reference(monkeypatch, kernel, stride, pad, groups):
    """One image per chunk (a ragged last chunk), buffers reused across chunks."""
    monkeypatch.setattr(blas, "CHUNK_BYTES", 1)
    rng = np.random.default_rng(4)
    x, w, b = _case(rng, 3, 4, 6, (13, 11), kernel, np.float64)
    w = w[:, :4 // groups]
    got = ck.conv_forward(np, x, np.ascontiguousarray(w), b, _geo(kernel, stride, pad, groups=groups))
    want = conv_ref(x, w, b, kernel=kernel, num_filter=6, stride=stride, pad=pad, num_group=groups)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
