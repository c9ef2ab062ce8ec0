"""Symbols pickle through MXNet's JSON; nd.contrib.isnan/isinf/isfinite; batch_take has no
gradient (as in MXNet 1.9.1, which registers none)."""
import pickle

import numpy as np
import pytest

import hybridgraph as mx


def test_symbol_pickles_as_json():
    s = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=2, name="fc") * 2
    assert s.__getstate__() == {"handle": s.tojson()}
    back = pickle.loads(pickle.dumps(s))
    assert back.tojson() == s.tojson() and back.list_arguments() == ["x", "fc_weight", "fc_bias"]


def test_contrib_nan_inf_checks_keep_dtype():
    x = mx.nd.array([1, np.inf, np.nan, -np.inf], dtype="float64")
    assert mx.nd.contrib.isinf(x).asnumpy().tolist() == [0, 1, 0, 1]
    assert mx.nd.contrib.isnan(x).asnumpy().tolist() == [0, 0, 1, 0]
    assert mx.nd.contrib.isfinite(x).asnumpy().tolist() == [1, 0, 0, 0]
    assert mx.nd.contrib.isfinite(x).dtype == np.float64


def test_batch_take_is_not_differentiable_like_mxnet():
    a = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.batch_take(a, mx.nd.array([0, 1], dtype="int32"))
    with pytest.raises(mx.MXNetError, match="batch_take is not differentiable"):
        y.backward()
