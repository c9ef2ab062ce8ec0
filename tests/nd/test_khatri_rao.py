"""khatri_rao (MXNet 1.9.1's src/operator/contrib/krprod.cc): column-wise Kronecker product."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hybridgraph as mx


def _reference(mats: list[np.ndarray]) -> np.ndarray:
    """Row (i1, i2, ...) of the result, i1 slowest, is the product of those rows."""
    out = mats[0]
    for m in mats[1:]:
        out = np.einsum("ik,jk->ijk", out, m).reshape(-1, m.shape[1])
    return out


def test_values_as_mxnet():   # the cases of MXNet's test_contrib_krprod
    a = mx.nd.arange(1, 7).reshape((3, 2))
    b = mx.nd.arange(1, 3).reshape((1, 2))
    c = mx.nd.arange(1, 5).reshape((2, 2))
    np.testing.assert_array_equal(mx.nd.khatri_rao(a).asnumpy(), a.asnumpy())
    np.testing.assert_array_equal(mx.nd.khatri_rao(a, b).asnumpy(), [[1, 4], [3, 8], [5, 12]])
    np.testing.assert_array_equal(mx.nd.khatri_rao(a, b, c).asnumpy(),
                                  [[1, 8], [3, 16], [3, 16], [9, 32], [5, 24], [15, 48]])
    out = mx.nd.khatri_rao(a)
    out[:] = 0   # one input: a new array, never the input itself
    assert a.asnumpy()[0, 0] == 1


@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.integers(1, 3), st.sampled_from(["float32", "float64"]))
def test_matches_reference(rows, cols, dtype):
    rng = np.random.RandomState(len(rows) * 10 + cols)
    mats = [rng.uniform(-1, 1, (r, cols)).astype(dtype) for r in rows]
    out = mx.nd.khatri_rao(*[mx.nd.array(m, dtype=dtype) for m in mats])
    assert out.dtype == np.dtype(dtype) and out.shape == (int(np.prod(rows)), cols)
    np.testing.assert_allclose(out.asnumpy(), _reference(mats), rtol=1e-6)


def test_symbol_shape_json_and_errors():
    sym = mx.sym.khatri_rao(mx.sym.var("a"), mx.sym.var("b"))
    assert sym.list_arguments() == ["a", "b"]
    assert sym.infer_shape(a=(3, 2), b=(4, 2))[1] == [(12, 2)]
    assert '"num_args": "2"' in sym.tojson()
    exe = mx.sym.load_json(sym.tojson()).bind(mx.cpu(), {"a": mx.nd.ones((3, 2)), "b": mx.nd.ones((4, 2)) * 2})
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), np.full((12, 2), 2))
    with pytest.raises(mx.base.MXNetError, match="every input needs 2 columns"):
        mx.nd.khatri_rao(mx.nd.ones((3, 2)), mx.nd.ones((2, 3)))
    with pytest.raises(mx.base.MXNetError, match="must be a matrix"):
        mx.nd.khatri_rao(mx.nd.ones((3, 2)), mx.nd.ones((2, 2, 1)))
    x = mx.nd.ones((2, 2))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.khatri_rao(x, mx.nd.ones((3, 2)))
    with pytest.raises(mx.base.MXNetError, match="khatri_rao is not differentiable"):   # as in MXNet
        y.backward()
