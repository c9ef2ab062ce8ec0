"""mx.np.ndarray behaviours MXNet 1.9.1's test_numpy_ndarray checks: output types of numpy-mode
blocks, reflected scalar arithmetic, indexing under autograd, zero-size arrays in hybridized
blocks (expected values read off real MXNet 1.9.1 or computed with NumPy)."""
from __future__ import annotations

import json

import numpy as onp
import pytest

import hybridgraph as mx
from hybridgraph import autograd, np, npx
from hybridgraph.gluon import HybridBlock


@npx.use_np
class _Mixed(HybridBlock):
    def hybrid_forward(self, F, x):
        return x.as_nd_ndarray() + x.as_nd_ndarray(), F.np.multiply(x, x)


class _Classic(HybridBlock):
    def hybrid_forward(self, F, x):
        return x.as_nd_ndarray() + x.as_nd_ndarray(), x.as_nd_ndarray() * x.as_nd_ndarray()


@npx.use_np
class _Numpy(HybridBlock):
    def hybrid_forward(self, F, x):
        return F.np.add(x, x), x * x


@npx.use_np
class _ClassicOut(HybridBlock):
    def hybrid_forward(self, F, x):
        return x.as_nd_ndarray() * 2


@pytest.mark.parametrize("hybridize", [False, True])
def test_block_output_types(hybridize):
    data = np.ones((2, 3))
    for block, kind in ((_Classic, mx.nd.NDArray), (_Numpy, np.ndarray)):
        net = block()
        if hybridize:
            net.hybridize()
        out = net(data)
        assert all(type(o) is kind for o in out)
        onp.testing.assert_allclose(out[0].asnumpy(), 2 * onp.ones((2, 3)))
    for block in (_Mixed, _ClassicOut):   # MXNet: numpy-mode blocks return mx.np arrays only
        net = block()
        if hybridize:
            net.hybridize()
        with pytest.raises(TypeError):
            net(data)


def test_classic_values_trace_legacy_ops(tmp_path):
    @npx.use_np
    class Both(HybridBlock):
        def hybrid_forward(self, F, x):
            classic = (x.as_nd_ndarray() * 2).as_np_ndarray()
            return classic + x

    net = Both()
    net.hybridize()
    out = net(np.ones((2, 3)))
    onp.testing.assert_allclose(out.asnumpy(), 3 * onp.ones((2, 3)))
    net.export(str(tmp_path / "both"))
    ops = [n["op"] for n in json.loads((tmp_path / "both-symbol.json").read_text())["nodes"]]
    assert "_mul_scalar" in ops and "_npi_add" in ops   # the classic value traced MXNet's legacy op


@pytest.mark.parametrize("hybridize", [False, True])
def test_reflected_scalar_ops(hybridize):
    @npx.use_np
    class Rev(HybridBlock):
        def hybrid_forward(self, F, x):
            return 2.0 - x, 3.0 / x, 2.0 ** x, 5.0 % x

    x = np.array([1., 2., 4.])
    net = Rev()
    if hybridize:
        net.hybridize()
    xs = x.asnumpy()
    for got, want in zip(net(x), (2 - xs, 3 / xs, 2 ** xs, 5 % xs)):
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


def test_reflected_scalar_ops_on_integers():
    i = np.array([1, 2, 7], dtype="int32")
    onp.testing.assert_array_equal((10 - i).asnumpy(), [9, 8, 3])
    onp.testing.assert_array_equal((10 % i).asnumpy(), [0, 0, 3])


@pytest.mark.parametrize("key", [
    (-1, "i0", -2, -1), (slice(None), [0, 2, 2], 1), ("i2", slice(1, 3), "i1"), (Ellipsis, [1, 1]),
    (None, 1, [True, False, True]),
])
def test_advanced_indexing_records_gradients(key):
    arrays = {"i0": onp.array(-3, dtype=onp.int32), "i1": onp.array([0, 3], dtype=onp.int32),
              "i2": onp.array([[0, 1], [1, 1]], dtype=onp.int32)}
    onp_key = tuple(arrays.get(k, k) if isinstance(k, str) else k for k in key)
    mx_key = tuple(np.array(arrays[k], dtype=arrays[k].dtype) if isinstance(k, str) else k for k in key)
    base = onp.arange(120, dtype=onp.float32).reshape(2, 3, 4, 5)
    x = np.array(base)
    x.attach_grad()
    with autograd.record():
        y = x[mx_key]
    y.backward()
    onp.testing.assert_array_equal(y.asnumpy(), base[onp_key])
    want = onp.zeros_like(base)
    onp.add.at(want, onp_key, 1)   # repeated positions add up
    onp.testing.assert_array_equal(x.grad.asnumpy(), want)


def test_zero_size_indexing_under_autograd():
    x = np.zeros((1, 0))
    x.attach_grad()
    with autograd.record():
        y = x[0]
    y.backward()
    assert y.shape == (0,) and x.grad.shape == (1, 0)


@pytest.mark.parametrize("hybridize", [False, True])
def test_zero_size_inputs_in_hybridized_blocks(hybridize):
    @npx.use_np
    class Mul(HybridBlock):
        def hybrid_forward(self, F, a, b):
            return a * b

    net = Mul()
    if hybridize:
        net.hybridize()
    a, b = np.ones((0, 2)), np.ones((1, 1))
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        out = net(a, b)
    out.backward()
    assert out.shape == (0, 2) and a.grad.shape == (0, 2)
    onp.testing.assert_array_equal(b.grad.asnumpy(), [[0.]])


def test_slice_assign_methods_write_in_place():
    npx.set_np()
    try:
        x = np.ones((2, 2, 2))
        assert x.slice_assign(np.zeros((1, 1, 2)), (0, 0, None), (1, 1, None), (None, None, None)) is x
        assert x.slice_assign_scalar(5, (1, None, None), (2, None, None), (None, None, None)) is x
        onp.testing.assert_array_equal(x.asnumpy().ravel(), [0, 0, 1, 1, 5, 5, 5, 5])
    finally:
        npx.reset_np()


def test_imatmul_and_reshape_view():
    a, b = np.ones((2, 2)), np.array([[1., 2.], [3., 4.]])
    same = a
    a @= b
    assert a is same
    onp.testing.assert_array_equal(a.asnumpy(), [[4., 6.], [4., 6.]])
    r = np.arange(6).reshape_view(0, -1)   # the legacy special codes: 0 keeps the dimension
    assert isinstance(r, np.ndarray) and r.shape == (6, 1)
    x = np.ones((2, 2))
    x.attach_grad()
    with autograd.record():
        with pytest.raises(mx.base.MXNetError):
            x @= np.ones((2, 2))
