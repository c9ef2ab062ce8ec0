"""Pooling and the spatial operators beyond the spec table: conventions, layouts,
tie-breaking, attribute errors and edge cases of UpSampling, BilinearResize2D,
AdaptiveAvgPooling2D, Crop and ROIPooling."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridgraph import nd
from hybridgraph.nd import autograd
from hybridgraph.nd.dispatch import parse_cached
from hybridgraph.nd.errors import AttrError, ShapeError
from hybridgraph.nd.registry import get_op
from tests.nd.specs.pool import pool_ref
from tests.nd.specs.spatial import roi_ref, upsampling_ref

RNG = np.random.default_rng(0)


def _a(op, **attrs):
    return parse_cached(get_op(op), attrs)


def _grad(fn, *xs, head=None):
    arrs = [nd.array(x, dtype=x.dtype) for x in xs]
    for a in arrs:
        a.attach_grad()
    with autograd.record():
        y = fn(*arrs)
    y.backward(None if head is None else nd.array(head, dtype=head.dtype))
    return y.asnumpy(), [a.grad.asnumpy() for a in arrs]


@pytest.mark.parametrize("size, kernel, stride", [(7, 3, 2), (8, 3, 2), (5, 2, 3), (4, 1, 1), (6, 4, 1)])
def test_same_convention_is_ceil_in_over_stride(size, kernel, stride):
    """MXNet 1.9.1 fails shape inference for 'same' (formats.md section 3); here it is TF's SAME."""
    x = RNG.standard_normal((1, 2, size, size))
    for pool_type in ("max", "avg"):
        attrs = {"kernel": (kernel, kernel), "stride": (stride, stride), "pooling_convention": "same",
                 "pool_type": pool_type}
        out = nd.Pooling(nd.array(x, dtype="float64"), **attrs).asnumpy()
        assert out.shape[2:] == (-(-size // stride),) * 2
        np.testing.assert_allclose(out, pool_ref(x, **attrs), rtol=1e-12)


def test_same_convention_rejects_pad():
    with pytest.raises(AttrError, match="same"):
        nd.Pooling(nd.zeros((1, 1, 5)), kernel=(3,), pad=(1,), pooling_convention="same")


def test_lp_needs_p_value():
    with pytest.raises(AttrError, match="p_value"):
        nd.Pooling(nd.zeros((1, 1, 5, 5)), kernel=(2, 2), pool_type="lp")


def test_global_pool_channel_last():
    x = RNG.standard_normal((2, 4, 5, 3)).astype(np.float32)
    out = nd.Pooling(nd.array(x), kernel=(1, 1), global_pool=True, pool_type="avg", layout="NHWC")
    assert out.shape == (2, 1, 1, 3)
    np.testing.assert_allclose(out.asnumpy()[:, 0, 0], x.mean(axis=(1, 2)), rtol=1e-5)


def test_max_pool_gradient_goes_to_the_first_maximum():
    x = np.ones((1, 1, 4, 4), dtype=np.float32)
    _, (g,) = _grad(lambda a: nd.Pooling(a, kernel=(2, 2), stride=(2, 2)), x)
    expect = np.zeros((4, 4), dtype=np.float32)
    expect[::2, ::2] = 1
    np.testing.assert_array_equal(g[0, 0], expect)


def test_avg_pool_count_include_pad():
    x = np.ones((1, 1, 3, 3), dtype=np.float32)
    inc = nd.Pooling(nd.array(x), kernel=(3, 3), pad=(1, 1), pool_type="avg").asnumpy()
    exc = nd.Pooling(nd.array(x), kernel=(3, 3), pad=(1, 1), pool_type="avg", count_include_pad=False).asnumpy()
    assert inc[0, 0, 0, 0] == pytest.approx(4 / 9)
    np.testing.assert_allclose(exc, 1.0)


def test_pool_kernel_too_big():
    with pytest.raises(ShapeError, match="kernel"):
        get_op("Pooling").infer_shape(_a("Pooling", kernel=(5, 5)), (1, 1, 3, 3))


def test_pool_float32_resnet_stem():
    x = RNG.standard_normal((2, 4, 15, 15)).astype(np.float32)
    attrs = {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pool_type": "max"}
    out = nd.Pooling(nd.array(x), **attrs)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.asnumpy(), pool_ref(x.astype(np.float64), **attrs), rtol=1e-6)


# ---------------------------------------------------------------------------
# UpSampling


def test_upsampling_bilinear_creates_weight_shape():
    ins, outs = get_op("UpSampling").infer_shape(
        _a("UpSampling", scale=3, sample_type="bilinear", num_filter=2, num_args=2), (1, 2, 4, 4), None)
    assert ins[1] == (2, 1, 5, 5) and outs == [(1, 2, 12, 12)]


def test_upsampling_nearest_multi_input_and_gradient():
    a, b = RNG.standard_normal((1, 2, 2, 2)), RNG.standard_normal((1, 1, 4, 4))
    head = RNG.standard_normal((1, 3, 4, 4))
    y, (ga, gb) = _grad(lambda u, v: nd.UpSampling(u, v, scale=2, sample_type="nearest"), a, b, head=head)
    np.testing.assert_allclose(y, upsampling_ref(a, b, scale=2, sample_type="nearest"))
    np.testing.assert_allclose(ga, head[:, :2].reshape(1, 2, 2, 2, 2, 2).sum(axis=(3, 5)))
    np.testing.assert_allclose(gb, head[:, 2:])


def test_upsampling_nearest_size_mismatch():
    with pytest.raises(ShapeError, match="divide"):
        nd.UpSampling(nd.zeros((1, 1, 2, 2)), nd.zeros((1, 1, 3, 3)), scale=2, sample_type="nearest")


# ---------------------------------------------------------------------------
# BilinearResize2D, AdaptiveAvgPooling2D, Crop, ROIPooling


def test_resize_like_mode_gives_zero_gradient_to_like():
    x, like = RNG.standard_normal((1, 1, 3, 3)), RNG.standard_normal((1, 1, 5, 4))
    y, (gx, gl) = _grad(lambda u, v: nd._internal._contrib_BilinearResize2D(u, v, mode="like"), x, like)
    assert y.shape == (1, 1, 5, 4)
    np.testing.assert_allclose(gl, 0)
    np.testing.assert_allclose(gx.sum(), y.size, rtol=1e-12)  # bilinear weights sum to 1 per output


def test_resize_same_size_is_identity():
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    out = nd._internal._contrib_BilinearResize2D(nd.array(x), height=4, width=5, align_corners=False)
    np.testing.assert_array_equal(out.asnumpy(), x)


def test_adaptive_pooling_global_and_single_int():
    x = RNG.standard_normal((2, 3, 5, 7))
    out = nd._internal._contrib_AdaptiveAvgPooling2D(nd.array(x, dtype="float64")).asnumpy()
    np.testing.assert_allclose(out[..., 0, 0], x.mean(axis=(2, 3)))
    assert nd._internal._contrib_AdaptiveAvgPooling2D(nd.zeros((1, 1, 6, 6)), output_size=4).shape == (1, 1, 4, 4)


def test_crop_errors():
    with pytest.raises(ShapeError, match="offset"):
        nd.Crop(nd.zeros((1, 2, 5, 6)), h_w=(2, 3), offset=(4, 2))
    with pytest.raises(AttrError, match="h_w"):
        nd.Crop(nd.zeros((1, 2, 5, 6)))


def test_crop_center_and_like():
    x = np.arange(60, dtype=np.float32).reshape(1, 2, 5, 6)
    np.testing.assert_array_equal(nd.Crop(nd.array(x), h_w=(3, 3), center_crop=True).asnumpy(), x[:, :, 1:4, 1:4])
    like = nd.zeros((1, 1, 2, 4))
    np.testing.assert_array_equal(nd.Crop(nd.array(x), like, center_crop=True).asnumpy(), x[:, :, 1:3, 1:5])


def test_roi_pooling_docstring_example_and_empty_bins():
    x = np.arange(48, dtype=np.float32).reshape(1, 1, 8, 6)
    rois = np.array([[0, 0, 0, 4, 4]], dtype=np.float32)
    out = nd.ROIPooling(nd.array(x), nd.array(rois), pooled_size=(2, 2), spatial_scale=1.0)
    np.testing.assert_array_equal(out.asnumpy()[0, 0], [[14, 16], [26, 28]])
    out = nd.ROIPooling(nd.array(x), nd.array(rois), pooled_size=(2, 2), spatial_scale=0.7)
    np.testing.assert_array_equal(out.asnumpy()[0, 0], [[7, 9], [19, 21]])
    # a region outside the map: every bin is empty -> 0, and no gradient flows
    far = np.array([[0, 20, 20, 30, 30]], dtype=np.float32)
    y, (gx, gr) = _grad(lambda d, r: nd.ROIPooling(d, r, pooled_size=(2, 2), spatial_scale=1.0), x, far)
    np.testing.assert_array_equal(y, 0)
    np.testing.assert_array_equal(gx, 0)
    np.testing.assert_array_equal(gr, 0)


def test_roi_pooling_hidden_argmax_output():
    x = RNG.permutation(2 * 3 * 6 * 6).reshape(2, 3, 6, 6).astype(np.float32)
    rois = np.array([[1, 0.4, 1.6, 4.5, 5.2], [0, 2, 2, 2, 2]], dtype=np.float32)
    op = get_op("ROIPooling")
    out, idx = op.compute(np, _a("ROIPooling", pooled_size=(3, 2), spatial_scale=1.0), [x, rois])
    want_out, want_idx = roi_ref(x.astype(np.float64), rois, pooled_size=(3, 2), spatial_scale=1.0)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(idx, want_idx)


def test_same_convention_accepts_zero_pad_of_any_length():
    # MXNet 1.9.1 checks only that pad is zeros: (0, 0, 0) with a 1-D kernel is fine
    x = nd.array(np.arange(10.0).reshape(1, 1, 10))
    out = nd.Pooling(x, kernel=(2,), stride=(2,), pad=(0, 0, 0), pooling_convention="same")
    assert out.shape == (1, 1, 5)
    with pytest.raises(AttrError, match="disables the pad"):
        nd.Pooling(x, kernel=(2,), stride=(2,), pad=(2,), pooling_convention="same")


def test_max_window_wholly_in_padding_gives_lowest_finite_value():
    """MXNet 1.9.1 starts a max at the lowest finite value: a 'full'-convention window that lies
    in the padding only gives -FLT_MAX (not -inf) and passes no gradient."""
    x = nd.array(np.arange(9.0).reshape(1, 1, 3, 3) * 0.37 - 0.9)
    x.attach_grad()
    with autograd.record():
        y = nd.Pooling(x, pool_type="max", kernel=(1, 2), stride=(2, 2), pooling_convention="full", pad=(0, 1))
    y.backward(nd.ones_like(y))
    np.testing.assert_allclose(y.asnumpy()[0, 0], [[-0.9, -0.16, np.finfo(np.float32).min],
                                                   [1.32, 2.06, np.finfo(np.float32).min]], rtol=1e-6)
    np.testing.assert_array_equal(x.grad.asnumpy()[0, 0], [[1, 0, 1], [0, 0, 0], [1, 0, 1]])


# -- max pooling whose windows tile the input: the direct backward (pool._tiled_max_backward) --

def _first_max_grad(x: np.ndarray, g: np.ndarray, kernel: tuple) -> np.ndarray:
    """Loop reference: each window's gradient goes to its first maximum in row-major order."""
    dx = np.zeros_like(x)
    kh, kw = kernel
    for n, c, i, j in np.ndindex(*g.shape):
        win = x[n, c, i * kh:(i + 1) * kh, j * kw:(j + 1) * kw]
        a, b = np.unravel_index(int(np.argmax(win)), win.shape)
        dx[n, c, i * kh + a, j * kw + b] = g[n, c, i, j]
    return dx


@settings(deadline=None, max_examples=30)
@given(kernel=st.sampled_from([(2, 2), (3, 3), (2, 3), (1, 2)]), out=st.tuples(st.integers(1, 4), st.integers(1, 4)),
       ties=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_tiled_max_pool_gradient_goes_to_the_first_maximum(kernel, out, ties, seed):
    """Property: the direct path (stride = kernel, no padding) equals the loop reference and
    the general phase path, ties included (integer-valued data makes many)."""
    from hybridgraph.nd.ops import pool
    rng = np.random.default_rng(seed)
    shape = (2, 3, out[0] * kernel[0], out[1] * kernel[1])
    x = (rng.integers(0, 3, shape) if ties else rng.standard_normal(shape)).astype(np.float32)
    a = _a("Pooling", kernel=kernel, stride=kernel, pool_type="max")
    geo = pool.pool_geometry(a, shape[2:])
    assert pool._tiles_input(geo)
    y = pool.pool_forward(np, a, x, geo)
    y = y[0] if isinstance(y, tuple) else y
    g = rng.standard_normal(y.shape).astype(np.float32)
    got = pool.pool_backward(np, a, g, x, y, geo)
    np.testing.assert_array_equal(got, _first_max_grad(x, g, kernel))
    try:
        pool._tiles_input, saved = (lambda geo: False), pool._tiles_input
        general = pool.pool_backward(np, a, g, x, y, geo)
    finally:
        pool._tiles_input = saved
    np.testing.assert_array_equal(got, general)


def test_untiled_windows_take_the_general_path():
    from hybridgraph.nd.ops import pool
    for attrs, shape in (({"kernel": (2, 2), "stride": (1, 1)}, (4, 4)), ({"kernel": (2, 2), "stride": (2, 2),
                         "pad": (1, 1)}, (4, 4)), ({"kernel": (2, 2), "stride": (2, 2)}, (5, 4))):
        geo = pool.pool_geometry(_a("Pooling", pool_type="max", **attrs), shape)
        assert not pool._tiles_input(geo)
