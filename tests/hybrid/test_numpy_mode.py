"""Gluon in numpy mode (`npx.set_np()`): np parameters, layers, losses, Trainer, DataLoader,
hybridize with np code (MXNet's `_npi_*` operator names in the export) and SymbolBlock.imports."""
from __future__ import annotations

import json

import numpy as onp
import pytest

import hybridgraph as mx
from hybridgraph import autograd, gluon, np, npx
from hybridgraph.gluon import nn


@pytest.fixture(autouse=True)
def _np_mode():
    npx.set_np()
    yield
    npx.reset_np()


class NpBlock(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense = nn.Dense(4)

    def hybrid_forward(self, F, x):  # noqa: N803
        h = self.dense(x)
        return F.np.sum(h * 2 + 1, axis=1) - F.npx.relu(h).mean(axis=1) + (-h).max(axis=1) / 3


def test_layers_losses_trainer_give_np_arrays():
    net = nn.HybridSequential()
    net.add(nn.Dense(8, activation="relu"), nn.Dense(3))
    net.initialize()
    x = np.random.uniform(size=(4, 5))
    assert isinstance(net(x), np.ndarray) and isinstance(net[0].weight.data(), np.ndarray)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    before = net[1].weight.data().copy()
    with autograd.record():
        loss = loss_fn(net(x), np.array([0, 1, 2, 1]))
    loss.backward()
    trainer.step(4)
    assert isinstance(loss, np.ndarray) and loss.shape == (4,)
    assert isinstance(net[1].weight.grad(), np.ndarray)
    assert not onp.allclose(before.asnumpy(), net[1].weight.data().asnumpy())
    metric = mx.metric.Accuracy()
    metric.update([np.array([0, 1, 2, 1])], [net(x)])
    assert 0.0 <= metric.get()[1] <= 1.0


def test_dataloader_batches_are_np_arrays():
    data = gluon.data.ArrayDataset(onp.random.rand(10, 3).astype("float32"), onp.arange(10))
    batch, label = next(iter(gluon.data.DataLoader(data, batch_size=4)))
    assert isinstance(batch, np.ndarray) and isinstance(label, np.ndarray) and batch.shape == (4, 3)


def test_hybridized_np_code_exports_npi_ops_and_reloads(tmp_path):
    net = NpBlock(prefix="npblock_")
    net.initialize()
    x = np.random.uniform(size=(3, 5))
    eager = net(x)
    net.hybridize()
    hybrid = net(x)
    assert isinstance(hybrid, np.ndarray)
    onp.testing.assert_allclose(hybrid.asnumpy(), eager.asnumpy(), rtol=1e-6)
    prefix = str(tmp_path / "npblock")
    net.export(prefix)
    with open(prefix + "-symbol.json") as f:
        graph = json.load(f)
    ops = [n["op"] for n in graph["nodes"] if n["op"] != "null"]
    assert ops == ["FullyConnected", "_npi_multiply_scalar", "_npi_add_scalar", "_np_sum", "_npx_relu", "_npi_mean",
                   "_npi_subtract", "_npi_multiply_scalar", "_np_max", "_npi_true_divide_scalar", "_npi_add"]
    assert graph["attrs"]["is_np_shape"] == ["int", 1]
    reloaded = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    got = reloaded(x)
    assert isinstance(got, np.ndarray)
    onp.testing.assert_allclose(got.asnumpy(), eager.asnumpy(), rtol=1e-6)


def test_use_np_deferred_dot_and_traced_creation():
    npx.reset_np()

    @npx.use_np
    class Regression(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.w = self.params.get("w", shape=(0, 7), allow_deferred_init=True)

        def hybrid_forward(self, F, x, w):  # noqa: N803
            return x.dot(w) + (F.np.ones((7,)) / 2)   # a deferred shape learnt through _np_dot

    net = Regression()
    net.initialize()
    net.hybridize()
    x = np.ones((2, 5))
    with mx.util.np_array(True):
        with autograd.record():
            out = net(x)
        out.backward()
    assert out.shape == (2, 7) and net.w.shape == (5, 7)
    assert isinstance(net.w.data(), np.ndarray) and isinstance(out, np.ndarray)
