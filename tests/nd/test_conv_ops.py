"""Convolution / Deconvolution beyond the spec table: shape inference both ways,
layouts, attribute handling, adjointness, second-order gradients and errors."""
from __future__ import annotations

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph.nd import autograd
from hybridgraph.nd.dispatch import parse_cached
from hybridgraph.nd.errors import AttrError, ShapeError
from hybridgraph.nd.registry import get_op
from tests.nd.specs.conv import conv_ref, deconv_ref

RNG = np.random.default_rng(0)


def _a(op, **attrs):
    return parse_cached(get_op(op), attrs)


def _rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def test_conv_infers_weight_and_bias_from_data():
    op = get_op("Convolution")
    ins, outs = op.infer_shape(_a("Convolution", kernel=(3, 3), num_filter=8, num_group=2, pad=(1, 1),
                                  stride=(2, 2)), (4, 6, 9, 9), None, None)
    assert ins == [(4, 6, 9, 9), (8, 3, 3, 3), (8,)]
    assert outs == [(4, 8, 5, 5)]


def test_conv_infers_data_channels_from_weight():
    op = get_op("Convolution")
    ins, outs = op.infer_shape(_a("Convolution", kernel=(3,), num_filter=4, no_bias=True), (2, 0, 7), (4, 5, 3))
    assert ins[0] == (2, 5, 7) and outs == [(2, 4, 5)]


def test_conv_channel_last_layout_shapes():
    op = get_op("Convolution")
    ins, outs = op.infer_shape(_a("Convolution", kernel=(3, 3), num_filter=4, layout="NHWC"), (2, 7, 7, 3),
                               None, None)
    assert ins[1] == (4, 3, 3, 3) and outs == [(2, 5, 5, 4)]


def test_conv_wrong_weight_shape_names_the_input():
    with pytest.raises(ShapeError, match="weight"):
        nd.Convolution(nd.array(_rand(1, 3, 5, 5)), nd.array(_rand(4, 2, 3, 3)), kernel=(3, 3), num_filter=4,
                       no_bias=True)


@pytest.mark.parametrize("attrs, err", [
    ({"kernel": (3, 3), "num_filter": 3, "num_group": 2}, AttrError),     # filters not divisible by groups
    ({"kernel": (3, 3), "num_filter": 4, "stride": (1,)}, AttrError),     # stride rank != kernel rank
    ({"kernel": (9, 9), "num_filter": 4}, ShapeError),                    # kernel exceeds input
    ({"kernel": (3,), "num_filter": 4}, ShapeError),                      # 1-D kernel on 4-D data
    ({"kernel": (3, 3), "num_filter": 4, "layout": "NCW"}, ShapeError),   # layout for another rank
])
def test_conv_bad_attributes(attrs, err):
    with pytest.raises(err):
        get_op("Convolution").infer_shape(_a("Convolution", **attrs), (1, 4, 5, 5), None, None)


def test_ignored_attributes_round_trip():
    a = _a("Convolution", kernel="(3, 3)", num_filter="4", workspace="2048", cudnn_tune="fastest",
           cudnn_off="True")
    assert a.given == {"kernel": "(3, 3)", "num_filter": "4", "workspace": "2048", "cudnn_tune": "fastest",
                       "cudnn_off": "True"}
    x, w = _rand(1, 2, 5, 5), _rand(4, 2, 3, 3)
    out = nd.Convolution(nd.array(x), nd.array(w), kernel=(3, 3), num_filter=4, no_bias=True, workspace=2048,
                         cudnn_tune="fastest", cudnn_off=True)
    np.testing.assert_allclose(out.asnumpy(), conv_ref(x, w, kernel=(3, 3), num_filter=4), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kernel, stride, pad, groups", [((3, 3), (1, 1), (1, 1), 1), ((3, 3), (2, 2), (1, 1), 4),
                                                        ((1, 1), (2, 2), (0, 0), 1), ((7, 7), (2, 2), (3, 3), 1)])
def test_conv_float32_matches_reference(kernel, stride, pad, groups):
    x, w, b = _rand(2, 8, 11, 11), _rand(8, 8 // groups, *kernel), _rand(8)
    attrs = {"kernel": kernel, "stride": stride, "pad": pad, "num_filter": 8, "num_group": groups}
    out = nd.Convolution(nd.array(x), nd.array(w), nd.array(b), **attrs)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.asnumpy(), conv_ref(x, w, b, **attrs), rtol=1e-4, atol=1e-4)


