"""Correlation against MXNet 1.9.1 (tests/data/correlation_ref.npz from
tests/data/gen_correlation_ref.py): outputs and gradients eagerly and through the Executor;
shape/type inference and the settings MXNet rejects."""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import autograd, nd
from hybridgraph.nd.errors import MXNetError

REF = np.load(pathlib.Path(__file__).parent.parent / "data" / "correlation_ref.npz")
META = json.loads(str(REF["meta"]))
TOL = {"rtol": 1e-5, "atol": 1e-6}


@pytest.mark.parametrize("i", range(len(META)))
def test_eager_matches_mxnet(i):
    a, b = nd.array(REF[f"{i}_a"]), nd.array(REF[f"{i}_b"])
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        out = nd.Correlation(a, b, **META[i])
    out.backward(nd.array(REF[f"{i}_head"]))
    np.testing.assert_allclose(out.asnumpy(), REF[f"{i}_out"], **TOL)
    np.testing.assert_allclose(a.grad.asnumpy(), REF[f"{i}_ga"], **TOL)
    np.testing.assert_allclose(b.grad.asnumpy(), REF[f"{i}_gb"], **TOL)


@pytest.mark.parametrize("i", [0, 5, 8])
def test_executor_matches_mxnet(i):
    sym = mx.sym.Correlation(data1=mx.sym.var("a"), data2=mx.sym.var("b"), **META[i])
    assert len(sym.list_outputs()) == 1    # the two padded copies are hidden, as in MXNet
    args = {"a": nd.array(REF[f"{i}_a"]), "b": nd.array(REF[f"{i}_b"])}
    grads = {k: nd.zeros(v.shape) for k, v in args.items()}
    exe = sym.bind(mx.cpu(), args, args_grad=grads)
    out = exe.forward(is_train=True)[0]
    exe.backward(nd.array(REF[f"{i}_head"]))
    np.testing.assert_allclose(out.asnumpy(), REF[f"{i}_out"], **TOL)
    np.testing.assert_allclose(grads["a"].asnumpy(), REF[f"{i}_ga"], **TOL)
    np.testing.assert_allclose(grads["b"].asnumpy(), REF[f"{i}_gb"], **TOL)


def test_inference():
    corr = mx.sym.Correlation(data1=mx.sym.var("a"), data2=mx.sym.var("b"), max_displacement=2, pad_size=2)
    assert corr.infer_shape(a=(2, 3, 8, 9))[1] == [(2, 25, 8, 9)]
    args, outs, _ = corr.infer_type(b=np.float16)
    assert args == [np.float16, np.float16] and outs == [np.float16]


def test_rejected_settings():
    x = nd.ones((1, 1, 28, 28))
    with pytest.raises(MXNetError, match="do not fit"):
        nd.Correlation(x, x, kernel_size=28)
    with pytest.raises(MXNetError, match="odd"):
        nd.Correlation(x, x, kernel_size=2)
    assert nd.Correlation(x, x, kernel_size=9).shape == (1, 9, 18, 18)
