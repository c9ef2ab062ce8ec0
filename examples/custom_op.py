"""An operator written in Python with mx.operator.CustomOp, used the four ways MXNet allows.

    python examples/custom_op.py

The operator is a numerically stable softplus, log(1 + exp(x)), with its own
backward (sigmoid(x) times the output gradient). It is registered once and then:

1. called eagerly: `mx.nd.Custom(x, op_type="softplus")`;
2. differentiated with autograd (the backward you wrote runs on the tape);
3. placed in a Symbol graph, bound and trained one step with the executor, and
   saved to / loaded from -symbol.json ("op": "Custom" with its op_type, the
   form MXNet 1.9.1 writes);
4. used inside a HybridBlock that is hybridized: the recorded graph calls the
   same Python forward and backward.

Each way is checked against numpy; the script prints one line per check.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import hybridgraph as mx  # noqa: E402


class Softplus(mx.operator.CustomOp):
    """forward: log(1 + exp(beta * x)) / beta; backward: sigmoid(beta * x) * dy."""

    def __init__(self, beta: float):
        super().__init__()
        self.beta = beta

    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy() * self.beta
        y = (np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))) / self.beta
        self.assign(out_data[0], req[0], mx.nd.array(y, dtype=in_data[0].dtype))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        sig = mx.nd.sigmoid(in_data[0] * self.beta)
        self.assign(in_grad[0], req[0], sig * out_grad[0])


@mx.operator.register("softplus")
class SoftplusProp(mx.operator.CustomOpProp):
    """One input, one output of the same shape; `beta` arrives as a string, as in MXNet."""

    def __init__(self, beta: str = "1"):
        super().__init__(need_top_grad=True)
        self.beta = float(beta)

    def list_arguments(self):
        return ["data"]

    def list_outputs(self):
        return ["output"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return Softplus(self.beta)


def softplus_np(x: np.ndarray, beta: float = 1.0) -> np.ndarray:
    return np.log1p(np.exp(beta * x)) / beta


def sigmoid_np(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


class SoftplusMLP(mx.gluon.HybridBlock):
    """Dense -> Custom softplus -> Dense."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.fc1 = mx.gluon.nn.Dense(8)
            self.fc2 = mx.gluon.nn.Dense(1)

    def hybrid_forward(self, F, x):
        return self.fc2(F.Custom(self.fc1(x), op_type="softplus", beta=2))


def main(argv: list[str] | None = None) -> dict:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    rng = np.random.default_rng(0)
    x_np = rng.uniform(-3, 3, size=(4, 5)).astype(np.float32)
    result = {}

    y = mx.nd.Custom(mx.nd.array(x_np), op_type="softplus")
    result["eager_max_err"] = float(np.abs(y.asnumpy() - softplus_np(x_np)).max())

    x = mx.nd.array(x_np)
    x.attach_grad()
    with mx.autograd.record():
        loss = (mx.nd.Custom(x, op_type="softplus", beta=2) * 3).sum()
    loss.backward()
    result["autograd_max_err"] = float(np.abs(x.grad.asnumpy() - 3 * sigmoid_np(2 * x_np)).max())

    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(mx.sym.Custom(data, op_type="softplus", name="act"), num_hidden=1, name="fc")
    with tempfile.TemporaryDirectory() as tmp:
        net.save(f"{tmp}/net-symbol.json")
        nodes = json.loads(Path(f"{tmp}/net-symbol.json").read_text())["nodes"]
        result["json_node"] = next(n for n in nodes if n["op"] == "Custom")
        loaded = mx.sym.load(f"{tmp}/net-symbol.json")
    exe = loaded.simple_bind(mx.cpu(), data=x_np.shape)
    exe.arg_dict["data"][:] = x_np
    exe.arg_dict["fc_weight"][:] = 1.0
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones((4, 1)))
    result["symbol_forward_err"] = float(np.abs(exe.outputs[0].asnumpy()[:, 0] - softplus_np(x_np).sum(1)).max())
    result["symbol_grad_err"] = float(np.abs(exe.grad_dict["data"].asnumpy() - sigmoid_np(x_np)).max())

    block = SoftplusMLP()
    block.initialize(mx.init.Xavier())
    runs = []
    for hybridize in (False, True):
        if hybridize:
            block.hybridize()
        xb = mx.nd.array(x_np)
        xb.attach_grad()
        with mx.autograd.record():
            out = block(xb)
        out.backward()
        runs.append((out.asnumpy(), xb.grad.asnumpy()))
    result["hybridized_vs_eager_err"] = float(np.abs(runs[0][0] - runs[1][0]).max())
    result["hybridized_vs_eager_grad_err"] = float(np.abs(runs[0][1] - runs[1][1]).max())

    for key, value in result.items():
        print(f"{key}: {value}")
    return result


if __name__ == "__main__":
    main()
