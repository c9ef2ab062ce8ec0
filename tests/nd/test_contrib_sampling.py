"""contrib.rand_zipfian (nd and sym) and the Python-level sym.random front ends
(multinomial with MXNet's symbolic default get_prob=True, shuffle, randn)."""
from __future__ import annotations

import numpy as np
import pytest

import hybridgraph as mx


def _expected(classes, n, range_max):
    c = np.asarray(classes, dtype=np.float64)
    return np.log((c + 2) / (c + 1)) / np.log(range_max + 1) * n


def test_rand_zipfian_nd_and_sym():
    mx.random.seed(3)
    true = mx.nd.array([0, 4, 19], dtype="int32")
    sampled, count_true, count_sampled = mx.nd.contrib.rand_zipfian(true, 400, 20)
    assert (sampled.dtype, count_true.dtype, count_sampled.dtype) == (np.int64, np.float64, np.float64)
    s = sampled.asnumpy()
    assert s.shape == (400,) and s.min() >= 0 and s.max() < 20
    np.testing.assert_allclose(count_true.asnumpy(), _expected([0, 4, 19], 400, 20))
    np.testing.assert_allclose(count_sampled.asnumpy(), _expected(s, 400, 20))
    assert np.mean(s == 0) > np.mean(s == 19)       # small classes are the frequent ones
    outs = mx.sym.Group(mx.sym.contrib.rand_zipfian(mx.sym.var("t"), 50, 7))
    ex = outs.bind(mx.cpu(), {"t": true})
    ex.forward()
    got = ex.outputs[0].asnumpy()
    assert got.max() < 7
    np.testing.assert_allclose(ex.outputs[2].asnumpy(), _expected(got, 50, 7))
    with pytest.raises(TypeError, match="must be a Symbol"):
        mx.sym.contrib.rand_zipfian(true, 5, 7)


def test_symbolic_random_front_ends():
    probs = mx.nd.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    both = mx.sym.random.multinomial(mx.sym.var("p"), shape=4)      # get_prob defaults to True here
    assert len(both.list_outputs()) == 2
    ex = both.bind(mx.cpu(), {"p": probs})
    ex.forward()
    assert ex.outputs[0].asnumpy().tolist() == [[1] * 4, [0] * 4]
    one = mx.sym.random.multinomial(mx.sym.var("p"), get_prob=False)
    assert len(one.list_outputs()) == 1
    x = mx.nd.array(np.arange(10.0))
    shuffled = mx.sym.random.shuffle(mx.sym.var("x")).bind(mx.cpu(), {"x": x}).forward()[0].asnumpy()
    assert sorted(shuffled.tolist()) == list(range(10))
    assert mx.sym.random.randn(2, 3, loc=1.0).infer_shape()[1] == [(2, 3)]
