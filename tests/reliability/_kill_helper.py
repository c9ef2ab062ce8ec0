"""Kill-test helper: for each writer, fork a child that saves two versions alternately,
SIGKILL it at a random moment, and classify what is on disk.

Run by test_kill.py as `python _kill_helper.py RUNS SEED DIR`; prints one JSON object
{writer: [outcome, ...]}. Outcomes:

* "A" / "B": every file of the save is byte-identical to one complete version (a pair
  may mix versions only as below);
* "mixed-detected": the files of a pair come from different saves (the new parameters beside
  the old symbol: they are written first) and loading says so (SymbolBlock.imports names
  mismatched names, its first call mismatched shapes; a checkpoint's parameters do not fit
  its symbol);
* "torn: ...": anything else (a partial file, an undetected mix) -- a failure;
* "stale-temps: ...": temporaries of the killed save survived the next save -- a failure.
"""
from __future__ import annotations

import json
import os
import random
import signal
import sys
import time
from pathlib import Path


import hybridgraph as mx
from hybridgraph import gluon, nd
from hybridgraph.nd.atomic import TEMP_SUFFIX


def _net(v: int, hybrid: bool = True):
    """Version v: Dense(200 + v) on 1000 inputs, every weight v + 1 (a 0.8 MB weight)."""
    net = gluon.nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(gluon.nn.Dense(200 + v, in_units=1000))
    net.initialize(mx.init.Constant(v + 1))
    if hybrid:
        net.hybridize()
        net(nd.ones((1, 1000)))
    return net


def _sym(v: int):
    data = mx.sym.var("data")
    return mx.sym.FullyConnected(data, num_hidden=200 + v, name="fc")


def _module(v: int):
    mod = mx.mod.Module(mx.sym.LinearRegressionOutput(_sym(v), name="out"), data_names=["data"],
                        label_names=["out_label"])
    mod.bind(data_shapes=[("data", (2, 1000))], label_shapes=[("out_label", (2, 200 + v))])
    mod.init_params(mx.init.Constant(v + 1))
    mod.init_optimizer(optimizer="sgd", optimizer_params={"momentum": 0.9})
    batch = mx.io.DataBatch([nd.ones((2, 1000))], [nd.ones((2, 200 + v))])
    for _ in range(v + 1):
        mod.forward_backward(batch)
        mod.update()
    return mod


def _trainer(v: int):
    net = _net(0, hybrid=False)
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    for _ in range(v + 1):
        with mx.autograd.record():
            loss = net(nd.ones((1, 1000))).sum()
        loss.backward()
        tr.step(1)
    return tr


def _bucketing(v: int):
    def gen(key):
        return mx.sym.LinearRegressionOutput(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=200 + v,
                                                                   name="fc"), name="out"), ["data"], ["out_label"]
    mod = mx.mod.BucketingModule(gen, default_bucket_key=10)
    mod.bind(data_shapes=[("data", (2, 1000))], label_shapes=[("out_label", (2, 200 + v))])
    mod.init_params(mx.init.Constant(v + 1))
    return mod


def _writers() -> dict:
    """name -> (make(v) -> state, write(state, prefix), files(prefix), kind)."""
    def ckpt_files(p):
        return [f"{p}-0000.params", f"{p}-symbol.json"]
    return {
        "nd.save": (lambda v: {"w": nd.full((512, 512), v + 1)}, lambda s, p: nd.save(p + ".params", s),
                    lambda p: [p + ".params"], "single"),
        "Symbol.save": (_sym, lambda s, p: s.save(p + "-symbol.json"), lambda p: [p + "-symbol.json"], "single"),
        "viz.Dot.save": (lambda v: mx.viz.plot_network(_sym(v), shape={"data": (1, 1000)}),
                         lambda s, p: s.save(os.path.basename(p) + ".gv", os.path.dirname(p)),
                         lambda p: [p + ".gv"], "single"),
        "HybridBlock.export": (_net, lambda s, p: s.export(p), ckpt_files, "export"),
        "Block.save_parameters": (lambda v: _net(v, False), lambda s, p: s.save_parameters(p + ".params"),
                                  lambda p: [p + ".params"], "single"),
        "ParameterDict.save": (lambda v: _net(v, False).collect_params(),
                               lambda s, p: s.save(p + ".params"), lambda p: [p + ".params"], "single"),
        "Trainer.save_states": (_trainer, lambda s, p: s.save_states(p + ".states"), lambda p: [p + ".states"],
                                "single"),
        "model.save_checkpoint": (lambda v: (_sym(v), {"fc_weight": nd.full((200 + v, 1000), v + 1),
                                                       "fc_bias": nd.full((200 + v,), v + 1)}),
                                  lambda s, p: mx.model.save_checkpoint(p, 0, s[0], s[1], {}),
                                  ckpt_files, "checkpoint"),
        "Module.save_checkpoint": (_module, lambda s, p: s.save_checkpoint(p, 0, save_optimizer_states=True),
                                   lambda p: [f"{p}-0000.params", f"{p}-0000.states", f"{p}-symbol.json"],
                                   "checkpoint"),
        "Module.save_optimizer_states": (_module, lambda s, p: s.save_optimizer_states(p + ".states"),
                                         lambda p: [p + ".states"], "single"),
        "Module.save_params": (_module, lambda s, p: s.save_params(p + ".params"), lambda p: [p + ".params"],
                               "single"),
        "BucketingModule.save_checkpoint": (_bucketing, lambda s, p: s.save_checkpoint(p, 0),
                                            lambda p: [f"{p}-0000.params", f"{p}-10-symbol.json", f"{p}.buckets"],
                                            "checkpoint"),
    }


