"""Soak runs for test_soak.py, in a fresh process: prints one JSON object.

`shapes N`: a small MLP (hybridized) called with batch sizes 1..N, twice (2N calls, every
size's plan evicted before its reuse once the budget is full): RSS growth after warm-up.
`train N`: N training steps of a hybridized MLP with a Trainer (SGD with momentum; Adam's
per-step learning rate first fills the eager attribute cache, bounded at 4096 entries): RSS
and live object counts at 10% and at the end.
"""
from __future__ import annotations

import gc
import json
import sys

import hybridgraph as mx
from hybridgraph import autograd, gluon, nd


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def mlp():
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(256, activation="relu"), gluon.nn.Dense(256, activation="relu"), gluon.nn.Dense(10))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    return net


def shapes(n: int) -> dict:
    net = mlp()
    for b in (1, 2, 3):
        net(nd.ones((b, 100)))
        net(nd.ones((b, 100)))
    gc.collect()
    start = rss_mb()
    for _ in range(2):
        for b in range(1, n + 1):
            net(nd.ones((b, 100))).wait_to_read()
    gc.collect()
    return {"calls": 2 * n, "sizes": n, "rss_growth_mb": rss_mb() - start, "cache": net.cache_info()}


def train(n: int) -> dict:
    net = mlp()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01, "momentum": 0.9, "wd": 1e-4})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    x, y = nd.random.uniform(shape=(32, 100)), nd.array([i % 10 for i in range(32)])
    marks = {}
    for step in range(1, n + 1):
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(32)
        if step in (n // 10, n):
            loss.asnumpy()
            gc.collect()
            marks[step] = (rss_mb(), len(gc.get_objects()))
    (r0, o0), (r1, o1) = marks[n // 10], marks[n]
    return {"steps": n, "rss_growth_mb": r1 - r0, "objects_growth": o1 - o0, "objects": o1}


if __name__ == "__main__":
    kind, n = sys.argv[1], int(sys.argv[2])
    print(json.dumps({"shapes": shapes, "train": train}[kind](n)))
