"""mx.optimizer.contrib.GroupAdaGrad: one AdaGrad history per row (MXNet 1.9.1's documented rule,
also what its test compares against), through the optimizer and nd.contrib.group_adagrad_update."""
from __future__ import annotations

import numpy as np
import pytest

import hybridgraph as mx


@pytest.mark.parametrize("kwargs", [{}, {"clip_gradient": 0.4, "rescale_grad": 0.8}, {"eps": 1e-8}])
def test_group_adagrad_matches_the_rule(kwargs):
    rng = np.random.default_rng(0)
    w0, g = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    opt = mx.optimizer.create("groupadagrad", learning_rate=0.1, **kwargs)
    updater = mx.optimizer.get_updater(opt)
    w, hist = w0.copy(), np.zeros((3, 1), np.float32)
    weight = mx.nd.array(w0)
    for _ in range(3):
        updater(0, mx.nd.array(g), weight)
        r = g * kwargs.get("rescale_grad", 1.0)
        if "clip_gradient" in kwargs:
            r = np.clip(r, -kwargs["clip_gradient"], kwargs["clip_gradient"])
        hist += (r * r).mean(axis=1, keepdims=True)
        w = w - 0.1 * r / np.sqrt(hist + kwargs.get("eps", 1e-5))
    np.testing.assert_allclose(weight.asnumpy(), w, rtol=1e-5, atol=1e-6)


def test_group_adagrad_refuses_weight_decay_and_other_ranks():
    opt = mx.optimizer.contrib.GroupAdaGrad(wd=0.1)
    with pytest.raises(AssertionError, match="Weight decay"):
        opt.update(0, mx.nd.ones((2, 2)), mx.nd.ones((2, 2)), mx.nd.zeros((2, 1)))
    with pytest.raises(AssertionError, match="2-D"):
        opt.create_state(0, mx.nd.ones((2,)))
    with pytest.raises(mx.base.MXNetError, match="history must have shape"):
        mx.nd.contrib.group_adagrad_update(mx.nd.ones((2, 2)), mx.nd.ones((2, 2)), mx.nd.zeros((2, 2)), lr=0.1)
