"""GridGenerator, BilinearSampler and SpatialTransformer against MXNet 1.9.1 (tests/data/
sampling_ref.npz from tests/data/gen_sampling_ref.py): outputs and gradients eagerly and
through the Executor; shapes, hidden outputs, dtypes and errors."""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import autograd, nd
from hybridgraph.nd.errors import DTypeError, MXNetError, ShapeError

REF = np.load(pathlib.Path(__file__).parent.parent / "data" / "sampling_ref.npz")
META = json.loads(str(REF["meta"]))
IDS = [f"{i}-{m['op']}-{m['dtype']}" for i, m in enumerate(META)]


def _tol(dtype):
    return {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-13}


def _attrs(m):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in m["attrs"].items()}


@pytest.mark.parametrize("i", range(len(META)), ids=IDS)
def test_eager_matches_mxnet(i):
    m = META[i]
    xs = [nd.array(REF[f"{i}_in{j}"], dtype=m["dtype"]) for j in range(m["inputs"])]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        out = getattr(nd, m["op"])(*xs, **_attrs(m))
    out.backward(nd.array(REF[f"{i}_head"], dtype=m["dtype"]))
    np.testing.assert_allclose(out.asnumpy(), REF[f"{i}_out"], **_tol(m["dtype"]))
    for j, x in enumerate(xs):
        np.testing.assert_allclose(x.grad.asnumpy(), REF[f"{i}_grad{j}"], **_tol(m["dtype"]))


@pytest.mark.parametrize("i", range(len(META)), ids=IDS)
def test_executor_matches_mxnet(i):
    m = META[i]
    names = [f"x{j}" for j in range(m["inputs"])]
    sym = getattr(mx.sym, m["op"])(*[mx.sym.var(n) for n in names], **_attrs(m))
    assert len(sym.list_outputs()) == 1
    args = {n: nd.array(REF[f"{i}_in{j}"], dtype=m["dtype"]) for j, n in enumerate(names)}
    grads = {n: nd.zeros(a.shape, dtype=m["dtype"]) for n, a in args.items()}
    exe = sym.bind(mx.cpu(), args, args_grad=grads)
    out = exe.forward(is_train=True)[0]
    exe.backward(nd.array(REF[f"{i}_head"], dtype=m["dtype"]))
    np.testing.assert_allclose(out.asnumpy(), REF[f"{i}_out"], **_tol(m["dtype"]))
    for j, n in enumerate(names):
        np.testing.assert_allclose(grads[n].asnumpy(), REF[f"{i}_grad{j}"], **_tol(m["dtype"]))


def test_identity_transform_reproduces_the_input():
    data = nd.array(np.arange(2 * 5 * 7, dtype=np.float32).reshape(1, 2, 5, 7))
    out = nd.SpatialTransformer(data, nd.array([[1, 0, 0, 0, 1, 0]]), target_shape=(5, 7),
                                transform_type="affine", sampler_type="bilinear")
    np.testing.assert_allclose(out.asnumpy(), data.asnumpy(), atol=1e-4)


def test_shapes_and_errors():
    d, g = mx.sym.var("d"), mx.sym.var("g")
    assert mx.sym.BilinearSampler(d, g).infer_shape(d=(2, 3, 5, 5), g=(2, 2, 4, 6))[1] == [(2, 3, 4, 6)]
    grid = mx.sym.GridGenerator(d, transform_type="affine", target_shape=(3, 4))
    assert grid.infer_shape(d=(2, 6))[1] == [(2, 2, 3, 4)]
    with pytest.raises(DTypeError, match="float32"):
        nd.GridGenerator(nd.ones((1, 6), dtype="float64"), transform_type="affine", target_shape=(2, 2))
    with pytest.raises(ShapeError, match="target_shape"):
        nd.GridGenerator(nd.ones((1, 6)), transform_type="affine")
    with pytest.raises(ShapeError, match="grid"):
        nd.BilinearSampler(nd.ones((1, 1, 3, 3)), nd.ones((1, 3, 2, 2)))
    with pytest.raises(MXNetError, match="transform_type"):
        nd.SpatialTransformer(nd.ones((1, 1, 3, 3)), nd.ones((1, 6)), target_shape=(2, 2),
                              transform_type="warp", sampler_type="bilinear")
