"""gluon.Trainer against MXNet 1.9.1 (tests/data/trainer_ref.npz, *.states)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph.nd import autograd
from hybridgraph.gluon import lr_scheduler, nn, optimizer as opt
from hybridgraph.gluon.parameter import Parameter
from hybridgraph.gluon.trainer import Trainer

DATA = Path(__file__).resolve().parent.parent / "data"
REF = np.load(DATA / "trainer_ref.npz")
CASES = json.loads(str(REF["cases"]))


def _net(weights: np.ndarray | None = None) -> nn.Dense:
    net = nn.Dense(4, in_units=3, prefix="dense0_")
    net.initialize()
    if weights is None:
        net.weight.set_data(nd.array(REF["w0"]))
        net.bias.set_data(nd.array(REF["b0"]))
    else:
        net.weight.set_data(nd.array(weights[:12].reshape(4, 3)))
        net.bias.set_data(nd.array(weights[12:]))
    net.bias.lr_mult = 2.0
    return net


def _trainer(net, name, kwargs):
    kw = dict(kwargs)
    if kw.get("lr_scheduler") == "factor":
        kw["lr_scheduler"] = lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=0.2)
    return Trainer(net.collect_params(), name, kw)


def _backward(net, x):
    with autograd.record():
        loss = (net(nd.array(x)) ** 2).sum()
    loss.backward()


def _flat(net):
    return np.concatenate([net.weight.data().asnumpy().ravel(), net.bias.data().asnumpy()])


@pytest.mark.parametrize(("case", "name", "kwargs"), CASES, ids=[c[0] for c in CASES])
def test_matches_mxnet(case, name, kwargs):
    net = _net()
    trainer = _trainer(net, name, kwargs)
    for i, x in enumerate(REF["xs"]):
        _backward(net, x)
        trainer.step(5)
        np.testing.assert_allclose(_flat(net), REF[f"{case}/steps"][i], rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize(("case", "name", "kwargs"), CASES, ids=[c[0] for c in CASES])
def test_loads_mxnet_states(case, name, kwargs):
    net = _net(REF[f"{case}/steps"][1])
    trainer = _trainer(net, "sgd", {})
    trainer.load_states(str(DATA / f"trainer_ref_{case}.states"))
    assert type(trainer.optimizer).__name__.lower() == name
    assert trainer.optimizer.param_dict[0] is net.bias
    _backward(net, REF["xs"][2])
    trainer.step(5)
    np.testing.assert_allclose(_flat(net), REF[f"{case}/steps"][2], rtol=2e-5, atol=2e-6)


def test_save_load_states_round_trip(tmp_path):
    net = _net()
    trainer = Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
    for x in REF["xs"][:2]:
        _backward(net, x)
        trainer.step(5)
    fname = tmp_path / "t.states"
    trainer.save_states(str(fname))
    assert not [p for p in tmp_path.iterdir() if p.name != "t.states"]  # no temporary left behind
    snapshot = _flat(net)
    _backward(net, REF["xs"][2])
    trainer.step(5)
    expected = _flat(net)

    net2 = _net(snapshot)
    trainer2 = Trainer(net2.collect_params(), "sgd")
    trainer2.load_states(str(fname))
    assert isinstance(trainer2.optimizer, opt.Adam) and trainer2.optimizer.num_update == 2
    _backward(net2, REF["xs"][2])
    trainer2.step(5)
    np.testing.assert_allclose(_flat(net2), expected, rtol=1e-6)


def test_stale_gradient_raises_and_can_be_ignored():
    a = nn.Dense(2, in_units=3, prefix="a_")
    b = nn.Dense(2, in_units=3, prefix="b_")
    a.initialize()
    b.initialize()
    params = a.collect_params()
    params.update(b.collect_params())
    trainer = Trainer(params, "sgd", {"learning_rate": 1.0})
    x = nd.ones((1, 3))
    with autograd.record():
        loss = a(x).sum()
    loss.backward()
    with pytest.raises(UserWarning, match=r"Gradient of Parameter `b_bias` on context cpu\(0\) has not been "
                                          r"updated by backward since last `step`"):
        trainer.step(1)
    before_b = b.weight.data().asnumpy()
    before_a = a.weight.data().asnumpy()
    trainer.step(1, ignore_stale_grad=True)
    np.testing.assert_array_equal(b.weight.data().asnumpy(), before_b)
    assert not np.array_equal(a.weight.data().asnumpy(), before_a)
    with pytest.raises(UserWarning, match="a_bias"):  # a's gradient is stale now too
        trainer.step(1)


def test_grad_req_null_is_skipped_and_hybridized_net_trains():
    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(nn.Dense(5, in_units=3, activation="relu"), nn.Dense(2, in_units=5))
    net.initialize()
    net[0].bias.grad_req = "null"
    net.hybridize()
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    x = nd.array(np.random.RandomState(0).rand(4, 3))
    frozen = net[0].bias.data().asnumpy()
    losses = []
    for _ in range(5):
        with autograd.record():
            loss = (net(x) ** 2).mean()
        loss.backward()
        trainer.step(1)
        losses.append(float(loss.asscalar()))
    assert losses[-1] < losses[0]
    np.testing.assert_array_equal(net[0].bias.data().asnumpy(), frozen)


def test_learning_rate_property_and_setter():
    net = _net()
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    assert trainer.learning_rate == 0.5
    trainer.set_learning_rate(0.25)
    assert trainer.learning_rate == 0.25 and trainer.optimizer.lr == 0.25


def test_argument_errors():
    p = Parameter("w", shape=(2,))
    p.initialize()
    with pytest.raises(ValueError, match="First argument must be a list or dict of Parameters"):
        Trainer(p, "sgd")
    with pytest.raises(ValueError, match="got list of"):
        Trainer([p, 3], "sgd")
    with pytest.raises(AssertionError, match="optimizer_params must be None"):
        Trainer([p], opt.SGD(), {"learning_rate": 0.1})
    q = Parameter("q", shape=(2,))
    q.initialize(ctx=[nd.cpu(0), nd.cpu(1)])
    with pytest.raises(AssertionError, match="same set of contexts"):
        Trainer([p, q], "sgd")
    with pytest.raises(ValueError, match="Cannot find optimizer"):
        Trainer([p], "nope")


def test_optimizer_instance_gets_param_dict():
    net = _net()
    sgd = opt.SGD(learning_rate=0.1)
    trainer = Trainer(net.collect_params(), sgd)
    assert trainer.optimizer is sgd
    assert sgd.param_dict == {0: net.bias, 1: net.weight}  # sorted names


def test_multi_context_sums_gradients():
    ctxs = [nd.cpu(0), nd.cpu(1)]
    w = Parameter("w", shape=(3,), init="zeros")
    w.initialize(ctx=ctxs)
    trainer = Trainer([w], "sgd", {"learning_rate": 1.0})
    for i, c in enumerate(ctxs):
        with autograd.record():
            loss = (w.data(c) * nd.array([1.0, 2.0, 3.0], ctx=c) * (i + 1)).sum()
        loss.backward()
    trainer.step(1)
    for c in ctxs:
        np.testing.assert_allclose(w.data(c).asnumpy(), [-3.0, -6.0, -9.0])
    with pytest.raises(AssertionError, match="update_on_kvstore"):
        trainer.allreduce_grads()


def test_allreduce_then_update_with_clipping():
    ctxs = [nd.cpu(0), nd.cpu(1)]
    w = Parameter("w", shape=(2,), init="ones")
    w.initialize(ctx=ctxs)
    trainer = Trainer([w], "sgd", {"learning_rate": 1.0}, update_on_kvstore=False)
    for c in ctxs:
        with autograd.record():
            loss = (w.data(c) * 2).sum()
        loss.backward()
    trainer.allreduce_grads()
    for g in w.list_grad():
        np.testing.assert_allclose(g.asnumpy(), [4.0, 4.0])
        g[:] = g / 4
    trainer.update(1)
    for c in ctxs:
        np.testing.assert_allclose(w.data(c).asnumpy(), [0.0, 0.0])


def test_no_kvstore_keeps_gradients_per_context():
    ctxs = [nd.cpu(0), nd.cpu(1)]
    w = Parameter("w", shape=(1,), init="zeros")
    w.initialize(ctx=ctxs)
    trainer = Trainer([w], "sgd", {"learning_rate": 1.0}, kvstore=None)
    for i, c in enumerate(ctxs):
        with autograd.record():
            loss = w.data(c) * (i + 1)
        loss.backward()
    trainer.step(1)
    assert [float(w.data(c).asscalar()) for c in ctxs] == [-1.0, -2.0]


def test_step_keeps_parameters_trainable():
    net = _net()
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01, "momentum": 0.9})
    for _ in range(3):
        _backward(net, REF["xs"][0])
        trainer.step(5)
    assert net.weight.data()._ag.grad is net.weight.grad()


def _sgd_reference(w, mom, g, lr, wd, momentum, rescale, clip):
    """MXNet's SGD-momentum rule in float64 (for changes made between steps)."""
    g = g * rescale
    if clip:
        g = np.clip(g, -clip, clip)
    mom[...] = momentum * mom - lr * wd * w - lr * g
    w += mom


