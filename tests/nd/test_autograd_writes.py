"""In-place writes and autograd (issue 13, item 4): never a wrong gradient.

MXNet 1.9.1 refuses, while recording, an in-place write into an array the graph holds
(`y += 1`, `y[:] = 0`, `out=y`, `x += 1` on a variable); outside recording it silently
differentiates with the new values, where hybridgraph raises at backward instead. An
array whose graph an earlier backward freed is a constant, as in MXNet (an RNN's hidden
state carried across batches)."""
from __future__ import annotations

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import autograd, nd
from hybridgraph.nd.errors import MXNetError


def _x():
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    return x


WRITES = {
    "iadd": lambda y: y.__iadd__(1),
    "imul": lambda y: y.__imul__(3),
    "ipow": lambda y: y.__ipow__(2),
    "setitem_all": lambda y: y.__setitem__(slice(None), 0),
    "setitem_part": lambda y: y.__setitem__(1, 5.0),
    "out": lambda y: nd.relu(y, out=y),
    "copyto": lambda y: nd.array([7.0, 7.0, 7.0]).copyto(y),
}


@pytest.mark.parametrize("write", WRITES, ids=list(WRITES))
def test_write_into_recorded_array_while_recording_raises(write):
    x = _x()
    with autograd.record():
        y = x * 2
        w = y * x
        with pytest.raises(MXNetError, match=r"in-place write .* shape \(3,\).*output of _mul_scalar"):
            WRITES[write](y)
        s = w.sum()
    s.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [4.0, 8.0, 12.0])


@pytest.mark.parametrize("write", WRITES, ids=list(WRITES))
def test_write_into_variable_while_recording_raises(write):
    x = _x()
    with autograd.record(), pytest.raises(MXNetError, match="a variable"):
        WRITES[write](x)


@pytest.mark.parametrize("write", WRITES, ids=list(WRITES))
def test_write_after_recording_then_backward_raises(write):
    x = _x()
    with autograd.record():
        y = x * 2
        s = (y * x).sum()
    WRITES[write](y)
    with pytest.raises(MXNetError, match="written in place after it was recorded"):
        s.backward()


def test_write_into_variable_after_recording_then_backward_raises():
    x = _x()
    with autograd.record():
        s = (x * x).sum()
    x[:] = 10
    with pytest.raises(MXNetError, match=r"input of .*a variable"):
        s.backward()


def test_write_into_saved_output_raises():
    x = _x()
    with autograd.record():
        y = nd.exp(x)          # exp's gradient uses its output
        s = y.sum()
    y[:] = 0
    with pytest.raises(MXNetError, match="output of exp"):
        s.backward()


def test_writes_that_no_gradient_reads_are_allowed():
    x = _x()
    with autograd.record():
        y = x * 2
        y2 = y * 1          # recorded before the write below, reads y
        s = y2.sum()
    z = nd.zeros(3)
    z += 1                   # not in any graph
    s.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2, 2, 2])
    y += 1                   # after backward: the graph is gone, y is a plain array
    with autograd.record():
        y += 1
    np.testing.assert_allclose(y.asnumpy(), [4, 6, 8])


def test_write_into_constant_while_recording_records_the_assignment():
    x = _x()
    with autograd.record():
        z = nd.zeros(3)
        z[:] = x
        s = (z * x).sum()
    s.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 4.0, 6.0])   # MXNet: 2x


_MX_INPLACE = "Inplace operations (+=, -=, x[:]=, etc) are not supported when recording with"


@pytest.mark.parametrize("key", [0, (0, slice(1, 3)), [0, 1], slice(0, 1), slice(None, None, -1)])
def test_partial_assignment_of_a_recorded_value_raises_as_in_mxnet(key):
    """MXNet 1.9.1 writes a part of an array with _slice_assign/_scatter_set_nd(out=x); its
    recording makes x a graph input, then refuses the output x (checked in .mxvenv)."""
    z = nd.zeros((2, 3))
    y = nd.ones(z[key].shape)
    y.attach_grad()
    with autograd.record():
        with pytest.raises(MXNetError, match=r"Inplace operations \(\+="):
            z[key] = y


@pytest.mark.parametrize("key", [slice(None), Ellipsis, None])
def test_whole_assignment_of_a_recorded_value_is_a_recorded_copy(key):
    """`z[:] = x` covers all of z: MXNet copies (copyto, recorded), broadcasting first."""
    x = nd.array([[1.0, 2.0, 3.0]])
    x.attach_grad()
    with autograd.record():
        z = nd.zeros((2, 3))
        z[key] = x            # broadcast (1, 3) -> (2, 3)
        s = (z * z).sum()
    s.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [[4.0, 8.0, 12.0]])


@pytest.mark.parametrize("write", ["iadd", "out"])
def test_constant_written_from_recorded_raises_as_in_mxnet(write):
    """`z += x` and `elemwise_add(z, x, out=z)` with x in the graph: MXNet raises."""
    x = _x()
    z = nd.ones(3)
    with autograd.record():
        with pytest.raises(MXNetError) as err:
            if write == "iadd":
                z += x
            else:
                nd.elemwise_add(z, x, out=z)
    assert _MX_INPLACE in str(err.value)


def test_hidden_state_from_freed_graph_is_a_constant():
    """The from-scratch RNN pattern: h carries over batches without detach()."""
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    w = nd.array([3.0, 4.0])
    w.attach_grad()
    h = nd.zeros(2)
    grads = []
    for _ in range(3):
        h_prev = h.asnumpy()
        with autograd.record():
            h = nd.tanh(h * w + x)
            loss = h.sum()
        loss.backward()
        d = 1 - np.tanh(h_prev * w.asnumpy() + x.asnumpy()) ** 2
        np.testing.assert_allclose(x.grad.asnumpy(), d, rtol=1e-5)
        np.testing.assert_allclose(w.grad.asnumpy(), d * h_prev, rtol=1e-5, atol=1e-7)
        grads.append(x.grad.asnumpy())
    assert len(grads) == 3


def test_backward_twice_without_retain_graph_still_raises():
    x = _x()
    with autograd.record():
        s = (x * 2).sum()
    s.backward()
    with pytest.raises(MXNetError, match="retain_graph=True"):
        s.backward()


def test_second_loss_over_a_freed_graph_raises_instead_of_a_stale_gradient():
    x = _x()
    with autograd.record():
        y = x * 2
        s1 = y.sum()
        s2 = (y * y).sum()
    s1.backward()
    with pytest.raises(MXNetError, match="retain_graph=True"):
        s2.backward()


def test_gluon_rnn_state_carried_across_batches():
    layer = mx.gluon.rnn.RNN(4, input_size=3)
    layer.initialize()
    trainer = mx.gluon.Trainer(layer.collect_params(), "sgd", {"learning_rate": 0.1})
    state = layer.begin_state(batch_size=2)
    data = nd.random.uniform(shape=(5, 2, 3))
    for _ in range(3):
        with autograd.record():
            out, state = layer(data, state)
            loss = out.sum()
        loss.backward()
        trainer.step(2)
    assert np.isfinite(out.asnumpy()).all()


def test_head_gradient_larger_than_its_head_is_read_as_the_heads_shape():
    """MXNet 1.9.1 (checked): backward(g) with g bigger than the head reads g's leading
    elements as the head's shape; a smaller g is refused."""
    x = _x()
    with autograd.record():
        y = x * 2
    y.backward(nd.array([1.0, 2.0, 3.0, 4.0, 5.0]), retain_graph=True)
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 4.0, 6.0])
    with pytest.raises(MXNetError, match="smaller than its head"):
        y.backward(nd.array([1.0, 2.0]))
