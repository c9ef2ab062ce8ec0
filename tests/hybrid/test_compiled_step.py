"""Trainer.compile_step: forward, loss, backward and update as one compiled step, bit-identical
to the unfused record / backward / Trainer.step sequence, with a clean fallback."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import autograd, gluon, nd
from hybridgraph.gluon import nn


def _mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(24, activation="relu"), nn.Dense(16, activation="relu"), nn.Dense(10))
    return net


def _cnn():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(6, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"), nn.MaxPool2D(2),
            nn.Conv2D(8, 3, activation="relu"), nn.Flatten(), nn.Dense(10))
    return net


SHAPES = {"mlp": (_mlp, (8, 20)), "cnn": (_cnn, (4, 3, 10, 10))}
OPTIMIZERS = {"sgd-momentum": ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3}),
              "adam": ("adam", {"learning_rate": 0.01})}


def _batches(shape, n=4):
    rng = np.random.default_rng(1)
    return [(nd.array(rng.standard_normal(shape).astype(np.float32)),
             nd.array(rng.integers(0, 10, shape[0]).astype(np.float32))) for _ in range(n)]


def _train(model: str, opt: str, compiled: bool, hybridize: bool):
    make, shape = SHAPES[model]
    mx.random.seed(0)
    net = make()
    net.initialize(mx.init.Xavier())
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    if hybridize:
        net.hybridize(static_alloc=True, static_shape=True)
        loss_fn.hybridize(static_alloc=True, static_shape=True)
    name, kwargs = OPTIMIZERS[opt]
    trainer = gluon.Trainer(net.collect_params(), name, dict(kwargs))
    step = trainer.compile_step(net, loss_fn)
    losses = []
    for x, y in _batches(shape):
        if compiled:
            loss = step(x, y, shape[0])
        else:
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(shape[0])
        losses.append(loss.asnumpy())
    if compiled:
        assert step.compiled, step.fallback_reason
    params = [p for p in net.collect_params().values()]
    states = trainer._updaters[0].states      # by the trainer's index (sorted names: differ between nets)
    ordered = [states.get(trainer._param2idx[p.name]) for p in params]
    return ([p.data().asnumpy() for p in params], [p.grad().asnumpy() for p in params if p.grad_req != "null"],
            losses, ordered)


@pytest.mark.parametrize("model", sorted(SHAPES))
@pytest.mark.parametrize("opt", sorted(OPTIMIZERS))
@pytest.mark.parametrize("hybridize", [True, False], ids=["hybridized", "eager"])
def test_compiled_step_is_bit_identical_to_the_unfused_step(model, opt, hybridize):
    ref_params, ref_grads, ref_losses, ref_states = _train(model, opt, False, hybridize)
    params, grads, losses, states = _train(model, opt, True, hybridize)
    assert len(params) == len(ref_params)
    for a, b in zip(params, ref_params):    # weights and BatchNorm's running statistics
        assert (a == b).all()
    for a, b in zip(grads, ref_grads):
        assert (a == b).all()
    for a, b in zip(losses, ref_losses):
        assert (a == b).all()
    assert len(states) == len(ref_states)
    for s, r in zip(states, ref_states):
        for u, v in zip(s if isinstance(s, tuple) else (s,), r if isinstance(r, tuple) else (r,)):
            assert (u is None and v is None) or (u.asnumpy() == v.asnumpy()).all()


def test_a_block_that_is_not_hybrid_falls_back_with_its_reason():
    class Plain(gluon.Block):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.dense = nn.Dense(3)

        def forward(self, x):
            return self.dense(x)

    net = Plain()
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    step = trainer.compile_step(net, gluon.loss.L2Loss())
    x, y = nd.ones((2, 4)), nd.zeros((2, 3))
    with pytest.warns(UserWarning, match="not a HybridBlock"):
        loss = step(x, y, 2)
    assert not step.compiled and "Plain" in step.fallback_reason
    assert loss.shape == (2,)
    assert (net.dense.weight.data().asnumpy() != 1).any()   # the eager step did update


def test_a_net_that_reads_values_falls_back_and_still_trains():
    class ReadsValues(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.dense = nn.Dense(3, in_units=4)

        def hybrid_forward(self, F, x):
            if float(x.sum().asscalar()) > 1e9:   # cannot be traced
                x = x * 0
            return self.dense(x)

    net = ReadsValues()
    net.initialize()
    before = net.dense.weight.data().asnumpy().copy()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    step = trainer.compile_step(net, gluon.loss.L2Loss())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        step(nd.ones((2, 4)), nd.zeros((2, 3)), 2)
        step(nd.ones((2, 4)), nd.zeros((2, 3)), 2)
    assert [str(w.message) for w in caught if "compile_step" in str(w.message)][0].startswith(
        "compile_step: running the unfused step because tracing net and loss failed")
    assert len([w for w in caught if "compile_step" in str(w.message)]) == 1   # warned once
    assert not step.compiled
    assert (net.dense.weight.data().asnumpy() != before).any()


def test_an_unused_trained_parameter_falls_back_to_the_stale_gradient_error():
    net = _mlp()
    extra = nn.Dense(2)
    net.initialize()
    extra.initialize()
    x = nd.ones((2, 5))
    extra(x)
    params = {**net.collect_params(), **extra.collect_params()}
    trainer = gluon.Trainer(params, "sgd", {"learning_rate": 0.1})
    step = trainer.compile_step(net, gluon.loss.SoftmaxCrossEntropyLoss())
    with pytest.warns(UserWarning, match="does not depend on the trained parameter"):
        with pytest.raises(UserWarning, match="has not been updated by backward"):
            step(x, nd.zeros((2,)), 2)


def test_grad_req_add_accumulates_as_the_unfused_step():
    results = []
    for compiled in (False, True):
        mx.random.seed(0)
        net = _mlp()
        net.initialize(mx.init.Xavier())
        net.collect_params().setattr("grad_req", "add")
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.5})
        step = trainer.compile_step(net, loss_fn)
        for x, y in _batches((8, 20), 3):
            if compiled:
                step(x, y, 8)
            else:
                with autograd.record():
                    loss = loss_fn(net(x), y)
                loss.backward()
                trainer.step(8)
        assert not compiled or step.compiled
        results.append([p.data().asnumpy() for p in net.collect_params().values()])
    for a, b in zip(*results):
        assert (a == b).all()
