"""Convolutional networks: ResNet-18 v1 and MobileNetV2 1.0 from the Gluon model zoo.

Workloads (issue [convnets], acceptance 3), 224x224 float32 input: inference at batch 1
and 8, and one training step at batch 8 (forward, softmax cross-entropy, backward, SGD
update through gluon Trainer), each eager and hybridized (`hybridize(static_alloc=True)`).
Side by side, in one run:

* hybridgraph eager and hybridized, and hybridized with Winograd F(4x4, 3x3) turned off
  (HYBRIDGRAPH_WINOGRAD4=0: the 3x3 layers run F(2x2, 3x3) or im2col), inference only, for
  the ratio of the two in one process;
* MXNet 1.9.1 (oneDNN) running the same workloads with its own model zoo in a subprocess,
  when its venv is found (HYBRIDGRAPH_MXNET_PYTHON, .mxvenv, /work/mxvenv);
* the GEMM floor: numpy doing only the im2col GEMMs of the network's convolutions --
  each convolution's (groups, M=O/G, K=C/G*kh*kw, N=batch*out_h*out_w), recorded from an
  eager forward pass, timed as `np.matmul` on preallocated float32 operands. It leaves out
  everything else (the column copies, BatchNorm, activations, pooling, the classifier), so
  a numpy engine reaches it only by doing fewer multiplies (Winograd) than im2col does.

Peak memory of hybridized inference at batch 8 is measured in fresh processes: the
high-water mark of resident memory (VmHWM) for hybridgraph and for MXNet, and the peak of
numpy's traced allocations (tracemalloc) for hybridgraph.

hybridgraph's engines and the floor of one workload are timed in interleaved rounds (each
round times every engine in turn), and the table gives medians over rounds per call and,
against the floor, the median of the per-round ratios; MXNet (a separate process) is timed
the same way between its own two engines. The targets: hybridized ResNet-18 inference at batch 8 within 1.15x of
the GEMM floor, and hybridized inference peak memory no more than MXNet's.

Timings on a shared 2-core machine are noisy: other processes landing on a core make
OpenBLAS's two threads wait for each other (small GEMMs suffer most). Compare ratios from
one run, or run with OPENBLAS_NUM_THREADS=1 (MXNet then gets OMP_NUM_THREADS=1 too).

Run:  python benchmarks/convnets.py [--quick] [--models resnet18_v1,mobilenetv2_1.0]
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

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from hybridgraph import nd  # noqa: E402
from _mxnet import PEAK_KB_SOURCE, run_mxnet_script  # noqa: E402
from _timing import blas_note, table  # noqa: E402
from hybridgraph.gluon import loss  # noqa: E402
from hybridgraph.gluon.model_zoo import vision  # noqa: E402
from hybridgraph.gluon.trainer import Trainer  # noqa: E402
from hybridgraph.nd import autograd  # noqa: E402
from hybridgraph.nd.ops.conv import _conv_geometry, prod  # noqa: E402
from hybridgraph.nd.registry import get_op  # noqa: E402

MODELS = ("resnet18_v1", "mobilenetv2_1.0")
NO_WINOGRAD4 = "hybridgraph hybridized, no F(4x4)"
SIZE, CLASSES, LR = 224, 1000, 0.01


def inputs(batch: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((batch, 3, SIZE, SIZE), dtype=np.float32),
            rng.integers(0, CLASSES, batch).astype(np.float32))


def workloads(quick: bool) -> list[tuple[str, int]]:
    """(kind, batch) pairs timed for each model and engine."""
    if quick:
        return [("infer", 1), ("infer", 8)]
    return [("infer", 1), ("infer", 8), ("train", 8)]


# -- hybridgraph --------------------------------------------------------------------------------

def build(name: str, hybridize: bool):
    net = vision.get_model(name)
    net.initialize()
    if hybridize:
        net.hybridize(static_alloc=True)
    return net


class Model:
    """One network with its trainer, and the step function of each workload."""

    def __init__(self, name: str, hybridize: bool):
        self.net = build(name, hybridize)
        self.trainer = Trainer(self.net.collect_params(), "sgd", {"learning_rate": LR})
        self.loss = loss.SoftmaxCrossEntropyLoss()

    def step(self, kind: str, batch: int, winograd4: bool = True):
        x, y = (nd.array(a) for a in inputs(batch))
        if kind == "infer" and not winograd4:
            def infer_without() -> None:    # the switch is read when the plan is built (first call)
                old = os.environ.get("HYBRIDGRAPH_WINOGRAD4")
                os.environ["HYBRIDGRAPH_WINOGRAD4"] = "0"
                try:
                    self.net(x).wait_to_read()
                finally:
                    if old is None:
                        del os.environ["HYBRIDGRAPH_WINOGRAD4"]
                    else:
                        os.environ["HYBRIDGRAPH_WINOGRAD4"] = old
            return infer_without
        if kind == "infer":
            return lambda: self.net(x).wait_to_read()

        def train() -> None:
            with autograd.record():
                out = self.loss(self.net(x), y)
            out.backward()
            self.trainer.step(batch)
            out.wait_to_read()
        return train


def interleaved(fns: dict, rounds: int, min_time: float) -> dict:
    """Per-call seconds of each callable in each of `rounds` rounds; a round times every
    callable in turn (>= min_time each), so load from other processes lands on all of them
    alike and per-round ratios stay meaningful. A callable that raises gets its error text."""
    numbers, times = {}, {}
    for key, fn in fns.items():
        try:
            fn()                                     # warm-up (and the hybridized compile)
            start = time.perf_counter()
            fn()
            numbers[key] = max(1, int(min_time / max(time.perf_counter() - start, 1e-9)))
            times[key] = []
        except Exception as exc:  # noqa: BLE001 - reported in the table, the run goes on
            times[key] = f"error: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
    for _ in range(rounds):
        for key, fn in fns.items():
            if key in numbers:
                start = time.perf_counter()
                for _ in range(numbers[key]):
                    fn()
                times[key].append((time.perf_counter() - start) / numbers[key])
    return times


# -- GEMM floor ---------------------------------------------------------------------------------

def conv_gemms(name: str, batch: int) -> list[tuple[int, int, int, int]]:
    """(groups, M, K, N) of every convolution's im2col GEMM in one eager forward pass."""
    op = get_op("Convolution")
    seen: list = []
    original = op.forward

    def recording(xp, a, data, weight, *rest, **kw):
        geo = _conv_geometry("Convolution", a)
        n, c = data.shape[:2]
        out_sp = geo.out_size(tuple(data.shape[2:]))
        seen.append((geo.groups, weight.shape[0] // geo.groups, c // geo.groups * prod(geo.kernel),
                     n * prod(out_sp)))
        return original(xp, a, data, weight, *rest, **kw)

    net = build(name, False)
    op.forward = recording
    try:
        net(nd.array(inputs(batch)[0])).wait_to_read()
    finally:
        op.forward = original
    return seen


