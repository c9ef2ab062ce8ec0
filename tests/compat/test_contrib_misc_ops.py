"""quadratic, all_finite, multi_all_finite, index_array, ravel_multi_index and unravel_index
as MXNet 1.9.1 runs them (values checked against the real thing)."""
from __future__ import annotations

import numpy as np
import pytest

import hybridgraph as mx


def test_all_finite_flags_inf_and_nan_in_any_input():
    ok, bad = mx.nd.array([[0, 1]]), mx.nd.array([[np.inf, 0]])
    assert mx.nd.all_finite(ok).asnumpy().tolist() == [1.0]
    assert mx.nd.all_finite(bad).asnumpy().tolist() == [0.0]
    assert mx.nd.all_finite(bad).dtype is np.float32
    out = mx.sym.multi_all_finite(mx.sym.var("a"), mx.sym.var("b"), num_arrays=2)
    exe = out.bind(mx.cpu(), {"a": ok, "b": mx.nd.array([-np.inf, np.nan])})
    assert exe.forward()[0].asnumpy().tolist() == [0.0]
    with pytest.raises(NotImplementedError, match="init_output"):
        mx.nd.all_finite(ok, init_output=False)


def test_quadratic_value_and_gradient():
    x = mx.nd.array([-1.0, 0.5, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.quadratic(x, a=2.0, b=-1.0, c=3.0)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), [6.0, 3.0, 9.0])
    np.testing.assert_allclose(x.grad.asnumpy(), [-5.0, 1.0, 7.0])


def test_index_array_axes_and_dtype():
    out = mx.nd.contrib.index_array(mx.nd.ones((2, 3)), axes=(-1, 0))
    assert out.dtype is np.int64 and out.shape == (2, 3, 2)
    assert out.asnumpy()[1, 2].tolist() == [2, 1]


def test_unravel_does_not_wrap_the_leading_axis():
    # MXNet 1.9.1: unravel_index([1, 7, 30], shape=(3, 4)) -> [[0, 1, 7], [1, 3, 2]]
    flat = mx.nd.array([1, 7, 30])
    for shape in ((3, 4), (-1, 4)):
        assert mx.nd.unravel_index(flat, shape=shape).asnumpy().tolist() == [[0, 1, 7], [1, 3, 2]]
    idx = mx.nd.array([[0, 1, 7], [1, 3, 2]])
    assert mx.nd.ravel_multi_index(idx, shape=(-1, 4)).asnumpy().tolist() == [1, 7, 30]
