"""Gluon MLP (784-256-256-10): training step at batch 64 and inference at batch 1 and 64.

Side by side, in one run: hybridgraph eager, hybridized and with the whole training step
compiled (`Trainer.compile_step`, training row only differs), a hand-written numpy
version (forward, backward and SGD with momentum into preallocated buffers: the
floor for this work on numpy), and MXNet 1.9.1's Gluon run in its own venv in a
subprocess when one is found (HYBRIDGRAPH_MXNET_PYTHON, .mxvenv, /work/mxvenv).
Prints medians and the ratios to raw numpy; the [gluon] target is a hybridized
training step within 1.3x of raw numpy. Both hybridgraph and MXNet hybridize with
static_alloc=True, static_shape=True; the loss is called un-hybridized, as usual.
hybridgraph and raw numpy are timed in interleaved rounds (best round kept), so load
from other processes does not land on one of them only; set OPENBLAS_NUM_THREADS=1
on a shared machine.

    python benchmarks/gluon.py [--quick]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from hybridgraph import nd  # noqa: E402
from _mxnet import run_mxnet_script  # noqa: E402
from _timing import blas_note, median_seconds, table  # noqa: E402
from hybridgraph.gluon import loss, nn  # noqa: E402
from hybridgraph.gluon.trainer import Trainer  # noqa: E402
from hybridgraph.nd import autograd  # noqa: E402

SIZES = (784, 256, 256, 10)
BATCH = 64
LR, MOMENTUM = 0.01, 0.9


def batch(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.random((n, SIZES[0]), dtype=np.float32), rng.integers(0, 10, n).astype(np.float32)


# -- raw numpy ----------------------------------------------------------------------------------

class NumpyMLP:
    """The same MLP by hand: relu layers, softmax cross-entropy, SGD momentum (MXNet's update rule)."""

    def __init__(self, n: int):
        rng = np.random.default_rng(1)
        self.w = [rng.uniform(-0.07, 0.07, (o, i)).astype(np.float32) for i, o in zip(SIZES[:-1], SIZES[1:])]
        self.b = [np.zeros(o, np.float32) for o in SIZES[1:]]
        self.mw = [np.zeros_like(w) for w in self.w]
        self.mb = [np.zeros_like(b) for b in self.b]
        self.gw = [np.zeros_like(w) for w in self.w]
        self.gb = [np.zeros_like(b) for b in self.b]
        self.h = [np.zeros((n, o), np.float32) for o in SIZES[1:]]
        self.d = [np.zeros((n, o), np.float32) for o in SIZES[1:]]
        self.dx = [np.zeros((n, i), np.float32) for i in SIZES[1:-1]]
        self.rows = np.arange(n)

    def forward(self, x: np.ndarray) -> np.ndarray:
        a = x
        last = len(self.w) - 1
        for k, (w, b, h) in enumerate(zip(self.w, self.b, self.h[: len(self.w)])):
            np.dot(a, w.T, out=h)
            h += b
            if k < last:
                np.maximum(h, 0, out=h)
            a = h
        return a

    def train_step(self, x: np.ndarray, y: np.ndarray) -> None:
        logits = self.forward(x)
        d = self.d[-1]
        np.subtract(logits, logits.max(axis=1, keepdims=True), out=d)
        np.exp(d, out=d)
        d /= d.sum(axis=1, keepdims=True)
        d[self.rows, y.astype(np.int64)] -= 1      # d(loss)/d(logits), loss summed over the batch
        scale = 1.0 / len(x)                      # Trainer.step(batch_size) rescales by 1/batch
        for k in range(len(self.w) - 1, -1, -1):
            a = x if k == 0 else self.h[k - 1]
            np.dot(self.d[k].T, a, out=self.gw[k])
            self.d[k].sum(axis=0, out=self.gb[k])
            if k > 0:
                np.dot(self.d[k], self.w[k], out=self.dx[k - 1])
                np.multiply(self.dx[k - 1], self.h[k - 1] > 0, out=self.d[k - 1])
        for p, m, g in zip(self.w + self.b, self.mw + self.mb, self.gw + self.gb):
            m *= MOMENTUM
            m -= (LR * scale) * g
            p += m


# -- hybridgraph --------------------------------------------------------------------------------

def gluon_mlp() -> nn.HybridSequential:
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(SIZES[1], activation="relu"), nn.Dense(SIZES[2], activation="relu"), nn.Dense(SIZES[3]))
    net.initialize()
    return net


def hybridgraph_calls(hybridize: bool, compiled_step: bool = False) -> dict:
    """workload -> a call of hybridgraph's Gluon MLP (warmed up: traced and compiled).
    `compiled_step`: the training step is `Trainer.compile_step` (forward, loss, backward
    and update as one compiled graph) instead of record / backward / step."""
    net = gluon_mlp()
    if hybridize:   # the flags the MXNet run below uses too
        net.hybridize(static_alloc=True, static_shape=True)
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": LR, "momentum": MOMENTUM})
    loss_fn = loss.SoftmaxCrossEntropyLoss()
    x64, y64 = (nd.array(a) for a in batch(BATCH))
    x1 = nd.array(batch(1)[0])
    compiled = trainer.compile_step(net, loss_fn)

    def train_step() -> None:
        if compiled_step:
            compiled(x64, y64, BATCH)
            return
        with autograd.record():
            out = loss_fn(net(x64), y64)
        out.backward()
        trainer.step(BATCH)

    calls = {"train 64": train_step, "infer 1": lambda: net(x1).wait_to_read(),
             "infer 64": lambda: net(x64).wait_to_read()}
    for fn in calls.values():
        fn()
        fn()
    return calls


