"""hybridgraph in one minute: define imperatively, hybridize for speed, export, load back, ship as ONNX.

    python examples/quickstart.py            # the full demo (about a minute on 2 cores)
    python examples/quickstart.py --quick    # fewer epochs (CI)

Trains a small CNN on scikit-learn's bundled digits images (real data, no
download) with the Gluon API, exactly as one would with MXNet 1.x.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import hybridgraph as mx  # noqa: E402  (MXNet scripts only change this line)
from hybridgraph import autograd, gluon, nd  # noqa: E402
from hybridgraph.gluon import nn  # noqa: E402


def load_digits(seed: int = 0):
    """8x8 grey digits as (N, 1, 8, 8) float32 in [0, 1], split 80/20."""
    from sklearn.datasets import load_digits as sk_digits
    digits = sk_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    y = digits.target.astype(np.float32)
    order = np.random.default_rng(seed).permutation(len(x))
    x, y = x[order], y[order]
    split = int(0.8 * len(x))
    return (x[:split], y[:split]), (x[split:], y[split:])


def build_cnn() -> nn.HybridSequential:
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(16, kernel_size=3, padding=1, activation="relu"),
                nn.MaxPool2D(pool_size=2),
                nn.Conv2D(32, kernel_size=3, padding=1, activation="relu"),
                nn.MaxPool2D(pool_size=2),
                nn.Flatten(),
                nn.Dense(64, activation="relu"),
                nn.Dense(10))
    return net


def train_epochs(net, trainer, loss_fn, data, epochs, batch_size, label):
    """Train; print a progress line per epoch; return samples/s."""
    (x, y) = data
    n = len(x)
    seen, elapsed = 0, 0.0
    for epoch in range(epochs):
        metric = mx.metric.Accuracy()
        total_loss = 0.0
        start = time.perf_counter()
        batches = 0
        for i in range(0, n, batch_size):
            batches += 1
            xb, yb = nd.array(x[i:i + batch_size]), nd.array(y[i:i + batch_size])
            with autograd.record():
                out = net(xb)
                loss = loss_fn(out, yb)
            loss.backward()
            trainer.step(xb.shape[0])
            metric.update(yb, out)
            total_loss += float(loss.mean().asscalar())
        took = time.perf_counter() - start
        seen += n
        elapsed += took
        print(f"  [{label}] epoch {epoch + 1} batches {batches} loss {total_loss / batches:.4f} "
              f"acc {metric.get()[1]:.4f} {n / took:,.0f} samples/s")
    return seen / elapsed


def inference_speed(net, x, batch_size: int = 64, repeat: int = 3) -> float:
    xb = [nd.array(x[i:i + batch_size]) for i in range(0, len(x), batch_size)]
    for b in xb:  # warm up: trace once, plan each batch shape (the last batch is smaller)
        net(b)
    start = time.perf_counter()
    for _ in range(repeat):
        for b in xb:
            net(b).wait_to_read()
    return repeat * len(x) / (time.perf_counter() - start)


def accuracy(net, x, y) -> float:
    pred = net(nd.array(x)).asnumpy().argmax(axis=1)
    return float((pred == y).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer epochs (for CI)")
    parser.add_argument("--out", default=None, help="folder for the exported model and picture")
    args = parser.parse_args()
    eager_epochs, hybrid_epochs = (2, 3) if args.quick else (3, 6)
    mx.random.seed(42)
    train, test = load_digits()
    print(f"digits: {len(train[0])} training and {len(test[0])} test images of 8x8 pixels")

    net = build_cnn()
    net.initialize(mx.init.Xavier())
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.005})

    print("1) imperative training (eager NDArray execution)")
    eager_train = train_epochs(net, trainer, loss_fn, train, eager_epochs, 32, "eager")
    eager_infer = inference_speed(net, test[0])

    print("2) net.hybridize(): traced once into a graph, optimised and compiled")
    net.hybridize(static_alloc=True)
    hybrid_train = train_epochs(net, trainer, loss_fn, train, hybrid_epochs, 32, "hybridized")
    hybrid_infer = inference_speed(net, test[0])
    acc = accuracy(net, *test)

    print("\n   speed (samples/s)      eager   hybridized   speed-up")
    print(f"   training           {eager_train:9,.0f}   {hybrid_train:10,.0f}   {hybrid_train / eager_train:7.2f}x")
    print(f"   inference          {eager_infer:9,.0f}   {hybrid_infer:10,.0f}   {hybrid_infer / eager_infer:7.2f}x")
    stats = net.memory_stats() if hasattr(net, "memory_stats") else None
    if stats:
        print(f"   compiled graph memory: planned {stats['planned'] / 1024:.1f} KiB "
              f"vs naive {stats['naive'] / 1024:.1f} KiB")

    out_dir = Path(args.out or tempfile.mkdtemp(prefix="hybridgraph-quickstart-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    prefix = str(out_dir / "digits_cnn")
    net.export(prefix, epoch=0)   # returns None, as in MXNet
    sym_file, params_file = gluon.utils.export_paths(prefix, epoch=0)
    print(f"\n3) exported {os.path.basename(sym_file)} and {os.path.basename(params_file)} to {out_dir}")
    loaded = gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    same = np.array_equal(loaded(nd.array(test[0])).asnumpy(), net(nd.array(test[0])).asnumpy())
    print(f"   SymbolBlock.imports(...) predictions identical to the trained net: {same}")
    print(f"   test accuracy: {acc:.4f}")

    draw(prefix, out_dir)
    onnx_ok = to_onnx(net, test[0], out_dir)
    if not same or acc < 0.95 or onnx_ok is False:
        sys.exit("demo check failed: predictions differ, accuracy < 0.95 or the ONNX model disagrees")


def to_onnx(net, images: np.ndarray, out_dir: Path) -> bool | None:
    """5) export the trained CNN to ONNX and check it in onnxruntime (None: onnx/onnxruntime absent)."""
    try:
        import onnx  # noqa: F401
        import onnxruntime
    except ImportError:
        print("5) ONNX step skipped: pip install onnx onnxruntime to export and check the model")
        return None
    path = net.export_onnx(str(out_dir / "digits_cnn.onnx"), nd.array(images[:1]), dynamic_batch=True)
    sess = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = sess.run(None, {"data": images})[0]
    err = float(np.abs(got - net(nd.array(images)).asnumpy()).max())
    same_class = bool((got.argmax(1) == net(nd.array(images)).asnumpy().argmax(1)).all())
    print(f"5) exported {os.path.basename(path)}; onnxruntime on {len(images)} test images: max abs error "
          f"{err:.2e}, same predicted classes: {same_class}")
    return err < 1e-4 and same_class


def draw(prefix: str, out_dir: Path) -> None:
    """4) draw the network: a PNG when Graphviz's dot exists, the DOT text otherwise."""
    graph = mx.sym.load(prefix + "-symbol.json")
    dot = mx.viz.plot_network(graph, title="digits_cnn", save_format="png", shape={"data": (1, 1, 8, 8)})
    try:
        path = dot.render(filename="digits_cnn", directory=str(out_dir), cleanup=True)
    except Exception:  # noqa: BLE001 - no Graphviz: keep the DOT source instead
        path = dot.save(filename="digits_cnn.gv", directory=str(out_dir))
    print(f"4) network drawing: {path}")


if __name__ == "__main__":
    main()
