"""mx.rnn (legacy symbolic cells): graph names as MXNet writes them, fused vs unfused numerics
through pack/unpack_weights, bucketing iterator, vocab encoding and RNN checkpoints."""
import random

import numpy as np
import pytest

import hybridgraph as mx


def _bind_run(sym, arrays, **shapes):
    exe = sym.simple_bind(mx.cpu(), grad_req="null", **shapes)
    for name, arr in exe.arg_dict.items():
        if name in arrays:
            arr[:] = arrays[name]
    exe.forward()
    return exe.outputs[0].asnumpy()


def test_lstm_cell_names_params_and_shapes():
    cell = mx.rnn.LSTMCell(8, prefix="lstm_")
    outputs, states = cell.unroll(3, [mx.sym.Variable(f"t{i}") for i in range(3)],
                                  begin_state=cell.begin_state(func=mx.sym.Variable))
    assert sorted(cell.params._params) == ["lstm_h2h_bias", "lstm_h2h_weight", "lstm_i2h_bias", "lstm_i2h_weight"]
    assert mx.sym.Group(outputs).list_outputs() == ["lstm_t0_out_output", "lstm_t1_out_output", "lstm_t2_out_output"]
    _, outs, _ = mx.sym.Group(outputs).infer_shape(t0=(4, 5), t1=(4, 5), t2=(4, 5), lstm_begin_state_0=(4, 8),
                                                  lstm_begin_state_1=(4, 8))
    assert outs == [(4, 8)] * 3 and len(states) == 2
    assert cell.params.get("i2h_bias").attr("__init__") == '["lstmbias", {"forget_bias": 1.0}]'


def test_fused_matches_unfused_through_pack_unpack():
    rng = np.random.default_rng(0)
    fused = mx.rnn.FusedRNNCell(4, num_layers=2, mode="gru", bidirectional=True, prefix="f_")
    data = mx.sym.Variable("data")
    out_f, _ = fused.unroll(3, data, layout="TNC", merge_outputs=True,
                            begin_state=fused.begin_state(func=mx.sym.Variable))
    stack = fused.unfuse()
    out_u, _ = stack.unroll(3, data, layout="TNC", merge_outputs=True,
                            begin_state=stack.begin_state(func=mx.sym.Variable))
    x = rng.normal(size=(3, 2, 5)).astype(np.float32)
    args_u = {}
    exe = out_u.simple_bind(mx.cpu(), data=x.shape, **{f"f_{d}{layer}_begin_state_0": (2, 4)
                                                       for layer in range(2) for d in "lr"})
    for name, arr in exe.arg_dict.items():
        if name != "data" and "begin_state" not in name:
            args_u[name] = mx.nd.array(rng.normal(size=arr.shape).astype(np.float32) * 0.3)
    packed = fused.pack_weights(stack.unpack_weights(args_u))
    assert set(packed) == {"f_parameters"}
    unpacked = stack.pack_weights(fused.unpack_weights(packed))
    for k, v in args_u.items():
        np.testing.assert_array_equal(unpacked[k].asnumpy(), v.asnumpy())
    y_u = _bind_run(out_u, {"data": x, **args_u}, data=x.shape,
                    **{f"f_{d}{layer}_begin_state_0": (2, 4) for layer in range(2) for d in "lr"})
    y_f = _bind_run(out_f, {"data": x, **packed}, data=x.shape, f_begin_state_0=(4, 2, 4))
    np.testing.assert_allclose(y_f, y_u, rtol=1e-4, atol=1e-5)


def test_encode_sentences_and_bucket_iter():
    coded, vocab = mx.rnn.encode_sentences([["a", "b"], ["b", "c", "a"]], invalid_label=0, start_label=0)
    assert coded == [[1, 2], [2, 3, 1]] and vocab["\n"] == 0
    with pytest.raises(AssertionError, match="Unknown token"):
        mx.rnn.encode_sentences([["z"]], vocab=vocab)
    sents = [[1, 2], [3, 4], [1, 2, 3], [4, 5, 6], [1, 2, 3, 4, 5, 6, 7, 8]]
    it = mx.rnn.BucketSentenceIter(sents, batch_size=2, buckets=[2, 3], invalid_label=0)
    assert it.default_bucket_key == 3 and it.provide_data[0].shape == (2, 3)
    batches = list(it)
    assert sorted(b.bucket_key for b in batches) == [2, 3]
    for b in batches:
        d, lab = b.data[0].asnumpy(), b.label[0].asnumpy()
        np.testing.assert_array_equal(lab[:, :-1], d[:, 1:])
        assert (lab[:, -1] == 0).all()
    tn = mx.rnn.BucketSentenceIter(sents, batch_size=2, buckets=[2, 3], layout="TN")
    assert next(iter(tn)).data[0].shape[1] == 2


