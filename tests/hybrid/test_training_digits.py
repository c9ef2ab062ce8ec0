"""Training on scikit-learn's bundled digits data (1797 8x8 images, no download).

An MLP and a small CNN reach >= 95% test accuracy eagerly and hybridized, with the same
loss curve for the same seed (float32 tolerance); save_parameters / load_parameters and
export / SymbolBlock.imports reload the trained model, and training continues from both.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph.gluon import SymbolBlock, initializer as init, loss, nn
from hybridgraph.gluon.data import ArrayDataset, DataLoader
from hybridgraph.gluon.metric import Accuracy
from hybridgraph.gluon.trainer import Trainer
from hybridgraph.nd import autograd

EPOCHS = {"mlp": 8, "cnn": 8}
BATCH = 32
LR = {"mlp": 0.1, "cnn": 0.05}
DECAY = 0.8   # learning rate multiplier per epoch


@pytest.fixture(scope="module")
def digits() -> dict:
    datasets = pytest.importorskip("sklearn.datasets", reason="scikit-learn (the project's `test` extra)")
    data = datasets.load_digits()
    x = (data.images / 16.0).astype(np.float32)
    y = data.target.astype(np.float32)
    order = np.random.default_rng(0).permutation(len(x))
    train, test = order[:1400], order[1400:]
    return {"train": (x[train], y[train]), "test": (x[test], y[test])}


def _inputs(kind: str, x: np.ndarray) -> np.ndarray:
    return x.reshape(len(x), 1, 8, 8) if kind == "cnn" else x.reshape(len(x), 64)


def build(kind: str) -> nn.HybridSequential:
    net = nn.HybridSequential()
    with net.name_scope():
        if kind == "mlp":
            net.add(nn.Dense(64, activation="relu"), nn.Dense(10))
        else:
            net.add(nn.Conv2D(8, kernel_size=3, padding=1, activation="relu"), nn.MaxPool2D(2),
                    nn.Conv2D(16, kernel_size=3, activation="relu"), nn.Flatten(), nn.Dense(10))
    return net


def train_epochs(net, trainer: Trainer, kind: str, data: tuple, epochs: int, seed: int) -> list[float]:
    """SGD over shuffled mini-batches; the mean loss of every batch."""
    np.random.seed(seed)  # DataLoader's shuffling uses numpy's global RNG, as MXNet's
    loader = DataLoader(ArrayDataset(_inputs(kind, data[0]), data[1]), batch_size=BATCH, shuffle=True)
    loss_fn = loss.SoftmaxCrossEntropyLoss()
    curve = []
    base_lr = trainer.learning_rate
    for epoch in range(epochs):
        trainer.set_learning_rate(base_lr * DECAY ** epoch)
        for x, y in loader:
            with autograd.record():
                batch_loss = loss_fn(net(x), y)
            batch_loss.backward()
            trainer.step(x.shape[0])
            curve.append(float(batch_loss.mean().asscalar()))
    trainer.set_learning_rate(base_lr * DECAY ** epochs)
    return curve


def accuracy(net, kind: str, data: tuple) -> float:
    metric = Accuracy()
    metric.update(nd.array(data[1]), net(nd.array(_inputs(kind, data[0]))))
    return metric.get()[1]


def _fresh(kind: str, hybridize: bool) -> tuple:
    nd.random.seed(42)
    net = build(kind)
    net.initialize(init.Xavier())
    net.hybridize(hybridize)
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": LR[kind], "momentum": 0.9})
    return net, trainer


@pytest.fixture(scope="module")
def trained(digits: dict) -> dict:
    """(kind, hybridize) -> (net, trainer, loss curve); each trained once for the module."""
    out = {}
    for kind in ("mlp", "cnn"):
        for hybridize in (False, True):
            net, trainer = _fresh(kind, hybridize)
            curve = train_epochs(net, trainer, kind, digits["train"], EPOCHS[kind], seed=1)
            out[kind, hybridize] = (net, trainer, curve)
    return out


@pytest.mark.parametrize("hybridize", [False, True], ids=["eager", "hybridized"])
@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_reaches_95_percent(trained: dict, digits: dict, kind: str, hybridize: bool) -> None:
    net, _, curve = trained[kind, hybridize]
    assert np.mean(curve[-20:]) < 0.3 * np.mean(curve[:20])
    assert accuracy(net, kind, digits["test"]) >= 0.95


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_eager_and_hybridized_loss_curves_agree(trained: dict, kind: str) -> None:
    eager, hybrid = trained[kind, False][2], trained[kind, True][2]
    assert len(eager) == len(hybrid)
    np.testing.assert_allclose(hybrid, eager, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(hybrid[:10], eager[:10], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_save_load_parameters_and_continue_training(trained: dict, digits: dict, kind: str,
                                                    tmp_path: Path) -> None:
    net, trainer, _ = trained[kind, True]
    net.save_parameters(str(tmp_path / "net.params"))
    trainer.save_states(str(tmp_path / "net.states"))
    reloaded = build(kind)
    reloaded.load_parameters(str(tmp_path / "net.params"))
    reloaded.hybridize()
    x = nd.array(_inputs(kind, digits["test"][0]))
    np.testing.assert_allclose(reloaded(x).asnumpy(), net(x).asnumpy(), rtol=1e-5, atol=1e-6)
    trainer2 = Trainer(reloaded.collect_params(), "sgd", {"learning_rate": trainer.learning_rate, "momentum": 0.9})
    trainer2.load_states(str(tmp_path / "net.states"))
    # one more epoch from the original and from the reloaded copy: the same steps
    more = train_epochs(net, trainer, kind, digits["train"], 1, seed=5)
    more2 = train_epochs(reloaded, trainer2, kind, digits["train"], 1, seed=5)
    np.testing.assert_allclose(more2, more, rtol=1e-5, atol=1e-6)
    assert accuracy(reloaded, kind, digits["test"]) >= 0.95


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_export_imports_and_continue_training(trained: dict, digits: dict, kind: str, tmp_path: Path) -> None:
    net = trained[kind, False][0]
    net.hybridize()
    x = nd.array(_inputs(kind, digits["test"][0]))
    want = net(x).asnumpy()
    net.export(str(tmp_path / "digits"), epoch=3)
    net.hybridize(False)
    loaded = SymbolBlock.imports(str(tmp_path / "digits-symbol.json"), ["data"],
                                 str(tmp_path / "digits-0003.params"))
    np.testing.assert_allclose(loaded(x).asnumpy(), want, rtol=1e-5, atol=1e-6)
    trainer = Trainer(loaded.collect_params(), "sgd", {"learning_rate": 0.02, "momentum": 0.9})
    curve = train_epochs(loaded, trainer, kind, digits["train"], 1, seed=9)
    assert np.isfinite(curve).all() and np.mean(curve) < 0.3
    assert accuracy(loaded, kind, digits["test"]) >= 0.95
    assert not np.allclose(loaded(x).asnumpy(), want)  # the imported parameters did train
