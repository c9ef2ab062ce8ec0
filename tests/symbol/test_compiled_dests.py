"""CompiledGraph.backward(out=...) writes gradients straight into the given buffers; a new set of
buffers (or a buffer that does not fit) must be honoured on the next call, not a stale choice."""
from __future__ import annotations

import numpy as np

from hybridgraph import symbol as S  # noqa: N812
from hybridgraph.symbol.plan import compile_graph


def _graph():
    x, w = S.var("x"), S.var("w")
    out = S.FullyConnected(x, w, num_hidden=3, no_bias=True, name="fc")
    cg = compile_graph(out._outputs, ["x", "w"], for_training=True, wrt=["w"])
    return cg, np.random.RandomState(0).rand(4, 5).astype("float32"), \
        np.random.RandomState(1).rand(3, 5).astype("float32")


def _grad(cg, x, w, out):
    _, saved = cg.forward([x, w], is_train=True)
    return cg.backward(saved, [np.ones((4, 3), "float32")], out=out)


def test_gradients_land_in_each_calls_buffers():
    cg, x, w = _graph()
    want = np.ones((4, 3), "float32").T @ x
    previous = None
    for _ in range(3):
        buf = np.zeros((3, 5), "float32")
        res = _grad(cg, x, w, [None, buf])
        assert res[1] is buf
        np.testing.assert_allclose(buf, want, rtol=1e-6)
        if previous is not None:   # an earlier call's buffer is never written again
            assert np.all(previous == -1)
        buf[...] = -1
        previous = buf


def test_a_buffer_that_does_not_fit_gets_a_copy():
    cg, x, w = _graph()
    want = np.ones((4, 3), "float32").T @ x
    fit, strided = np.zeros((3, 5), "float32"), np.zeros((5, 3), "float32").T   # not C-contiguous
    _grad(cg, x, w, [None, fit])
    res = _grad(cg, x, w, [None, strided])
    assert res[1] is strided
    np.testing.assert_allclose(strided, want, rtol=1e-6)
    res = _grad(cg, x, w, [None, None])
    np.testing.assert_allclose(res[1], want, rtol=1e-6)
