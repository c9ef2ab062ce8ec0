"""FullyConnected's forward product at small batches: the two ways to compute x @ W.T.

MXNet's weight is (hidden, inputs), so the forward is x @ W.T, for which OpenBLAS packs a
transposed operand. The same numbers come out of (W @ x.T).T, whose transposing copy back can
carry the bias add. Side by side in one process (interleaved rounds, medians), per batch and
(inputs, hidden): the time of the transposed form over the usual one, and which one
FullyConnected's kernel picks (`nd/ops/nn.py`, `_transposed_product_pays`).

    python benchmarks/fc_layouts.py [--quick]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hybridgraph.nd.ops import nn as nn_ops  # noqa: E402  (also limits OpenBLAS's worker spin)

SHAPES = ((784, 256), (256, 256), (512, 1000), (800, 500), (2048, 1000), (256, 10))
BATCHES = (1, 4, 8, 16, 32, 64, 128, 256)


def _per_call(fn, calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def ratio(batch: int, inputs: int, hidden: int, rounds: int) -> float:
    """Median time of (W @ x.T).T + b over x @ W.T + b, both into a preallocated output."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, inputs), dtype=np.float32)
    w = rng.standard_normal((hidden, inputs), dtype=np.float32)
    b = rng.standard_normal(hidden, dtype=np.float32)
    out = np.empty((batch, hidden), np.float32)

    def usual():
        np.dot(x, w.T, out=out)
        out.__iadd__(b)

    def transposed():
        nn_ops._transposed_product(np, x, w, b, out)

    calls = max(5, int(2e5 / (batch * inputs * hidden / 1e3 + 50)))
    a, t = [], []
    for _ in range(rounds):
        a.append(_per_call(usual, calls))
        t.append(_per_call(transposed, calls))
    return statistics.median(t) / statistics.median(a)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and shapes")
    opts = parser.parse_args()
    shapes, rounds = (SHAPES[:2], 3) if opts.quick else (SHAPES, 5)
    print("time of (W @ x.T).T + b / x @ W.T + b, float32; * = the kernel's choice is the transposed form")
    print("inputs,hidden".ljust(15) + "".join(f"b{b}".rjust(8) for b in BATCHES))
    for inputs, hidden in shapes:
        row = []
        for batch in BATCHES:
            x = np.empty((batch, inputs), np.float32)
            w = np.empty((hidden, inputs), np.float32)
            mark = "*" if nn_ops._transposed_product_pays(np, x, w, None) else " "
            row.append(f"{ratio(batch, inputs, hidden, rounds):.2f}{mark}".rjust(8))
        print(f"{inputs},{hidden}".ljust(15) + "".join(row))


if __name__ == "__main__":
    main()
