"""The eager SoftmaxCrossEntropyLoss runs one fused kernel (nd/ops/loss_fused.py): its values,
gradients and second-order gradients must be exactly those of MXNet's operator chain."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridgraph import nd
from hybridgraph.gluon import loss
from hybridgraph.nd import autograd


def _chain(x, y, axis):
    """The loss as MXNet's graph computes it (log_softmax, pick, negative, mean)."""
    return (-nd.pick(nd.log_softmax(x, axis), y, axis=axis, keepdims=True)).mean(axis=0, exclude=True)


@settings(deadline=None, max_examples=25)
@given(rows=st.integers(1, 5), classes=st.integers(1, 6), extra=st.sampled_from([None, 3]),
       axis=st.sampled_from([-1, 1]), seed=st.integers(0, 2**16))
def test_values_and_gradients_equal_the_chain(rows, classes, extra, axis, seed):
    rs = np.random.RandomState(seed)
    shape = (rows, classes) if extra is None else (rows, classes, extra)
    ax = axis % len(shape)
    label_shape = tuple(d for i, d in enumerate(shape) if i != ax)
    x_np = rs.randn(*shape)
    y = nd.array(rs.randint(-1, classes + 1, label_shape).astype("float64"), dtype="float64")
    got, want = [], []
    for fn, sink in ((lambda x: loss.SoftmaxCrossEntropyLoss(axis=axis)(x, y), got),
                     (lambda x: _chain(x, y, axis), want)):
        x = nd.array(x_np, dtype="float64")
        x.attach_grad()
        with autograd.record():
            out = fn(x)
        out.backward()
        sink += [out.asnumpy(), x.grad.asnumpy()]
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-15)


def test_second_order_gradient_through_the_loss():
    rs = np.random.RandomState(0)
    x_np, y = rs.randn(4, 5), nd.array([0, 3, 4, 1])
    results = []
    for fn in (lambda x: loss.SoftmaxCrossEntropyLoss()(x, y), lambda x: _chain(x, y, -1)):
        x = nd.array(x_np, dtype="float64")
        x.attach_grad()
        with autograd.record():
            (g,) = autograd.grad(fn(x).sum(), [x], create_graph=True)
            penalty = (g * g).sum()
        penalty.backward()
        results.append(x.grad.asnumpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10)
    assert np.abs(results[0]).max() > 0


@pytest.mark.parametrize("kwargs", [{"weight": 0.5}, {"sparse_label": False}, {"from_logits": True}])
def test_other_configurations_keep_the_generic_path(kwargs):
    rs = np.random.RandomState(1)
    x = nd.array(rs.randn(3, 4))
    y = nd.array(rs.rand(3, 4)) if kwargs.get("sparse_label") is False else nd.array([0, 2, 3])
    eager = loss.SoftmaxCrossEntropyLoss(**kwargs)
    hyb = loss.SoftmaxCrossEntropyLoss(**kwargs)
    hyb.hybridize()
    np.testing.assert_allclose(eager(x, y).asnumpy(), hyb(x, y).asnumpy(), rtol=1e-6)


def test_sample_weight_with_the_fused_kernel():
    rs = np.random.RandomState(2)
    x, y, w = nd.array(rs.randn(3, 4)), nd.array([0, 2, 3]), nd.array(rs.rand(3, 1))
    want = (_chain(x, y, -1).reshape((3, 1)) * w).mean(axis=0, exclude=True)
    np.testing.assert_allclose(loss.SoftmaxCrossEntropyLoss()(x, y, w).asnumpy(), want.asnumpy(), rtol=1e-6)
