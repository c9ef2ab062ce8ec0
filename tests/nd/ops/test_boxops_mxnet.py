"""The detection and interleaved-attention operators against MXNet 1.9.1's own outputs and
gradients (tests/data/boxops/boxops_ref.npz, written by gen_boxops_ref.py with real MXNet)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import autograd, nd

REF = np.load(os.path.join(os.path.dirname(__file__), "..", "..", "data", "boxops", "boxops_ref.npz"))


def _cases(op: str) -> list[str]:
    return sorted({k.rsplit("/", 1)[0] for k in REF.files if k.startswith(op + "/")})


def _get(case: str, key: str) -> np.ndarray:
    return REF[f"{case}/{key}"]


def _attrs(case: str) -> dict:
    return json.loads(str(_get(case, "attrs")))


def _tol(dtype) -> dict:
    return {"rtol": 1e-2, "atol": 2e-3} if np.dtype(dtype) == np.float16 else {"rtol": 1e-5, "atol": 1e-6}


@pytest.mark.parametrize("case", _cases("box_nms"))
def test_box_nms_matches_mxnet(case):
    x = _get(case, "data")
    data = nd.array(x, dtype=x.dtype)
    data.attach_grad()
    with autograd.record():
        y = nd.contrib.box_nms(data, **_attrs(case))
    y.backward(nd.array(_get(case, "head"), dtype=x.dtype))
    np.testing.assert_allclose(y.asnumpy(), _get(case, "out"), **_tol(x.dtype))
    np.testing.assert_allclose(data.grad.asnumpy(), _get(case, "grad"), **_tol(x.dtype))


@pytest.mark.parametrize("case", _cases("box_iou"))
def test_box_iou_matches_mxnet(case):
    lhs, rhs = _get(case, "lhs"), _get(case, "rhs")
    out = nd.contrib.box_iou(nd.array(lhs, dtype=lhs.dtype), nd.array(rhs, dtype=rhs.dtype), **_attrs(case))
    np.testing.assert_allclose(out.asnumpy(), _get(case, "out"), **_tol(lhs.dtype))


@pytest.mark.parametrize("case", _cases("bipartite_matching"))
def test_bipartite_matching_matches_mxnet(case):
    x = _get(case, "data")
    a, b = nd.contrib.bipartite_matching(nd.array(x, dtype=x.dtype), **_attrs(case))
    np.testing.assert_array_equal(a.asnumpy(), _get(case, "out0"))
    np.testing.assert_array_equal(b.asnumpy(), _get(case, "out1"))


@pytest.mark.parametrize("case", _cases("MultiBoxPrior"))
def test_multibox_prior_matches_mxnet(case):
    out = nd.contrib.MultiBoxPrior(nd.zeros(tuple(_get(case, "shape"))), **_attrs(case))
    np.testing.assert_array_equal(out.asnumpy(), _get(case, "out"))


@pytest.mark.parametrize("case", _cases("MultiBoxTarget"))
def test_multibox_target_matches_mxnet(case):
    outs = nd.contrib.MultiBoxTarget(*(nd.array(_get(case, k)) for k in ("anchor", "label", "cls_pred")),
                                     **_attrs(case))
    for o, k in zip(outs, ("loc_target", "loc_mask", "cls_target")):
        np.testing.assert_allclose(o.asnumpy(), _get(case, k), rtol=1e-5, atol=1e-5, err_msg=k)


@pytest.mark.parametrize("case", _cases("MultiBoxDetection"))
def test_multibox_detection_matches_mxnet(case):
    out = nd.contrib.MultiBoxDetection(*(nd.array(_get(case, k)) for k in ("cls_prob", "loc_pred", "anchor")),
                                       **_attrs(case))
    np.testing.assert_allclose(out.asnumpy(), _get(case, "out"), rtol=1e-5, atol=1e-6)


def test_box_encode_matches_mxnet():
    case = "box_encode/0"
    y, mask = nd.contrib.box_encode(*(nd.array(_get(case, f"in{k}")) for k in range(6)))
    np.testing.assert_allclose(y.asnumpy(), _get(case, "out0"), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(mask.asnumpy(), _get(case, "out1"))


@pytest.mark.parametrize("name", ["interleaved_matmul_selfatt_qk", "interleaved_matmul_selfatt_valatt",
                                  "interleaved_matmul_encdec_qk", "interleaved_matmul_encdec_valatt"])
def test_interleaved_matmul_matches_mxnet(name):
    case = f"{name}/0"
    xs = [nd.array(_get(case, f"in{k}")) for k in range(2) if f"{case}/in{k}" in REF.files]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        y = getattr(nd.contrib, name)(*xs, **_attrs(case))
    y.backward(nd.array(_get(case, "head")))
    np.testing.assert_allclose(y.asnumpy(), _get(case, "out"), rtol=1e-5, atol=1e-5)
    for k, x in enumerate(xs):
        np.testing.assert_allclose(x.grad.asnumpy(), _get(case, f"grad{k}"), rtol=1e-5, atol=1e-5)


def test_symbol_names_and_json_round_trip():
    """sym.contrib.X builds `_contrib_X` nodes; outputs as MXNet lists them; JSON loads back."""
    d = mx.sym.var("d")
    nms = mx.sym.contrib.box_nms(d, name="nms")
    assert nms.list_outputs() == ["nms_output0"]
    assert json.loads(nms.tojson())["nodes"][-1]["op"] == "_contrib_box_nms"
    alias = mx.sym.contrib.box_non_maximum_suppression(d, name="nms")
    assert json.loads(alias.tojson())["nodes"][-1]["op"] == "_contrib_box_nms"
    t = mx.sym.contrib.MultiBoxTarget(mx.sym.var("a"), mx.sym.var("b"), mx.sym.var("c"), name="t")
    assert t.list_outputs() == ["t_loc_target", "t_loc_mask", "t_cls_target"]
    det = mx.sym.contrib.MultiBoxDetection(mx.sym.var("a"), mx.sym.var("b"), mx.sym.var("c"), name="t")
    assert det.list_arguments() == ["a", "b", "c"]
    back = mx.sym.load_json(t.tojson())
    assert back.list_outputs() == t.list_outputs()
    bm = mx.sym.contrib.bipartite_matching(d, threshold=0.1, name="m")
    assert bm.list_outputs() == ["m_output0", "m_output1"]


def test_box_nms_bad_attributes_raise():
    x = nd.zeros((4, 6))
    with pytest.raises(mx.base.MXNetError, match="score_index"):
        nd.contrib.box_nms(x, score_index=3)
    with pytest.raises(mx.base.MXNetError, match="coordinates"):
        nd.contrib.box_nms(x, coord_start=3)
    with pytest.raises(mx.base.MXNetError, match="at least 6"):
        nd.contrib.box_nms(nd.zeros((4, 5)), id_index=0)
    with pytest.raises(mx.base.MXNetError):
        nd.contrib.box_nms(x, in_format="xywh")


def test_npx_multibox_names():
    """MXNet 1.9.1's npx has multibox_prior/target/detection (the _npx_ aliases)."""
    x = mx.np.zeros((1, 2, 3, 3))
    got = mx.npx.multibox_prior(x, sizes=(0.5,))
    assert isinstance(got, mx.np.ndarray) and got.shape == (1, 9, 4)
    want = nd.contrib.MultiBoxPrior(nd.zeros((1, 2, 3, 3)), sizes=(0.5,))
    np.testing.assert_array_equal(got.asnumpy(), want.asnumpy())
    assert callable(mx.npx.multibox_target) and callable(mx.npx.multibox_detection)


def test_integer_inputs_are_refused_as_in_mxnet():
    with pytest.raises(mx.base.MXNetError, match="floating point"):
        nd.contrib.box_nms(nd.zeros((4, 6), dtype="int32"))
    with pytest.raises(mx.base.MXNetError, match="floating point"):
        nd.contrib.box_iou(nd.zeros((2, 4), dtype="int32"), nd.zeros((2, 4), dtype="int32"))
