"""Eager per-op overhead: hybridgraph NDArray vs raw numpy, in one process run.

Reported as ratios (hybridgraph time / numpy time); the [nd] target is <= 2x
for a single op without autograd recording.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hybridgraph import nd, np as mnp  # noqa: E402
from _timing import median_seconds, table  # noqa: E402


def chain(x, y):
    """A 10-op elementwise chain written with operators."""
    z = x + y
    z = z * y
    z = z - x
    z = z / 2.0
    z = z + 1.0
    z = z * z
    z = z - y
    z = z * 0.5
    z = z + x
    return z * y


def main() -> None:
    rows = []
    for shape in [(1,), (64, 64)]:
        a_np = np.random.rand(*shape).astype(np.float32)
        b_np = np.random.rand(*shape).astype(np.float32)
        a, b = nd.array(a_np), nd.array(b_np)
        t_np = median_seconds(lambda: a_np + b_np)
        t_hg = median_seconds(lambda: a + b)
        rows.append((f"c = a + b {shape}", f"{t_np * 1e6:.2f} us", f"{t_hg * 1e6:.2f} us", f"{t_hg / t_np:.2f}x"))
    a_np = np.random.rand(64, 64).astype(np.float32) + 1
    b_np = np.random.rand(64, 64).astype(np.float32) + 1
    a, b = nd.array(a_np), nd.array(b_np)
    t_np = median_seconds(lambda: chain(a_np, b_np))
    t_hg = median_seconds(lambda: chain(a, b))
    rows.append(("10-op chain (64, 64)", f"{t_np * 1e6:.2f} us", f"{t_hg * 1e6:.2f} us", f"{t_hg / t_np:.2f}x"))
    # the mx.np front end (MXNet 1.9.1's mx.np is ~18x numpy on small arrays, apache/mxnet#18302)
    for shape in [(1,), (64, 64)]:
        a_np = np.random.rand(*shape).astype(np.float32)
        b_np = np.random.rand(*shape).astype(np.float32)
        a, b = mnp.array(a_np), mnp.array(b_np)
        t_np = median_seconds(lambda: a_np + b_np)
        t_hg = median_seconds(lambda: a + b)
        rows.append((f"np: c = a + b {shape}", f"{t_np * 1e6:.2f} us", f"{t_hg * 1e6:.2f} us", f"{t_hg / t_np:.2f}x"))
    t_np = median_seconds(lambda: chain(a_np + 1, b_np + 1))
    t_hg = median_seconds(lambda: chain(a + 1, b + 1))
    rows.append(("np: 10-op chain (64, 64)", f"{t_np * 1e6:.2f} us", f"{t_hg * 1e6:.2f} us", f"{t_hg / t_np:.2f}x"))
    print(table(rows, ("workload", "numpy", "hybridgraph", "ratio")))


if __name__ == "__main__":
    main()
