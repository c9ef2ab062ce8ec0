"""contrib.index_copy against MXNet 1.9.1 (tests/data/index_copy_ref.npz from
tests/data/gen_index_copy_ref.py), eagerly and hybridized; errors for bad indices/shapes."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import autograd, gluon, nd
from hybridgraph.nd.errors import MXNetError

REF = np.load(pathlib.Path(__file__).parent.parent / "data" / "index_copy_ref.npz")
INDICES = [[0, 3, 1], [2, 2, 4], [4]]


class _Copy(gluon.HybridBlock):
    def hybrid_forward(self, F, old, index, new):
        return F.contrib.index_copy(old, index, new)


@pytest.mark.parametrize("hybrid", [False, True])
@pytest.mark.parametrize("i", range(len(INDICES)))
def test_matches_mxnet(i, hybrid):
    net = _Copy()
    if hybrid:
        net.hybridize()
    old, new = nd.array(REF[f"{i}_old"]), nd.array(REF[f"{i}_new"])
    old.attach_grad()
    new.attach_grad()
    with autograd.record():
        out = net(old, nd.array(INDICES[i], dtype="int64"), new)
    out.backward(nd.array(REF[f"{i}_head"]))
    np.testing.assert_allclose(out.asnumpy(), REF[f"{i}_out"], rtol=1e-6)
    np.testing.assert_allclose(old.grad.asnumpy(), REF[f"{i}_gold"], rtol=1e-6)
    np.testing.assert_allclose(new.grad.asnumpy(), REF[f"{i}_gnew"], rtol=1e-6)


def test_errors_and_inference():
    sym = mx.sym.contrib.index_copy(mx.sym.var("a"), mx.sym.var("b"), mx.sym.var("c"))
    assert sym.list_arguments() == ["a", "b", "c"]
    assert sym.infer_shape(a=(5, 2), c=(3, 2))[0] == [(5, 2), (3,), (3, 2)]
    with pytest.raises(MXNetError, match="out of range"):
        nd.contrib.index_copy(nd.zeros((3, 2)), nd.array([3]), nd.ones((1, 2)))
    with pytest.raises(MXNetError, match="shape"):
        nd.contrib.index_copy(nd.zeros((3, 2)), nd.array([0]), nd.ones((1, 3)))
