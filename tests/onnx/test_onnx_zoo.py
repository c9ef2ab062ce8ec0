"""Every gluon.model_zoo.vision model exports to ONNX (static and dynamic batch), passes
onnx.checker, gives hybridgraph's outputs in onnxruntime at batch 1 and 3 (rtol/atol 1e-4),
and imports back (dynamic batch) with hybridgraph's outputs at batch 3.

Exporting is cheap but running a big model twice is not: CI runs the models of
CI_MODELS; HYBRIDGRAPH_ZOO_ALL=1 (or the thorough profile) runs all 34.

Tolerance: rtol 1e-4 and atol 1e-4 times the output's scale (max |y|, at least 1). With
the deterministic test weights the deep ResNets' logits reach |y| ~ 1e7, where float32
roundoff alone separates any two implementations: for resnet152_v2, hybridgraph's float32
output is 25 from the float64 result and onnxruntime's 24 (max |y| 1.7e7).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="ONNX export needs the onnx package (hybridgraph[onnx])")
ort = pytest.importorskip("onnxruntime", reason="checking exports needs onnxruntime (a test dependency)")

from hybridgraph import nd  # noqa: E402
from hybridgraph.gluon.model_zoo import vision  # noqa: E402
from hybridgraph.onnx.gluon import block_model  # noqa: E402
from hybridgraph.onnx.importer import import_to_gluon  # noqa: E402

REF_DIR = Path(__file__).resolve().parent.parent / "data" / "model_zoo"
sys.path.insert(0, str(REF_DIR))
from zoo_cases import CI_MODELS, MODELS, make_input, make_param  # noqa: E402

RUN_ALL = os.environ.get("HYBRIDGRAPH_ZOO_ALL") == "1" or os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
TOL = 1e-4


def _select() -> list:
    skip = pytest.mark.skip(reason="slow model: set HYBRIDGRAPH_ZOO_ALL=1 to run it")
    return [n if n in CI_MODELS or RUN_ALL else pytest.param(n, marks=skip) for n in MODELS]


def _model(name: str):
    net = vision.get_model(name)
    net.initialize()
    shape = MODELS[name]
    net(nd.array(make_input(shape)))  # finishes deferred shapes
    for key, p in net._collect_params_with_prefix().items():
        p.set_data(nd.array(make_param(key, p.shape)))
    net.hybridize()
    return net


def _run(model, x: np.ndarray) -> np.ndarray:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {sess.get_inputs()[0].name: x})[0]


@pytest.mark.parametrize("name", _select())
def test_zoo_model_exports_and_matches(name):
    net = _model(name)
    shape = MODELS[name]
    x3 = make_input((3, *shape[1:]))
    want = net(nd.array(x3)).asnumpy()
    static = block_model(net, nd.array(x3[:1]), dynamic_batch=False)
    dynamic = block_model(net, nd.array(x3[:1]), dynamic_batch=True)
    for m in (static, dynamic):
        onnx.checker.check_model(m, full_check=True)
    assert dynamic.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert static.graph.input[0].type.tensor_type.shape.dim[0].dim_value == 1
    atol = TOL * max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(_run(static, x3[:1]), want[:1], rtol=TOL, atol=atol)
    np.testing.assert_allclose(_run(dynamic, x3[:1]), want[:1], rtol=TOL, atol=atol)
    np.testing.assert_allclose(_run(dynamic, x3), want, rtol=TOL, atol=atol)
    # the round trip: the dynamic-batch model imported back runs batch 3 as hybridgraph did
    back = import_to_gluon(dynamic)
    np.testing.assert_allclose(back(nd.array(x3)).asnumpy(), want, rtol=TOL, atol=atol)
