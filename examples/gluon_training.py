"""A complete Gluon training script: DataLoader, loss, metric, Trainer with a learning-rate
schedule, evaluation, and save_parameters / load_parameters.

    python examples/gluon_training.py            # 20 epochs
    python examples/gluon_training.py --quick    # 6 epochs (CI)

Runs on scikit-learn's bundled digits images (8x8, no download). The model
is a HybridSequential MLP; training uses `gluon.data.DataLoader` over an
`ArrayDataset`, `SoftmaxCrossEntropyLoss`, `mx.metric.Accuracy` and a
`gluon.Trainer` whose SGD learning rate follows `mx.lr_scheduler.FactorScheduler`
(halved every few epochs). The trained weights are saved with
`save_parameters`, loaded into a freshly built network with `load_parameters`,
and the reloaded network must predict exactly what the trained one does.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import hybridgraph as mx  # noqa: E402  (MXNet scripts only change this line)
from hybridgraph import autograd, gluon  # noqa: E402
from hybridgraph.gluon import nn  # noqa: E402


def load_digits(seed: int = 0):
    """Digits as (N, 64) float32 rows in [0, 1] with float32 labels, split 80/20."""
    from sklearn.datasets import load_digits as sk_digits
    digits = sk_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.float32)
    order = np.random.RandomState(seed).permutation(len(x))
    x, y = x[order], y[order]
    split = int(0.8 * len(x))
    return gluon.data.ArrayDataset(x[:split], y[:split]), gluon.data.ArrayDataset(x[split:], y[split:])


def build_net() -> nn.HybridSequential:
    net = nn.HybridSequential(prefix="mlp_")
    with net.name_scope():
        net.add(nn.Dense(128, activation="relu"),
                nn.Dropout(0.1),
                nn.Dense(64, activation="relu"),
                nn.Dense(10))
    return net


def evaluate(net, loader) -> float:
    """Accuracy over a DataLoader (predict mode: Dropout is off)."""
    metric = mx.metric.Accuracy()
    for data, label in loader:
        metric.update(label, net(data))
    return metric.get()[1]


def predict(net, loader) -> np.ndarray:
    return np.concatenate([net(data).asnumpy() for data, _ in loader])


def train(net, train_loader, test_loader, epochs: int, lr: float, steps_per_epoch: int):
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    schedule = mx.lr_scheduler.FactorScheduler(step=max(1, epochs // 3) * steps_per_epoch, factor=0.5,
                                               base_lr=lr)
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": lr, "momentum": 0.9, "wd": 1e-4, "lr_scheduler": schedule})
    metric = mx.metric.Accuracy()
    for epoch in range(epochs):
        metric.reset()
        total_loss, samples, start = 0.0, 0, time.perf_counter()
        for data, label in train_loader:
            with autograd.record():
                output = net(data)
                loss = loss_fn(output, label)
            loss.backward()
            trainer.step(data.shape[0])
            metric.update(label, output)
            total_loss += float(loss.sum().asscalar())
            samples += data.shape[0]
        name, train_acc = metric.get()
        print(f"epoch {epoch + 1:2d}  lr {trainer.learning_rate:.4f}  loss {total_loss / samples:.4f}  "
              f"train {name} {train_acc:.4f}  test {name} {evaluate(net, test_loader):.4f}  "
              f"{samples / (time.perf_counter() - start):,.0f} samples/s")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="6 epochs instead of 20 (for CI)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--out", default=None, help="folder for the saved parameters")
    args = parser.parse_args(argv)
    epochs = 6 if args.quick else 20
    mx.random.seed(7)
    np.random.seed(7)

    train_set, test_set = load_digits()
    train_loader = gluon.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    test_loader = gluon.data.DataLoader(test_set, batch_size=128)
    print(f"digits: {len(train_set)} training and {len(test_set)} test samples, "
          f"{len(train_loader)} batches per epoch")

    net = build_net()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    train(net, train_loader, test_loader, epochs, args.lr, len(train_loader))
    accuracy = evaluate(net, test_loader)
    print(f"test accuracy: {accuracy:.4f}")

    path = str(Path(args.out or tempfile.mkdtemp(prefix="gluon-training-")) / "digits_mlp.params")
    net.save_parameters(path)
    print(f"saved parameters to {path}")
    print("  names in the file:", sorted(mx.nd.load(path)))

    fresh = build_net()                  # a new network: new automatic prefixes don't matter
    fresh.load_parameters(path, ctx=mx.cpu())
    identical = bool(np.array_equal(predict(fresh, test_loader), predict(net, test_loader)))
    print(f"load_parameters into a fresh network: identical predictions: {identical}")
    return {"accuracy": accuracy, "identical": identical, "path": path}


if __name__ == "__main__":
    result = main()
    if result["accuracy"] < 0.9 or not result["identical"]:
        sys.exit("check failed: accuracy < 0.90 or reloaded predictions differ")
