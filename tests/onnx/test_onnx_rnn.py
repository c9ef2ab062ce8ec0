"""An LSTM language model and a GRU sequence model export (static and dynamic batch), pass the
checker, and match hybridgraph in onnxruntime at batch 1 and 3; also vanilla RNNs,
bidirectional and stacked layers, and the state outputs of the fused RNN op. Each imports
back (mx.onnx.import_model / import_to_gluon) with equal outputs."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="ONNX export needs the onnx package (hybridgraph[onnx])")
ort = pytest.importorskip("onnxruntime", reason="checking exports needs onnxruntime (a test dependency)")

import hybridgraph as mx  # noqa: E402
from hybridgraph import gluon, nd, symbol  # noqa: E402
from hybridgraph.onnx import build_model  # noqa: E402
from hybridgraph.onnx.gluon import block_model  # noqa: E402

TOL = 1e-4


class LanguageModel(gluon.HybridBlock):
    """Embedding -> LSTM (batch-major) -> Dense over the vocabulary."""

    def __init__(self, cell=gluon.rnn.LSTM, vocab=30, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.embed = gluon.nn.Embedding(vocab, 8)
            self.rnn = cell(12, num_layers=2, layout="NTC", input_size=8)
            self.decoder = gluon.nn.Dense(vocab, flatten=False)

    def hybrid_forward(self, F, tokens):
        return self.decoder(self.rnn(self.embed(tokens)))


class SeqModel(gluon.HybridBlock):
    """Bidirectional GRU over (N, T, C) features -> last step -> Dense."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.rnn = gluon.rnn.GRU(10, bidirectional=True, layout="NTC", input_size=6)
            self.out = gluon.nn.Dense(4)

    def hybrid_forward(self, F, x):
        return self.out(F.SequenceLast(self.rnn(x), axis=1))


def _run(model, x):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {sess.get_inputs()[0].name: x})[0]


@pytest.mark.parametrize("make,inputs", [
    (LanguageModel, lambda rng: rng.randint(0, 30, (3, 7)).astype("f")),
    (SeqModel, lambda rng: rng.randn(3, 5, 6).astype("f")),
], ids=["lstm_lm", "gru_seq"])
def test_recurrent_models_export_and_match(make, inputs):
    net = make()
    net.initialize(mx.init.Uniform(0.3))
    net.hybridize()
    x = inputs(np.random.RandomState(0))
    want = net(nd.array(x)).asnumpy()
    static = block_model(net, nd.array(x[:1]), dynamic_batch=False)
    dynamic = block_model(net, nd.array(x[:1]), dynamic_batch=True)
    for m in (static, dynamic):
        onnx.checker.check_model(m, full_check=True)
    np.testing.assert_allclose(_run(static, x[:1]), want[:1], rtol=TOL, atol=TOL)
    np.testing.assert_allclose(_run(dynamic, x[:1]), want[:1], rtol=TOL, atol=TOL)
    np.testing.assert_allclose(_run(dynamic, x), want, rtol=TOL, atol=TOL)
    _assert_round_trip(dynamic, x, want)


def _assert_round_trip(model, x: np.ndarray, want: np.ndarray) -> None:
    """import_to_gluon of the exported model gives hybridgraph's outputs again."""
    block = mx.onnx.import_to_gluon(model)
    np.testing.assert_allclose(block(nd.array(x)).asnumpy(), want, rtol=TOL, atol=TOL)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_fused_rnn_op_with_states(mode, bidirectional):
    rng = np.random.RandomState(1)
    seq, batch, inp, hid, layers = 4, 2, 3, 5, 2
    dirs = 2 if bidirectional else 1
    gates = {"lstm": 4, "gru": 3}.get(mode, 1)
    size = 0
    for layer in range(layers):
        isz = inp if layer == 0 else dirs * hid
        size += dirs * gates * hid * (isz + hid + 2)
    names = ["data", "state"] + (["cell"] if mode == "lstm" else [])
    args = [symbol.var("data"), symbol.var("params"), symbol.var("state")]
    if mode == "lstm":
        args.append(symbol.var("cell"))
    sym = symbol.RNN(*args, state_size=hid, num_layers=layers, bidirectional=bidirectional, mode=mode,
                     state_outputs=True, name="rnn")
    feeds = {"data": rng.randn(seq, batch, inp).astype("f"), "state": rng.randn(layers * dirs, batch, hid).astype("f")}
    if mode == "lstm":
        feeds["cell"] = rng.randn(layers * dirs, batch, hid).astype("f")
    params = {"params": (rng.randn(size) * 0.3).astype("f")}
    from hybridgraph.onnx.verification import _run_hybridgraph
    want = _run_hybridgraph(sym, params, feeds)
    model = build_model(sym, params, [feeds[n].shape for n in names])
    assert [o.name for o in model.graph.output] == ["rnn", "rnn1"] + (["rnn2"] if mode == "lstm" else [])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for g, w in zip(sess.run(None, feeds), want):
        np.testing.assert_allclose(g, w, rtol=TOL, atol=TOL)
    back, arg, aux = mx.onnx.import_model(model)
    for g, w in zip(_run_hybridgraph(back, {**arg, **aux}, feeds), want):
        np.testing.assert_allclose(g, w, rtol=TOL, atol=TOL)


class _Control(gluon.HybridBlock):
    """contrib.foreach (a running sum over time) and contrib.cond on its result."""

    def hybrid_forward(self, F, x):
        def step(item, states):
            s = states[0] + item
            return s * 2, [s]
        outs, states = F.contrib.foreach(step, x, [F.zeros_like(x[0])])
        return F.contrib.cond(F.sum(states[0]) > 0, lambda: outs + 1, lambda: outs - 1)


def test_contrib_control_flow_exports():
    """hybridgraph builds foreach/cond from ordinary ops (unrolled steps, `where`), so they export."""
    net = _Control()
    net.hybridize()
    rng = np.random.RandomState(3)
    for x in (rng.randn(4, 2, 3).astype("f"), -np.abs(rng.randn(4, 2, 3)).astype("f")):
        want = net(nd.array(x)).asnumpy()
        model = block_model(net, nd.array(x), dynamic_batch=False)
        onnx.checker.check_model(model)
        np.testing.assert_allclose(_run(model, x), want, rtol=TOL, atol=TOL)
