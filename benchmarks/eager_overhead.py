"""Eager per-op overhead: hybridgraph NDArray vs raw numpy, in one process run.

Reported as ratios (hybridgraph time / numpy time); the [nd] target is <= 2x
for a single op without autograd recording. A second table times the calls MXNet scripts
make once per batch (`nd.waitall()`, `num_gpus()`, `wait_to_read()`, context queries,
`asscalar()`, a metric update) against the nearest raw-numpy equivalent: each must cost
microseconds (issue 19: `num_gpus()` probed for cupy on every call, ~1.4 ms without a GPU).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import hybridgraph as mx  # noqa: E402
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
    print()
    print(table(per_batch_rows(), ("per-batch call", "numpy reference", "numpy", "hybridgraph", "ratio")))


def per_batch_rows() -> list[tuple]:
    """The calls a training loop makes every batch, each against a raw-numpy stand-in."""
    logits_np = np.random.rand(64, 10).astype(np.float32)
    labels_np = np.random.randint(0, 10, 64).astype(np.float32)
    logits, labels = nd.array(logits_np), nd.array(labels_np)
    loss_np = np.float32(0.5).reshape(1)
    loss = nd.array(loss_np)
    acc = mx.metric.Accuracy()

    def metric_np():
        return int((logits_np.argmax(axis=1).astype(np.int32) == labels_np.astype(np.int32)).sum())

    cases = [
        ("nd.waitall()", "no-op call", lambda: None, nd.waitall),
        ("num_gpus()", "no-op call", lambda: None, mx.context.num_gpus),
        ("x.wait_to_read()", "no-op call", lambda: None, loss.wait_to_read),
        ("current_context()", "no-op call", lambda: None, mx.context.current_context),
        ("x.context", "attribute", lambda: loss_np.dtype, lambda: loss.context),
        ("loss.asscalar()", "a.item()", loss_np.item, loss.asscalar),
        ("Accuracy.update b64", "argmax == sum", metric_np, lambda: acc.update([labels], [logits])),
    ]
    rows = []
    for name, ref_name, ref, fn in cases:
        t_np, t_hg = median_seconds(ref), median_seconds(fn)
        rows.append((name, ref_name, f"{t_np * 1e6:.2f} us", f"{t_hg * 1e6:.2f} us", f"{t_hg / t_np:.2f}x"))
    return rows


if __name__ == "__main__":
    main()
