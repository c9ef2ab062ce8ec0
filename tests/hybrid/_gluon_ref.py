"""Shared checks for the layer and loss tests: MXNet reference cases (tests/data/gluon_ref.*) and JSON comparison."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph.gluon.utils import export_paths
from hybridgraph.nd import autograd

DATA = Path(__file__).resolve().parent.parent / "data"
sys.path.insert(0, str(DATA))
from gluon_cases import CONV_CASES, LAYER_CASES, LOSS_CASES  # noqa: E402,F401 - re-exported for the tests

_NPZ: dict | None = None
_SYMBOLS: dict | None = None
RTOL, ATOL = 1e-4, 1e-5


def reference() -> dict:
    """The arrays MXNet 1.9.1 wrote (tests/data/gen_gluon_ref.py), loaded once."""
    global _NPZ
    if _NPZ is None:
        with np.load(DATA / "gluon_ref.npz") as f:
            _NPZ = {k: f[k] for k in f.files}
    return _NPZ


def reference_symbols() -> dict:
    global _SYMBOLS
    if _SYMBOLS is None:
        _SYMBOLS = json.loads((DATA / "gluon_ref.json").read_text())["symbols"]
    return _SYMBOLS


def case_arrays(name: str) -> dict:
    prefix = f"{name}/"
    return {k[len(prefix):]: v for k, v in reference().items() if k.startswith(prefix)}


def build(ctor: str) -> Any:
    """Evaluate a case constructor with hybridgraph's `nn` and `loss`, prefix 'net_' as the generator does."""
    from hybridgraph.gluon import loss, nn  # noqa: F401 - used by eval
    ctor = ctor[:-1] + (", " if not ctor.endswith("()") else "") + "prefix='net_')"
    return eval(ctor)  # noqa: S307 - constructors from tests/data/gluon_cases.py


def _inputs(ref: dict, specs: list) -> list:
    return [nd.array(ref[f"in:{n}"]) if f"in:{n}" in ref else None for n, _, _ in specs]


def prepared(ctor: str, specs: list, ref: dict) -> tuple[Any, list]:
    """The block with deferred shapes settled and MXNet's parameter values loaded."""
    net = build(ctor)
    net.initialize()
    args = _inputs(ref, specs)
    with autograd.pause():
        net(*args)
    for key, p in net._collect_params_with_prefix().items():
        p.set_data(nd.array(ref[f"param:{key}"]))
    return net, args


def _check_pass(net, specs: list, flags: dict, ref: dict, train: bool, tag: str) -> None:
    args = _inputs(ref, specs)
    nograd = tuple(flags.get("nograd", ()))
    if not flags.get("grad", True):
        np.testing.assert_allclose(net(*args).asnumpy(), ref[f"{tag}out"], RTOL, ATOL, err_msg="output")
        return
    for (n, _, _), a in zip(specs, args):
        if a is not None and n not in nograd:
            a.attach_grad()
    params = net._collect_params_with_prefix()
    net.collect_params().zero_grad()
    with autograd.record(train_mode=train):
        y = net(*args)
    y.backward(nd.array(ref["cot"]))
    np.testing.assert_allclose(y.asnumpy(), ref[f"{tag}out"], RTOL, ATOL, err_msg=f"{tag}output")
    for (n, _, _), a in zip(specs, args):
        if a is not None and n not in nograd and not flags.get("true_derivative"):
            np.testing.assert_allclose(a.grad.asnumpy(), ref[f"{tag}grad:in:{n}"], RTOL, ATOL,
                                       err_msg=f"{tag}gradient of input {n}")
    for key, p in params.items():
        if p.grad_req != "null":
            np.testing.assert_allclose(p.grad().asnumpy(), ref[f"{tag}grad:param:{key}"], RTOL, ATOL,
                                       err_msg=f"{tag}gradient of {key}")
        elif train and "running_" in key:
            # (MXNet's BatchNorm also overwrites a fixed gamma with ones; ours leaves the unused value alone)
            np.testing.assert_allclose(p.data().asnumpy(), ref[f"{tag}aux:{key}"], RTOL, ATOL,
                                       err_msg=f"{tag}aux state {key}")


def check_against_mxnet(case: tuple, mode: str) -> None:
    """Outputs, input and parameter gradients (and BatchNorm statistics) equal MXNet's for fixed values.

    mode: 'eager', 'hybrid' or 'static' (hybridized with static_alloc/static_shape).
    """
    name, ctor, specs, flags = case
    ref = case_arrays(name)
    net, _ = prepared(ctor, specs, ref)
    if mode != "eager":  # (also where MXNet cannot hybridize the block: its eager numbers still hold)
        net.hybridize(static_alloc=mode == "static", static_shape=mode == "static")
    _check_pass(net, specs, flags, ref, False, "")
    if flags.get("train"):
        _check_pass(net, specs, flags, ref, True, "train:")


def _graph(text: str | dict) -> tuple:
    g = json.loads(text) if isinstance(text, str) else text
    nodes = [(n["op"], n["name"], n.get("attrs", {}), [tuple(i[:2]) for i in n["inputs"]]) for n in g["nodes"]]
    return nodes, g["arg_nodes"], [tuple(h) for h in g["heads"]]


