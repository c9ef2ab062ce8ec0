"""The whole-group SGD update (hybrid/optimizer.py `_whole_group`): one aggregated kernel call
per dtype group instead of MXNet's chunks of `aggregate_num` must leave every parameter and
momentum bit-identical to the per-parameter reference (`sgd_mom_update` / `sgd_update` once per
weight) and to MXNet's chunked calls, and it must step aside where chunking changes results
(a learning-rate schedule) or when switched off (HYBRIDGRAPH_FUSED_UPDATE=0)."""
from __future__ import annotations

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import autograd, gluon, nd
from hybridgraph.gluon import nn


def _mlp(seed: int) -> nn.HybridSequential:
    """Five Dense layers (ten parameters: three chunks of MXNet's default 4), one in float64."""
    net = nn.HybridSequential()
    for units, in_units in ((32, 20), (24, 32), (16, 24), (12, 16), (5, 12)):
        net.add(nn.Dense(units, activation="relu" if units > 5 else None, in_units=in_units))
    net.initialize(mx.init.Xavier())
    rng = np.random.RandomState(seed)
    for p in net.collect_params().values():
        p.set_data(nd.array(rng.uniform(-0.5, 0.5, p.shape).astype(np.float32)))
    return net


def _train(monkeypatch, mode: str, optimizer: str = "sgd", steps: int = 5, hybrid: bool = True,
           **opt_args) -> tuple[list, list, gluon.Trainer]:
    """Parameters and optimizer states after `steps` training steps, updated per parameter
    (`mode='per_param'`), in MXNet's chunks (`'chunked'`) or in one call per group (`'whole'`)."""
    monkeypatch.setenv("HYBRIDGRAPH_FUSED_UPDATE", "1" if mode == "whole" else "0")
    net = _mlp(7)
    net[1].weight.lr_mult = 0.5
    net[3].bias.wd_mult = 0.0
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    if hybrid:
        net.hybridize(static_alloc=True, static_shape=True)
        loss_fn.hybridize(static_alloc=True, static_shape=True)
    trainer = gluon.Trainer(net.collect_params(), optimizer, dict(opt_args))
    if mode == "per_param":
        trainer._optimizer.aggregate_num = 0
    rng = np.random.RandomState(3)
    x = nd.array(rng.rand(8, 20).astype(np.float32))
    y = nd.array(rng.randint(0, 5, 8).astype(np.float32))
    for _ in range(steps):
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(8)
        nd.waitall()
    # in the network's order: the Trainer sorts its parameters by name (as MXNet's does), and the
    # names of the three runs differ (dense9 sorts after dense10), so its indices do not line up
    order = [trainer._params.index(p) for p in net.collect_params().values()]
    params = [trainer._params[i].data().asnumpy() for i in order]
    states = trainer._updaters[0].states
    moms = [None if states[i] is None else states[i].asnumpy() for i in order]
    return params, moms, trainer


def _same(a: list, b: list) -> None:
    assert len(a) == len(b)
    for u, v in zip(a, b):
        if u is None or v is None:
            assert u is v
        else:
            assert u.dtype == v.dtype and np.array_equal(u.view(np.uint8), v.view(np.uint8))


@pytest.mark.parametrize("opt_args", [
    {"learning_rate": 0.05, "momentum": 0.9},
    {"learning_rate": 0.05, "momentum": 0.9, "wd": 1e-3, "clip_gradient": 0.05},
    {"learning_rate": 0.05, "momentum": 0.9, "rescale_grad": 0.5},
])
def test_whole_group_is_bit_identical_to_per_parameter_and_chunked(monkeypatch, opt_args):
    ref_p, ref_m, _ = _train(monkeypatch, "per_param", **opt_args)
    chunk_p, chunk_m, _ = _train(monkeypatch, "chunked", **opt_args)
    whole_p, whole_m, trainer = _train(monkeypatch, "whole", **opt_args)
    _same(whole_p, ref_p)
    _same(whole_m, ref_m)
    _same(chunk_p, ref_p)
    _same(chunk_m, ref_m)
    assert trainer._optimizer.num_update == 5


