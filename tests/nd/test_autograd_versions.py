"""In-place writes into plain arrays a recorded op read (issue 13, item 4): never a wrong
gradient.

`c` below has no gradient attached; `w = x * c` is recorded and its gradient for x reads c.
MXNet 1.9.1 refuses a write into c while recording (c is in the graph); after recording,
or under autograd.pause(), it silently differentiates with the new values. hybridgraph
counts writes per array memory (autograd.version_cell, shared by views and detach()) and
raises at backward instead, naming the op, the input and the fix."""
from __future__ import annotations

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import autograd, nd
from hybridgraph.nd.errors import MXNetError


def _xc():
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    return x, nd.array([1.0, 2.0, 3.0])


WRITES = {
    "iadd": lambda c: c.__iadd__(1),
    "imul": lambda c: c.__imul__(3),
    "setitem_all": lambda c: c.__setitem__(slice(None), 0),
    "setitem_one": lambda c: c.__setitem__(1, 10.0),
    "out": lambda c: nd.elemwise_add(c, c, out=c),
    "copyto": lambda c: nd.array([5.0, 5.0, 5.0]).copyto(c),
    "slice_view": lambda c: c[0:2].__setitem__(slice(None), 7.0),
    "reshape_view": lambda c: c.reshape((3, 1)).__setitem__(slice(None), 7.0),
    "detach": lambda c: c.detach().__setitem__(slice(None), 7.0),
}


@pytest.mark.parametrize("write", WRITES, ids=list(WRITES))
def test_write_while_recording_raises_as_mxnet(write):
    x, c = _xc()
    with autograd.record():
        w = (x * c).sum()
        with pytest.raises(MXNetError, match=r"in-place write .* shape .* broadcast_mul read while autograd"):
            WRITES[write](c)
    np.testing.assert_allclose(c.asnumpy(), [1, 2, 3])
    w.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [1, 2, 3])


@pytest.mark.parametrize("write", WRITES, ids=list(WRITES))
def test_write_after_recording_raises_at_backward(write):
    """MXNet 1.9.1 returns the gradient of the new values here (e.g. [2, 3, 4] after c += 1)."""
    x, c = _xc()
    with autograd.record():
        w = (x * c).sum()
    WRITES[write](c)
    with pytest.raises(MXNetError, match=r"an input of broadcast_mul \(input 1: an array outside the graph, "
                                         r"shape \(3,\), dtype float32\) was written in place after it was "
                                         r"recorded.*c2 = c.copy\(\)"):
        w.backward()


def test_write_under_pause_raises_at_backward():
    x, c = _xc()
    with autograd.record():
        w = (x * c).sum()
        with autograd.pause():
            c += 1
    with pytest.raises(MXNetError, match="written in place after it was recorded"):
        w.backward()


def test_view_made_before_recording_counts():
    x, c = _xc()
    v = c[1:]
    with autograd.record():
        w = (x * c).sum()
    v[:] = 0
    with pytest.raises(MXNetError, match="written in place"):
        w.backward()


def test_write_into_the_base_of_a_recorded_view_counts():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    c = nd.array([1.0, 2.0, 3.0])
    v = c[1:]
    with autograd.record():
        w = (x * v).sum()
    c[:] = 0
    with pytest.raises(MXNetError, match="input 1"):
        w.backward()


def test_unrelated_and_later_writes_are_allowed():
    x, c = _xc()
    d = nd.ones(3)
    with autograd.record():
        w = (x * c).sum()
        d += 1                       # not read by the graph
    w.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [1, 2, 3])
    c += 1                           # the graph is freed: c is plain again
    with autograd.record():
        c += 1                       # MXNet allows this after backward too
        w = (x * c).sum()
    w.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [3, 4, 5])


def test_retained_graph_still_guards_its_inputs():
    x, c = _xc()
    with autograd.record():
        w = (x * c).sum()
    w.backward(retain_graph=True)
    with autograd.record(), pytest.raises(MXNetError, match="read while autograd is recording"):
        c += 1                       # MXNet 1.9.1 raises here too


def test_np_front_end_inplace_after_recording_raises_at_backward():
    x = mx.np.array([1.0, 2.0, 3.0])
    x.attach_grad()
    c = mx.np.array([1.0, 2.0, 3.0])
    with autograd.record():
        w = (x * c).sum()
    c += 1
    with pytest.raises(MXNetError, match="written in place after it was recorded"):
        w.backward()


def test_hybridized_block_input_written_after_recording_raises():
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize()
    net.hybridize()
    data = nd.array([[1.0, 2.0, 3.0]])
    with autograd.record():
        loss = net(data).sum()
    data[:] = 0                      # the weight gradient reads data
    with pytest.raises(MXNetError, match="written in place after it was recorded"):
        loss.backward()


def test_eager_writes_without_recording_keep_no_version_state():
    """Arrays no tape node read carry no version cell: eager code pays nothing."""
    c = nd.array([1.0, 2.0])
    c += 1
    c[:] = 3
    assert c._ver is None
    assert (c + 1)._ver is None