def compare_json(mine: str | dict, theirs: str | dict) -> None:
    """Parsed graphs agree node by node (op, name, attrs, inputs), in arg_nodes and heads.

    Input entries are compared as (node, output): their third field, MXNet's
    variable version, counts how often MXNet composed the block's graph in
    the process (an aux state read twice reads version 2), not the graph.
    """
    a_nodes, a_args, a_heads = _graph(mine)
    b_nodes, b_args, b_heads = _graph(theirs)
    assert [n[:2] for n in a_nodes] == [n[:2] for n in b_nodes], "node (op, name) lists differ"
    for a, b in zip(a_nodes, b_nodes):
        assert a[2] == b[2], f"attrs of node {a[1]} differ: {a[2]} vs MXNet {b[2]}"
        assert a[3] == b[3], f"inputs of node {a[1]} differ: {a[3]} vs MXNet {b[3]}"
    assert a_args == b_args
    assert a_heads == b_heads


def export_json(net: Any, args: list, tmp_path: Path) -> str:
    net.hybridize()
    net(*args)
    assert net.export(str(tmp_path / "m")) is None   # as in MXNet 1.9.1
    sym_file, _ = export_paths(str(tmp_path / "m"))
    return Path(sym_file).read_text()


def _drop_ignored_attr(graph: dict) -> dict:
    """MXNet's CosineEmbeddingLoss passes axis=1 to broadcast_maximum, which has no such
    attribute; MXNet keeps it in the JSON, our schema rejects it, so it is left out here."""
    g = json.loads(json.dumps(graph))
    for n in g["nodes"]:
        if n["op"] == "broadcast_maximum":
            n.get("attrs", {}).pop("axis", None)
    return g


def check_export(case: tuple, tmp_path: Path) -> None:
    """The hybridized block exports the JSON MXNet exports for the same block."""
    name, ctor, specs, flags = case
    if not flags.get("hybrid", True):
        pytest.skip(f"{name}: MXNet cannot hybridize this block")
    ref = case_arrays(name)
    net, args = prepared(ctor, specs, ref)
    compare_json(export_json(net, args, tmp_path), _drop_ignored_attr(reference_symbols()[name]))


def require_ops(*names: str) -> None:
    """Fail, naming the operators, when the registry lacks any of them."""
    from hybridgraph.nd.registry import all_ops
    missing = [n for n in names if n not in all_ops()]
    if missing:
        pytest.fail(f"operator(s) {', '.join(missing)} not in the registry")


# -- models exported by MXNet 1.9.1 (../shared/golden/mxnet) ------------------------------------------------------
def _tol(tols: dict, key: str, index: int | None = None) -> dict:
    if key.startswith(("train:", "grad:", "aux_after:")):
        t = tols.get("train_per_key", {}).get(key, tols.get("train"))
    else:
        per = tols.get("forward_per_output")
        t = per[index] if per else tols["forward"]
    return {"rtol": t["rtol"], "atol": t["atol"]}


def check_golden(golden: Path, name: str, make_net: Any, no_grad_inputs: tuple = (), hybridize: bool = False) -> None:
    """A natively built model with MXNet's exported weights gives MXNet's outputs, gradients and aux states."""
    model = json.loads((golden / "mxnet" / "manifest.json").read_text())["models"][name]
    tols = model["tolerances"]
    io = np.load(golden / "mxnet" / f"{name}-io.npz")
    params_file = str(golden / "mxnet" / f"{name}-0000.params")
    input_names = [i["name"] for i in model["inputs"]]
    for train in (False, True) if model.get("has_grads") else (False,):
        net = make_net()
        net.collect_params().load(params_file)
        if hybridize:
            net.hybridize()
        xs = [nd.array(io[n]) for n in input_names]
        for n, x in zip(input_names, xs):
            if train and n not in no_grad_inputs:
                x.attach_grad()
        with autograd.record(train_mode=train):
            outs = net(*xs)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        tag = "train:" if train else ""
        for i, o in enumerate(outs):
            np.testing.assert_allclose(o.asnumpy(), io[f"{tag}out{i}"], err_msg=f"{name} {tag}out{i}",
                                       **_tol(tols, f"{tag}out{i}", i))
        if not train:
            continue
        autograd.backward(outs, [nd.array(io[f"cot{i}"]) for i in range(len(outs))])
        params = net.collect_params()
        for key in io.files:
            if key.startswith("grad:"):
                what = key[5:]
                got = xs[input_names.index(what)].grad if what in input_names else params[what].grad()
            elif key.startswith("aux_after:"):
                got = params[key[10:]].data()
            else:
                continue
            np.testing.assert_allclose(got.asnumpy(), io[key], err_msg=f"{name} {key}", **_tol(tols, key))


def check_golden_json(golden: Path, name: str, make_net: Any, tmp_path: Path) -> None:
    """Our export() of the natively built model writes MXNet's graph (names, ops, attributes, wiring)."""
    model = json.loads((golden / "mxnet" / "manifest.json").read_text())["models"][name]
    io = np.load(golden / "mxnet" / f"{name}-io.npz")
    net = make_net()
    net.initialize()
    text = export_json(net, [nd.array(io[i["name"]]) for i in model["inputs"]], tmp_path)
    compare_json(text, (golden / "mxnet" / f"{name}-symbol.json").read_text())
