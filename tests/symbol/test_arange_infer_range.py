"""`sym.arange(infer_range=True)` takes its length from the rest of the graph, as in MXNet 1.9.1
(values checked there): the shape stays open until inference fills it, then the kernel runs with
a stop that gives exactly that many values."""
from __future__ import annotations

import numpy as np
import pytest

import hybridgraph as mx


@pytest.mark.parametrize("kwargs, n, expected", [
    ({"start": 0}, 5, [0, 1, 2, 3, 4]),
    ({"start": 2, "step": 0.5, "repeat": 2}, 6, [2, 2, 2.5, 2.5, 3, 3]),
    ({"start": 1.0, "step": 0.1}, 7, [1.0 + 0.1 * i for i in range(7)]),
])
def test_length_comes_from_the_graph(kwargs, n, expected):
    s = mx.sym.elemwise_add(mx.sym.arange(stop=None, infer_range=True, **kwargs), mx.sym.zeros(shape=(n,)))
    assert s.infer_shape()[1] == [(n,)]
    out = s.bind(mx.cpu(), {}).forward()[0].asnumpy()
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_the_shape_is_open_on_its_own_and_the_json_keeps_infer_range():
    s = mx.sym.arange(start=0, infer_range=True)
    assert s.infer_shape_partial()[1] == [(0,)]
    assert '"infer_range": "True"' in s.tojson()


def test_hybridized_block_fills_the_length():
    class Block(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.elemwise_add(F.arange(start=1, infer_range=True), x)

    net = Block()
    net.hybridize()
    np.testing.assert_allclose(net(mx.nd.zeros((4,))).asnumpy(), [1, 2, 3, 4])
    np.testing.assert_allclose(net(mx.nd.ones((3,))).asnumpy(), [2, 3, 4])
