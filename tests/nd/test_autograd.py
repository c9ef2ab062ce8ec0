"""Imperative autograd: record/pause/modes, backward and grad, higher order,
grad_req, custom Functions, and the errors MXNet users meet."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph.nd import autograd
from hybridgraph.nd.errors import AutogradError, MXNetError


def test_scopes_and_flags():
    assert not autograd.is_recording() and not autograd.is_training()
    with autograd.record():
        assert autograd.is_recording() and autograd.is_training()
        with autograd.pause():
            assert not autograd.is_recording() and not autograd.is_training()
        with autograd.predict_mode():
            assert not autograd.is_training()
    with autograd.record(train_mode=False):
        assert autograd.is_recording() and not autograd.is_training()
    with autograd.train_mode():
        assert autograd.is_training()
    prev = autograd.set_recording(True)
    assert prev is False and autograd.is_recording()
    autograd.set_recording(False)
    assert autograd.set_training(True) is False
    autograd.set_training(False)


def test_state_is_per_thread():
    seen = []
    with autograd.record():
        t = threading.Thread(target=lambda: seen.append(autograd.is_recording()))
        t.start()
        t.join()
    assert seen == [False]


def test_backward_writes_gradients():
    x = nd.array([[1.0, 2.0], [3.0, 4.0]])
    x.attach_grad()
    with autograd.record():
        y = (x * x).sum() + nd.exp(x).mean()
    y.backward()
    want = 2 * x.asnumpy() + np.exp(x.asnumpy()) / 4
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-6)


def test_head_gradient_and_grad_req_add():
    x = nd.array([1.0, 2.0])
    x.attach_grad(grad_req="add")
    for _ in range(2):
        with autograd.record():
            y = x * 3
        y.backward(nd.array([1.0, 10.0]))
    np.testing.assert_allclose(x.grad.asnumpy(), [6, 60])


def test_values_computed_outside_record_are_constants():
    x = nd.array([2.0])
    x.attach_grad()
    c = x * 5                                   # not recorded
    with autograd.record():
        y = x * c
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [10])


def test_grad_returns_without_storing_and_supports_higher_order():
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = x * x * x
        dy = autograd.grad(y, x, create_graph=True)
        assert isinstance(dy, list) and len(dy) == 1     # a list even for one NDArray (MXNet)
        dy = dy[0]
    np.testing.assert_allclose(dy.asnumpy(), 3 * x.asnumpy() ** 2)
    dy.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 6 * x.asnumpy())


def test_fan_out_gradients_accumulate():
    x = nd.array([3.0])
    x.attach_grad()
    with autograd.record():
        y = x * x + x.sin() * x
    y.backward()
    v = 3.0
    np.testing.assert_allclose(x.grad.asnumpy(), [2 * v + np.cos(v) * v + np.sin(v)], rtol=1e-6)


def test_backward_twice_needs_retain_graph():
    x = nd.array([1.0])
    x.attach_grad()
    with autograd.record():
        y = x * 2
    y.backward(retain_graph=True)
    y.backward()
    with pytest.raises(AutogradError, match="second time"):
        y.backward()


def test_non_differentiable_operator_is_a_clear_error():
    x = nd.array([[1.0, 3.0]])
    x.attach_grad()
    with autograd.record():
        y = nd.argmax_channel(x) * x
    with pytest.raises(AutogradError, match="argmax_channel.*not differentiable"):
        y.backward()


def test_grad_of_unmarked_array_is_an_error():
    x = nd.array([1.0])
    with autograd.record():
        y = x * 2
    with pytest.raises(AutogradError, match="attach_grad"):
        y.backward()
    z = nd.array([1.0])
    z.attach_grad()
    with autograd.record():
        w = z * 2
    with pytest.raises(AutogradError, match="marked"):
        autograd.grad(w, [x])


def test_detach_and_block_grad_stop_gradients():
    x = nd.array([2.0])
    x.attach_grad()
    with autograd.record():
        y = x * x.detach() + nd.BlockGrad(x) * x
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [4.0])


def test_mark_variables():
    x, g = nd.array([1.0, 2.0]), nd.zeros((2,))
    autograd.mark_variables([x], [g])
    with autograd.record():
        y = (x * 4).sum()
    y.backward()
    np.testing.assert_allclose(g.asnumpy(), [4, 4])


def test_custom_function():
    class Sigmoid(autograd.Function):
        def forward(self, x):
            y = 1 / (1 + nd.exp(-x))
            self.save_for_backward(y)
            return y

        def backward(self, dy):
            (y,) = self.saved_tensors
            return dy * y * (1 - y)

    x = nd.array([0.0, 1.0])
    x.attach_grad()
    with autograd.record():
        y = Sigmoid()(x)
    y.backward()
    s = 1 / (1 + np.exp(-x.asnumpy()))
    np.testing.assert_allclose(x.grad.asnumpy(), s * (1 - s), rtol=1e-6)


def test_train_mode_reaches_dropout():
    x = nd.ones((100, 100))
    with autograd.record(train_mode=False):
        np.testing.assert_array_equal(nd.Dropout(x, p=0.5).asnumpy(), x.asnumpy())
    with autograd.record():
        y = nd.Dropout(x, p=0.5).asnumpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and 0.3 < (y == 0).mean() < 0.7


def test_fresh_grad_flag_follows_backward_and_detach():
    """MXNet's `_fresh_grad`: 0/1, set by backward for the variables it reached (not through a
    detach()), settable on variables only."""
    x, y = nd.ones((2, 2)), nd.ones((2, 2))
    autograd.mark_variables([x, y], [nd.zeros((2, 2)), nd.zeros((2, 2))])
    assert (x._fresh_grad, y._fresh_grad) == (0, 0)
    with autograd.record():
        ((x + 2).detach() + y).backward()
    assert (x._fresh_grad, y._fresh_grad) == (0, 1)
    y._fresh_grad = False
    assert y._fresh_grad == 0
    assert nd.ones((1,))._fresh_grad == 0
    with pytest.raises(MXNetError, match="not been marked as a variable"):
        nd.ones((1,))._fresh_grad = True


def test_create_graph_gradient_no_variable_reaches_is_a_recorded_constant():
    """radians' gradient is head_grad * pi/180: with create_graph=True it is still recorded (as
    MXNet records every gradient it returns), so its own gradient is zero, and the caller's head
    gradient array is not turned into a graph node."""
    x = nd.array([0.5, -1.0, 2.0])
    x.attach_grad()
    head = nd.array([1.0, 2.0, 3.0])
    with autograd.record():
        (g,) = autograd.grad(nd.radians(x), [x], head_grads=head, create_graph=True)
        (gg,) = autograd.grad(g, [x], head_grads=nd.ones((3,)), create_graph=True)
    np.testing.assert_allclose(g.asnumpy(), head.asnumpy() * np.pi / 180, rtol=1e-6)
    np.testing.assert_array_equal(gg.asnumpy(), np.zeros(3))
    assert head._ag is None
    with autograd.record():
        (same,) = autograd.grad(nd.identity(x), [x], head_grads=head, create_graph=True)
    assert same is not head and head._ag is None
    with pytest.raises(AutogradError, match="cannot be an empty list"):
        autograd.grad(g, [])