def test_changes_between_steps_take_effect():
    """lr_mult / wd_mult, set_learning_rate, momentum, wd, clip_gradient and aggregate_num set
    between steps are all read by the next step (nothing of them is cached)."""
    net = _net()
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    o = trainer.optimizer
    params = {"b": net.bias, "w": net.weight}
    ref = {k: p.data().asnumpy().astype(np.float64) for k, p in params.items()}
    moms = {k: np.zeros_like(v) for k, v in ref.items()}
    changes = {1: lambda: (trainer.set_learning_rate(0.05), setattr(net.weight, "lr_mult", 3.0)),
               2: lambda: (setattr(net.bias, "wd_mult", 4.0), setattr(o, "wd", 0.01), setattr(o, "momentum", 0.5)),
               3: lambda: (setattr(o, "clip_gradient", 0.02), setattr(o, "aggregate_num", 1)),
               4: lambda: (setattr(net.bias, "lr_mult", 0.5), setattr(o, "aggregate_num", 0))}
    for step, x in enumerate(list(REF["xs"]) * 2):
        if step in changes:
            changes[step]()
        _backward(net, x)
        grads = {k: p.grad().asnumpy().astype(np.float64) for k, p in params.items()}
        trainer.step(5)
        for k, p in params.items():
            _sgd_reference(ref[k], moms[k], grads[k], o.lr * p.lr_mult, o.wd * p.wd_mult, o.momentum,
                           1 / 5, o.clip_gradient)
            np.testing.assert_allclose(p.data().asnumpy(), ref[k], rtol=1e-5, atol=1e-6, err_msg=f"{k} {step}")


