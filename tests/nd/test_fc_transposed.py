"""FullyConnected's small-batch product (weight @ data.T, transposed back with the bias add:
nd/ops/nn.py `_transposed_product`) gives the usual product's values: with and without bias,
flattened or not, into a given buffer or a new array, float32 and float64; and it runs exactly
where `_transposed_product_pays` says (4-64 rows, wide layers, one float dtype)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridgraph.nd.ops import nn as nn_ops
from hybridgraph.nd.registry import get_op

FC = get_op("FullyConnected")


def _fc(data, weight, bias, out, flatten=True):
    attrs = FC.parse_attrs({"num_hidden": weight.shape[0], "no_bias": bias is None, "flatten": flatten})
    args = (data, weight) if bias is None else (data, weight, bias)
    return FC.forward(np, attrs, *args, out=out)[0]


@settings(deadline=None, max_examples=40)
@given(rows=st.sampled_from([1, 3, 4, 8, 17, 64, 65]), inputs=st.sampled_from([7, 128, 300]),
       hidden=st.sampled_from([10, 256, 513]), dtype=st.sampled_from([np.float32, np.float64]),
       bias=st.booleans(), into=st.booleans(), spatial=st.booleans(), seed=st.integers(0, 2**16))
def test_values_match_the_float64_product(rows, inputs, hidden, dtype, bias, into, spatial, seed):  # noqa: PLR0913
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((rows, inputs) if not spatial else (rows, 1, inputs)).astype(dtype)
    w = rng.standard_normal((hidden, inputs)).astype(dtype)
    b = rng.standard_normal(hidden).astype(dtype) if bias else None
    out = (np.full((rows, hidden), np.nan, dtype),) if into else None
    got = _fc(data, w, b, out)
    want = data.reshape(rows, inputs).astype(np.float64) @ w.T.astype(np.float64) + (0 if b is None else b)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.sqrt(inputs))
    assert got.dtype == dtype and got.shape == (rows, hidden)
    if into:
        assert got is out[0]


def test_it_runs_where_it_pays(monkeypatch):
    ran = []
    real = nn_ops._transposed_product
    monkeypatch.setattr(nn_ops, "_transposed_product", lambda *a: (ran.append(a[1].shape[0]), real(*a))[1])
    rng = np.random.default_rng(0)
    w = rng.standard_normal((256, 784)).astype(np.float32)
    for rows in (1, 3, 4, 8, 64, 65, 256):
        _fc(rng.standard_normal((rows, 784)).astype(np.float32), w, None, None)
    assert ran == [8, 64]                     # 4 rows x 256 outputs is below 2000 products
    ran.clear()
    _fc(np.ones((8, 784), np.float32), np.ones((10, 784), np.float32), None, None)   # too few outputs
    _fc(np.ones((8, 784), np.float16), np.ones((256, 784), np.float16), None, None)  # not a BLAS dtype
    _fc(np.ones((8, 784), np.float32), w, np.ones(256, np.float64), None)              # mixed bias
    assert ran == []


def test_a_strided_buffer_gets_the_product():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 300)).astype(np.float32)
    w = rng.standard_normal((256, 300)).astype(np.float32)
    wide = np.zeros((8, 512), np.float32)
    got = _fc(x, w, None, (wide[:, ::2],))
    np.testing.assert_allclose(got, x @ w.T, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(wide[:, ::2], x @ w.T, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("rows", [8, 100])
def test_gluon_dense_eager_equals_hybridized(rows):
    import hybridgraph as mx
    net = mx.gluon.nn.Dense(300, in_units=200)
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.default_rng(2).standard_normal((rows, 200)))
    eager = net(x).asnumpy()
    net.hybridize()
    np.testing.assert_array_equal(net(x).asnumpy(), eager)
