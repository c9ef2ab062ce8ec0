"""Train, export for deployment, and serve the exported files from a fresh process
(with hybridgraph, and with real MXNet 1.9 when it is installed).

    python examples/export_and_serve.py                 # 4 epochs of training
    python examples/export_and_serve.py --quick         # 1 epoch (CI)
    python examples/export_and_serve.py --mxnet-python /path/to/mxnet-venv/bin/python

A small CNN with BatchNorm is trained on scikit-learn's digits, hybridized, and
exported with `net.export(prefix)`: `prefix-symbol.json` (the graph) and
`prefix-0000.params` (`arg:`/`aux:` weights), the files MXNet writes. A
deployment script (written next to them as `serve.py`) knows nothing of the
Python class: it loads the files with `gluon.SymbolBlock.imports` and predicts.
It runs in a fresh Python process, once as written (`import hybridgraph as mx`)
and once with `import mxnet as mx` under MXNet 1.9.1 when a Python with MXNet
is found (--mxnet-python, $HYBRIDGRAPH_MXNET_PYTHON, .mxvenv in the repository or
mxvenv beside it); both must reproduce the trained network's predictions.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import hybridgraph as mx  # noqa: E402  (MXNet scripts only change this line)
from hybridgraph import autograd, gluon, nd  # noqa: E402
from hybridgraph.gluon import nn  # noqa: E402

# The deployment side: no model class, only the two exported files.
SERVE_SCRIPT = '''\
"""serve.py PREFIX INPUT.npy OUTPUT.npy: predict with an exported model."""
import sys

import numpy as np

import hybridgraph as mx

prefix, input_file, output_file = sys.argv[1:4]
net = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params",
                                   ctx=mx.cpu())
scores = net(mx.nd.array(np.load(input_file))).asnumpy()
np.save(output_file, scores)
print("%s: loaded %d parameters, predicted %d samples" % (
    mx.__name__, len(net.collect_params().keys()), len(scores)))
'''


def load_digits(seed: int = 0):
    """8x8 digits as (N, 1, 8, 8) float32 in [0, 1], split 80/20."""
    from sklearn.datasets import load_digits as sk_digits
    digits = sk_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    y = digits.target.astype(np.float32)
    order = np.random.RandomState(seed).permutation(len(x))
    split = int(0.8 * len(x))
    return (x[order[:split]], y[order[:split]]), (x[order[split:]], y[order[split:]])


def build_net() -> nn.HybridSequential:
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(16, kernel_size=3, padding=1),
                nn.BatchNorm(),
                nn.Activation("relu"),
                nn.MaxPool2D(pool_size=2),
                nn.Flatten(),
                nn.Dense(64, activation="relu"),
                nn.Dense(10))
    return net


def train(net, x, y, epochs: int, batch_size: int = 32) -> None:
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x, y), batch_size=batch_size, shuffle=True)
    for epoch in range(epochs):
        metric = mx.metric.Accuracy()
        for data, label in loader:
            with autograd.record():
                out = net(data)
                loss = loss_fn(out, label)
            loss.backward()
            trainer.step(data.shape[0])
            metric.update(label, out)
        print(f"epoch {epoch + 1}: train accuracy {metric.get()[1]:.4f}")


def find_mxnet_python(given: str | None) -> str | None:
    """A Python with MXNet 1.9.1: --mxnet-python, $HYBRIDGRAPH_MXNET_PYTHON, .mxvenv in the repo
    (made by .ci/run) or an `mxvenv` beside the repository (as tests/conftest.py looks)."""
    candidates = (given, os.environ.get("HYBRIDGRAPH_MXNET_PYTHON"), str(REPO / ".mxvenv" / "bin" / "python"),
                  str(REPO.parent / "mxvenv" / "bin" / "python"))
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def serve(python: str, script: Path, prefix: str, inputs: Path, out: Path) -> np.ndarray:
    """Run the deployment script in a fresh process and return its predictions."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([python, str(script), prefix, str(inputs), str(out)], env=env, check=False,
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"{script.name} failed under {python}:\n{done.stderr[-3000:]}")
    print("   " + done.stdout.strip().splitlines()[-1])
    return np.load(out)


def compare(name: str, got: np.ndarray, want: np.ndarray) -> dict:
    diff = float(np.abs(got - want).max())
    same_classes = bool((got.argmax(1) == want.argmax(1)).all())
    print(f"   {name}: max |difference| {diff:.2e}, same predicted classes: {same_classes}")
    return {"max_diff": diff, "same_classes": same_classes}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 epoch of training (for CI)")
    parser.add_argument("--out", default=None, help="folder for the exported files")
    parser.add_argument("--mxnet-python", default=None, help="a Python interpreter with MXNet 1.9.1")
    args = parser.parse_args(argv)
    mx.random.seed(3)
    np.random.seed(3)
    out_dir = Path(args.out or tempfile.mkdtemp(prefix="export-and-serve-"))
    out_dir.mkdir(parents=True, exist_ok=True)

    (x_train, y_train), (x_test, y_test) = load_digits()
    net = build_net()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    train(net, x_train, y_train, epochs=1 if args.quick else 4)
    want = net(nd.array(x_test)).asnumpy()
    accuracy = float((want.argmax(1) == y_test).mean())
    print(f"trained network: test accuracy {accuracy:.4f}")

    net.export(str(out_dir / "digits_cnn"), epoch=0)   # returns None, as in MXNet
    sym_file, params_file = mx.gluon.utils.export_paths(str(out_dir / "digits_cnn"), epoch=0)
    print(f"1) exported {sym_file}\n   and {params_file}")
    prefix = str(out_dir / "digits_cnn")
    script = out_dir / "serve.py"
    script.write_text(SERVE_SCRIPT)
    inputs = out_dir / "test_images.npy"
    np.save(inputs, x_test)

    print(f"2) {script} in a fresh hybridgraph process")
    result = {"accuracy": accuracy,
              "hybridgraph": compare("hybridgraph", serve(sys.executable, script, prefix, inputs,
                                                          out_dir / "pred_hybridgraph.npy"), want)}

    mxnet_python = find_mxnet_python(args.mxnet_python)
    if mxnet_python is None:
        print("3) real MXNet: skipped (no Python with MXNet 1.9.1 found; set HYBRIDGRAPH_MXNET_PYTHON "
              "or pass --mxnet-python)")
        result["mxnet"] = None
    else:
        mx_script = out_dir / "serve_mxnet.py"
        mx_script.write_text(SERVE_SCRIPT.replace("import hybridgraph as mx", "import mxnet as mx"))
        print(f"3) the same files served by real MXNet ({mxnet_python})")
        result["mxnet"] = compare("MXNet 1.9.1", serve(mxnet_python, mx_script, prefix, inputs,
                                                       out_dir / "pred_mxnet.npy"), want)
    return result


if __name__ == "__main__":
    res = main()
    checks = [r for r in (res["hybridgraph"], res["mxnet"]) if r is not None]
    if not all(r["same_classes"] and r["max_diff"] < 1e-4 for r in checks):
        sys.exit("served predictions differ from the trained network's")