def test_rnn_checkpoint_saves_unpacked_and_loads_packed(tmp_path):
    cell = mx.rnn.LSTMCell(3, prefix="l_")
    out, _ = cell.unroll(2, [mx.sym.Variable("a"), mx.sym.Variable("b")])
    args = {"l_i2h_weight": mx.nd.ones((12, 4)), "l_i2h_bias": mx.nd.arange(12),
            "l_h2h_weight": mx.nd.ones((12, 3)), "l_h2h_bias": mx.nd.zeros((12,))}
    prefix = str(tmp_path / "m")
    mx.rnn.save_rnn_checkpoint(cell, prefix, 1, out[-1], args, {})
    saved = mx.nd.load(prefix + "-0001.params")
    assert "arg:l_i2h_f_bias" in saved and saved["arg:l_i2h_f_bias"].asnumpy().tolist() == [3, 4, 5]
    _, arg, _ = mx.rnn.load_rnn_checkpoint(cell, prefix, 1)
    np.testing.assert_array_equal(arg["l_i2h_bias"].asnumpy(), np.arange(12))


def test_modifier_and_container_rules():
    base = mx.rnn.RNNCell(4, prefix="r_")
    res = mx.rnn.ResidualCell(base)
    with pytest.raises(AssertionError, match="modifier"):
        base.begin_state()
    outs, _ = res.unroll(2, [mx.sym.Variable("x0"), mx.sym.Variable("x1")])
    assert outs[0].name == "r_t0_out_plus_residual"
    with pytest.raises(AssertionError, match="zoneout"):
        mx.rnn.ZoneoutCell(mx.rnn.FusedRNNCell(4))
    with pytest.raises(NotImplementedError, match="unroll"):
        mx.rnn.FusedRNNCell(4)(mx.sym.Variable("x"), [])


def test_bucketing_module_trains_lstm_lm_with_zero_batch_begin_states():
    """The MXNet LSTM-bucketing recipe: begin states are `_zeros(shape=(0, H))`, sized by shape
    inference through FullyConnected (batch taken from its output, as in MXNet)."""
    mx.random.seed(0)
    np.random.seed(0)
    random.seed(0)          # BucketSentenceIter shuffles its buckets with `random`, as MXNet's does
    vocab, hidden = 6, 8
    # a learnable language: each token is followed by the next one (mod 5)
    sents = [[1 + (s + t) % 5 for t in range(n)] for s, n in enumerate([4] * 8 + [6] * 8)]
    it = mx.rnn.BucketSentenceIter(sents, batch_size=4, buckets=[4, 6], invalid_label=0)
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.LSTMCell(hidden, prefix="lstm_l0_"))

    def sym_gen(seq_len):
        data, label = mx.sym.Variable("data"), mx.sym.Variable("softmax_label")
        embed = mx.sym.Embedding(data=data, input_dim=vocab, output_dim=4, name="embed")
        stack.reset()
        outputs, _ = stack.unroll(seq_len, inputs=embed, merge_outputs=True)
        pred = mx.sym.FullyConnected(mx.sym.Reshape(outputs, shape=(-1, hidden)), num_hidden=vocab, name="pred")
        out = mx.sym.SoftmaxOutput(pred, mx.sym.Reshape(label, shape=(-1,)), name="softmax")
        return out, ("data",), ("softmax_label",)

    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=it.default_bucket_key, context=mx.cpu())
    metric = mx.metric.Perplexity(0)
    mod.fit(it, eval_metric=metric, optimizer="adam", optimizer_params={"learning_rate": 0.05}, num_epoch=8,
            initializer=mx.init.Xavier())
    it.reset()
    metric.reset()
    mod.score(it, metric)
    assert metric.get()[1] < 1.5  # uniform guessing over the 5 tokens would give 5


@pytest.mark.parametrize("cls,prefix,gates", [("ConvRNNCell", "ConvRNN_", 1), ("ConvLSTMCell", "ConvLSTM_", 4),
                                              ("ConvGRUCell", "ConvGRU_", 3)])
def test_conv_cells_keep_mxnet_defaults(cls, prefix, gates):
    """The conv cells share one constructor: MXNet's default prefix per class, an explicit one
    wins, and the i2h weight has gates * num_hidden filters with the default 3x3 kernel."""
    cell = getattr(mx.rnn, cls)(input_shape=(1, 3, 8, 8), num_hidden=4)
    assert cell._prefix == prefix
    assert getattr(mx.rnn, cls)((1, 3, 8, 8), 4, prefix="mine_")._prefix == "mine_"
    out, _ = cell.unroll(2, inputs=mx.sym.Variable("data"), layout="NTC", merge_outputs=False)
    arg_shapes, _, _ = out[-1].infer_shape(data=(1, 2, 3, 8, 8))
    shapes = dict(zip(out[-1].list_arguments(), arg_shapes))
    assert shapes[f"{prefix}i2h_weight"] == (gates * 4, 3, 3, 3)
