"""A hybridized backward writes parameter gradients straight into `.grad` (no copy): the
results must equal the eager ones whenever a parameter gets several contributions, and
`autograd.grad` / grad_req='add' must keep their meaning."""
from __future__ import annotations

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph.gluon import nn
from hybridgraph.nd import autograd


def _net(hybridize: bool, static_alloc: bool = False) -> nn.HybridSequential:
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(5, activation="relu", in_units=4), nn.Dense(3, in_units=5))
    net.initialize()
    if hybridize:
        net.hybridize(static_alloc=static_alloc)
    return net


def _same_weights(dst, src) -> None:
    for p, q in zip(dst.collect_params().values(), src.collect_params().values()):
        p.set_data(q.data().copy())


def _grads(net) -> list[np.ndarray]:
    return [p.grad().asnumpy().copy() for p in net.collect_params().values()]


def _pair(static_alloc: bool = False):
    eager, hyb = _net(False), _net(True, static_alloc)
    _same_weights(hyb, eager)
    return eager, hyb


X = nd.array(np.random.RandomState(0).randn(6, 4))
X2 = nd.array(np.random.RandomState(1).randn(6, 4))


@pytest.mark.parametrize("static_alloc", [False, True])
def test_block_called_twice_sums_both_contributions(static_alloc):
    eager, hyb = _pair(static_alloc)
    for net in (eager, hyb):
        with autograd.record():
            loss = (net(X) * net(X2)).sum()
        loss.backward()
    for g, w in zip(_grads(hyb), _grads(eager)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_parameter_also_used_outside_the_block():
    eager, hyb = _pair()
    for net in (eager, hyb):
        w = net[0].weight.data()
        with autograd.record():
            loss = net(X).sum() + (w * w).sum()
        loss.backward()
    for g, w in zip(_grads(hyb), _grads(eager)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _steps_agree(inputs: tuple, grad_req: str = "write") -> None:
    """One backward per input on an eager and a hybridized twin: equal .grad afterwards."""
    eager, hyb = _pair()
    for net in (eager, hyb):
        net.collect_params().setattr("grad_req", grad_req)
        for x in inputs:
            with autograd.record():
                loss = net(x).sum()
            loss.backward()
    for g, w in zip(_grads(hyb), _grads(eager)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_repeated_steps_overwrite_not_accumulate():
    _steps_agree((X, X2, X))


def test_autograd_grad_leaves_dot_grad_alone():
    _, hyb = _pair()
    params = list(hyb.collect_params().values())
    for p in params:
        p.grad()[:] = 7
    w = params[0].data()
    with autograd.record():
        loss = hyb(X).sum()
    (gw,) = autograd.grad(loss, [w])
    assert np.all(params[0].grad().asnumpy() == 7)
    with autograd.record():
        loss = hyb(X).sum()
    loss.backward()
    np.testing.assert_allclose(params[0].grad().asnumpy(), gw.asnumpy(), rtol=1e-6)


def test_grad_req_add_accumulates():
    _steps_agree((X, X2), grad_req="add")


def test_gradient_written_in_place_keeps_the_buffer():
    _, hyb = _pair()
    bufs = [p.grad()._data for p in hyb.collect_params().values()]
    with autograd.record():
        loss = hyb(X).sum()
    loss.backward()
    assert all(p.grad()._data is b for p, b in zip(hyb.collect_params().values(), bufs))
    assert any(np.any(b != 0) for b in bufs)
