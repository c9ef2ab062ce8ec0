"""linalg potrf (lower/upper), potri, trmm, gelqf, syevd, extractdiag, makediag,
extracttrian, maketrian against MXNet 1.9.1: outputs and input gradients for random head
gradients (tests/data/linalg_more_ref.npz from tests/data/gen_linalg_more_ref.py), eagerly
and through the Executor; plus shapes, dtypes and errors."""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import autograd, nd
from hybridgraph.nd.errors import DTypeError, MXNetError, ShapeError

REF = np.load(pathlib.Path(__file__).parent.parent / "data" / "linalg_more_ref.npz")
META = json.loads(str(REF["meta"]))
IDS = [f"{i}-{m['op']}-{m['attrs']}" for i, m in enumerate(META)]


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("i", range(len(META)), ids=IDS)
def test_eager_matches_mxnet(i):
    m = META[i]
    xs = [nd.array(REF[f"{i}_in{j}"], dtype="float64") for j in range(m["inputs"])]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        out = getattr(nd.linalg, m["op"])(*xs, **m["attrs"])
    outs = out if isinstance(out, (list, tuple)) else [out]
    autograd.backward(list(outs), head_grads=[nd.array(REF[f"{i}_head{j}"], dtype="float64")
                                              for j in range(m["outputs"])])
    for j, o in enumerate(outs):
        _close(o.asnumpy(), REF[f"{i}_out{j}"])
    for j, x in enumerate(xs):
        _close(x.grad.asnumpy(), REF[f"{i}_grad{j}"])


@pytest.mark.parametrize("i", [i for i, m in enumerate(META) if m["op"] in ("trmm", "gelqf", "syevd", "potri")])
def test_executor_matches_mxnet(i):
    m = META[i]
    names = [f"x{j}" for j in range(m["inputs"])]
    sym = getattr(mx.sym.linalg, m["op"])(*[mx.sym.var(n) for n in names], **m["attrs"])
    args = {n: nd.array(REF[f"{i}_in{j}"], dtype="float64") for j, n in enumerate(names)}
    grads = {n: nd.zeros(a.shape, dtype="float64") for n, a in args.items()}
    exe = sym.bind(mx.cpu(), args, args_grad=grads)
    outs = exe.forward(is_train=True)
    exe.backward([nd.array(REF[f"{i}_head{j}"], dtype="float64") for j in range(m["outputs"])])
    for j, o in enumerate(outs):
        _close(o.asnumpy(), REF[f"{i}_out{j}"])
    for j, n in enumerate(names):
        _close(grads[n].asnumpy(), REF[f"{i}_grad{j}"])


def test_shapes():
    a = mx.sym.var("a")
    assert mx.sym.linalg.gelqf(a).infer_shape(a=(2, 3, 5))[1] == [(2, 3, 5), (2, 3, 3)]
    assert mx.sym.linalg.syevd(a).infer_shape(a=(4, 4))[1] == [(4, 4), (4,)]
    assert mx.sym.linalg.extractdiag(a, offset=-1).infer_shape(a=(2, 4, 4))[1] == [(2, 3)]
    assert mx.sym.linalg.extracttrian(a, offset=1).infer_shape(a=(4, 4))[1] == [(6,)]
    assert mx.sym.linalg.makediag(a, offset=2).infer_shape(a=(2, 3))[1] == [(2, 5, 5)]
    assert mx.sym.linalg.maketrian(a, offset=-1).infer_shape(a=(6,))[1] == [(4, 4)]
    assert mx.sym.linalg.gelqf(a, name="q").list_outputs() == ["q_output0", "q_output1"]   # as MXNet


def test_errors():
    with pytest.raises(ShapeError, match="rows"):
        nd.linalg.gelqf(nd.ones((4, 3), dtype="float64"))
    with pytest.raises(ShapeError, match="triangular number"):
        nd.linalg.maketrian(nd.ones((4,), dtype="float64"))
    with pytest.raises(ShapeError, match="offset"):
        nd.linalg.extractdiag(nd.ones((3, 3), dtype="float64"), offset=3)
    with pytest.raises(DTypeError):
        nd.linalg.syevd(nd.ones((3, 3), dtype="int32"))
    with pytest.raises(MXNetError):
        nd.linalg.potri(nd.zeros((2, 2), dtype="float64"))


def test_float32_syevd_matches_mxnet_example():
    # test_laop_4's matrix: eigenvalues 0 and 5, rows signed by their largest entry
    u, lam = nd.linalg.syevd(nd.array([[1.0, 2.0], [2.0, 4.0]]))
    np.testing.assert_allclose(u.asnumpy(), [[0.89442718, -0.44721359], [0.44721359, 0.89442718]], atol=1e-6)
    np.testing.assert_allclose(lam.asnumpy(), [0.0, 5.0], atol=1e-6)