def gemm_floor(gemms: list):
    """A callable running np.matmul over preallocated operands of every GEMM in `gemms`."""
    rng = np.random.default_rng(0)
    ops = []
    for g, m, k, n in gemms:
        a = rng.standard_normal((g, m, k), dtype=np.float32)
        b = rng.standard_normal((g, k, n), dtype=np.float32)
        ops.append((a[0], b[0], np.empty((m, n), np.float32)) if g == 1
                   else (a, b, np.empty((g, m, n), np.float32)))

    def run() -> None:
        for a, b, c in ops:
            np.matmul(a, b, out=c)
    return run


def gflops(gemms: list) -> float:
    return sum(2.0 * g * m * k * n for g, m, k, n in gemms) / 1e9


# -- peak memory (fresh processes) ------------------------------------------------------------

PEAK_SCRIPT = PEAK_KB_SOURCE + r"""
import json, sys, tracemalloc
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[1] + "/benchmarks")
name, batch = sys.argv[2], int(sys.argv[3])
import numpy as np
from hybridgraph import nd
from hybridgraph.gluon.model_zoo import vision
from convnets import inputs
base = peak_kb()
net = vision.get_model(name)
net.initialize()
net.hybridize(static_alloc=True)
x = nd.array(inputs(batch)[0])
net(x).wait_to_read()
tracemalloc.start()
for _ in range(2):
    net(x).wait_to_read()
traced = tracemalloc.get_traced_memory()[1]
print(json.dumps({"maxrss_kb": peak_kb(), "imports_kb": base, "traced_bytes": traced}))
"""


