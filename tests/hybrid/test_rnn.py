"""Gluon recurrent layers and cells (hybrid/rnn): MXNet's golden RNN models (imported
and rebuilt natively), exported graphs, eager vs hybridized, cells vs fused layers."""
from __future__ import annotations

import json

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph.gluon.utils import export_paths
from hybridgraph.gluon import HybridBlock, SymbolBlock, nn, rnn
from hybridgraph.gluon.testing import check_hybrid_consistency
from hybridgraph.nd import autograd
from tests.conftest import GOLDEN

MODELS = GOLDEN / "mxnet"
RNN_MODELS = ["gru_net", "lstm_net", "lstm_states_net", "rnn_relu_net"]


# -- the architectures of the golden models (tools/oracle/gen_models.py) -------------------------

class GRUNet(HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.gru = rnn.GRU(10, bidirectional=True)
            self.dense = nn.Dense(3)

    def hybrid_forward(self, F, x):  # noqa: N803
        out = self.gru(x)
        return out, self.dense(F.mean(out, axis=0))


class LSTMNet(HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.lstm = rnn.LSTM(12, num_layers=2, layout="NTC")
            self.dense = nn.Dense(4, flatten=False)

    def hybrid_forward(self, F, x):  # noqa: N803
        return self.dense(self.lstm(x))


class LSTMStatesNet(HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.lstm = rnn.LSTM(8)

    def hybrid_forward(self, F, x, h, c):  # noqa: N803
        out, (h, c) = self.lstm(x, [h, c])
        return out, h, c


class RNNReluNet(HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.rnn = rnn.RNN(6, num_layers=2, layout="NTC", activation="relu")

    def hybrid_forward(self, F, x):  # noqa: N803
        return self.rnn(x)


NATIVE = {"gru_net": (GRUNet, "grunet0_"), "lstm_net": (LSTMNet, "lstmnet0_"),
          "lstm_states_net": (LSTMStatesNet, "lstmstatesnet0_"), "rnn_relu_net": (RNNReluNet, "rnnrelunet0_")}


def _golden(name: str) -> tuple[dict, dict]:
    if not MODELS.is_dir():
        pytest.skip("golden files not available")
    manifest = json.loads((MODELS / "manifest.json").read_text())["models"][name]
    with np.load(MODELS / f"{name}-io.npz") as f:
        return manifest, {k: f[k] for k in f.files}


def _as_list(out) -> list:
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _check_forward_and_grads(net, manifest: dict, io: dict, param_of) -> None:
    """Inference outputs, then train-mode outputs and gradients with the golden cotangents."""
    names = [i["name"] for i in manifest["inputs"]]
    tol = manifest["tolerances"]
    xs = [nd.array(io[n]) for n in names]
    for j, o in enumerate(_as_list(net(*xs))):
        np.testing.assert_allclose(o.asnumpy(), io[f"out{j}"], **tol["forward"], err_msg=f"out{j}")
    for x in xs:
        x.attach_grad()
    with autograd.record(train_mode=True):
        outs = _as_list(net(*xs))
    autograd.backward(outs, [nd.array(io[f"cot{j}"]) for j in range(len(outs))])
    for j, o in enumerate(outs):
        np.testing.assert_allclose(o.asnumpy(), io[f"train:out{j}"], **tol["train"], err_msg=f"train:out{j}")
    grads = [k for k in io if k.startswith("grad:")]
    assert grads
    for k in grads:
        n = k[5:]
        got = xs[names.index(n)].grad if n in names else param_of(n).grad()
        np.testing.assert_allclose(got.asnumpy(), io[k], **tol["train"], err_msg=k)


@pytest.mark.parametrize("name", RNN_MODELS)
def test_golden_model_imported(name):
    manifest, io = _golden(name)
    net = SymbolBlock.imports(str(MODELS / f"{name}-symbol.json"), [i["name"] for i in manifest["inputs"]],
                              str(MODELS / f"{name}-0000.params"))
    params = net.collect_params()
    _check_forward_and_grads(net, manifest, io, lambda n: params[n])


def _native(name: str, io: dict, manifest: dict):
    cls, prefix = NATIVE[name]
    net = cls(prefix=prefix)
    net.initialize()
    net(*[nd.array(io[i["name"]]) for i in manifest["inputs"]])
    saved = nd.load(str(MODELS / f"{name}-0000.params"))
    params = net.collect_params()
    assert sorted("arg:" + k for k in params.keys()) == sorted(saved)
    for k, p in params.items():
        p.set_data(saved["arg:" + k])
    return net, params


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("name", RNN_MODELS)
def test_golden_model_rebuilt_natively(name, hybridize):
    manifest, io = _golden(name)
    net, params = _native(name, io, manifest)
    net.hybridize(hybridize)
    _check_forward_and_grads(net, manifest, io, lambda n: params[n])


@pytest.mark.parametrize("name", RNN_MODELS)
def test_export_writes_mxnets_graph(name, tmp_path):
    manifest, io = _golden(name)
    net, _ = _native(name, io, manifest)
    net.hybridize()
    net(*[nd.array(io[i["name"]]) for i in manifest["inputs"]])
    net.export(str(tmp_path / name))
    sym_file, params_file = export_paths(str(tmp_path / name))
    with open(sym_file) as f:
        assert json.load(f) == json.loads((MODELS / f"{name}-symbol.json").read_text())
    mine, theirs = nd.load(params_file), nd.load(str(MODELS / f"{name}-0000.params"))
    assert sorted(mine) == sorted(theirs)


# -- layers: eager vs hybridized, options ----------------------------------------------------------

LAYERS = [
    lambda: rnn.RNN(4, num_layers=2, activation="tanh"),
    lambda: rnn.RNN(3, layout="NTC", bidirectional=True),
    lambda: rnn.LSTM(4, num_layers=2, bidirectional=True, layout="NTC"),
    lambda: rnn.LSTM(5, projection_size=3, num_layers=2),
    lambda: rnn.LSTM(3, state_clip_min=-0.2, state_clip_max=0.2, state_clip_nan=True),
    lambda: rnn.GRU(3, num_layers=2, bidirectional=True),
]


@pytest.mark.parametrize("make", LAYERS, ids=range(len(LAYERS)))
def test_layer_eager_equals_hybridized(make):
    layer = make()
    layer.initialize()
    x = np.random.RandomState(0).uniform(-1, 1, (3, 2, 4)).astype(np.float32)
    check_hybrid_consistency(layer, [x], repeats=1)


def test_layer_with_states_and_shapes():
    layer = rnn.LSTM(5, num_layers=2, bidirectional=True, input_size=3)
    layer.initialize()
    x = nd.array(np.random.RandomState(1).uniform(size=(4, 2, 3)))
    states = layer.begin_state(2)
    assert [s.shape for s in states] == [(4, 2, 5), (4, 2, 5)]
    out, (h, c) = layer(x, states)
    assert out.shape == (4, 2, 10) and h.shape == c.shape == (4, 2, 5)
    np.testing.assert_allclose(layer(x).asnumpy(), out.asnumpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="Invalid recurrent state shape"):
        layer(x, [nd.zeros((4, 3, 5)), nd.zeros((4, 3, 5))])
    layer.hybridize()
    out2, _ = layer(x, states)
    np.testing.assert_allclose(out2.asnumpy(), out.asnumpy(), rtol=1e-6)
    assert layer(x).shape == (4, 2, 10)   # the other output format is traced anew


def test_deferred_input_size_and_repr():
    layer = rnn.GRU(4, layout="NTC", bidirectional=True)
    assert repr(layer) == "GRU(None -> 4, NTC, bidirectional)"
    layer.initialize()
    layer(nd.ones((2, 5, 7)))
    assert layer.l0_i2h_weight.shape == layer.r0_i2h_weight.shape == (12, 7)
    assert repr(layer) == "GRU(7 -> 4, NTC, bidirectional)"
    assert repr(rnn.RNN(3, num_layers=2, dropout=0.5)) == "RNN(None -> 3, TNC, num_layers=2, dropout=0.5)"


def test_parameter_names_and_saved_keys(tmp_path):
    layer = rnn.LSTM(4, num_layers=2, bidirectional=True, input_size=3, projection_size=2)
    names = [k[len(layer.prefix):] for k in layer.collect_params().keys()]
    assert names[:5] == ["l0_i2h_weight", "l0_h2h_weight", "l0_i2h_bias", "l0_h2h_bias", "l0_h2r_weight"]
    assert layer.l1_i2h_weight.shape == (16, 4) and layer.l0_h2r_weight.shape == (2, 4)
    layer.initialize()
    layer.save_parameters(str(tmp_path / "l.params"))
    keys = sorted(nd.load(str(tmp_path / "l.params")))
    assert keys[0] == "_unfused.0.l_cell.h2h_bias" and "_unfused.1.r_cell.h2r_weight" in keys
    other = rnn.LSTM(4, num_layers=2, bidirectional=True, input_size=3, projection_size=2)
    other.load_parameters(str(tmp_path / "l.params"))
    x = nd.ones((2, 1, 3))
    np.testing.assert_allclose(other(x).asnumpy(), layer(x).asnumpy())


def test_layer_dropout_is_random_only_in_training():
    layer = rnn.RNN(4, num_layers=3, dropout=0.5, input_size=2, activation="tanh")
    layer.initialize()
    x = nd.ones((3, 2, 2))
    base = layer(x).asnumpy()
    with autograd.train_mode():
        assert not np.allclose(layer(x).asnumpy(), base)
    np.testing.assert_array_equal(layer(x).asnumpy(), base)


def test_sequence_length_layer():
    layer = rnn.GRU(3, use_sequence_length=True, input_size=2)
    layer.initialize()
    x = nd.array(np.random.RandomState(2).uniform(size=(4, 2, 2)))
    out = layer(x, layer.begin_state(2), nd.array([4, 2]))[0].asnumpy()
    assert not out[2:, 1].any()
    short = layer(x[:2, 1:2], layer.begin_state(1), nd.array([2]))[0].asnumpy()
    # float32 products over a batch of 2 and of 1 may round differently in the last bit
    np.testing.assert_allclose(out[:2, 1:2], short, rtol=1e-6, atol=1e-8)


# -- cells ------------------------------------------------------------------------------------------

def _cells_as_layer(mode: str, bidirectional: bool):
    """A fused 2-layer layer and an unrolled stack of cells sharing its weights."""
    cells = {"rnn_tanh": rnn.RNNCell, "lstm": rnn.LSTMCell, "gru": rnn.GRUCell}[mode]
    layers = {"rnn_tanh": rnn.RNN, "lstm": rnn.LSTM, "gru": rnn.GRU}[mode]
    extra = {"activation": "tanh"} if mode == "rnn_tanh" else {}
    layer = layers(3, num_layers=2, bidirectional=bidirectional, input_size=2, layout="NTC", **extra)
    layer.initialize()
    dirs = 2 if bidirectional else 1
    stack = rnn.SequentialRNNCell()
    with stack.name_scope():
        for i in range(2):
            ni = 2 if i == 0 else 3 * dirs
            made = [cells(3, input_size=ni, prefix=f"{d}{i}_") for d in "lr"[:dirs]]
            stack.add(rnn.BidirectionalCell(*made) if bidirectional else made[0])
    stack.initialize()
    src = {k[len(layer.prefix):]: p for k, p in layer.collect_params().items()}
    for k, p in stack.collect_params().items():
        p.set_data(src[k[len(stack.prefix):]].data())
    return layer, stack


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("mode", ["rnn_tanh", "lstm", "gru"])
def test_unrolled_cells_equal_the_fused_layer(mode, bidirectional):
    layer, stack = _cells_as_layer(mode, bidirectional)
    x = nd.array(np.random.RandomState(3).uniform(-1, 1, (2, 4, 2)))
    want = layer(x).asnumpy()
    outputs, states = stack.unroll(4, x, layout="NTC", merge_outputs=True)
    np.testing.assert_allclose(outputs.asnumpy(), want, rtol=1e-5, atol=1e-6)
    outs_list, _ = stack.unroll(4, x, layout="NTC", merge_outputs=False)
    assert len(outs_list) == 4
    np.testing.assert_allclose(outs_list[1].asnumpy(), want[:, 1], rtol=1e-5, atol=1e-6)


def test_cell_step_names_and_hybridized_unroll():
    cell = rnn.LSTMCell(4, input_size=3)
    assert cell.prefix.startswith("lstm") and repr(cell) == "LSTMCell(3 -> 16)"
    cell.initialize()

    class Net(HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.cell = cell

        def hybrid_forward(self, F, x):  # noqa: N803
            return self.cell.unroll(3, x, layout="NTC", merge_outputs=True)[0]

    net = Net()
    x = np.random.RandomState(4).uniform(-1, 1, (2, 3, 3)).astype(np.float32)
    check_hybrid_consistency(net, [x], repeats=1)
    net.hybridize()
    net(nd.array(x))
    names = [n["name"] for n in json.loads(net._last_trace.symbol.tojson())["nodes"]]
    assert f"{cell.prefix}t0_i2h" in names and f"{cell.prefix}t2_out" in names


def test_modifier_cells():
    x = nd.array(np.random.RandomState(5).uniform(-1, 1, (2, 3, 4)))
    base = rnn.GRUCell(4, input_size=4)
    base.initialize()
    want, _ = base.unroll(3, x, merge_outputs=True)
    res = rnn.ResidualCell(base)
    out, _ = res.unroll(3, x, merge_outputs=True)
    np.testing.assert_allclose(out.asnumpy(), want.asnumpy() + x.asnumpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="modifier"):
        base.begin_state(batch_size=2)
    zone = rnn.ZoneoutCell(rnn.RNNCell(4, input_size=4), zoneout_outputs=0.5, zoneout_states=0.5)
    zone.initialize()
    out, states = zone.unroll(3, x, merge_outputs=True)     # predict mode: Dropout is identity
    assert out.shape == (2, 3, 4) and states[0].shape == (2, 4)
    drop = rnn.DropoutCell(0.5)
    np.testing.assert_array_equal(drop.unroll(3, x, merge_outputs=True)[0].asnumpy(), x.asnumpy())
    with autograd.train_mode():
        assert (drop.unroll(3, x, merge_outputs=True)[0].asnumpy() == 0).any()
    stack = rnn.HybridSequentialRNNCell()
    stack.add(rnn.LSTMCell(3, input_size=4))
    stack.add(rnn.DropoutCell(0.0))
    stack.add(rnn.RNNCell(2, input_size=3))
    stack.initialize()
    out, states = stack.unroll(3, x, merge_outputs=False)
    assert len(out) == 3 and [s.shape for s in states] == [(2, 3), (2, 3), (2, 2)]
    step_out, _ = stack(x[:, 0], stack.begin_state(batch_size=2))
    np.testing.assert_allclose(step_out.asnumpy(), out[0].asnumpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="unroll"):
        rnn.BidirectionalCell(rnn.RNNCell(2), rnn.RNNCell(2))(x[:, 0], [])


def test_valid_length_unroll_masks_outputs_and_keeps_last_states():
    cell = rnn.LSTMCell(3, input_size=2)
    cell.initialize()
    x = nd.array(np.random.RandomState(6).uniform(-1, 1, (2, 4, 2)))
    out, (h, c) = cell.unroll(4, x, merge_outputs=True, valid_length=nd.array([4, 2]))
    assert not out.asnumpy()[1, 2:].any()
    short, (h2, _) = cell.unroll(2, x[1:2, :2], merge_outputs=True)
    np.testing.assert_allclose(h.asnumpy()[1], h2.asnumpy()[0], rtol=1e-6)
    bi = rnn.BidirectionalCell(rnn.GRUCell(2, input_size=2), rnn.GRUCell(2, input_size=2))
    bi.initialize()
    out, states = bi.unroll(4, x, merge_outputs=True, valid_length=nd.array([4, 2]))
    assert out.shape == (2, 4, 4) and not out.asnumpy()[1, 2:].any() and len(states) == 2
