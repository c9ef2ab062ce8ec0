"""box_nms exported to ONNX gives MXNet 1.9.1's own outputs in onnxruntime (every attribute:
tests/data/boxops/boxops_ref.npz, written by real MXNet), imports back, and runs at another batch
size when exported with a dynamic batch; the interleaved attention matmuls likewise."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="ONNX export needs the onnx package (hybridgraph[onnx])")
ort = pytest.importorskip("onnxruntime", reason="checking exports needs onnxruntime (a test dependency)")

import hybridgraph as mx  # noqa: E402
from hybridgraph import nd  # noqa: E402
from hybridgraph.onnx import ExportError, build_model  # noqa: E402
from hybridgraph.onnx.importer import import_model  # noqa: E402
from hybridgraph.onnx.verification import _run_hybridgraph  # noqa: E402

REF = np.load(os.path.join(os.path.dirname(__file__), "..", "data", "boxops", "boxops_ref.npz"))
NMS_CASES = sorted({k.rsplit("/", 1)[0] for k in REF.files if k.startswith("box_nms/")})


def _ort(model, feed: dict) -> list:
    return ort.InferenceSession(model.SerializeToString()).run(None, feed)


def _tol(dtype) -> dict:
    return {"rtol": 2e-3, "atol": 2e-3} if np.dtype(dtype) == np.float16 else {"rtol": 1e-6, "atol": 1e-6}


@pytest.mark.parametrize("case", NMS_CASES)
def test_box_nms_onnx_matches_mxnet_and_imports_back(case):
    attrs, x = json.loads(str(REF[f"{case}/attrs"])), REF[f"{case}/data"]
    want = REF[f"{case}/out"]
    model = build_model(mx.sym.contrib.box_nms(mx.sym.var("data"), **attrs), {}, [x.shape], [x.dtype])
    onnx.checker.check_model(model)
    np.testing.assert_allclose(_ort(model, {"data": x})[0], want, **_tol(x.dtype))
    sym, arg, aux = import_model(model)
    np.testing.assert_allclose(_run_hybridgraph(sym, {**arg, **aux}, {"data": x})[0], want, **_tol(x.dtype))


def test_box_nms_onnx_dynamic_batch():
    x = REF["box_nms/0/data"].astype(np.float32)
    x = np.broadcast_to(x.reshape((-1,) + x.shape[-2:])[:1], (3,) + x.shape[-2:]).copy()
    attrs = json.loads(str(REF["box_nms/0/attrs"]))
    sym = mx.sym.contrib.box_nms(mx.sym.var("data"), **attrs)
    model = build_model(sym, {}, [(1,) + x.shape[1:]], [np.float32], dynamic=True,
                        dynamic_input_shapes=[("batch",) + x.shape[1:]])
    want = nd.contrib.box_nms(nd.array(x), **attrs).asnumpy()
    np.testing.assert_allclose(_ort(model, {"data": x})[0], want, rtol=1e-6)


def test_box_nms_too_many_candidates_is_a_clear_export_error():
    sym = mx.sym.contrib.box_nms(mx.sym.var("data"), name="nms")
    with pytest.raises(ExportError, match=r"'nms'.*topk"):
        build_model(sym, {}, [(1, 3000, 6)], [np.float32])
    build_model(mx.sym.contrib.box_nms(mx.sym.var("data"), topk=100), {}, [(1, 3000, 6)], [np.float32])


@pytest.mark.parametrize("name", ["interleaved_matmul_selfatt_qk", "interleaved_matmul_selfatt_valatt",
                                  "interleaved_matmul_encdec_qk", "interleaved_matmul_encdec_valatt"])
def test_interleaved_matmul_onnx_matches_mxnet(name):
    case = f"{name}/0"
    xs = [REF[f"{case}/in{k}"] for k in range(2) if f"{case}/in{k}" in REF.files]
    names = [f"x{k}" for k in range(len(xs))]
    sym = getattr(mx.sym.contrib, name)(*[mx.sym.var(n) for n in names], **json.loads(str(REF[f"{case}/attrs"])))
    model = build_model(sym, {}, [x.shape for x in xs], [x.dtype for x in xs])
    np.testing.assert_allclose(_ort(model, dict(zip(names, xs)))[0], REF[f"{case}/out"], rtol=1e-5, atol=1e-5)
