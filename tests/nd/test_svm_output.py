"""SVMOutput against MXNet 1.9.1 (tests/data/svm_ref.npz from tests/data/gen_svm_ref.py):
identity forward, L1/L2 hinge gradients through the Executor, eagerly and hybridized."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import autograd, gluon, nd
from hybridgraph.nd.errors import ShapeError

REF = np.load(pathlib.Path(__file__).parent.parent / "data" / "svm_ref.npz")
CASES = [(False, 1.0, 1.0), (False, 0.5, 2.0), (True, 1.0, 1.0), (True, 0.5, 2.0)]


def _attrs(i):
    linear, margin, coef = CASES[i]
    return {"use_linear": linear, "margin": margin, "regularization_coefficient": coef}


@pytest.mark.parametrize("i", range(len(CASES)))
def test_executor_matches_mxnet(i):
    sym = mx.sym.SVMOutput(data=mx.sym.var("X"), label=mx.sym.var("L"), **_attrs(i))
    grad = nd.zeros(REF[f"{i}_x"].shape)
    exe = sym.bind(mx.cpu(), args=[nd.array(REF[f"{i}_x"]), nd.array(REF[f"{i}_label"])],
                   args_grad={"X": grad})
    out = exe.forward(is_train=True)[0]
    exe.backward()
    np.testing.assert_array_equal(out.asnumpy(), REF[f"{i}_out"])
    np.testing.assert_allclose(grad.asnumpy(), REF[f"{i}_grad"], rtol=1e-6)


class _Net(gluon.HybridBlock):
    def __init__(self, attrs):
        super().__init__()
        self._attrs = attrs

    def hybrid_forward(self, F, x, label):
        return F.SVMOutput(x, label, **self._attrs)


@pytest.mark.parametrize("hybrid", [False, True])
def test_autograd_ignores_head_gradient(hybrid):
    net = _Net(_attrs(1))
    if hybrid:
        net.hybridize()
    x = nd.array(REF["1_x"])
    x.attach_grad()
    with autograd.record():
        y = net(x, nd.array(REF["1_label"]))
    y.backward(nd.ones(y.shape) * 5)    # a loss layer: the head gradient does not scale it
    np.testing.assert_allclose(x.grad.asnumpy(), REF["1_grad"], rtol=1e-6)


def test_shapes_and_errors():
    sym = mx.sym.SVMOutput(mx.sym.var("x"), mx.sym.var("y"))
    assert sym.list_arguments() == ["x", "y"]
    assert sym.infer_shape(x=(3, 4, 5)) == ([(3, 4, 5), (3, 4)], [(3, 4, 5)], [])
    with pytest.raises(ShapeError, match="label"):
        nd.SVMOutput(nd.ones((3, 5)), nd.ones((5,)))
