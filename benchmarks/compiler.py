"""Compiled execution vs eager NDArray code vs hand-written numpy, in one process run.

Workloads (issue [compiler]): MLP 784-256-256-10 inference at batch 64 and 1; the same
MLP's training step (forward, SoftmaxOutput, backward, sgd_mom_update of every
parameter) at batch 64; a 20-op elementwise chain on (256, 256).

Columns: eager `nd` code; the Executor (bind) with graph passes off; the Executor with
everything on (passes); `compile_graph` (the hybridize path, passes on, static_alloc);
raw numpy with preallocated buffers (the floor for a numpy engine). Each engine's result
is checked against raw numpy before it is timed. Medians per call (benchmarks/_timing.py)
and the ratios the issue sets targets for: compiled / raw numpy (<= 1.2) and eager /
compiled at batch 1 (>= 3). Engines are timed in interleaved rounds (best round kept) so
that load from other processes does not land on one engine. Set OPENBLAS_NUM_THREADS=1 on
a shared machine: threaded BLAS under foreign load makes every matrix product erratic.

Run:  python benchmarks/compiler.py [--quick]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hybridgraph import nd  # noqa: E402
from hybridgraph import symbol as S  # noqa: E402,N812
from _timing import median_seconds, table  # noqa: E402
from hybridgraph.nd import autograd  # noqa: E402
from hybridgraph.nd.ndarray import NDArray  # noqa: E402
from hybridgraph.symbol.executor import executor_options  # noqa: E402
from hybridgraph.symbol.plan import compile_graph  # noqa: E402

try:
    from hybridgraph.symbol import passes as _passes  # noqa: F401
    HAVE_PASSES = True
except ImportError:
    HAVE_PASSES = False

LR, MOMENTUM = 0.01, 0.9
SIZES = (784, 256, 256, 10)
PARAMS = ("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias", "fc3_weight", "fc3_bias")


# -- models -------------------------------------------------------------------------------------

def mlp_symbol(train: bool):
    x = S.var("data")
    h = S.relu(S.FullyConnected(x, num_hidden=SIZES[1], name="fc1"), name="relu1")
    h = S.relu(S.FullyConnected(h, num_hidden=SIZES[2], name="fc2"), name="relu2")
    out = S.FullyConnected(h, num_hidden=SIZES[3], name="fc3")
    return S.SoftmaxOutput(out, S.var("softmax_label"), name="softmax") if train else out


def mlp_values(batch: int, rs) -> dict:
    vals = {"data": rs.randn(batch, SIZES[0]).astype(np.float32),
            "softmax_label": (np.arange(batch) % SIZES[3]).astype(np.float32)}
    for k, (fan_in, fan_out) in enumerate(zip(SIZES, SIZES[1:]), start=1):
        vals[f"fc{k}_weight"] = (rs.randn(fan_out, fan_in) / np.sqrt(fan_in)).astype(np.float32)
        vals[f"fc{k}_bias"] = (rs.randn(fan_out) * 0.1).astype(np.float32)
    return vals


def eager_mlp(x, p):
    h = nd.relu(nd.FullyConnected(x, p["fc1_weight"], p["fc1_bias"], num_hidden=SIZES[1]))
    h = nd.relu(nd.FullyConnected(h, p["fc2_weight"], p["fc2_bias"], num_hidden=SIZES[2]))
    return nd.FullyConnected(h, p["fc3_weight"], p["fc3_bias"], num_hidden=SIZES[3])


class RawMLP:
    """Hand-written numpy with every buffer preallocated."""

    def __init__(self, vals: dict):
        self.v = {k: v.copy() for k, v in vals.items()}
        b = vals["data"].shape[0]
        f = np.float32
        self.h1, self.h2 = np.empty((b, SIZES[1]), f), np.empty((b, SIZES[2]), f)
        self.z, self.zmax = np.empty((b, SIZES[3]), f), np.empty((b, 1), f)
        self.zsum = np.empty((b, 1), f)
        self.dh1, self.dh2 = np.empty_like(self.h1), np.empty_like(self.h2)
        self.m1, self.m2 = np.empty_like(self.h1, dtype=bool), np.empty_like(self.h2, dtype=bool)
        self.grads = {k: np.empty_like(self.v[k]) for k in PARAMS}
        self.moms = {k: np.zeros_like(self.v[k]) for k in PARAMS}
        self.rows = np.arange(b)
        self.label = vals["softmax_label"].astype(np.intp)

    def forward(self) -> np.ndarray:
        v = self.v
        np.dot(v["data"], v["fc1_weight"].T, out=self.h1)
        np.add(self.h1, v["fc1_bias"], out=self.h1)
        np.maximum(self.h1, 0, out=self.h1)
        np.dot(self.h1, v["fc2_weight"].T, out=self.h2)
        np.add(self.h2, v["fc2_bias"], out=self.h2)
        np.maximum(self.h2, 0, out=self.h2)
        np.dot(self.h2, v["fc3_weight"].T, out=self.z)
        np.add(self.z, v["fc3_bias"], out=self.z)
        return self.z

    def train_step(self) -> None:
        v, g, z = self.v, self.grads, self.forward()
        np.max(z, axis=1, keepdims=True, out=self.zmax)      # softmax, then d(loss)/dz = p - onehot
        np.subtract(z, self.zmax, out=z)
        np.exp(z, out=z)
        np.sum(z, axis=1, keepdims=True, out=self.zsum)
        np.divide(z, self.zsum, out=z)
        z[self.rows, self.label] -= 1
        np.dot(z.T, self.h2, out=g["fc3_weight"])
        np.sum(z, axis=0, out=g["fc3_bias"])
        np.dot(z, v["fc3_weight"], out=self.dh2)
        np.greater(self.h2, 0, out=self.m2)
        np.multiply(self.dh2, self.m2, out=self.dh2)
        np.dot(self.dh2.T, self.h1, out=g["fc2_weight"])
        np.sum(self.dh2, axis=0, out=g["fc2_bias"])
        np.dot(self.dh2, v["fc2_weight"], out=self.dh1)
        np.greater(self.h1, 0, out=self.m1)
        np.multiply(self.dh1, self.m1, out=self.dh1)
        np.dot(self.dh1.T, v["data"], out=g["fc1_weight"])
        np.sum(self.dh1, axis=0, out=g["fc1_bias"])
        for k in PARAMS:
            m = self.moms[k]
            np.multiply(m, MOMENTUM, out=m)
            m -= LR * g[k]
            v[k] += m


def _nd(vals: dict) -> dict:
    return {k: nd.array(v) for k, v in vals.items()}


def _update(weights: dict, grads: dict, moms: dict) -> None:
    for k in PARAMS:
        nd.sgd_mom_update(weights[k], grads[k], moms[k], out=weights[k], lr=LR, momentum=MOMENTUM)


# -- engines per workload --------------------------------------------------------------------------

def inference_engines(batch: int, rs) -> tuple[dict, np.ndarray]:
    vals = mlp_values(batch, rs)
    sym = mlp_symbol(train=False)
    raw = RawMLP(vals)
    p = _nd(vals)
    engines = {"eager": lambda: eager_mlp(p["data"], p)}

    def bound(passes: bool):
        with executor_options(passes=passes):
            exe = sym.bind(nd.cpu(), {k: p[k] for k in sym.list_arguments()}, grad_req="null")
        return lambda: exe.forward()[0]
    engines["exec (passes off)"] = bound(False)
    engines["exec (all on)"] = bound(HAVE_PASSES)
    names = sym.list_arguments()
    cg = compile_graph(sym._outputs, names, for_training=False, passes=HAVE_PASSES, static_alloc=True)
    inputs = [vals[n] for n in names]
    engines["compile_graph"] = lambda: cg.forward(inputs)[0][0]
    engines["raw numpy"] = raw.forward
    return engines, raw.forward().copy()


def training_engines(batch: int, rs) -> tuple[dict, dict]:
    """Each engine runs one step from the same start; `check` compares the weights after it."""
    vals = mlp_values(batch, rs)
    sym = mlp_symbol(train=True)
    engines, finals = {}, {}

    p = _nd(vals)
    for k in PARAMS:
        p[k].attach_grad()
    moms = {k: nd.zeros(p[k].shape) for k in PARAMS}

    def eager_step():
        with autograd.record():
            out = nd.SoftmaxOutput(eager_mlp(p["data"], p), p["softmax_label"])
        out.backward()
        _update(p, {k: p[k].grad for k in PARAMS}, moms)
    engines["eager"], finals["eager"] = eager_step, p

    def bound(passes: bool):
        q = _nd(vals)
        grads = {k: nd.zeros(q[k].shape) for k in PARAMS}
        m = {k: nd.zeros(q[k].shape) for k in PARAMS}
        with executor_options(passes=passes):
            exe = sym.bind(nd.cpu(), {k: q[k] for k in sym.list_arguments()}, args_grad=grads,
                           grad_req={k: "write" for k in PARAMS})

        def step():
            exe.forward(is_train=True)
            exe.backward()
            _update(q, grads, m)
        return step, q
    engines["exec (passes off)"], finals["exec (passes off)"] = bound(False)
    engines["exec (all on)"], finals["exec (all on)"] = bound(HAVE_PASSES)

    names = sym.list_arguments()
    cg = compile_graph(sym._outputs, names, for_training=True, passes=HAVE_PASSES, static_alloc=True, wrt=PARAMS)
    q = _nd(vals)
    m = {k: nd.zeros(q[k].shape) for k in PARAMS}
    g = {k: nd.zeros(q[k].shape) for k in PARAMS}
    out = [g[n]._data if n in g else None for n in names]     # Gluon's param.grad() buffers

    def hybrid_step():
        _, saved = cg.forward([q[n]._data for n in names], is_train=True)
        cg.backward(saved, [None], out=out)
        _update(q, g, m)
    engines["compile_graph"], finals["compile_graph"] = hybrid_step, q

    raw = RawMLP(vals)
    engines["raw numpy"], finals["raw numpy"] = raw.train_step, raw.v
    return engines, finals


CHAIN = [("mul", "b"), ("plus_s", 0.5), ("sub", "a"), ("mul_s", 0.9)] * 5


def chain_engines(rs) -> tuple[dict, np.ndarray]:
    a_np = rs.rand(256, 256).astype(np.float32)
    b_np = (rs.rand(256, 256) + 0.5).astype(np.float32)

    def build(F, a, b, scalar):  # noqa: N803 - F is the op namespace
        y = a
        for kind, arg in CHAIN:
            if kind == "mul":
                y = F.elemwise_mul(y, b)
            elif kind == "sub":
                y = F.elemwise_sub(y, a)
            else:
                y = scalar("_plus_scalar" if kind == "plus_s" else "_mul_scalar")(y, scalar=arg)
        return y

    a, b = nd.array(a_np), nd.array(b_np)
    engines = {"eager": lambda: build(nd, a, b, lambda n: getattr(nd._internal, n))}
    sym = build(S, S.var("a"), S.var("b"), lambda n: getattr(S._internal, n))

    def bound(passes: bool):
        with executor_options(passes=passes):
            exe = sym.bind(nd.cpu(), {"a": nd.array(a_np), "b": nd.array(b_np)}, grad_req="null")
        return lambda: exe.forward()[0]
    engines["exec (passes off)"] = bound(False)
    engines["exec (all on)"] = bound(HAVE_PASSES)
    cg = compile_graph(sym._outputs, ["a", "b"], for_training=False, passes=HAVE_PASSES, static_alloc=True)
    engines["compile_graph"] = lambda: cg.forward([a_np, b_np])[0][0]
    buf = np.empty_like(a_np)

    def raw():
        np.copyto(buf, a_np)
        for kind, arg in CHAIN:
            if kind == "mul":
                np.multiply(buf, b_np, out=buf)
            elif kind == "sub":
                np.subtract(buf, a_np, out=buf)
            elif kind == "plus_s":
                np.add(buf, np.float32(arg), out=buf)
            else:
                np.multiply(buf, np.float32(arg), out=buf)
        return buf
    engines["raw numpy"] = raw
    return engines, raw().copy()


# -- running ---------------------------------------------------------------------------------------

def _as_np(x) -> np.ndarray:
    return x.asnumpy() if isinstance(x, NDArray) else np.asarray(x)


def check_outputs(engines: dict, want: np.ndarray, what: str) -> None:
    for name, fn in engines.items():
        for _ in range(3):      # the first call of a compiled plan runs step by step
            got = _as_np(fn())
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-5, err_msg=f"{what}: {name}")


def check_training(engines: dict, finals: dict) -> None:
    for fn in engines.values():
        fn()
    want = finals["raw numpy"]
    for name, final in finals.items():
        for k in PARAMS:
            np.testing.assert_allclose(_as_np(final[k]), want[k], rtol=1e-3, atol=1e-5,
                                       err_msg=f"training step: {name} {k}")
    for fn in engines.values():     # warm up the compiled code
        fn()
        fn()


def time_all(engines: dict, rounds: int, min_time: float) -> dict:
    """Per engine, the best over `rounds` interleaved rounds of a 5-run median: engines are
    measured in turn, so a burst of load on the machine hits one round, not one engine."""
    best = dict.fromkeys(engines, float("inf"))
    for _ in range(rounds):
        for name, fn in engines.items():
            best[name] = min(best[name], median_seconds(fn, repeat=5, min_time=min_time))
    return best


def _fmt(t: float) -> str:
    return f"{t * 1e6:.0f} us" if t < 1e-2 else f"{t * 1e3:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (noisier)")
    args = parser.parse_args()
    rounds, min_time = (1, 0.02) if args.quick else (5, 0.05)
    rs = np.random.RandomState(0)
    rows = []
    workloads = []
    for batch in (64, 1):
        engines, want = inference_engines(batch, rs)
        check_outputs(engines, want, f"MLP inference b{batch}")
        workloads.append((f"MLP inference b{batch}", engines))
    engines, finals = training_engines(64, rs)
    check_training(engines, finals)
    workloads.append(("MLP train step b64", engines))
    engines, want = chain_engines(rs)
    check_outputs(engines, want, "20-op chain")
    workloads.append(("20-op chain (256,256)", engines))
    cols = ["eager", "exec (passes off)", "exec (all on)", "compile_graph", "raw numpy"]
    for label, engines in workloads:
        t = time_all(engines, rounds, min_time)
        raw = t["raw numpy"]
        rows.append((label, *[_fmt(t[c]) for c in cols], f"{t['exec (all on)'] / raw:.2f}x",
                     f"{t['compile_graph'] / raw:.2f}x", f"{t['eager'] / t['compile_graph']:.1f}x"))
    print(f"graph passes: {'on' if HAVE_PASSES else 'unavailable (symbol/passes missing)'}; "
          f"numpy {np.__version__}")
    print(table(rows, ("workload", *cols, "exec on/raw", "compiled/raw", "eager/compiled")))


if __name__ == "__main__":
    main()
