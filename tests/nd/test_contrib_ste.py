"""round_ste / sign_ste (straight-through estimators) and gradientmultiplier, as MXNet 1.9.1's
contrib stes_op and gradient_multiplier_op: forward values, gradients, hybridized use, JSON."""
from __future__ import annotations

import numpy as np
import pytest

import hybridgraph as mx

X = [-1.5, 1.5, -1.9, 1.9, 2.7, 2.5, 0.0, -0.4]


@pytest.mark.parametrize("name, forward", [("round_ste", [-2, 2, -2, 2, 3, 3, 0, 0]),
                                           ("sign_ste", [-1, 1, -1, 1, 1, 1, 0, -1])])
def test_straight_through_forward_and_gradient(name, forward):
    x = mx.nd.array(X)
    x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd.contrib, name)(x) * mx.nd.array(np.arange(8))
    y.backward()
    np.testing.assert_array_equal(y.asnumpy(), np.array(forward) * np.arange(8))   # MXNet's values
    np.testing.assert_array_equal(x.grad.asnumpy(), np.arange(8))   # d/dx = 1, not 0


@pytest.mark.parametrize("hybridize", [False, True])
def test_ste_in_a_block_as_mxnet_test(hybridize):
    class Net(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.w = self.params.get("w", shape=4, init=mx.init.Constant(1.5))

        def hybrid_forward(self, F, x, w):
            return F.contrib.round_ste(w * x) * w

    net = Net()
    net.initialize()
    if hybridize:
        net.hybridize()
    x = mx.nd.array([1.0, -2.0, 0.3, 3.0])
    with mx.autograd.record():
        out = net(x)
    out.backward()
    wx = x.asnumpy() * 1.5
    np.testing.assert_allclose(out.asnumpy(), (np.sign(wx) * np.floor(np.abs(wx) + 0.5)) * 1.5)
    # d/dw [ste(w x) w] = x w + ste(w x) with the straight-through derivative
    np.testing.assert_allclose(net.w.grad().asnumpy(), x.asnumpy() * 1.5 + np.sign(wx) * np.floor(np.abs(wx) + 0.5))


def test_gradientmultiplier_scales_only_the_gradient():
    data = mx.sym.var("data")
    sym = mx.sym.contrib.gradientmultiplier(mx.sym.contrib.quadratic(data, a=1.0, b=2.0, c=0.5), scalar=-0.25)
    assert mx.sym.load_json(sym.tojson()).tojson() == sym.tojson()
    x = np.array([[0.5, -1.0, 2.0]], dtype=np.float32)
    exe = sym.bind(mx.cpu(), {"data": mx.nd.array(x)}, args_grad={"data": mx.nd.zeros((1, 3))})
    out = exe.forward(is_train=True)[0]
    exe.backward(mx.nd.ones((1, 3)))
    np.testing.assert_allclose(out.asnumpy(), x ** 2 + 2 * x + 0.5)
    np.testing.assert_allclose(exe.grad_dict["data"].asnumpy(), (2 * x + 2) * -0.25)
    ints = mx.nd.contrib.gradientmultiplier(mx.nd.array([1, 2], dtype="int32"), scalar=2)
    assert ints.dtype == np.int32 and ints.asnumpy().tolist() == [1, 2]
