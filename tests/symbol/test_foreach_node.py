"""Symbolic contrib.foreach as MXNet 1.9.1's `_foreach` node with a subgraph
(symbol/foreach_op.py), against tests/data/foreach_json_ref.json (written by MXNet 1.9.1:
tests/data/gen_foreach_json_ref.py): the same JSON text, MXNet's JSON loads and runs, the
same outputs and gradients, any data length."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import nd
from hybridgraph import symbol as sym
from hybridgraph.symbol.foreach_op import LoopBodyError

with open(os.path.join(os.path.dirname(__file__), "..", "data", "foreach_json_ref.json")) as _f:
    REF = json.load(_f)


def simple():
    d, s, w = sym.var("data"), sym.var("s"), sym.var("w")

    def body(x, st):
        o = x * 2 + st[0] * w
        return o, [o + 1]
    out, st = sym.contrib.foreach(body, d, [s])
    return sym.Group([out, st[0]])


def passthrough():
    d, s, w = sym.var("data"), sym.var("s"), sym.var("w")
    ww = sym.exp(w)

    def body(x, st):
        return [x * ww, x + 1], [st[0]]
    out, st = sym.contrib.foreach(body, d, [s])
    return sym.Group(out + st)


def nested():
    d, s = sym.var("data"), sym.var("s")

    def inner(x, st):
        o = x * 2 + st[0]
        return o, [o]

    def outer(x, st):
        o, _ = sym.contrib.foreach(inner, x, st)
        return o * 3, [sym.sum(o, axis=0)]
    out, st = sym.contrib.foreach(outer, d, [s])
    return sym.Group([out, st[0]])


CASES = {"simple": simple, "passthrough": passthrough, "nested": nested}


def _build(name):
    mx.AttrScope._subgraph_names.clear()
    with mx.name.NameManager():
        return CASES[name]()


def _run(graph, case):
    args = {k: nd.array(np.asarray(v, dtype=np.float32)) for k, v in case["args"].items()}
    grads = {k: nd.zeros(v.shape) for k, v in args.items()}
    ex = graph.bind(mx.cpu(), args, args_grad=grads)
    outs = ex.forward(is_train=True)
    ex.backward([nd.ones(o.shape) for o in outs])
    for got, want in zip(outs, case["outputs"]):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)
    for k, want in case["grads"].items():
        np.testing.assert_allclose(grads[k].asnumpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_json_text_is_mxnets(name):
    assert json.loads(_build(name).tojson()) == json.loads(REF[name]["json"])
    assert _build(name).tojson() == REF[name]["json"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_mxnets_json_loads_and_matches_its_numbers(name):
    loaded = sym.load_json(REF[name]["json"])
    assert loaded.tojson() == REF[name]["json"]
    _run(loaded, REF[name])
    _run(_build(name), REF[name])


def test_any_data_length_without_shapes():
    graph = _build("simple")
    for length in (1, 5, 0):
        data = np.arange(length * 3, dtype=np.float32).reshape(length, 3)
        outs = graph.eval(data=nd.array(data), s=nd.ones((3,)), w=nd.ones((3,)))
        state = np.ones(3, dtype=np.float32)
        rows = []
        for x in data:
            o = x * 2 + state
            rows.append(o)
            state = o + 1
        assert outs[0].shape == (length, 3)
        if length:
            np.testing.assert_allclose(outs[0].asnumpy(), np.stack(rows))
        np.testing.assert_allclose(outs[1].asnumpy(), state)


def test_subgraph_names_are_counted_as_in_mxnet():
    mx.AttrScope._subgraph_names.clear()
    _ = nested()
    sym.contrib.cond(sym.var("p"), lambda: sym.var("a"), lambda: sym.var("b"), name="c")
    assert dict(mx.AttrScope._subgraph_names) == {"foreach": 1, "foreach0$foreach": 1, "c_pred": 1,
                                                  "c_then": 1, "c_else": 1}


def test_unused_state_is_refused_as_in_mxnet():
    with pytest.raises(LoopBodyError, match="state array 's-0' has to be used"):
        sym.contrib.foreach(lambda x, st: (x, [x * 2]), sym.var("data"), [sym.var("s")])
    with pytest.raises(AssertionError):   # MXNet's type
        sym.contrib.foreach(lambda x, st: (x, [x * 2]), sym.var("data"), [sym.var("s")])


@pytest.mark.parametrize("name", sorted(CASES))
def test_onnx_export_unrolls_the_loop(name):
    pytest.importorskip("onnx", reason="ONNX export needs the onnx package")
    ort = pytest.importorskip("onnxruntime", reason="running the exported model needs onnxruntime")
    from hybridgraph.onnx.export import build_model
    graph, case = _build(name), REF[name]
    args = {k: np.asarray(v, dtype=np.float32) for k, v in case["args"].items()}
    names = graph.list_inputs()
    model = build_model(graph, {}, [args[n].shape for n in names])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {i.name: args[i.name] for i in sess.get_inputs()}
    for got, want in zip(sess.run(None, feeds), case["outputs"]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
