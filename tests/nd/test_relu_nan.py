"""NaN through relu as MXNet 1.9.1 computes it (values checked in real MXNet): `nd.relu` keeps a
NaN input and its gradient is NaN there; `Activation(act_type='relu')` maps NaN to 0 with a zero
gradient."""
from __future__ import annotations

import numpy as np

import hybridgraph as mx


def _value_and_grad(fn):
    x = mx.nd.array([np.nan, -1.0, 2.0, 0.0])
    x.attach_grad()
    with mx.autograd.record():
        y = fn(x)
    y.backward(mx.nd.array([3.0, 3.0, 3.0, 3.0]))
    return y.asnumpy(), x.grad.asnumpy()


def test_relu_keeps_nan_and_its_gradient_is_nan():
    y, g = _value_and_grad(mx.nd.relu)
    np.testing.assert_array_equal(y, [np.nan, 0, 2, 0])
    np.testing.assert_array_equal(g, [np.nan, 0, 3, 0])


def test_activation_relu_maps_nan_to_zero():
    y, g = _value_and_grad(lambda x: mx.nd.Activation(x, act_type="relu"))
    np.testing.assert_array_equal(y, [0, 0, 2, 0])
    np.testing.assert_array_equal(g, [0, 0, 3, 0])


def test_hybridized_relu_gradient_matches_eager():
    net = mx.gluon.nn.HybridLambda(lambda F, x: F.relu(x) * 2)
    net.hybridize()
    x = mx.nd.array([np.nan, -1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = net(x)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [np.nan, 0, 2])
