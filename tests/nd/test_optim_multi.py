"""multi_sgd_update / multi_sgd_mom_update against MXNet 1.9.1's numbers, their errors, and
SGD's aggregated updates through them (as MXNet's SGD optimizer does)."""
from __future__ import annotations

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph.gluon.optimizer import SGD, Updater
from hybridgraph.nd.dispatch import parse_cached
from hybridgraph.nd.errors import AttrError, ShapeError
from hybridgraph.nd.registry import get_op


def _weights():
    return (nd.array([1.0, 2.0]), nd.array([0.5, 0.5]), nd.array([0.1, 0.1]),
            nd.array([3.0]), nd.array([1.0]), nd.array([0.0]))


def test_mom_update_matches_mxnet():
    w, g, m, w2, g2, m2 = _weights()
    nd.multi_sgd_mom_update(w, g, m, w2, g2, m2, lrs=(0.1, 0.2), wds=(0.01, 0.0), momentum=0.9,
                            rescale_grad=0.5, num_weights=2, out=[w, w2])
    # mxnet.nd.multi_sgd_mom_update on the same arrays (MXNet 1.9.1)
    np.testing.assert_allclose(w.asnumpy(), [1.064, 2.063], rtol=1e-6)
    np.testing.assert_allclose(m.asnumpy(), [0.064, 0.063], rtol=1e-6)
    np.testing.assert_allclose(w2.asnumpy(), [2.9], rtol=1e-6)
    np.testing.assert_allclose(m2.asnumpy(), [-0.1], rtol=1e-6)


def test_clipped_update_matches_mxnet():
    w, g, _, w2, g2, _ = _weights()
    w[:] = nd.array([1.064, 2.063])
    w2[:] = nd.array([2.9])
    nd.multi_sgd_update(w, g, w2, g2, lrs=(0.1, 0.2), wds=(0.01, 0.0), rescale_grad=0.5,
                        clip_gradient=0.2, num_weights=2, out=[w, w2])
    np.testing.assert_allclose(w.asnumpy(), [1.042936, 2.040937], rtol=1e-6)
    np.testing.assert_allclose(w2.asnumpy(), [2.8600001], rtol=1e-6)


def test_momenta_are_the_mutated_inputs():
    op = get_op("multi_sgd_mom_update")
    a = parse_cached(op, {"lrs": (0.1, 0.1, 0.1), "wds": (0.0, 0.0, 0.0), "num_weights": 3})
    assert op.mutates and op.mutated(a) == (2, 5, 8)
    assert not get_op("multi_sgd_update").mutates


def test_bad_counts_and_shapes_are_named():
    w, g, m, w2, g2, m2 = _weights()
    with pytest.raises(AttrError, match="num_weights=2 needs that many lrs and wds, got 1 lrs"):
        nd.multi_sgd_mom_update(w, g, m, w2, g2, m2, lrs=(0.1,), wds=(0.0, 0.0), num_weights=2, out=[w, w2])
    with pytest.raises(ShapeError, match="inputs of weight 0"):
        nd.multi_sgd_mom_update(w, g2, m, lrs=(0.1,), wds=(0.0,), num_weights=1, out=[w])


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_aggregated_sgd_equals_one_update_per_weight(momentum):
    rs = np.random.RandomState(0)
    shapes = [(3, 4), (4,), (2, 2, 2), (5,), (1,)]
    start = [rs.randn(*s) for s in shapes]
    grads = [nd.array(rs.randn(*s)) for s in shapes]
    results = []
    for aggregate in (True, False):
        opt = SGD(learning_rate=0.1, momentum=momentum, wd=0.01, rescale_grad=0.5)
        opt.aggregate_num = 4 if aggregate else 0
        upd = Updater(opt)
        weights = [nd.array(x) for x in start]
        for _ in range(3):
            upd(list(range(len(shapes))), grads, weights)
        results.append([w.asnumpy() for w in weights])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