def numpy_calls() -> dict:
    x64, y64 = batch(BATCH)
    x1 = batch(1)[0]
    train, infer1, infer64 = NumpyMLP(BATCH), NumpyMLP(1), NumpyMLP(BATCH)
    return {"train 64": lambda: train.train_step(x64, y64), "infer 1": lambda: infer1.forward(x1),
            "infer 64": lambda: infer64.forward(x64)}


WORKLOADS = ("train 64", "infer 1", "infer 64")


def time_interleaved(engines: dict, rounds: int, opts: dict) -> dict:
    """engine -> workload -> seconds: per call, the best over `rounds` rounds of a median, with
    the engines timed in turn in every round, so that a burst of load from other processes
    lands on one round of every engine rather than on all of one engine's runs (the ratios
    to raw numpy compare measurements taken at the same time)."""
    best = {name: dict.fromkeys(calls, float("inf")) for name, calls in engines.items()}
    for _ in range(rounds):
        for work in WORKLOADS:
            for name, calls in engines.items():
                best[name][work] = min(best[name][work], median_seconds(calls[work], **opts))
    return best


# -- MXNet 1.9.1, in its own venv ----------------------------------------------------------------

MXNET_SCRIPT = r"""
import json, statistics, sys, timeit, warnings
warnings.filterwarnings("ignore")
import numpy as np
import mxnet as mx
from mxnet import autograd, gluon
from mxnet.gluon import nn
sizes, batch, lr, mom, repeat, min_time = json.loads(sys.argv[1])

def median_seconds(fn):
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    number = max(1, int(number * min_time / 0.2))
    return statistics.median(t / number for t in timer.repeat(repeat=repeat, number=number))

rng = np.random.default_rng(0)
x64 = mx.nd.array(rng.random((batch, sizes[0]), dtype=np.float32))
y64 = mx.nd.array(rng.integers(0, 10, batch).astype(np.float32))
x1 = x64[:1].copy()
out = {}
for hybridize in (False, True):
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(sizes[1], activation="relu"), nn.Dense(sizes[2], activation="relu"), nn.Dense(sizes[3]))
    net.initialize()
    if hybridize:
        net.hybridize(static_alloc=True, static_shape=True)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr, "momentum": mom})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()

    def train_step():
        with autograd.record():
            l = loss_fn(net(x64), y64)
        l.backward()
        trainer.step(batch)
        mx.nd.waitall()

    train_step()
    mode = "hybridized" if hybridize else "eager"
    out[mode] = {"train 64": median_seconds(train_step),
                 "infer 1": median_seconds(lambda: net(x1).wait_to_read()),
                 "infer 64": median_seconds(lambda: net(x64).wait_to_read())}
print(json.dumps(out))
"""


def mxnet_timings(opts: dict) -> tuple[dict | None, str]:
    return run_mxnet_script(MXNET_SCRIPT, [SIZES, BATCH, LR, MOMENTUM, opts["repeat"], opts["min_time"]],
                            timeout=600)


# -- report -------------------------------------------------------------------------------------

def _ms(t: float | None) -> str:
    return "-" if t is None else f"{t * 1e3:.3f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter timing runs")
    quick = parser.parse_args().quick
    opts = {"repeat": 3, "min_time": 0.02} if quick else {"repeat": 7, "min_time": 0.1}
    engines = {"raw numpy": numpy_calls(), "hybridgraph eager": hybridgraph_calls(False),
               "hybridgraph hybridized": hybridgraph_calls(True),
               "hybridgraph compile_step": hybridgraph_calls(True, compiled_step=True)}
    results = time_interleaved(engines, 3 if quick else 5, opts)
    mx_results, mx_note = mxnet_timings(opts)
    if mx_results:
        results["MXNet 1.9.1 eager"] = mx_results["eager"]
        results["MXNet 1.9.1 hybridized"] = mx_results["hybridized"]
    base = results["raw numpy"]
    rows = [(name, work, _ms(t[work]), f"{t[work] / base[work]:.2f}x")
            for work in WORKLOADS for name, t in results.items()]
    print(f"Gluon MLP {'-'.join(map(str, SIZES))}, SGD momentum; medians in one process run")
    print(blas_note())
    print(table(rows, ("implementation", "workload", "median", "vs raw numpy")))
    print(mx_note)
    hyb = results["hybridgraph hybridized"]["train 64"]
    note = (f"hybridized training step: {hyb / base['train 64']:.2f}x raw numpy (target <= 1.30x)")
    if mx_results:
        note += f", {hyb / mx_results['hybridized']['train 64']:.2f}x MXNet 1.9.1's hybridized Gluon"
    print(note)
    fused = results["hybridgraph compile_step"]["train 64"]
    print(f"compiled whole step (Trainer.compile_step): {fused / base['train 64']:.2f}x raw numpy, "
          f"{fused / hyb:.2f}x the unfused hybridized step")


if __name__ == "__main__":
    main()