def test_whole_group_without_momentum_is_bit_identical_to_chunked(monkeypatch):
    """multi_sgd_update (no momentum, with wd) rounds differently from the per-parameter
    sgd_update already (a known difference of the two kernels, not of the grouping): here the
    reference is MXNet's chunked aggregated call."""
    chunk_p, chunk_m, _ = _train(monkeypatch, "chunked", learning_rate=0.1, wd=1e-3)
    whole_p, whole_m, _ = _train(monkeypatch, "whole", learning_rate=0.1, wd=1e-3)
    _same(whole_p, chunk_p)
    _same(whole_m, chunk_m)


def test_eager_training_takes_the_same_update(monkeypatch):
    ref_p, ref_m, _ = _train(monkeypatch, "per_param", hybrid=False, learning_rate=0.05, momentum=0.9)
    whole_p, whole_m, _ = _train(monkeypatch, "whole", hybrid=False, learning_rate=0.05, momentum=0.9)
    _same(whole_p, ref_p)
    _same(whole_m, ref_m)


def _kernel_calls(monkeypatch, **opt_args) -> dict:
    """How often each SGD kernel runs in one `Trainer.step` over the ten parameters."""
    from hybridgraph.gluon import optimizer_base

    calls: dict = {}
    real = optimizer_base._Kernel.__call__

    def counting(self, inputs, attrs, out=None):
        calls[self.op.name] = calls.get(self.op.name, 0) + 1
        return real(self, inputs, attrs, out)

    net = _mlp(1)
    trainer = gluon.Trainer(net.collect_params(), "sgd", dict(opt_args))
    x = nd.array(np.random.RandomState(0).rand(4, 20).astype(np.float32))
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    monkeypatch.setattr(optimizer_base._Kernel, "__call__", counting)
    trainer.step(4)
    return calls


def test_one_kernel_call_per_group_unless_switched_off_or_scheduled(monkeypatch):
    monkeypatch.setenv("HYBRIDGRAPH_FUSED_UPDATE", "1")
    assert _kernel_calls(monkeypatch, learning_rate=0.1, momentum=0.9) == {"multi_sgd_mom_update": 1}
    monkeypatch.setenv("HYBRIDGRAPH_FUSED_UPDATE", "0")
    assert _kernel_calls(monkeypatch, learning_rate=0.1, momentum=0.9) == {"multi_sgd_mom_update": 3}
    monkeypatch.setenv("HYBRIDGRAPH_FUSED_UPDATE", "1")
    sched = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5)
    assert _kernel_calls(monkeypatch, learning_rate=0.1, momentum=0.9,
                         lr_scheduler=sched) == {"multi_sgd_mom_update": 3}


def test_schedules_keep_mxnet_chunks_and_their_results(monkeypatch):
    """With a schedule the lr of each chunk follows the update count reached when it runs, as in
    MXNet: the switch must not change such a run."""
    def run(flag):
        sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5)
        monkeypatch.setenv("HYBRIDGRAPH_FUSED_UPDATE", flag)
        return _train(monkeypatch, "whole" if flag == "1" else "chunked",
                      learning_rate=0.1, momentum=0.9, lr_scheduler=sched)[:2]
    on, off = run("1"), run("0")
    _same(on[0], off[0])
    _same(on[1], off[1])


@pytest.mark.parametrize("a, b", [((0.01, 0.0), (0.01, -0.0)), ((0.5, 1.0), (0.5, True)), ((2.0,), [2.0]),
                                  ((0.1, 0.2), (0.1, np.float32(0.2)))])
def test_float_tuples_keep_distinct_attribute_cache_keys(a, b):
    """The optimizers' `lrs`/`wds` tuples take typed_key's one-pass float branch: it must still
    tell -0.0 from 0.0 and a float from a bool, a list or a numpy scalar."""
    from hybridgraph.nd.dispatch import typed_key

    assert typed_key(a) != typed_key(b)
    assert typed_key(a) == typed_key(tuple(a) if isinstance(a, tuple) else list(a))