def test_nhwc_equals_nchw():
    x, w = _rand(2, 3, 6, 6), _rand(4, 3, 3, 3)
    nchw = nd.Convolution(nd.array(x), nd.array(w), kernel=(3, 3), num_filter=4, no_bias=True, pad=(1, 1))
    nhwc = nd.Convolution(nd.array(x.transpose(0, 2, 3, 1)), nd.array(w.transpose(0, 2, 3, 1)), kernel=(3, 3),
                          num_filter=4, no_bias=True, pad=(1, 1), layout="NHWC")
    np.testing.assert_allclose(nhwc.asnumpy(), nchw.asnumpy().transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)


def test_deconvolution_defaults_to_no_bias():
    assert get_op("Deconvolution").schema.attrs["no_bias"].default is True
    x, w = _rand(1, 2, 3, 3), _rand(2, 3, 2, 2)
    out = nd.Deconvolution(nd.array(x), nd.array(w), kernel=(2, 2), num_filter=3, stride=(2, 2))
    assert out.shape == (1, 3, 6, 6)
    np.testing.assert_allclose(out.asnumpy(), deconv_ref(x, w, kernel=(2, 2), num_filter=3, stride=(2, 2)),
                               rtol=1e-5, atol=1e-5)


def test_deconvolution_is_the_adjoint_of_convolution():
    attrs = {"kernel": (3, 2), "stride": (2, 1), "pad": (1, 0), "dilate": (1, 2), "num_group": 2}
    x, w = RNG.standard_normal((2, 4, 7, 6)), RNG.standard_normal((6, 2, 3, 2))
    xa, wa = nd.array(x, dtype="float64"), nd.array(w, dtype="float64")
    y = nd.Convolution(xa, wa, num_filter=6, no_bias=True, **attrs).asnumpy()
    g = RNG.standard_normal(y.shape)
    back = nd.Deconvolution(nd.array(g, dtype="float64"), wa, num_filter=4, adj=(0, 0),
                            target_shape=(7, 6), **attrs).asnumpy()
    assert back.shape == x.shape
    np.testing.assert_allclose((y * g).sum(), (x * back).sum(), rtol=1e-10)


def test_deconvolution_target_shape_and_adj_errors():
    op = get_op("Deconvolution")
    with pytest.raises(AttrError, match="adj"):
        op.infer_shape(_a("Deconvolution", kernel=(3,), num_filter=2, adj=(2,), stride=(2,)), (1, 2, 4), None)
    with pytest.raises(ShapeError, match="target_shape"):
        op.infer_shape(_a("Deconvolution", kernel=(3,), num_filter=2, target_shape=(20,)), (1, 2, 4), None)


def test_conv_second_order_gradient():
    """d/dx of sum(d conv/d w) -- runs _backward_Convolution's own gradient rule."""
    x = nd.array(RNG.standard_normal((1, 2, 5, 5)), dtype="float64")
    w = nd.array(RNG.standard_normal((3, 2, 3, 3)), dtype="float64")
    x.attach_grad()
    w.attach_grad()
    with autograd.record():
        y = nd.Convolution(x, w, kernel=(3, 3), num_filter=3, no_bias=True)
        (gw,) = autograd.grad(nd.sum(y * y), [w], create_graph=True, retain_graph=True)
        z = nd.sum(gw * gw)
    z.backward()

    def f(xv):
        yv = conv_ref(xv, w.asnumpy(), kernel=(3, 3), num_filter=3)
        gwv = np.zeros_like(w.asnumpy())
        for o in range(3):  # d sum(y^2)/dw = sum 2*y*patch
            for c in range(2):
                for i in range(3):
                    for j in range(3):
                        gwv[o, c, i, j] = (2 * yv[0, o] * xv[0, c, i:i + 3, j:j + 3]).sum()
        return (gwv ** 2).sum()
    d = RNG.standard_normal(x.shape)
    eps = 1e-6
    numeric = (f(x.asnumpy() + eps * d) - f(x.asnumpy() - eps * d)) / (2 * eps)
    np.testing.assert_allclose((x.grad.asnumpy() * d).sum(), numeric, rtol=1e-5)
