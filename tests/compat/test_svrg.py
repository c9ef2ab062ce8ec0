"""mx.contrib.svrg_optimization against MXNet 1.9.1 (tests/data/svrg_ref.json from
tests/data/gen_svrg_ref.py): SVRG training without a kvstore, with one, on two contexts, with
Adam and through fit; the optimizer's dispatch by key; and argument checks."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph.contrib.svrg_optimization.svrg_module import SVRGModule
from hybridgraph.contrib.svrg_optimization.svrg_optimizer import _SVRGOptimizer
from tests.data.gen_svrg_ref import run

REF = Path(__file__).resolve().parent.parent / "data" / "svrg_ref.json"


def _close(got, want):
    if isinstance(want, str):
        assert got == want
    else:
        np.testing.assert_allclose(np.array(got, dtype=float), np.array(want, dtype=float), rtol=1e-4, atol=1e-5)


def test_svrg_training_matches_mxnet():
    want = json.loads(REF.read_text())
    got = run(mx, SVRGModule)
    assert set(got) == set(want)
    for case in want:
        if case == "fit":
            _close(got[case], want[case])
            continue
        assert len(got[case]) == len(want[case]), case
        for g, w in zip(got[case], want[case]):
            _close(g, w)


def test_svrg_optimizer_dispatches_full_keys_to_assignment():
    o = _SVRGOptimizer(default_optimizer="sgd", param_idx2name={0: "weight", 1: "weight_full"}, learning_rate=1.0,
                       momentum=0.5)
    assert o.default_opt.lr == 1.0 and o.default_opt.momentum == 0.5 and o.lr == 1.0
    kv = mx.kv.create("local")
    kv.set_optimizer(o)
    w, full = mx.nd.zeros(3), mx.nd.ones(3)
    kv.init(0, w)
    kv.init(1, full)
    kv.push(0, mx.nd.ones(3))
    kv.push(1, mx.nd.full((3,), 2.0))
    kv.pull(0, w)
    kv.pull(1, full)
    np.testing.assert_allclose(w.asnumpy(), -1.0)  # sgd step
    np.testing.assert_allclose(full.asnumpy(), 2.0)  # assigned
    assert o._check_index("weight_full") == "weight_full"  # kvstore string keys are names already
    with pytest.raises(KeyError, match="no parameter name"):
        o._check_index(7)


def test_svrg_module_arguments_and_binding():
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=1)
    with pytest.raises(TypeError, match="integer"):
        SVRGModule(net, label_names=None)
    with pytest.raises(ValueError, match="positive"):
        SVRGModule(net, label_names=None, update_freq=0)
    mod = SVRGModule(net, data_names=["data"], label_names=None, update_freq=2)
    with pytest.raises(TypeError, match=r"\(name, shape\) pairs"):
        mod.bind(data_shapes=["data", mx.nd.zeros((2, 1))])
    mod.bind(data_shapes=[("data", (2, 1))])
    assert mod.binded and mod._mod_aux.binded
    inference = SVRGModule(net, data_names=["data"], label_names=None, update_freq=1)
    inference.bind(data_shapes=[("data", (2, 1))], for_training=False)
    assert inference.binded and not inference._mod_aux.binded
