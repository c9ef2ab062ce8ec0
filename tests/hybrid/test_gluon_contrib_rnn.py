"""gluon.contrib.rnn convolutional cells: MXNet's names and shapes, deferred channels, eager vs
hybridized outputs, and state shapes for NCW/NCHW/NCDHW."""
import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph.gluon.contrib import rnn as crnn


@pytest.mark.parametrize("cls,in_shape,out_shape", [
    (crnn.Conv1DRNNCell, (1, 10, 50), (1, 100, 48)),
    (crnn.Conv2DLSTMCell, (1, 10, 20, 50), (1, 100, 18, 48)),
    (crnn.Conv3DGRUCell, (1, 10, 20, 30, 50), (1, 100, 18, 28, 48)),
])
def test_symbolic_unroll_names_and_shapes(cls, in_shape, out_shape):
    cell = cls(in_shape[1:], 100, 3, 3, prefix="rnn_")
    outputs, _ = cell.unroll(3, [mx.sym.Variable(f"rnn_t{i}_data") for i in range(3)])
    outputs = mx.sym.Group(outputs)
    assert sorted(cell.collect_params()) == ["rnn_h2h_bias", "rnn_h2h_weight", "rnn_i2h_bias", "rnn_i2h_weight"]
    assert outputs.list_outputs() == ["rnn_t0_out_output", "rnn_t1_out_output", "rnn_t2_out_output"]
    _, outs, _ = outputs.infer_shape(**{f"rnn_t{i}_data": in_shape for i in range(3)})
    assert outs == [out_shape] * 3


def test_deferred_channels_and_hybridized_matches_eager():
    x = mx.nd.array(np.random.default_rng(0).normal(size=(8, 3, 5, 7)).astype(np.float32))
    results = []
    for hybridize in (False, True):
        mx.random.seed(1)
        cell = crnn.Conv1DLSTMCell((0, 7), 10, (3,), (3,))
        cell.initialize()
        if hybridize:
            cell.hybridize()
        out, states = cell.unroll(3, x, layout="NTC", merge_outputs=True)
        results.append(out.asnumpy())
        assert cell.i2h_weight.shape == (40, 5, 3) and out.shape == (8, 3, 10, 5)
        assert [s.shape for s in states] == [(8, 10, 5), (8, 10, 5)]
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-6)
    assert repr(crnn.Conv2DGRUCell((3, 8, 8), 4, 3, 3)) == "Conv2DGRUCell(3 -> 12, tanh, NCHW)"
    with pytest.raises(AssertionError, match="odd"):
        crnn.Conv1DRNNCell((3, 8), 4, 3, 2)


def test_lstmp_shapes_and_projection():
    cell = crnn.LSTMPCell(8, 3, input_size=5, prefix="p_")
    cell.initialize()
    x = mx.nd.ones((2, 4, 5))
    out, (r, c) = cell.unroll(4, x, layout="NTC", merge_outputs=True)
    assert out.shape == (2, 4, 3) and r.shape == (2, 3) and c.shape == (2, 8)
    assert sorted(cell.collect_params()) == ["p_h2h_bias", "p_h2h_weight", "p_h2r_weight", "p_i2h_bias",
                                            "p_i2h_weight"]
    assert repr(cell) == "LSTMPCell(5 -> 32 -> 3)"


def test_variational_dropout_same_mask_every_step():
    base = mx.gluon.rnn.RNNCell(6, input_size=6, activation="relu", i2h_weight_initializer="zeros",
                                h2h_weight_initializer="zeros", i2h_bias_initializer="ones")
    cell = crnn.VariationalDropoutCell(base, drop_outputs=0.5)
    cell.initialize()
    with mx.autograd.train_mode():
        out, _ = cell.unroll(5, mx.nd.ones((3, 5, 6)), layout="NTC", merge_outputs=True)
    o = out.asnumpy()
    for t in range(1, 5):  # one mask for the whole sequence
        np.testing.assert_array_equal(o[:, t] == 0, o[:, 0] == 0)
    assert set(np.unique(o)) <= {0.0, 2.0}


def test_dynamic_unroll_matches_unroll_and_respects_valid_length():
    cell = mx.gluon.rnn.GRUCell(4, input_size=3)
    cell.initialize()
    x = mx.nd.array(np.random.default_rng(0).normal(size=(5, 2, 3)).astype(np.float32))
    begin = cell.begin_state(batch_size=2)
    ref, _ = cell.unroll(5, x, begin_state=begin, layout="TNC", merge_outputs=True)
    out, states = crnn.dynamic_unroll(cell, x, begin, layout="TNC")
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy(), rtol=1e-5, atol=1e-6)
    out, states = crnn.dynamic_unroll(cell, x, begin, layout="TNC", valid_length=mx.nd.array([2, 5]))
    o = out.asnumpy()
    assert (o[2:, 0] == 0).all() and (o[:, 1] != 0).any()
    np.testing.assert_allclose(states[0].asnumpy()[0], ref.asnumpy()[1, 0], rtol=1e-5, atol=1e-6)
