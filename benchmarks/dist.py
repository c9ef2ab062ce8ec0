"""Data-parallel scaling with kvstore='dist_sync': samples/s for 1, 2 (and 4) workers.

For each model (the MLP 784-256-256-10 and LeNet-5 on 28x28 inputs) and worker
count, `python -m hybridgraph.launch -n N` runs this file as workers: each trains a
hybridized net with a fixed batch per worker (weak scaling) for a number of steps
after a warm-up, and reports its step time and the time spent waiting for the
kvstore's collectives (`kv.comm_seconds`: the allreduce not hidden behind the
backward pass, plus waiting for the slowest worker). `--eager` trains the nets
unhybridized, so that the allreduce of the last layers' gradients starts while
backward still runs (a hybridized net's gradients are all final together, at the
end of its one compiled backward step); `--no-overlap` starts every allreduce at
`trainer.step` instead (HYBRIDGRAPH_KVSTORE_OVERLAP=0). The driver prints samples/s
over all workers, the scaling efficiency ``samples/s(N) / (N * samples/s(1))``,
the allreduce share of the step, and the time of the allreduce alone for the same
gradient bytes. Every worker uses OPENBLAS_NUM_THREADS=1, so N workers need N cores
for a fair figure; on a loaded or small machine the numbers are indicative only.

    python benchmarks/dist.py [--quick] [--workers 1 2 4] [--eager] [--no-overlap]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _timing import table  # noqa: E402


def build(model: str):
    from hybridgraph.gluon import nn
    net = nn.HybridSequential(prefix=f"{model}_")
    with net.name_scope():
        if model == "mlp":
            net.add(nn.Dense(256, activation="relu"), nn.Dense(256, activation="relu"), nn.Dense(10))
        else:  # LeNet-5
            net.add(nn.Conv2D(6, 5, padding=2, activation="relu"), nn.MaxPool2D(2),
                    nn.Conv2D(16, 5, activation="relu"), nn.MaxPool2D(2), nn.Flatten(),
                    nn.Dense(120, activation="relu"), nn.Dense(84, activation="relu"), nn.Dense(10))
    return net


def worker(model: str, batch: int, steps: int, warmup: int, hybrid: bool = True) -> None:
    """One worker: train `steps` timed steps; rank 0 prints a JSON line of the averages."""
    import numpy as np

    import hybridgraph as mx
    from hybridgraph import autograd, gluon

    kv = mx.kv.create("dist_sync")
    mx.random.seed(0)
    net = build(model)
    net.initialize(mx.init.Xavier())
    if hybrid:
        net.hybridize(static_alloc=True, static_shape=True)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01, "momentum": 0.9}, kvstore=kv)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    rng = np.random.RandomState(kv.rank)
    shape = (batch, 784) if model == "mlp" else (batch, 1, 28, 28)
    x = mx.nd.array(rng.uniform(0, 1, shape).astype(np.float32))
    y = mx.nd.array(rng.randint(0, 10, batch).astype(np.float32))

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch * kv.num_workers)

    for _ in range(warmup):
        step()
    kv.barrier()
    comm0, start = kv.comm_seconds, time.perf_counter()
    for _ in range(steps):
        step()
    seconds = time.perf_counter() - start
    comm = kv.comm_seconds - comm0
    # the allreduce alone, on the same gradient arrays
    grads = [p.list_grad() for p in net.collect_params().values() if p.grad_req != "null"]
    keys = list(range(len(grads)))
    probe = mx.kv.create("dist_sync")
    probe.init(keys, [g[0] for g in grads])
    probe.pushpull(keys, grads)
    kv.barrier()
    t0 = time.perf_counter()
    for _ in range(steps):
        probe.pushpull(keys, grads)
    alone = (time.perf_counter() - t0) / steps
    nbytes = sum(g[0].size * g[0].dtype.itemsize for g in grads)
    if kv.rank == 0:
        print(json.dumps({"model": model, "workers": kv.num_workers, "step_s": seconds / steps,
                          "comm_s": comm / steps, "allreduce_alone_s": alone, "grad_mb": nbytes / 2**20,
                          "samples_per_s": batch * kv.num_workers * steps / seconds}), flush=True)


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few steps (a smoke run)")
    parser.add_argument("--workers", type=int, nargs="+", default=None)
    parser.add_argument("--batch", type=int, default=64, help="per worker")
    parser.add_argument("--eager", action="store_true", help="unhybridized nets (per-layer backward)")
    parser.add_argument("--no-overlap", action="store_true", help="start allreduce at step, not during backward")
    parser.add_argument("--worker", nargs=5, metavar=("MODEL", "BATCH", "STEPS", "WARMUP", "HYBRID"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        model, batch, steps, warmup, hybrid = args.worker
        worker(model, int(batch), int(steps), int(warmup), hybrid == "1")
        return []
    workers = args.workers or ([1, 2, 4] if (os.cpu_count() or 1) >= 4 else [1, 2])
    steps, warmup = (5, 2) if args.quick else (40, 5)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               HYBRIDGRAPH_KVSTORE_OVERLAP="0" if args.no_overlap else "1")
    results = []
    for model in ("mlp", "lenet"):
        for n in workers:
            cmd = [sys.executable, "-m", "hybridgraph.launch", "-n", str(n), sys.executable, __file__,
                   "--worker", model, str(args.batch), str(steps), str(warmup), "0" if args.eager else "1"]
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)
            if done.returncode != 0:
                raise SystemExit(f"{model} on {n} workers failed:\n{done.stderr[-3000:]}")
            results.append(json.loads([ln for ln in done.stdout.splitlines() if ln.startswith("{")][-1]))
    base = {r["model"]: r["samples_per_s"] for r in results if r["workers"] == 1}
    rows = [(r["model"], r["workers"], f"{r['samples_per_s']:.0f}",
             f"{r['samples_per_s'] / (r['workers'] * base[r['model']]):.2f}" if r["model"] in base else "-",
             f"{1000 * r['step_s']:.1f}", f"{100 * r['comm_s'] / r['step_s']:.0f}%",
             f"{1000 * r['allreduce_alone_s']:.2f} ({r['grad_mb']:.2f} MB)") for r in results]
    print(table(rows, ("model", "workers", "samples/s", "efficiency", "step ms", "allreduce share",
                       "allreduce alone ms")))
    return results


if __name__ == "__main__":
    main()
