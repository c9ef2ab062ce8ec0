"""What MXNet 1.9.1's unit tests (test_symbol, test_infer_shape, control flow) taught about
gradients that stop, partial shape inference and symbolic loops; expectations checked
against real MXNet 1.9.1."""
import numpy as np
import pytest

import hybridgraph as mx


def test_stop_gradient_hides_an_op_without_gradient():
    # batch_take has no gradient in MXNet; behind stop_gradient nothing needs one
    x, idx = mx.sym.var("x"), mx.sym.var("idx")
    y = mx.sym.batch_take(x, idx)
    exe = mx.sym.stop_gradient(y).simple_bind(mx.cpu(), x=(3, 4), idx=(3,),
                                              type_dict={"x": np.float32, "idx": np.int32})
    exe.forward(is_train=True, x=mx.nd.ones((3, 4)), idx=mx.nd.array([0, 1, 3], dtype="int32"))
    exe.backward()
    np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), np.zeros((3, 4)))
    with pytest.raises(mx.base.MXNetError, match="batch_take"):
        y.simple_bind(mx.cpu(), x=(3, 4), idx=(3,), type_dict={"x": np.float32, "idx": np.int32})


def test_zero_gradient_branch_leaves_other_paths_intact():
    x = mx.sym.var("x")
    out = mx.sym.BlockGrad(mx.sym.batch_take(x, mx.sym.var("i"))).reshape((2, 1)) + x * 3
    exe = out.simple_bind(mx.cpu(), x=(2, 1), i=(2,), type_dict={"i": np.int32})
    exe.forward(is_train=True, x=mx.nd.array([[1], [2]]), i=mx.nd.array([0, 0], dtype="int32"))
    exe.backward(mx.nd.ones((2, 1)))
    np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), [[3], [3]])
