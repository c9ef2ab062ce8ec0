"""Train a network with MXNet 1.x's symbolic API: Symbol, simple_bind, an executor, plain SGD.

    python examples/symbolic_training.py            # 30 epochs
    python examples/symbolic_training.py --quick    # 10 epochs (CI)

The Symbol tutorial's training pipeline on scikit-learn's bundled digits data
(8x8 images, no download): declare the network with Variable /
FullyConnected / Activation / SoftmaxOutput, let `simple_bind` allocate every
argument and gradient array, then loop forward(is_train=True) / backward()
and update the weights in place from `grad_dict`. The trained model is saved
as a checkpoint (`-symbol.json` + `-0000.params`, the files MXNet writes),
loaded back with `mx.model.load_checkpoint` and evaluated again.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import hybridgraph as mx  # noqa: E402  (MXNet scripts only change this line)

INPUTS = ("data", "softmax_label")


def load_digits(seed: int = 0):
    """The digits as flat (N, 64) float32 rows in [0, 1], split 80/20 after shuffling."""
    from sklearn.datasets import load_digits as sk_digits
    digits = sk_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.float32)
    order = np.random.RandomState(seed).permutation(len(x))
    x, y = x[order], y[order]
    split = int(0.8 * len(x))
    return (x[:split], y[:split]), (x[split:], y[split:])


def build_mlp(num_hidden: int = 128):
    """data -> fc1 -> relu1 -> fc2 -> softmax, as in the Symbol tutorial."""
    net = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data=net, name='fc1', num_hidden=num_hidden)
    net = mx.sym.Activation(data=net, name='relu1', act_type="relu")
    net = mx.sym.FullyConnected(data=net, name='fc2', num_hidden=10)
    return mx.sym.SoftmaxOutput(data=net, name='softmax')


def initialize(exe) -> None:
    """Xavier weights and zero biases, written into the executor's own arrays."""
    init = mx.init.Xavier(magnitude=2.0)
    for name, arr in exe.arg_dict.items():
        if name not in INPUTS:
            init(mx.init.InitDesc(name), arr)


def train(exe, x, y, epochs: int, batch_size: int, lr: float) -> None:
    """Forward, backward and an SGD step over grad_dict for every full batch."""
    params = [n for n in exe.arg_dict if n not in INPUTS]
    n = len(x) - len(x) % batch_size        # the executor was bound for full batches
    for epoch in range(epochs):
        correct = 0
        for i in range(0, n, batch_size):
            exe.arg_dict['data'][:] = x[i:i + batch_size]
            exe.arg_dict['softmax_label'][:] = y[i:i + batch_size]
            exe.forward(is_train=True)
            exe.backward()
            for name in params:
                # SoftmaxOutput's gradient is summed over the batch: scale the step by 1/batch
                exe.arg_dict[name][:] -= lr / batch_size * exe.grad_dict[name]
            correct += int((exe.outputs[0].asnumpy().argmax(axis=1) == y[i:i + batch_size]).sum())
        print(f"epoch {epoch + 1:2d}  train accuracy {correct / n:.4f}")


def evaluate(exe, x, y) -> float:
    """Accuracy of an executor already bound for the whole of x."""
    exe.arg_dict['data'][:] = x
    exe.forward(is_train=False)
    return float((exe.outputs[0].asnumpy().argmax(axis=1) == y).mean())


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 epochs instead of 30 (for CI)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.2)
    parser.add_argument("--out", default=None, help="folder for the checkpoint files")
    args = parser.parse_args(argv)
    epochs = 10 if args.quick else 30
    np.random.seed(0)
    mx.random.seed(0)
    (x_train, y_train), (x_test, y_test) = load_digits()
    print(f"digits: {len(x_train)} training and {len(x_test)} test rows of 64 pixels")

    net = build_mlp()
    print("arguments:", net.list_arguments())
    exe = net.simple_bind(ctx=mx.cpu(), data=(args.batch_size, 64))
    print("bound shapes:", {k: v.shape for k, v in exe.arg_dict.items()})
    initialize(exe)
    train(exe, x_train, y_train, epochs, args.batch_size, args.lr)

    # a second executor for the whole test set, sharing the trained weights
    test_exe = exe.reshape(allow_up_sizing=True, data=(len(x_test), 64), softmax_label=(len(x_test),))
    accuracy = evaluate(test_exe, x_test, y_test)
    print(f"test accuracy: {accuracy:.4f}")

    prefix = str(Path(args.out or tempfile.mkdtemp(prefix="symbolic-training-")) / "digits_mlp")
    arg_params = {k: v for k, v in exe.arg_dict.items() if k not in INPUTS}
    mx.model.save_checkpoint(prefix, 0, net, arg_params, exe.aux_dict)
    print(f"saved {prefix}-symbol.json and {prefix}-0000.params")

    sym, loaded_args, loaded_aux = mx.model.load_checkpoint(prefix, 0)
    args_in = {**loaded_args, 'data': mx.nd.array(x_test), 'softmax_label': mx.nd.array(y_test)}
    reloaded = sym.bind(ctx=mx.cpu(), args=args_in, aux_states=loaded_aux)
    reloaded_accuracy = evaluate(reloaded, x_test, y_test)
    print(f"reloaded checkpoint test accuracy: {reloaded_accuracy:.4f}")
    return {"accuracy": accuracy, "reloaded_accuracy": reloaded_accuracy, "prefix": prefix}


if __name__ == "__main__":
    result = main()
    if result["accuracy"] < 0.9:
        sys.exit(f"test accuracy {result['accuracy']:.4f} < 0.90")