def _pair_detected(kind: str, prefix: str) -> bool:
    """Whether the loader (or a plain shape check of the checkpoint) reports the mix."""
    if kind == "export":  # imports names different parameter names; the first call, different shapes
        try:
            block = gluon.SymbolBlock.imports(f"{prefix}-symbol.json", ["data"], f"{prefix}-0000.params")
            block(nd.ones((1, 1000)))
        except AssertionError as exc:
            return "do not belong together" in str(exc)
        except mx.base.MXNetError as exc:
            return "weight" in str(exc)
        return False
    sym_file = next(f for f in os.listdir(os.path.dirname(prefix)) if f.endswith("-symbol.json"))
    sym = mx.sym.load(os.path.join(os.path.dirname(prefix), sym_file))
    params = nd.load(f"{prefix}-0000.params")
    arg_shapes, _, _ = sym.infer_shape(data=(2, 1000))
    shapes = dict(zip(sym.list_arguments(), arg_shapes))
    return any(shapes.get(k.split(":", 1)[1]) != v.shape for k, v in params.items())


def _classify(files: list, refs: list, kind: str, prefix: str) -> str:
    got = []
    for f, ref_a, ref_b in zip(files, refs[0], refs[1]):
        data = Path(f).read_bytes()
        if data not in (ref_a, ref_b):
            return f"torn: {os.path.basename(f)} is neither version ({len(data)} bytes)"
        got.append("A" if data == ref_a and data != ref_b else "B" if data == ref_b and data != ref_a else "*")
    versions = set(got) - {"*"}
    if len(versions) <= 1:
        return versions.pop() if versions else "A"
    if kind != "single" and _pair_detected(kind, prefix):
        return "mixed-detected"
    return f"torn: files from different saves {got}, not detected"


def _one_run(name: str, spec: tuple, states: list, refs: list, workdir: Path, rng: random.Random,
             write_time: float) -> str:
    make, write, files, kind = spec
    d = workdir / f"{name}-run"
    if d.exists():
        for f in d.iterdir():
            f.unlink()
    d.mkdir(exist_ok=True)
    prefix = str(d / "model")
    write(states[0], prefix)
    pid = os.fork()
    if pid == 0:  # the child: save B, A, B, ... until killed
        try:
            v = 1
            while True:
                write(states[v], prefix)
                v = 1 - v
        finally:
            os._exit(0)
    time.sleep(rng.uniform(0, 3 * write_time))
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    outcome = _classify(files(prefix), refs, kind, prefix)
    write(states[0], prefix)  # the next save removes the killed one's temporaries
    stale = [f.name for f in d.iterdir() if f.name.endswith(TEMP_SUFFIX)]
    return f"stale-temps: {stale}" if stale else outcome


def main() -> None:
    runs, seed, workdir = int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    only = sys.argv[4].split(",") if len(sys.argv) > 4 else None
    rng = random.Random(seed)
    results = {}
    for name, spec in _writers().items():
        if only and name not in only:
            continue
        make, write, files, kind = spec
        states = [make(0), make(1)]
        refs = []
        for v in (0, 1):
            d = workdir / f"{name}-ref{v}"
            d.mkdir(parents=True, exist_ok=True)
            t = time.perf_counter()
            write(states[v], str(d / "model"))
            write_time = time.perf_counter() - t
            refs.append([Path(f).read_bytes() for f in files(str(d / "model"))])
        results[name] = [_one_run(name, spec, states, refs, workdir, rng, max(write_time, 0.002))
                         for _ in range(runs)]
    print(json.dumps(results))


if __name__ == "__main__":
    main()
