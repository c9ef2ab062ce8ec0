"""CTCLoss against MXNet 1.9.1 (tests/data/ctc_ref.npz, written by tests/data/gen_ctc_ref.py):
loss and activation gradient for both blank labels, with and without data/label lengths;
the Symbol and Gluon front ends; the errors MXNet raises."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import autograd, gluon, nd
from hybridgraph.nd.errors import AttrError, DTypeError, MXNetError, ShapeError

REF = np.load(pathlib.Path(__file__).parent.parent / "data" / "ctc_ref.npz")
CASES = [f"{b}_{d}{n}" for b in ("first", "last") for d in (0, 1) for n in (0, 1)]
DATA_LENGTHS = [9, 6, 8, 3]
LABEL_LENGTHS = [3, 1, 2, 1]


def _args(key):
    use_dl, use_ll = key[-2] == "1", key[-1] == "1"
    args = [nd.array(REF[key + "_data"]), nd.array(REF[key + "_label"]),
            nd.array(DATA_LENGTHS) if use_dl else None, nd.array(LABEL_LENGTHS) if use_ll else None]
    attrs = {"use_data_lengths": use_dl, "use_label_lengths": use_ll, "blank_label": key.split("_")[0]}
    return args, attrs


@pytest.mark.parametrize("key", CASES)
@pytest.mark.parametrize("name", ["CTCLoss", "ctc_loss"])
def test_loss_and_gradient_match_mxnet(key, name):
    args, attrs = _args(key)
    x = args[0]
    x.attach_grad()
    with autograd.record():
        loss = getattr(nd, name)(*args, **attrs)
    loss.backward(nd.array(REF[key + "_head"]))
    np.testing.assert_allclose(loss.asnumpy(), REF[key + "_loss"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), REF[key + "_grad"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("key", ["first_11", "last_10"])
def test_executor_and_contrib_names_agree(key):
    args, attrs = _args(key)
    names = [n for n, a in zip(("data", "label", "dl", "ll"), args) if a is not None]
    sym = mx.sym.contrib.CTCLoss(*[mx.sym.var(n) if a is not None else None
                                   for n, a in zip(("data", "label", "dl", "ll"), args)], **attrs)
    assert sym.list_arguments() == names
    assert len(sym.list_outputs()) == 1
    feed = {n: a for n, a in zip(("data", "label", "dl", "ll"), args) if a is not None}
    grad = nd.zeros(feed["data"].shape)
    exe = sym.bind(mx.cpu(), feed, args_grad={"data": grad},
                   grad_req={n: "write" if n == "data" else "null" for n in names})
    out = exe.forward(is_train=True)[0]
    exe.backward(nd.array(REF[key + "_head"]))
    np.testing.assert_allclose(out.asnumpy(), REF[key + "_loss"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad.asnumpy(), REF[key + "_grad"], rtol=1e-4, atol=1e-5)


def test_symbol_inference():
    sym = mx.sym.ctc_loss(mx.sym.var("a"), mx.sym.var("b"), use_data_lengths=True, name="c")
    assert sym.list_arguments() == ["a", "b", "c_data_lengths"]
    assert sym.list_outputs() == ["c_output0"]
    args, outs, _ = sym.infer_shape(a=(6, 2, 5), b=(2, 3))
    assert args == [(6, 2, 5), (2, 3), (2,)] and outs == [(2,)]
    _, touts, _ = sym.infer_type(a=np.float32, b=np.int32)
    assert touts == [np.float32]


def test_gluon_loss_layouts_and_hybridize():
    pred = nd.array(REF["last_00_data"]).transpose((1, 0, 2))   # NTC
    label = nd.array(REF["last_00_label"])
    want = REF["last_00_loss"]
    for hybrid in (False, True):
        loss = gluon.loss.CTCLoss()
        if hybrid:
            loss.hybridize()
        np.testing.assert_allclose(loss(pred, label).asnumpy(), want, rtol=1e-5, atol=1e-5)
    tnc = gluon.loss.CTCLoss(layout="TNC", label_layout="TN")
    np.testing.assert_allclose(tnc(nd.array(REF["last_00_data"]), label.T).asnumpy(), want, rtol=1e-5, atol=1e-5)
    pred = nd.array(REF["last_01_data"]).transpose((1, 0, 2))
    lengths = gluon.loss.CTCLoss()(pred, nd.array(REF["last_01_label"]), None, nd.array(LABEL_LENGTHS))
    np.testing.assert_allclose(lengths.asnumpy(), REF["last_01_loss"], rtol=1e-5, atol=1e-5)


def test_label_longer_than_its_sequence_gives_zero():
    # MXNet returns 0 (and leaves the gradient unwritten; here it is 0)
    x = nd.ones((3, 1, 5))
    x.attach_grad()
    with autograd.record():
        loss = nd.ctc_loss(x, nd.array([[1, 1, 1]]))
    loss.backward()
    assert loss.asnumpy().tolist() == [0.0]
    assert not x.grad.asnumpy().any()


def test_errors():
    data, label = nd.ones((4, 2, 5)), nd.array([[1, 2], [3, 0]])
    with pytest.raises(DTypeError, match="float32"):
        nd.ctc_loss(data.astype("float64"), label)
    with pytest.raises(AttrError, match="first"):
        nd.ctc_loss(data, label, blank_label="middle")
    with pytest.raises(ShapeError, match="cannot exceed"):
        nd.ctc_loss(nd.ones((2, 2, 5)), nd.array([[1, 1, 1], [1, 1, 1]]))
    with pytest.raises(ShapeError, match="batch size"):
        nd.ctc_loss(data, nd.array([[1, 2]]))
    with pytest.raises(MXNetError, match="label values"):
        nd.ctc_loss(data, nd.array([[1, 7], [3, 0]]))