def hybridgraph_peak(name: str, batch: int) -> dict | str:
    proc = subprocess.run([sys.executable, "-c", PEAK_SCRIPT, str(ROOT), name, str(batch)], check=False,
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return "error: " + (proc.stderr.strip().splitlines() or ["?"])[-1][:160]
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- MXNet 1.9.1, in its own venv ----------------------------------------------------------------

MXNET_SCRIPT = PEAK_KB_SOURCE + r"""
import json, sys, time, warnings
warnings.filterwarnings("ignore")
import numpy as np
import mxnet as mx
from mxnet import autograd, gluon
from mxnet.gluon.model_zoo import vision
mode, names, work, rounds, min_time, size, classes, lr = json.loads(sys.argv[1])

def data(batch):
    rng = np.random.default_rng(0)
    return (mx.nd.array(rng.standard_normal((batch, 3, size, size), dtype=np.float32)),
            mx.nd.array(rng.integers(0, classes, batch).astype(np.float32)))

def build(name, hybridize):
    net = vision.get_model(name)
    net.initialize()
    if hybridize:
        net.hybridize(static_alloc=True, static_shape=True)
    return net

if mode == "peak":
    imported = peak_kb()
    net = build(names[0], True)
    x, _ = data(work)
    for _ in range(3):
        net(x).wait_to_read()
    print(json.dumps({"maxrss_kb": peak_kb(), "imports_kb": imported}))
    sys.exit(0)
def interleaved(fns):
    numbers, times = {}, {}
    for key, fn in fns.items():
        fn()
        start = time.perf_counter()
        fn()
        numbers[key] = max(1, int(min_time / max(time.perf_counter() - start, 1e-9)))
        times[key] = []
    for _ in range(rounds):
        for key, fn in fns.items():
            start = time.perf_counter()
            for _ in range(numbers[key]):
                fn()
            times[key].append((time.perf_counter() - start) / numbers[key])
    return times

def stepper(net, trainer, kind, batch):
    x, y = data(batch)
    if kind == "infer":
        return lambda: net(x).wait_to_read()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    def train():
        with autograd.record():
            l = loss_fn(net(x), y)
        l.backward()
        trainer.step(batch)
        mx.nd.waitall()
    return train

out = {}
for name in names:
    nets = {mode: build(name, mode == "hybridized") for mode in ("eager", "hybridized")}
    trainers = {m: gluon.Trainer(n.collect_params(), "sgd", {"learning_rate": lr}) for m, n in nets.items()}
    for kind, batch in work:
        times = interleaved({m: stepper(nets[m], trainers[m], kind, batch) for m in nets})
        for m, ts in times.items():
            out.setdefault(f"{name} {m}", {})[f"{kind} {batch}"] = ts
print(json.dumps(out))
"""


def run_mxnet(args: list) -> tuple[dict | None, str]:
    return run_mxnet_script(MXNET_SCRIPT, args, timeout=1800)


# -- report -------------------------------------------------------------------------------------

def _ms(t) -> str:
    if t is None:
        return "-"
    return t if isinstance(t, str) else f"{t * 1e3:.1f} ms"


def _ratio(t, base) -> str:
    if not isinstance(t, float) or not isinstance(base, float):
        return "-"
    return f"{t / base:.2f}x"


def _mb(kb) -> str:
    return "-" if kb is None else f"{kb / 1024:.0f} MB"


def _median(ts):
    return ts if isinstance(ts, str) or ts is None else statistics.median(ts)


def _ratio_median(ts, base):
    """Median over rounds of the per-round ratio ts / base (both lists from one interleaving)."""
    if isinstance(ts, str) or isinstance(base, str) or not ts or not base:
        return "-"
    return f"{statistics.median(t / b for t, b in zip(ts, base)):.2f}x"


def time_model(name: str, work: list, rounds: int, min_time: float) -> dict:
    """{workload: {engine: per-round seconds}} for hybridgraph eager, hybridized and the floor."""
    models = {"hybridgraph eager": Model(name, False), "hybridgraph hybridized": Model(name, True)}
    plain = Model(name, True)
    out = {}
    for kind, batch in work:
        fns = {engine: m.step(kind, batch) for engine, m in models.items()}
        if kind == "infer":
            fns[NO_WINOGRAD4] = plain.step(kind, batch, winograd4=False)
            gemms = conv_gemms(name, batch)
            fns[f"GEMM floor ({gflops(gemms):.1f} GFLOP)"] = gemm_floor(gemms)
        out[f"{kind} {batch}"] = interleaved(fns, rounds, min_time)
    return out


def peak_table(names: list, with_mxnet: bool) -> str:
    rows = []
    for name in names:
        ours = hybridgraph_peak(name, 8)
        if isinstance(ours, str):
            rows.append((name, "hybridgraph hybridized", ours, "-", "-"))
        else:
            rows.append((name, "hybridgraph hybridized", _mb(ours["maxrss_kb"]), _mb(ours["imports_kb"]),
                         f"{ours['traced_bytes'] / 2**20:.0f} MB"))
        theirs = run_mxnet(["peak", [name], 8, 1, 0, SIZE, CLASSES, LR])[0] if with_mxnet else None
        if theirs:
            rows.append((name, "MXNet 1.9.1 hybridized", _mb(theirs["maxrss_kb"]), _mb(theirs["imports_kb"]),
                         "-"))
    return table(rows, ("model", "engine", "peak RSS (VmHWM)", "RSS after imports", "numpy traced peak"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter timing rounds; inference only")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated model-zoo names")
    parser.add_argument("--no-mxnet", action="store_true", help="skip the MXNet 1.9.1 subprocesses")
    args = parser.parse_args()
    rounds, min_time = (3, 0.05) if args.quick else (7, 0.3)
    names = [n for n in args.models.split(",") if n]
    work = workloads(args.quick)
    start = time.perf_counter()

    ours = {name: time_model(name, work, rounds, min_time) for name in names}
    mx, mx_note = (None, "MXNet 1.9.1 skipped (--no-mxnet)")
    if not args.no_mxnet:
        mx, mx_note = run_mxnet(["time", names, work, rounds, min_time, SIZE, CLASSES, LR])

    rows = []
    for name in names:
        for kind, batch in work:
            key = f"{kind} {batch}"
            times = dict(ours[name][key])
            floor = next((v for k, v in times.items() if k.startswith("GEMM floor")), None)
            mx_hyb = (mx or {}).get(f"{name} hybridized", {}).get(key)
            if mx:
                times["MXNet 1.9.1 eager"] = mx[f"{name} eager"].get(key)
                times["MXNet 1.9.1 hybridized"] = mx_hyb
            for engine, ts in times.items():
                same_run = not engine.startswith("MXNet")
                vs_floor = _ratio_median(ts, floor) if same_run else _ratio(_median(ts), _median(floor))
                rows.append((name, key, engine, _ms(_median(ts)), vs_floor if floor else "-",
                             _ratio(_median(ts), _median(mx_hyb))))
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    print(f"Convnets at {SIZE}x{SIZE}, float32: medians over {rounds} interleaved rounds "
          f"(OPENBLAS_NUM_THREADS={threads}, {os.cpu_count()} CPUs). 'vs GEMM floor' of hybridgraph is "
          f"the median of per-round ratios; MXNet runs in its own process.")
    print(blas_note())
    print(table(rows, ("model", "workload", "engine", "median", "vs GEMM floor", "vs MXNet hybridized")))
    print(mx_note)
    print("\nPeak memory of hybridized inference at batch 8 (fresh process each)")
    print(peak_table(names, mx is not None))
    if "resnet18_v1" in names:
        times = ours["resnet18_v1"]["infer 8"]
        floor = next(v for k, v in times.items() if k.startswith("GEMM floor"))
        hyb = times["hybridgraph hybridized"]
        note = f"ResNet-18 v1 hybridized inference at batch 8: {_ratio_median(hyb, floor)} the GEMM floor " \
               f"(target <= 1.15x)"
        if mx and not isinstance(hyb, str):
            note += f", {_ratio(_median(hyb), _median(mx['resnet18_v1 hybridized']['infer 8']))} MXNet 1.9.1's"
        print("\n" + note)
        for batch in (1, 8):
            times = ours["resnet18_v1"].get(f"infer {batch}", {})
            if NO_WINOGRAD4 in times:
                print(f"ResNet-18 v1 hybridized inference at batch {batch}, Winograd F(4x4, 3x3) / without it "
                      f"(F(2x2) or im2col): {_ratio_median(times['hybridgraph hybridized'], times[NO_WINOGRAD4])}")
    print(f"[{time.perf_counter() - start:.0f} s]")


if __name__ == "__main__":
    main()
