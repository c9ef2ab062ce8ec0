"""The "Dive into Deep Learning" workflow on MXNet's numpy interface (`mx.np` / `mx.npx`).

    python examples/d2l_numpy.py            # full size
    python examples/d2l_numpy.py --quick    # small (CI)

Four steps, as d2l's MXNet edition teaches them, written exactly as MXNet 1.9 code
(only the import line names hybridgraph):

1. linear regression from scratch: synthetic data, parameters as `np` arrays with
   `attach_grad()`, `autograd.record()`, `backward()` and a hand-written SGD step;
2. softmax regression with `gluon.nn.Dense` under `npx.set_np()`;
3. a multilayer perceptron with `gluon.nn` and a `Trainer`;
4. a LeNet on scikit-learn's 8x8 digits, hybridized, exported, and reloaded with
   `gluon.SymbolBlock.imports` (its predictions must equal the trained net's).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as onp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import hybridgraph as mx  # noqa: E402  (MXNet scripts only change this line)
from hybridgraph import autograd, gluon, np, npx  # noqa: E402
from hybridgraph.gluon import nn  # noqa: E402

npx.set_np()


# -- 1. linear regression from scratch -------------------------------------------------------

def synthetic_data(w, b, num_examples: int):
    """y = Xw + b + noise (d2l.synthetic_data)."""
    X = np.random.normal(0, 1, (num_examples, len(w)))  # noqa: N806 - d2l's names
    y = np.dot(X, w) + b
    y += np.random.normal(0, 0.01, y.shape)
    return X, y.reshape((-1, 1))


def linear_regression(epochs: int) -> dict:
    true_w, true_b = np.array([2, -3.4]), 4.2
    features, labels = synthetic_data(true_w, true_b, 1000)
    w = np.random.normal(0, 0.01, (2, 1))
    b = np.zeros(1)
    w.attach_grad()
    b.attach_grad()
    lr, batch_size = 0.03, 10
    for _ in range(epochs):
        order = onp.random.permutation(len(features))
        for i in range(0, len(order), batch_size):
            idx = np.array(order[i:i + batch_size])
            X, y = features[idx], labels[idx]  # noqa: N806
            with autograd.record():
                loss = (np.dot(X, w) + b - y) ** 2 / 2
            loss.backward()
            for param in (w, b):
                param[:] = param - lr * param.grad / batch_size
    final = ((np.dot(features, w) + b - labels) ** 2 / 2).mean()
    return {"w_error": float(np.abs(w.reshape(-1) - true_w).max()), "b_error": abs(float(b[0]) - true_b),
            "loss": float(final)}


# -- 2-4. gluon in numpy mode ----------------------------------------------------------------

def load_digits(seed: int = 0, image: bool = False):
    from sklearn.datasets import load_digits as sk_digits
    digits = sk_digits()
    x = (digits.data / 16.0).astype(onp.float32)
    if image:
        x = x.reshape(-1, 1, 8, 8)
    y = digits.target.astype(onp.int32)
    order = onp.random.RandomState(seed).permutation(len(x))
    x, y = x[order], y[order]
    split = int(0.8 * len(x))
    return gluon.data.ArrayDataset(x[:split], y[:split]), gluon.data.ArrayDataset(x[split:], y[split:])


def accuracy(net, loader) -> float:
    right = total = 0
    for X, y in loader:  # noqa: N806
        pred = net(X).argmax(axis=1)
        right += int((pred.astype(y.dtype) == y).sum())
        total += y.size
    return right / total


def train(net, epochs: int, lr: float, image: bool = False) -> float:
    train_set, test_set = load_digits(image=image)
    train_iter = gluon.data.DataLoader(train_set, batch_size=64, shuffle=True)
    test_iter = gluon.data.DataLoader(test_set, batch_size=256)
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr})
    for _ in range(epochs):
        for X, y in train_iter:  # noqa: N806
            with autograd.record():
                l = loss(net(X), y)  # noqa: E741 - d2l's name
            l.backward()
            trainer.step(X.shape[0])
    return accuracy(net, test_iter)


def lenet() -> nn.HybridSequential:
    net = nn.HybridSequential()
    net.add(nn.Conv2D(6, kernel_size=3, padding=1, activation="relu"),
            nn.AvgPool2D(pool_size=2, strides=2),
            nn.Conv2D(16, kernel_size=3, activation="relu"),
            nn.Dense(64, activation="relu"),
            nn.Dense(10))
    return net


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small run for CI")
    parser.add_argument("--out", default=None, help="folder for the exported LeNet")
    args = parser.parse_args(argv)
    mx.random.seed(0)
    onp.random.seed(0)
    scale = 1 if args.quick else 3
    result = {"linear": linear_regression(epochs=2 * scale)}
    print(f"linear regression: |w - w*| = {result['linear']['w_error']:.4f}, loss {result['linear']['loss']:.6f}")

    softmax = nn.Dense(10)
    softmax.initialize(mx.init.Normal(0.01))
    result["softmax_accuracy"] = train(softmax, epochs=5 * scale, lr=0.5)
    print(f"softmax regression test accuracy: {result['softmax_accuracy']:.3f}")

    mlp = nn.Sequential()
    mlp.add(nn.Dense(64, activation="relu"), nn.Dense(10))
    mlp.initialize(mx.init.Normal(0.01))
    result["mlp_accuracy"] = train(mlp, epochs=5 * scale, lr=0.5)
    print(f"MLP test accuracy: {result['mlp_accuracy']:.3f}")

    net = lenet()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    result["lenet_accuracy"] = train(net, epochs=6 * scale, lr=0.2, image=True)
    print(f"LeNet (hybridized) test accuracy: {result['lenet_accuracy']:.3f}")
    out = Path(args.out or tempfile.mkdtemp(prefix="d2l_numpy_"))
    prefix = str(out / "lenet")
    net.export(prefix)
    reloaded = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    _, test_set = load_digits(image=True)
    X = np.array(test_set[:][0])  # noqa: N806
    same = bool((net(X).asnumpy() == reloaded(X).asnumpy()).all())
    result.update(prefix=prefix, reloaded_identical=same)
    print(f"exported to {prefix}-symbol.json; SymbolBlock.imports predicts identically: {same}")
    return result


if __name__ == "__main__":
    main()
