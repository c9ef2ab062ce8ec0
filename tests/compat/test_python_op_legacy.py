"""mx.operator.NumpyOp / NDArrayOp (MXNet's deprecated Python operators) through Symbols,
Executors and autograd; each warns as MXNet does."""
from __future__ import annotations

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import nd


class _Square(mx.operator.NumpyOp):
    """y = x * x with the gradient 2 x g, on numpy buffers."""

    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0] * in_data[0]

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = 2 * in_data[0] * out_grad[0]


class _Scale(mx.operator.NDArrayOp):
    """Two inputs -> y = a * b, on NDArrays."""

    def list_arguments(self):
        return ["a", "b"]

    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0] * in_data[1]

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = out_grad[0] * in_data[1]
        in_grad[1][:] = out_grad[0] * in_data[0]


def test_default_numpy_op_is_identity_with_unit_gradient():
    with pytest.warns(UserWarning, match="deprecated"):
        op = mx.operator.NumpyOp()
    sym = op.get_symbol(mx.sym.var("X"), name="numpy_op")
    assert sym.list_arguments() == ["X"] and sym.list_outputs() == ["numpy_op_output"]
    x, dx = nd.ones((4,)) * 10, nd.zeros((4,))
    exe = sym.bind(mx.cpu(), args=[x], args_grad={"X": dx})
    np.testing.assert_array_equal(exe.forward(is_train=True)[0].asnumpy(), x.asnumpy())
    exe.backward(nd.ones((4,)) * 3)
    np.testing.assert_array_equal(dx.asnumpy(), np.ones(4))   # MXNet's default backward writes 1


def test_subclasses_compute_values_and_gradients():
    with pytest.warns(UserWarning):
        square, scale = _Square(), _Scale()
    sym = scale(square(mx.sym.var("x")), mx.sym.var("w"))
    x, w = nd.array([1.0, -2.0, 3.0]), nd.array([0.5, 2.0, -1.0])
    grads = {"x": nd.zeros((3,)), "w": nd.zeros((3,))}
    exe = sym.bind(mx.cpu(), args={"x": x, "w": w}, args_grad=grads)
    np.testing.assert_allclose(exe.forward(is_train=True)[0].asnumpy(), [0.5, 8.0, -9.0])
    exe.backward(nd.ones((3,)))
    np.testing.assert_allclose(grads["x"].asnumpy(), [1.0, -8.0, -6.0])
    np.testing.assert_allclose(grads["w"].asnumpy(), [1.0, 4.0, 9.0])
