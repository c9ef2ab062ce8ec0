"""Gluon losses: MXNet 1.9.1 numbers and gradients for fixed inputs, exported graphs, sample weights,
and eager vs hybridized consistency on drawn shapes."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hybridgraph import nd
from hybridgraph.gluon import loss
from hybridgraph.gluon.testing import check_hybrid_consistency
from hybridgraph.nd import autograd

from . import _gluon_ref as ref


@pytest.mark.parametrize("mode", ["eager", "hybrid", "static"])
@pytest.mark.parametrize("case", ref.LOSS_CASES, ids=[c[0] for c in ref.LOSS_CASES])
def test_matches_mxnet(case, mode):
    ref.check_against_mxnet(case, mode)


@pytest.mark.parametrize("case", ref.LOSS_CASES, ids=[c[0] for c in ref.LOSS_CASES])
def test_export_json_matches_mxnet(case, tmp_path):
    ref.check_export(case, tmp_path)


def test_aliases_and_repr():
    assert loss.SoftmaxCELoss is loss.SoftmaxCrossEntropyLoss
    assert loss.SigmoidBCELoss is loss.SigmoidBinaryCrossEntropyLoss
    assert repr(loss.L2Loss()) == "L2Loss(batch_axis=0, w=1.0)"
    assert repr(loss.HuberLoss(weight=2, batch_axis=1)) == "HuberLoss(batch_axis=1, w=2)"


def test_loss_weight_must_be_a_number():
    with pytest.raises(AssertionError, match="weight must be a number"):
        loss.L1Loss(weight="2")(nd.ones((2, 3)), nd.ones((2, 3)))


def test_logistic_loss_rejects_unknown_label_format():
    with pytest.raises(ValueError, match="signed or binary"):
        loss.LogisticLoss(label_format="probability")


def _np_softmax_ce(pred, label):
    logp = pred - np.log(np.exp(pred).sum(-1, keepdims=True))
    return -logp[np.arange(len(label)), label.astype(int)]


def test_softmax_ce_formula():
    rng = np.random.RandomState(0)
    pred, label = rng.randn(5, 4).astype(np.float32), rng.randint(0, 4, 5).astype(np.float32)
    got = loss.SoftmaxCELoss()(nd.array(pred), nd.array(label)).asnumpy()
    np.testing.assert_allclose(got, _np_softmax_ce(pred, label), rtol=1e-5)


def test_sample_weight_scales_each_sample():
    rng = np.random.RandomState(1)
    pred, label = nd.array(rng.randn(3, 4)), nd.array(rng.randn(3, 4))
    w = nd.array([[0.0], [1.0], [2.0]])
    plain = loss.L2Loss()(pred, label).asnumpy()
    np.testing.assert_allclose(loss.L2Loss()(pred, label, w).asnumpy(), plain * [0, 1, 2], rtol=1e-6)


def test_poisson_full_is_hybridizable():
    """MXNet's own code cannot hybridize compute_full (it uses *= on a Symbol); ours can."""
    rng = np.random.RandomState(2)
    pred = rng.uniform(0.5, 2, (3, 4)).astype(np.float32)
    target = rng.randint(1, 5, (3, 4)).astype(np.float32)
    block = loss.PoissonNLLLoss(from_logits=False, compute_full=True)
    check_hybrid_consistency(block, [pred, target])


def test_batch_axis():
    rng = np.random.RandomState(3)
    pred, label = rng.randn(3, 5).astype(np.float32), rng.randn(3, 5).astype(np.float32)
    got = loss.L1Loss(batch_axis=1)(nd.array(pred), nd.array(label)).asnumpy()
    np.testing.assert_allclose(got, np.abs(label - pred).mean(axis=0), rtol=1e-6)


# -- eager vs hybridized on drawn shapes --------------------------------------------------------------------------
def _arrays(seed, *specs):
    rng = np.random.RandomState(seed)
    return [f(rng).astype(np.float32) for f in specs]


dims = st.integers(1, 4)
seeds = st.integers(0, 2 ** 16)

def _normal(r, shape):
    return r.randn(*shape)


def _signs(r, shape):
    return r.randint(0, 2, shape) * 2 - 1


def _probs(r, shape):
    return r.uniform(0.05, 1.0, shape)


ELEMENTWISE = [(loss.L2Loss, _normal), (lambda: loss.L1Loss(weight=0.5), _probs),
               (lambda: loss.HuberLoss(rho=0.7), _probs), (loss.HingeLoss, _signs),
               (lambda: loss.SquaredHingeLoss(margin=2), _signs), (loss.LogisticLoss, _signs),
               (loss.SigmoidBCELoss, _probs), (lambda: loss.KLDivLoss(from_logits=False), _probs),
               (loss.PoissonNLLLoss, _probs)]


@given(st.integers(0, len(ELEMENTWISE) - 1), st.tuples(dims, dims), st.booleans(), seeds)
def test_elementwise_losses_consistent(which, shape, weighted, seed):
    make, labels = ELEMENTWISE[which]
    pred, label, w = _arrays(seed, lambda r: r.randn(*shape), lambda r: labels(r, shape),
                             lambda r: r.uniform(0.5, 1.5, (shape[0], 1)))
    check_hybrid_consistency(make(), [pred, label, w] if weighted else [pred, label])


@given(st.tuples(dims, st.integers(2, 5)), st.booleans(), seeds)
def test_softmax_ce_consistent(shape, sparse, seed):
    pred, idx, dist = _arrays(seed, lambda r: r.randn(*shape), lambda r: r.randint(0, shape[1], shape[:1]),
                              lambda r: r.dirichlet(np.ones(shape[1]), shape[0]))
    block = loss.SoftmaxCELoss(sparse_label=sparse)
    check_hybrid_consistency(block, [pred, idx if sparse else dist])


@given(st.tuples(dims, dims), st.booleans(), seeds)
def test_bce_from_sigmoid_consistent(shape, pos, seed):
    pred, label, pw = _arrays(seed, lambda r: r.uniform(0.05, 0.95, shape), lambda r: r.randint(0, 2, shape),
                              lambda r: r.uniform(0.5, 2, (1, shape[1])))
    block = loss.SigmoidBCELoss(from_sigmoid=True)
    if pos:
        with autograd.pause():
            want = block(nd.array(pred), nd.array(label), None, nd.array(pw)).asnumpy()
        block.hybridize()
        got = block(nd.array(pred), nd.array(label), None, nd.array(pw)).asnumpy()
        np.testing.assert_allclose(got, want, rtol=1e-6)
    else:
        check_hybrid_consistency(block, [pred, label])


@given(st.tuples(dims, st.integers(2, 4)), seeds)
def test_triplet_and_cosine_consistent(shape, seed):
    a, b, c, sign = _arrays(seed, lambda r: r.randn(*shape), lambda r: r.randn(*shape), lambda r: r.randn(*shape),
                            lambda r: r.randint(0, 2, shape[:1]) * 2 - 1)
    check_hybrid_consistency(loss.TripletLoss(margin=0.5), [a, b, c])
    check_hybrid_consistency(loss.CosineEmbeddingLoss(margin=0.1), [a, b, sign])
