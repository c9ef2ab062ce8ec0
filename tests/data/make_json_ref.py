"""Write the reference `-symbol.json` texts in tests/data/json_ref/ with the real MXNet 1.9.1.

Run with the MXNet venv:  /work/mxvenv/bin/python tests/data/make_json_ref.py

Each builder below takes a namespace `ns` with `sym`, `NameManager` and
`AttrScope`, so the same code builds the graph with MXNet (here) and with
hybridgraph (tests/symbol/test_json_io.py imports BUILDERS from this file and
compares its `tojson()` with MXNet's text byte for byte).
Graphs in MXNET_ONLY are built by MXNet alone (our tests load their text).
Writes `<case>-symbol.json` (MXNet's `tojson()`) and `index.json` (per case:
operators used, list_arguments/auxiliary_states/outputs and `debug_str()`; and
under "loaded", MXNet's `debug_str()` of a few golden files after loading them).
"""
from __future__ import annotations

import json
import sys
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent / "json_ref"
GOLDEN = Path(__file__).resolve().parents[3] / "shared" / "golden"
#: golden files whose MXNet `debug_str()` after loading goes into index.json ("loaded")
LOADED = ["published/apache_mxnet_save_000800.json", "published/pangyupo_mtcnn_det1-symbol.json",
          "mxnet/sym_convbn-symbol.json"]


def vars_group(ns):
    """Variables with every reserved attribute, user attrs with characters that need
    escaping, and the scalar / elementwise operator overloads."""
    S = ns.sym
    x = S.var("x", shape=(2, 3), dtype="float64", lr_mult=2.0, wd_mult=0.5,
              init='["xavier", {"magnitude": 3}]', attr={"mood": "happy"})
    y = S.var("y", shape=(0, 3), init="zeros", stype="default")
    w = S.var("w", attr={"note": 'a "quoted" \\ value\twith\nnewline, é and ∑'})
    outs = [x + 1, 2.5 - y, x * y, x ** 2, x / 3, 1.0 / x, -x, x - y, x + w,
            S.broadcast_add(x, y), S.sum(x, axis=(0,), keepdims=True)]
    return S.Group(outs)


def bn_versions(ns):
    """BatchNorm aux states: versions count the mutations of a shared moving_mean;
    output_mean_var exposes the hidden outputs; user-given aux variables get __init__."""
    S = ns.sym
    x = S.var("x")
    bn1 = S.BatchNorm(x, name="bn1", fix_gamma=False, eps=2e-5)
    mm = bn1.get_internals()["bn1_moving_mean"]
    bn2 = S.BatchNorm(bn1, gamma=S.var("g"), beta=S.var("b"), moving_mean=mm,
                      moving_var=S.var("mv"), name="bn2")
    bn3 = S.BatchNorm(x, output_mean_var=True, momentum=0.8, name="bn3")
    return S.Group([bn2 + mm, bn3[1], bn3[2]])


def wide(ns):
    """More than 10 inputs / arg nodes / heads: the multi-line array layout."""
    S = ns.sym
    xs = [S.var(f"x{i}") for i in range(12)]
    total = S.add_n(*xs, name="sum12")
    return S.Group([total] + [total * x for x in xs[:10]])


def attr_scope(ns):
    """AttrScope keys become `__key__` on ops and on the variables they create."""
    S = ns.sym
    x = S.var("x")
    with ns.AttrScope(ctx_group="dev1", lr_mult="0.5"):
        bn = S.BatchNorm(x, name="bn")
        y = S.relu(bn)
    with ns.AttrScope(ctx_group="dev2"):
        z = S.sum(y * 2, name="total")
    return z


def mlp(ns):
    """A Symbol-API MLP with AttrScope (FullyConnected, Activation, SoftmaxOutput)."""
    S = ns.sym
    data = S.var("data")
    with ns.AttrScope(ctx_group="dev1"):
        fc1 = S.FullyConnected(data, num_hidden=128, name="fc1")
        act1 = S.Activation(fc1, act_type="relu", name="relu1")
    with ns.AttrScope(ctx_group="dev2", wd_mult="0.1"):
        fc2 = S.FullyConnected(act1, num_hidden=10, no_bias=True, name="fc2")
        return S.SoftmaxOutput(fc2, name="softmax")


def split_group(ns):
    """Group of some outputs of a multi-output op (formats.md 1.1's example)."""
    S = ns.sym
    x = S.var("x")
    z = S.var("z")
    s = S.split(x, num_outputs=3, axis=1)
    return S.Group([s[0], s[2], z])


BUILDERS = {f.__name__: f for f in (vars_group, bn_versions, wide, attr_scope, mlp, split_group)}


# -- graphs only MXNet builds here (hybridgraph loads their text) -------------------------

def mx_foreach(mx):
    """A control-flow op: the body is a subgraph (written without "attrs")."""
    data, init = mx.sym.var("data"), mx.sym.var("init")

    def step(x, states):
        s = states[0] + x
        return s, [s]

    out, states = mx.sym.contrib.foreach(step, data, [init])
    return mx.sym.Group([out] + states)


def mx_amp(mx):
    """amp_cast / amp_multicast, which tojson() removes by default."""
    x, y = mx.sym.var("x"), mx.sym.var("y")
    c = mx.sym.amp_cast(x, dtype="float16", name="c")
    m = mx.sym.amp_multicast(x, y, num_outputs=2, name="m")
    r = mx.sym.relu(c, name="r") + m[1]
    return mx.sym.Group([r, c, m[0]])


MXNET_ONLY = {"foreach": mx_foreach, "amp": mx_amp}


def build(ns, case: str):
    """Run one builder with fresh automatic-name counters."""
    with ns.NameManager():
        return BUILDERS[case](ns)


def _ops(sym_json: str) -> list[str]:
    return sorted({n["op"] for n in json.loads(sym_json)["nodes"] if n["op"] != "null"})


def main() -> None:
    import mxnet as mx

    ns = types.SimpleNamespace(sym=mx.sym, NameManager=mx.name.NameManager, AttrScope=mx.AttrScope)
    HERE.mkdir(exist_ok=True)
    index = {"mxnet_version": mx.__version__, "cases": {}}
    for case in BUILDERS:
        s = build(ns, case)
        text = s.tojson()
        (HERE / f"{case}-symbol.json").write_text(text, encoding="utf-8")
        index["cases"][case] = {
            "ops": _ops(text), "arguments": s.list_arguments(),
            "aux_states": s.list_auxiliary_states(), "outputs": s.list_outputs(),
            "debug_str": s.debug_str(),
        }
    index["mxnet_only"] = {}
    for case, fn in MXNET_ONLY.items():
        with mx.name.NameManager():
            s = fn(mx)
        text = s.tojson()
        (HERE / f"{case}-symbol.json").write_text(text, encoding="utf-8")
        kept = s.tojson(remove_amp_cast=False)
        if kept != text:
            (HERE / f"{case}-keep_amp-symbol.json").write_text(kept, encoding="utf-8")
        index["mxnet_only"][case] = {"ops": _ops(kept), "debug_str": s.debug_str(),
                                     "outputs": s.list_outputs()}
    index["loaded"] = {rel: {"debug_str": mx.sym.load(str(GOLDEN / rel)).debug_str()} for rel in LOADED}
    (HERE / "index.json").write_text(json.dumps(index, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(BUILDERS)} cases to {HERE}", file=sys.stderr)


if __name__ == "__main__":
    main()
