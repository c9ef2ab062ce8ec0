"""gluon.contrib.cnn.DeformableConvolution and ModulatedDeformableConvolution: MXNet 1.9.1's parameter
names, order, shapes and printed forms (read from real MXNet), a fresh layer (zero offsets) equal to
Conv2D, hybridized equal to eager, and v2's output equal to MXNet's (tests/data/modulated_deformable_conv_ref.npz
from tests/data/gen_modulated_deformable_conv_ref.py)."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import autograd, nd
from hybridgraph.gluon import nn
from hybridgraph.gluon.contrib import cnn


@pytest.mark.parametrize("kwargs, names, text", [
    ({"kernel_size": (3, 3), "padding": 1}, ["deformable_conv_bias", "deformable_conv_weight", "offset_bias",
                                             "offset_weight"],
     "DeformableConvolution(4 -> 6, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))"),
    ({"kernel_size": (3, 2), "num_deformable_group": 2, "activation": "relu", "use_bias": False, "groups": 2},
     ["deformable_conv_weight", "offset_bias", "offset_weight"],
     "DeformableConvolution(2 -> 6, kernel_size=(3, 2), stride=(1, 1), groups=2, bias=False, Activation(relu))"),
    ({"kernel_size": 3, "offset_use_bias": False, "strides": 2, "dilation": 2},
     ["deformable_conv_bias", "deformable_conv_weight", "offset_weight"],
     "DeformableConvolution(4 -> 6, kernel_size=(3, 3), stride=(2, 2), dilation=(2, 2))"),
])
def test_names_and_repr_as_mxnet(kwargs, names, text):
    net = cnn.DeformableConvolution(6, prefix="dc_", **kwargs)
    net.initialize()
    net(nd.ones((1, 4, 9, 8)))
    assert sorted(net.collect_params().keys()) == [f"dc_{n}" for n in names]
    assert repr(net) == text


def test_fresh_layer_is_a_convolution_and_hybridizes():
    rng = np.random.default_rng(0)
    x = nd.array(rng.standard_normal((2, 4, 7, 6)))
    net = cnn.DeformableConvolution(5, kernel_size=3, padding=1, num_deformable_group=2)
    net.initialize(mx.init.Uniform(0.5))
    conv = nn.Conv2D(5, kernel_size=3, padding=1, in_channels=4)
    conv.initialize()
    net(x)
    conv.weight.set_data(net.deformable_conv_weight.data())
    conv.bias.set_data(net.deformable_conv_bias.data())
    eager = net(x)
    np.testing.assert_allclose(eager.asnumpy(), conv(x).asnumpy(), rtol=1e-4, atol=1e-5)
    net.offset_weight.set_data(nd.array(rng.uniform(-0.2, 0.2, net.offset_weight.shape)))
    eager = net(x)
    net.hybridize()
    x.attach_grad()
    with autograd.record():
        hybrid = net(x)
    hybrid.backward()
    np.testing.assert_allclose(hybrid.asnumpy(), eager.asnumpy(), rtol=1e-5, atol=1e-6)
    assert net.offset_weight.grad().asnumpy().any()


@pytest.mark.parametrize("kwargs, params, text", [
    ({"kernel_size": 3, "padding": 1},
     [("deformable_conv_weight", (6, 0, 3, 3), None), ("deformable_conv_bias", (6,), "zeros"),
      ("offset_weight", (27, 0, 3, 3), "zeros"), ("offset_bias", (27,), "zeros")],
     "ModulatedDeformableConvolution(\n\n)"),
    ({"kernel_size": (3, 2), "groups": 2, "in_channels": 4, "use_bias": False, "offset_use_bias": False,
      "activation": "relu", "num_deformable_group": 2},
     [("deformable_conv_weight", (6, 0, 3, 2), None), ("offset_weight", (36, 2, 3, 2), "zeros")],
     "ModulatedDeformableConvolution(\n  (act): Activation(relu)\n)"),
    ({"kernel_size": 3, "layout": "NHWC", "in_channels": 4},
     [("deformable_conv_weight", (6, 0, 3, 3), None), ("deformable_conv_bias", (6,), "zeros"),
      ("offset_weight", (27, 3, 3, 4), "zeros"), ("offset_bias", (27,), "zeros")],
     "ModulatedDeformableConvolution(\n\n)"),
])
def test_modulated_params_and_repr_as_mxnet(kwargs, params, text):
    net = cnn.ModulatedDeformableConvolution(6, **kwargs)
    assert net.prefix.startswith("modulated_deformable_conv")
    got = [(k[len(net.prefix):], tuple(p.shape), p.init) for k, p in net.collect_params().items()]
    assert got == params
    assert repr(net) == text


def test_modulated_layer_matches_mxnet_and_trains():
    ref = np.load(pathlib.Path(__file__).parent.parent / "data" / "modulated_deformable_conv_ref.npz")
    net = cnn.ModulatedDeformableConvolution(4, kernel_size=3, padding=1, num_deformable_group=2,
                                             activation="relu", prefix="m_")
    net.initialize()
    x = nd.array(ref["layer_x"])                        # float32, as MXNet computed it
    net(x)
    for name, p in net.collect_params().items():
        p.set_data(nd.array(ref[f"layer_{name}"]))
    eager = net(x)
    np.testing.assert_allclose(eager.asnumpy(), ref["layer_out"], rtol=1e-5, atol=1e-5)
    net.hybridize()
    with autograd.record():
        hybrid = net(x)
    hybrid.backward()
    np.testing.assert_allclose(hybrid.asnumpy(), ref["layer_out"], rtol=1e-5, atol=1e-5)
    assert all(p.grad().asnumpy().any() for p in net.collect_params().values())
