"""BatchNorm_v1 and contrib SyncBatchNorm against MXNet 1.9.1 through the Executor
(tests/data/batch_norm_legacy_ref.npz from tests/data/gen_batch_norm_legacy_ref.py): outputs
(mean and *variance* as the hidden outputs), gradients, moving statistics after backward."""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import autograd, nd
from hybridgraph.nd.errors import DTypeError, ShapeError

REF = np.load(pathlib.Path(__file__).parent.parent / "data" / "batch_norm_legacy_ref.npz")
CASES = json.loads(str(REF["meta"]))
TOL = {"rtol": 1e-5, "atol": 1e-6}


@pytest.mark.parametrize("i", range(len(CASES)), ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_executor_matches_mxnet(i):
    op, shape, kw = CASES[i]
    fn = mx.sym.BatchNorm_v1 if op == "BatchNorm_v1" else mx.sym.contrib.SyncBatchNorm
    sym = fn(mx.sym.var("x"), output_mean_var=True, name="bn", **kw)
    assert sym.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    args = {k: nd.array(REF[f"{i}_in_{k}"]) for k in ("x", "bn_gamma", "bn_beta")}
    aux = {k: nd.array(REF[f"{i}_in_{k}"]) for k in ("bn_moving_mean", "bn_moving_var")}
    grads = {k: nd.zeros(v.shape) for k, v in args.items()}
    exe = sym.bind(mx.cpu(), args, args_grad=grads, aux_states=aux)
    outs = exe.forward(is_train=True)
    c = shape[1]
    exe.backward([nd.array(REF[f"{i}_head"]), nd.zeros((c,)), nd.zeros((c,))])
    # SyncBatchNorm with use_global_stats leaves MXNet's mean/var outputs unwritten
    compared = 1 if op == "SyncBatchNorm" and kw.get("use_global_stats") else 3
    for j in range(compared):
        np.testing.assert_allclose(outs[j].asnumpy(), REF[f"{i}_out{j}"], **TOL)
    for k, g in grads.items():
        np.testing.assert_allclose(g.asnumpy(), REF[f"{i}_grad_{k}"], **TOL)
    for k, v in aux.items():
        np.testing.assert_allclose(v.asnumpy(), REF[f"{i}_after_{k}"], **TOL)


def test_eager_and_errors():
    x, p = nd.array(np.arange(24, dtype=np.float32).reshape(4, 3, 2)), nd.ones((3,))
    with autograd.record(train_mode=True):
        out, mean, var = nd.contrib.SyncBatchNorm(x, p, p * 0, p * 0, p, key="k", output_mean_var=True)
    np.testing.assert_allclose(var.asnumpy(), x.asnumpy().transpose(1, 0, 2).reshape(3, -1).var(axis=1), rtol=1e-6)
    with pytest.raises(ShapeError, match="2 or 4"):
        nd.BatchNorm_v1(x, p, p, p, p)
    with pytest.raises(DTypeError, match="float32"):
        nd.BatchNorm_v1(nd.ones((4, 3), dtype="float64"), p, p, p, p)
    with pytest.raises(NotImplementedError, match="ndev"):
        nd.contrib.SyncBatchNorm(x, p, p, p, p, key="k", ndev=2)
