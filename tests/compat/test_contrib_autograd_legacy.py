"""mx.contrib.autograd, MXNet 1.x's first autograd API (train_section, grad_and_loss, ...)."""
from __future__ import annotations

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph.contrib import autograd as cag


def test_sections_switch_recording_and_training_together():
    assert not mx.autograd.is_recording() and not mx.autograd.is_training()
    with cag.train_section():
        assert mx.autograd.is_recording() and mx.autograd.is_training()
        with cag.test_section():
            assert not mx.autograd.is_recording() and not mx.autograd.is_training()
        assert mx.autograd.is_recording()
    assert not mx.autograd.is_recording() and not mx.autograd.is_training()
    assert cag.set_is_training(True) is False and cag.set_is_training(False) is True


def test_grad_and_loss_and_grad_with_argnum():
    x, y = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 5.0])
    grads, loss = cag.grad_and_loss(lambda a, b: a * b)(x, y)
    np.testing.assert_array_equal(loss.asnumpy(), [3, 10])
    np.testing.assert_array_equal(grads[0].asnumpy(), [3, 5])
    np.testing.assert_array_equal(grads[1].asnumpy(), [1, 2])
    (gy,) = cag.grad(lambda a, b: a * b * b, argnum=1)(x, y)
    np.testing.assert_array_equal(gy.asnumpy(), 2 * x.asnumpy() * y.asnumpy())
    with pytest.raises(AssertionError, match="should NDArray"):
        cag.grad(lambda a: a)(np.ones(2))


def test_mark_variables_and_backward_with_out_grads():
    x = mx.nd.array([1.0, 2.0, 3.0])
    dx = mx.nd.ones((3,))
    cag.mark_variables([x], [dx], grad_reqs="add")
    for _ in range(2):
        with cag.train_section():
            y = x * x
        cag.backward([y], [mx.nd.array([1.0, 0.5, 2.0])])
    np.testing.assert_array_equal(dx.asnumpy(), 1 + 2 * (2 * x.asnumpy() * [1.0, 0.5, 2.0]))
    with pytest.raises(AssertionError, match="list or tuple"):
        cag.backward(y)
    assert "train_section" in dir(mx.contrib.autograd)
