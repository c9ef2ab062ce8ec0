"""gluon.contrib.cnn.DeformableConvolution: MXNet 1.9.1's parameter names and printed form (read
from real MXNet), a fresh layer (zero offsets) equal to Conv2D, hybridized equal to eager, and
ModulatedDeformableConvolution refused with a pointer to the v1 layer."""
from __future__ import annotations

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


def test_modulated_deformable_convolution_is_refused():
    with pytest.raises(NotImplementedError, match="gluon.contrib.cnn.DeformableConvolution"):
        cnn.ModulatedDeformableConvolution  # noqa: B018