def test_lr_scheduler_reads_update_count_every_step():
    net = _net()
    sched = lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=0.2)
    trainer = Trainer(net.collect_params(), "sgd", {"lr_scheduler": sched})
    for step, x in enumerate(REF["xs"]):
        _backward(net, x)
        g = net.weight.grad().asnumpy()
        w = net.weight.data().asnumpy()
        trainer.step(5)
        assert trainer.optimizer.num_update == step + 1
        np.testing.assert_allclose(net.weight.data().asnumpy(), w - 0.2 * 0.5 ** step * g / 5, rtol=1e-5, atol=1e-6)


def test_frozen_parameter_is_skipped_and_a_stale_one_consumes_nothing():
    """grad_req='null' set between steps skips the parameter; a stale gradient raises and leaves
    every gradient unconsumed (a retry with ignore_stale_grad updates the fresh ones once)."""
    net = _net()
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    _backward(net, REF["xs"][0])
    trainer.step(5)
    net.bias.grad_req = "null"
    bias = net.bias.data().asnumpy()
    weight = net.weight.data().asnumpy()
    _backward(net, REF["xs"][1])
    trainer.step(5)
    np.testing.assert_array_equal(net.bias.data().asnumpy(), bias)
    assert not np.array_equal(net.weight.data().asnumpy(), weight)
    net.bias.grad_req = "write"
    _backward(net, REF["xs"][2])
    net.bias.data()._ag.fresh = False       # as if backward had not reached the bias
    weight = net.weight.data().asnumpy()
    with pytest.raises(UserWarning, match="dense0_bias"):
        trainer.step(5)
    np.testing.assert_array_equal(net.weight.data().asnumpy(), weight)
    assert net.weight.data()._ag.fresh
    trainer.step(5, ignore_stale_grad=True)
    assert not np.array_equal(net.weight.data().asnumpy(), weight)
    assert not net.weight.data()._ag.fresh


def test_subclass_overrides_are_used():
    """A user SGD overriding `_get_lrs` / `_get_wds` / `update_multi_precision` is called
    on the aggregated path too."""
    calls = []

    class MySGD(opt.SGD):
        def _get_lrs(self, indices):
            calls.append(("lrs", list(indices)))
            return [0.0 if i == 0 else 0.1 for i in indices]

        def update_multi_precision(self, index, weight, grad, state):
            calls.append(("update", list(index)))
            super().update_multi_precision(index, weight, grad, state)

    net = _net()
    trainer = Trainer(net.collect_params(), MySGD(momentum=0.9))
    bias, weight = net.bias.data().asnumpy(), net.weight.data().asnumpy()
    _backward(net, REF["xs"][0])
    trainer.step(5)
    assert calls == [("update", [0, 1]), ("lrs", [0, 1])]
    np.testing.assert_array_equal(net.bias.data().asnumpy(), bias)      # lr 0 by the override
    assert not np.array_equal(net.weight.data().asnumpy(), weight)
