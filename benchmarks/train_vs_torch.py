"""Training steps against PyTorch eager, side by side: ResNet-18 v1 at batch 8 and LeNet at
batch 64 (forward, softmax cross-entropy, backward, SGD with momentum 0.9), built by the
cross-framework harness's own adapters (../shared/bench: `bench_hybridgraph.py` writes the
step the way MXNet users write Gluon -- hybridize(static_alloc, static_shape) on net and
loss, `Trainer('sgd')`, `nd.waitall()` every step -- and `bench_torch.py` the eager
`torch.optim.SGD` step; the harness has no ResNet training workload, so the same adapters'
models get the same step here).

Each (round, engine) runs in a fresh process, engines alternating and their order rotated
every round; a process times blocks of steps and reports the median of **process CPU time**
per step (wall-clock time on a shared machine measures the other jobs) and of wall-clock
time (the step's latency on a quiet machine). Engines: torch and
one or more hybridgraph trees (`--tree name=path`, e.g. a checkout of an earlier commit,
for before/after). The table gives medians over rounds and each engine / torch.

Threads: one BLAS / OpenMP thread by default (`--threads 2` for two). A threaded BLAS's
idle workers spin before they sleep, and process CPU time counts the spinning: OpenBLAS's
default is ~0.1 s after every GEMM, which hybridgraph's import shortens to ~0.3 ms
(nd/ops/blas.py, limit_worker_spin; PyTorch's OpenMP pool spins too).

Run:  python benchmarks/train_vs_torch.py [--rounds 3] [--workloads lenet,resnet]
          [--tree before=/tmp/old-checkout] [--torch /tmp/torchvenv/bin/python]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HARNESS = ROOT.parent / "shared" / "bench"
WORKLOADS = {"lenet": 20, "resnet": 2}      # steps per timed block


def _hybridgraph_step(W, B, workload: str):
    import numpy as np
    if workload == "lenet":
        batch, shape, net = W.LENET_BATCH, W.LENET_IN, B.make_lenet(W.lenet_params())
    else:
        batch, shape, net = 8, W.RESNET_IN, B.make_resnet(argparse.Namespace(resnet="zoo"))
    x_np, y_np = W.make_batch(batch, shape)
    x, y = B.to_nd(x_np), B.to_nd(y_np.astype(np.float32))
    B.hybridize(net)
    step = B.train_step_fn(net, x, y, batch, True)

    def run():
        loss = step()
        B.waitall()
        return float(loss.mean().asscalar())
    return run


def _torch_step(W, B, workload: str):
    import torch
    import torch.nn.functional as F  # noqa: N812
    if workload == "lenet":
        batch, shape, net = W.LENET_BATCH, W.LENET_IN, B.make_lenet(W.lenet_params())
    else:
        torch.manual_seed(0)
        batch, shape, net = 8, W.RESNET_IN, B.ResNet18()
    x_np, y_np = W.make_batch(batch, shape)
    x, y = B.T(x_np), torch.from_numpy(y_np).long()
    net.train()
    opt = torch.optim.SGD(net.parameters(), lr=W.LR, momentum=W.MOMENTUM)

    def run():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        return float(loss.item())
    return run


def child(engine: str, workload: str, harness: str, blocks: int) -> None:
    """Time one engine's step in this process; print one JSON line."""
    sys.path.insert(0, harness)
    import workloads as W  # noqa: N812 - the harness's module
    if engine == "torch":
        import bench_torch as B  # noqa: N812
        run = _torch_step(W, B, workload)
    else:
        import bench_hybridgraph as B  # noqa: N812
        run = _hybridgraph_step(W, B, workload)
    losses = [run() for _ in range(3)]          # warm-up: plans, allocations
    per = WORKLOADS[workload]
    times, walls = [], []
    for _ in range(blocks):
        t0, w0 = time.process_time(), time.perf_counter()
        for _ in range(per):
            run()
        times.append((time.process_time() - t0) / per)
        walls.append((time.perf_counter() - w0) / per)
    print("RESULT " + json.dumps({"engine": engine, "workload": workload, "cpu_s": statistics.median(times),
                                  "wall_s": statistics.median(walls), "loss0": losses[0]}))


def _spawn(python: str, tree: str | None, engine: str, workload: str, args) -> dict | None:
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BENCH_THREADS"):
        env[var] = str(args.threads)
    if tree is not None:
        env["PYTHONPATH"] = tree
    cmd = [python, str(Path(__file__).resolve()), "--child", engine, workload, "--harness", args.harness,
           "--blocks", str(args.blocks)]
    proc = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True, timeout=1800,
                          cwd=tree or None)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    print(f"{engine} {workload} failed: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
    return None


def _blas_note(python: str, tree: str, threads: int) -> str:
    """hybridgraph's BLAS line (`hybridgraph doctor`), read in the environment its runs had."""
    env = dict(os.environ, PYTHONPATH=tree, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    proc = subprocess.run([python, "-c", "from hybridgraph import doctor; print(doctor.blas_line(doctor.gather()))"],
                          env=env, cwd=tree, capture_output=True, text=True, check=False, timeout=120)
    return proc.stdout.strip() or f"(BLAS unknown: {proc.stderr.strip().splitlines()[-1:]})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", nargs=2, metavar=("ENGINE", "WORKLOAD"))
    ap.add_argument("--harness", default=str(HARNESS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--blocks", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--workloads", default="lenet,resnet")
    ap.add_argument("--tree", action="append", default=[], help="name=path of a hybridgraph tree")
    ap.add_argument("--python", default=sys.executable, help="Python for hybridgraph")
    ap.add_argument("--torch", default="/tmp/torchvenv/bin/python", help="Python with torch")
    args = ap.parse_args()
    if args.child:
        child(*args.child, args.harness, args.blocks)
        return
    trees = [t.split("=", 1) for t in args.tree] or [["hybridgraph", str(ROOT)]]
    engines = [(name, args.python, path) for name, path in trees] + [("torch", args.torch, None)]
    res: dict = {}
    for wl in args.workloads.split(","):
        for r in range(args.rounds):
            order = engines[r % len(engines):] + engines[:r % len(engines)]
            for name, python, tree in order:
                out = _spawn(python, tree, "torch" if name == "torch" else "hybridgraph", wl, args)
                if out is not None:
                    res.setdefault((wl, name), []).append((out["cpu_s"], out["wall_s"]))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"ms per step, median over {args.rounds} rounds of fresh processes, "
          f"{args.threads} BLAS thread(s), load average {load:.1f} at the end")
    print(_blas_note(args.python, trees[0][1], args.threads))
    print("| workload | engine | CPU ms/step | / torch | wall ms/step | / torch |\n|---|---|---|---|---|---|")
    for wl in args.workloads.split(","):
        base = res.get((wl, "torch"), [(float("nan"), float("nan"))])
        base_cpu, base_wall = (statistics.median(v[i] for v in base) for i in (0, 1))
        for name, _, _ in engines:
            ts = res.get((wl, name))
            if ts:
                cpu, wall = (statistics.median(v[i] for v in ts) for i in (0, 1))
                print(f"| {wl} | {name} | {cpu * 1e3:.1f} | {cpu / base_cpu:.2f} | {wall * 1e3:.1f} | "
                      f"{wall / base_wall:.2f} |")


if __name__ == "__main__":
    main()
