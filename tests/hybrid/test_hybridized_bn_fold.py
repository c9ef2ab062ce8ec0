"""BatchNorm folded into the Convolution / FullyConnected before it on hybridized inference.

Folded hybridized inference must equal the eager (unfolded) block, and must never be
stale: after every way a parameter's value can change, the next inference call sees
the new value. Training calls, gradients, export() and the trace cache are unchanged.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph.gluon.utils import export_paths
from hybridgraph.gluon import HybridBlock, nn
from hybridgraph.gluon.cached_graph import FOLD_YOUNG, CachedGraph
from hybridgraph.gluon.trainer import Trainer
from hybridgraph.nd import autograd
from hybridgraph.nd import writes

RTOL, ATOL = 1e-4, 1e-5


class ResBlock(HybridBlock):
    """conv-BN-relu-conv-BN plus a 1x1 conv-BN shortcut, then relu (ResNet v1's block)."""

    def __init__(self, use_global_stats: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        bn = {"use_global_stats": use_global_stats}
        with self.name_scope():
            self.body = nn.HybridSequential()
            self.body.add(nn.Conv2D(8, 3, padding=1, use_bias=False, in_channels=4), nn.BatchNorm(**bn),
                          nn.Activation("relu"), nn.Conv2D(8, 3, padding=1, in_channels=8), nn.BatchNorm(**bn))
            self.short = nn.HybridSequential()
            self.short.add(nn.Conv2D(8, 1, use_bias=False, in_channels=4), nn.BatchNorm(**bn))

    def hybrid_forward(self, F, x):
        return F.relu(self.body(x) + self.short(x))


class DenseBN(HybridBlock):
    """Dense followed by BatchNorm (folds into FullyConnected), then a classifier."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        with self.name_scope():
            self.fc = nn.Dense(6, in_units=12)
            self.bn = nn.BatchNorm(in_channels=6)
            self.out = nn.Dense(3, in_units=6)

    def hybrid_forward(self, F, x):
        return self.out(F.relu(self.bn(self.fc(x))))


def _rand(*shape: int, seed: int = 0) -> nd.NDArray:
    return nd.array(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _randomize_stats(net: HybridBlock, seed: int = 1) -> None:
    """Non-trivial gamma, beta and moving statistics (fresh ones fold to the identity)."""
    rng = np.random.default_rng(seed)
    for name, p in net.collect_params().items():
        if any(k in name for k in ("gamma", "beta", "running_mean", "running_var")):
            base = 0.5 if ("var" in name or "gamma" in name) else -0.5
            p.set_data(nd.array((rng.random(p.shape) + base).astype(np.float32)))


def _make(factory: Callable[[], HybridBlock], x: nd.NDArray, seed: int = 1) -> HybridBlock:
    net = factory()
    net.initialize()
    net(x)
    _randomize_stats(net, seed)
    return net


def _eager(net: HybridBlock, factory: Callable[[], HybridBlock], x: nd.NDArray) -> np.ndarray:
    """The block's output computed eagerly by a twin holding copies of its current values."""
    twin = factory()
    twin.initialize()
    twin(x)
    _copy_params(net, twin)
    return twin(x.astype(net.collect_params()[next(iter(net.collect_params()))].dtype)).asnumpy()


def _graph(net: HybridBlock) -> CachedGraph:
    """The compiled graph of the block's inference trace (training calls trace separately)."""
    graphs = [g for _, g in net._cache.values()]
    inference = [g for g in graphs if g._folded] or graphs
    assert len(inference) == 1
    return inference[0]


def _copy_params(src: HybridBlock, dst: HybridBlock) -> None:
    for (_, p), (_, q) in zip(sorted(src.collect_params().items()), sorted(dst.collect_params().items())):
        q.cast(p.dtype)
        q.set_data(p.data().copy())


def _folded_ran(net: HybridBlock) -> bool:
    plan = _graph(net)._last.last_plan
    return "fold_batchnorm" in plan.passes_ran and all(st.op.name != "BatchNorm" for st in plan.sched.steps)


@pytest.mark.parametrize("factory,shape", [(ResBlock, (2, 4, 6, 6)),
                                           (lambda: ResBlock(use_global_stats=True), (2, 4, 6, 6)),
                                           (DenseBN, (5, 12))])
@pytest.mark.parametrize("static_alloc", [False, True])
def test_folded_inference_equals_eager(factory, shape, static_alloc):
    x = _rand(*shape)
    net = _make(factory, x)
    want = net(x).asnumpy()
    net.hybridize(static_alloc=static_alloc)
    got = net(x).asnumpy()
    assert _folded_ran(net)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=RTOL, atol=ATOL)


# -- every way a parameter changes ---------------------------------------------------------

def _weight(net: ResBlock) -> nd.NDArray:
    return net.body[0].weight.data()


def _save_load(net: ResBlock, tmp_path: Path) -> None:
    other = _make(ResBlock, _rand(2, 4, 6, 6), seed=7)
    other.save_parameters(str(tmp_path / "other.params"))
    net.load_parameters(str(tmp_path / "other.params"))


def _train_step(net: ResBlock, optimizer: str) -> None:
    trainer = Trainer(net.collect_params(), optimizer, {"learning_rate": 0.5})
    x = _rand(2, 4, 6, 6, seed=3)
    with autograd.record():
        loss = (net(x) ** 2).mean()
    loss.backward()
    trainer.step(1)


MUTATIONS: dict[str, Callable] = {
    "setitem": lambda net, _: _weight(net).__setitem__(slice(None), 0.25),
    "setitem_view_slice": lambda net, _: _weight(net).__setitem__(slice(0, 2), 0.0),
    "setitem_through_reshape_view": lambda net, _: _weight(net).reshape(-1).__setitem__(slice(None), 0.1),
    "setitem_through_getitem_view": lambda net, _: _weight(net)[1].__setitem__(slice(None), 3.0),
    "iadd": lambda net, _: _weight(net).__iadd__(1.0),
    "imul_array": lambda net, _: _weight(net).__imul__(_weight(net)),
    "out_kwarg": lambda net, _: nd.elemwise_add(_weight(net), _weight(net), out=_weight(net)),
    "out_kwarg_random": lambda net, _: nd.random.uniform(shape=_weight(net).shape, out=_weight(net)),
    "copyto": lambda net, _: nd.ones(_weight(net).shape).copyto(_weight(net)),
    "set_data": lambda net, _: net.body[0].weight.set_data(nd.ones(_weight(net).shape) * 0.3),
    "set_data_gamma": lambda net, _: net.body[1].gamma.set_data(nd.ones((8,)) * 2),
    "running_var_setitem": lambda net, _: net.body[4].running_var.data().__setitem__(slice(None), 9.0),
    "load_parameters": _save_load,
    "force_reinit": lambda net, _: net.collect_params().initialize(force_reinit=True),
    "reset_ctx": lambda net, _: (net.collect_params().reset_ctx(nd.cpu()),
                                 _weight(net).__setitem__(slice(None), 0.5)),
    "trainer_sgd": lambda net, _: _train_step(net, "sgd"),
    "trainer_adam": lambda net, _: _train_step(net, "adam"),
    "trainer_nag": lambda net, _: _train_step(net, "nag"),
}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_inference_sees_every_parameter_change(name, tmp_path):
    x = _rand(2, 4, 6, 6)
    net = _make(ResBlock, x)
    net.hybridize()
    before = net(x).asnumpy()
    assert _folded_ran(net)
    np.testing.assert_allclose(before, _eager(net, ResBlock, x), rtol=RTOL, atol=ATOL)
    MUTATIONS[name](net, tmp_path)
    got = net(x).asnumpy()
    want = _eager(net, ResBlock, x)
    assert not np.allclose(want, before), "the mutation should change the output"
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    assert net.cache_info()["traces"] == (2 if name.startswith("trainer") else 1)  # + the training trace


def test_cast_refolds_in_the_new_dtype():
    x = _rand(2, 4, 6, 6)
    net = _make(ResBlock, x)
    net.hybridize()
    net(x)
    net.cast("float64")
    got = net(x.astype("float64"))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.asnumpy(), _eager(net, ResBlock, x), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("interpret", [False, True])
def test_training_updates_of_moving_stats_are_seen_by_inference(interpret, monkeypatch):
    """BatchNorm updates its moving statistics in the backward pass, in place."""
    x = _rand(2, 4, 6, 6)
    net = _make(ResBlock, x)
    net.hybridize()
    before = net(x).asnumpy()
    monkeypatch.setattr("hybridgraph.gluon.cached_graph.INTERPRET", interpret)
    with autograd.record():
        loss = net(_rand(2, 4, 6, 6, seed=5) * 3 + 1).sum()
    loss.backward()
    monkeypatch.setattr("hybridgraph.gluon.cached_graph.INTERPRET", False)
    got = net(x).asnumpy()
    want = _eager(net, ResBlock, x)
    assert not np.allclose(want, before)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def _sgd_step(net, trainer, seed):
    with autograd.record():
        loss = (net(_rand(2, 4, 6, 6, seed=seed)) ** 2).mean()
    loss.backward()
    trainer.step(1)


def test_alternating_training_and_inference_stays_exact():
    """Parameters changing between every inference call: always right (the fold backs off)."""
    x = _rand(2, 4, 6, 6)
    net = _make(ResBlock, x)
    net.hybridize()
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    for i in range(FOLD_YOUNG + 4):
        _sgd_step(net, trainer, i)
        np.testing.assert_allclose(net(x).asnumpy(), _eager(net, ResBlock, x), rtol=RTOL, atol=ATOL)
    assert not _folded_ran(net)
    for _ in range(FOLD_YOUNG):     # a validation pass: the next parameter state folds
        net(x)
    assert not _folded_ran(net)
    _sgd_step(net, trainer, 99)
    np.testing.assert_allclose(net(x).asnumpy(), _eager(net, ResBlock, x), rtol=RTOL, atol=ATOL)
    assert _folded_ran(net)


@pytest.mark.parametrize("static_alloc", [False, True])
def test_identical_inference_calls_are_bitwise_identical(static_alloc):
    """Issue 13, item 4: the variant (folded or not) never changes between calls with the
    same parameters, so repeated calls give the same bits, whatever came before."""
    x = _rand(2, 4, 6, 6)
    net = _make(ResBlock, x)
    net.hybridize(static_alloc=static_alloc)
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    # short phases first (a fold would not pay), then long ones (it would)
    for phase, calls in enumerate([1, 1, 1, 2, 3 * FOLD_YOUNG, 3 * FOLD_YOUNG]):
        if phase:
            _sgd_step(net, trainer, phase)
        first = net(x).asnumpy()
        for _ in range(calls):
            np.testing.assert_array_equal(net(x).asnumpy(), first, err_msg=f"phase {phase}")


# -- training, gradients, export, cache ----------------------------------------------------------

def test_training_calls_and_gradients_unchanged():
    x = _rand(2, 4, 6, 6)
    hyb, ref = _make(ResBlock, x), _make(ResBlock, x)
    _copy_params(hyb, ref)
    hyb.hybridize()
    hyb(x)                                   # a folded inference variant exists
    grads = []
    for net in (hyb, ref):
        with autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        grads.append({n.split("_", 1)[1]: p.grad().asnumpy() for n, p in net.collect_params().items()
                      if p.grad_req != "null"})
    assert grads[0].keys() == grads[1].keys()
    for k in grads[0]:
        np.testing.assert_allclose(grads[0][k], grads[1][k], rtol=1e-4, atol=1e-5, err_msg=k)
    plans = [cg.last_plan for _, g in hyb._cache.values() for key, cg in g._compiled.items() if key[0]]
    assert plans and all("fold_batchnorm" not in p.passes_ran for p in plans)


def test_export_writes_the_unfolded_graph_and_params(tmp_path):
    x = _rand(2, 4, 6, 6)
    net = _make(ResBlock, x)
    net.hybridize()
    net(x)
    net.export(str(tmp_path / "res"))
    sym_file, params_file = export_paths(str(tmp_path / "res"))
    text = Path(sym_file).read_text()
    assert text.count('"BatchNorm"') == 3 and "bnfold" not in text
    saved = nd.load(params_file)
    assert not any("bnfold" in k for k in saved)
    for name, p in net.collect_params().items():
        key = ("aux:" if "running" in name else "arg:") + name
        np.testing.assert_array_equal(saved[key].asnumpy(), p.data().asnumpy())


def test_cache_info_counts_one_trace():
    x = _rand(2, 4, 6, 6)
    net = _make(ResBlock, x)
    net.hybridize()
    for _ in range(3):
        net(x)
        _weight(net)[:] += 0.01
    info = net.cache_info()
    assert info["traces"] == 1 and info["entries"] == 1 and info["hits"] == 2


def test_graph_without_batchnorm_does_not_watch():
    net = nn.Dense(3, in_units=4)
    net.initialize()
    net.hybridize()
    net(_rand(2, 4))
    assert not _graph(net)._foldable and not _graph(net)._folded


# -- nd.writes ---------------------------------------------------------------------------------

def test_watch_sees_writes_through_views_and_is_released():
    a = nd.zeros((4, 4))
    w = writes.Watch([a._data])
    a[0:1].reshape(-1)[:] = 1
    assert w.stale
    key = id(writes.owner(a._data))
    assert key in writes.WATCHED
    del w
    assert key not in writes.WATCHED


def test_unrelated_writes_do_not_mark_stale():
    a, b = nd.zeros((3,)), nd.zeros((3,))
    w = writes.Watch([a._data])
    b[:] = 1
    b += 1
    assert not w.stale
    w.close()
    assert not writes.WATCHED or id(writes.owner(a._data)) not in writes.WATCHED


def test_numpy_aliases_of_ndarrays_are_read_only():
    a = nd.zeros((3,))
    view = np.asarray(a)
    with pytest.raises(ValueError):
        view[0] = 1
    assert np.asarray(a, dtype=np.float64).flags.writeable
    assert np.array(a).flags.writeable
