"""create_graph=True through a hybridized block (hybrid/replay.py): the gradients are
recorded and equal the un-hybridized block's, second order included."""
from __future__ import annotations

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph.gluon import nn
from hybridgraph.nd import autograd
from hybridgraph.nd.errors import AutogradError


def _net(hybridize: bool, *extra) -> nn.HybridSequential:
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(5, in_units=4, activation="tanh"), *extra, nn.Dense(3, in_units=5))
    net.initialize()
    net.cast("float64")
    for k, p in enumerate(net.collect_params().values()):
        p.set_data(nd.array(np.random.RandomState(k).randn(*p.shape), dtype="float64"))
    if hybridize:
        net.hybridize()
    return net


def _penalty_grads(net) -> tuple[np.ndarray, np.ndarray]:
    x = nd.array(np.random.RandomState(9).randn(3, 4), dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = net(x)
        (g,) = autograd.grad((y * y).sum(), [x], create_graph=True)
        penalty = (g * g).sum() + y.sum()
    penalty.backward()
    return x.grad.asnumpy(), net[0].weight.grad().asnumpy()


def test_gradient_penalty_equals_eager():
    eager, hyb = _penalty_grads(_net(False)), _penalty_grads(_net(True))
    for a, b in zip(eager, hyb):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)
    assert np.abs(hyb[0]).max() > 0


def test_first_order_path_is_unchanged_by_replay():
    x = nd.array(np.random.RandomState(3).randn(3, 4), dtype="float64")
    grads = []
    for net in (_net(False), _net(True)):
        with autograd.record():
            out = net(x).sum()
        out.backward()
        grads.append(net[0].weight.grad().asnumpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


def test_random_operators_cannot_be_replayed():
    net = _net(True, nn.Dropout(0.5))
    x = nd.array(np.ones((3, 4)), dtype="float64")
    x.attach_grad()
    with autograd.record(), pytest.raises(AutogradError, match="random numbers.*hybridize\\(False\\)"):
        autograd.grad(net(x).sum(), [x], create_graph=True)
