"""Outputs of a hybridized call belong to the caller (issue 13, item 4): an output that
depends only on constants or parameters (folded with BatchNorm, or simplified to the
parameter itself) is a fresh array at every call, never the plan's constant or the
parameter's buffer by reference. Inputs and parameters returned as they are stay shared,
as MXNet 1.9.1 does."""
from __future__ import annotations

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import nd
from hybridgraph.gluon import HybridBlock, nn


class ConstOutputs(HybridBlock):
    def __init__(self):
        super().__init__()
        with self.name_scope():
            self.conv = nn.Conv2D(2, 1, in_channels=1)
            self.bn = nn.BatchNorm(in_channels=2)     # makes the net's inference BatchNorm-folded
            self.c = self.params.get_constant("c", nd.array([1.0, 2.0]))

    def hybrid_forward(self, F, x, c):
        return self.bn(self.conv(x)), c * 3, F.ones((2,)) + 0, c * 1 + 0, x * 1


@pytest.mark.parametrize("static", [False, True])
@pytest.mark.parametrize("mode", ["predict", "train", "record"])
def test_writing_an_output_never_changes_later_calls(static, mode):
    net = ConstOutputs()
    net.initialize()
    net.hybridize(static_alloc=static, static_shape=static)
    x = nd.ones((1, 1, 2, 2))
    want = None
    for _ in range(4):
        if mode == "predict":
            outs = net(x)
        elif mode == "train":
            with mx.autograd.train_mode():
                outs = net(x)
        else:
            x.attach_grad()
            with mx.autograd.record():
                outs = net(x)
        got = [o.asnumpy().copy() for o in outs]
        if want is None:
            want = got
        for g, w in zip(got[1:4], want[1:4]):
            np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(got[4], np.ones((1, 1, 2, 2)))
        for o in outs[1:]:
            o[:] = -7
        x = nd.ones((1, 1, 2, 2))
    np.testing.assert_array_equal(net.c.data().asnumpy(), [1.0, 2.0])


def test_returned_inputs_and_parameters_are_shared_as_in_mxnet():
    """MXNet 1.9.1 returns an input or parameter the block returns as is by reference,
    eagerly and hybridized: writing it writes the parameter."""
    class ReturnsWeight(HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.w = self.params.get("w", shape=(3,), init=mx.init.One())

        def hybrid_forward(self, F, x, w):
            return x + 1, w, x, w * 1 + 0

    for hybridize in (False, True):
        net = ReturnsWeight()
        net.initialize()
        if hybridize:
            net.hybridize()
        x = nd.zeros((3,))
        _, w, xo, w2 = net(x)
        w2[:] = 9                       # a computed output: the caller's own array
        np.testing.assert_array_equal(net.w.data().asnumpy(), [1, 1, 1])
        w[:] = 5
        xo[:] = 3
        np.testing.assert_array_equal(net.w.data().asnumpy(), [5, 5, 5])
        np.testing.assert_array_equal(x.asnumpy(), [3, 3, 3])
