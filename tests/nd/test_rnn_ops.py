"""The RNN operator family (nd/ops/rnn.py): MXNet references, the numpy reference,
finite-difference gradients, dropout, sequence lengths, shape inference and errors."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from hybridgraph import nd
from hybridgraph import symbol as sym
from hybridgraph.nd import autograd
from hybridgraph.nd.errors import AttrError, ShapeError
from tests.nd.specs.rnn import param_size, rnn_case, rnn_ref

DATA = Path(__file__).resolve().parent.parent / "data"
sys.path.insert(0, str(DATA))
from gen_rnn_ref import CASES as MX_CASES  # noqa: E402

_IN_NAMES = ("data", "parameters", "state", "state_cell")


def _call(inputs, attrs, record=False, train=True, dtype=None):
    xs = [nd.array(x, dtype=dtype or x.dtype) for x in inputs]
    if not record:
        out = nd.RNN(*xs, **attrs)
        return xs, out if isinstance(out, list) else [out]
    for x in xs:
        if np.dtype(x.dtype).kind == "f":
            x.attach_grad()
    with autograd.record(train_mode=train):
        out = nd.RNN(*xs, **attrs)
    return xs, out if isinstance(out, list) else [out]


# -- MXNet 1.9.1 (tests/data/gen_rnn_ref.py) ------------------------------------------------

@pytest.mark.parametrize("cid", sorted(MX_CASES))
def test_matches_mxnet(cid):
    ref = np.load(DATA / "rnn_ref.npz")
    attrs = dict(MX_CASES[cid])
    dtype = attrs.pop("dtype", "float32")
    names = [n for n in _IN_NAMES if f"{cid}/in:{n}" in ref]
    xs, outs = _call([ref[f"{cid}/in:{n}"] for n in names], dict(attrs, state_outputs=True),
                     record=True, dtype=dtype)
    for j, o in enumerate(outs):
        np.testing.assert_allclose(o.asnumpy(), ref[f"{cid}/out{j}"], rtol=1e-4, atol=1e-5)
    autograd.backward(outs, [nd.array(ref[f"{cid}/head{j}"], dtype=dtype) for j in range(len(outs))])
    for n, x in zip(names, xs):
        if f"{cid}/grad:{n}" in ref:  # MXNet has no CPU backward for projected LSTMs
            np.testing.assert_allclose(x.grad.asnumpy(), ref[f"{cid}/grad:{n}"], rtol=1e-4, atol=1e-5,
                                       err_msg=n)


# -- the numpy reference, clipping included ---------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(st.data())
def test_forward_matches_numpy_reference(data):
    inputs, attrs = rnn_case(data.draw)
    _, outs = _call(inputs, attrs)
    want = rnn_ref(*inputs, **attrs)
    assert len(outs) == len(want)
    for o, w in zip(outs, want):
        np.testing.assert_allclose(o.asnumpy(), w, rtol=1e-7, atol=1e-9)


def test_state_clipping_bounds_the_cell_state_and_its_gradient():
    rs = np.random.RandomState(0)
    attrs = dict(mode="lstm", state_size=3, num_layers=1, state_outputs=True,
                 lstm_state_clip_min=-0.1, lstm_state_clip_max=0.1)
    inputs = [rs.uniform(-2, 2, (5, 2, 3)), rs.uniform(-2, 2, (param_size("lstm", 3, 1, 1, 3),)),
              np.zeros((1, 2, 3)), rs.uniform(-1, 1, (1, 2, 3))]
    xs, (out, hy, cy) = _call(inputs, attrs, record=True)
    assert np.abs(cy.asnumpy()).max() <= 0.1 + 1e-12
    np.testing.assert_allclose(cy.asnumpy(), rnn_ref(*inputs, **attrs)[2])
    autograd.backward([cy], [nd.ones(cy.shape, dtype=cy.dtype)])
    clipped = np.abs(cy.asnumpy()) >= 0.1 - 1e-12   # where the last step clipped, nothing flows back
    assert np.all(xs[3].grad.asnumpy()[clipped] == 0)


def test_clip_nan_replaces_nan_states_by_the_lower_bound():
    attrs = dict(mode="lstm", state_size=2, num_layers=1, state_outputs=True,
                 lstm_state_clip_min=-0.5, lstm_state_clip_max=0.5)
    inputs = [np.zeros((1, 1, 1)), np.zeros(param_size("lstm", 2, 1, 1, 1)), np.zeros((1, 1, 2)),
              np.array([[[np.nan, 0.2]]])]
    assert np.isnan(_call(inputs, attrs)[1][2].asnumpy()).any()
    cy = _call(inputs, dict(attrs, lstm_state_clip_nan=True))[1][2].asnumpy()
    np.testing.assert_allclose(cy[0, 0], [-0.5, 0.1])


# -- gradients --------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(st.data())
def test_gradient_matches_finite_differences(data):
    inputs, attrs = rnn_case(data.draw, clip=False)
    attrs["state_outputs"] = True
    xs, outs = _call(inputs, attrs, record=True)
    rng = np.random.default_rng(1)
    heads = [rng.standard_normal(o.shape) for o in outs]
    autograd.backward(outs, [nd.array(h, dtype="float64") for h in heads])
    wrt = [i for i, x in enumerate(inputs) if x.dtype.kind == "f"]
    dirs = {i: rng.standard_normal(inputs[i].shape) for i in wrt}
    analytic = sum(float((xs[i].grad.asnumpy() * d).sum()) for i, d in dirs.items())

    def loss(sign):
        moved = [x + sign * 1e-6 * dirs[i] if i in dirs else x for i, x in enumerate(inputs)]
        return sum(float((o * h).sum()) for o, h in zip(rnn_ref(*moved, **attrs), heads))
    numeric = (loss(1) - loss(-1)) / 2e-6
    assert abs(analytic - numeric) <= 1e-5 * max(1.0, abs(numeric))


@pytest.mark.parametrize("bidirectional", [False, True])
def test_projected_lstm_gradient_without_state_outputs(bidirectional):
    """Only `out` is a head: the cell state's gradient starts as zeros of state_size columns
    (the recurrent state has projection_size)."""
    t_len, n, i, h, p = 3, 2, 2, 3, 2
    d = 2 if bidirectional else 1
    attrs = {"mode": "lstm", "state_size": h, "projection_size": p, "num_layers": 1,
             "bidirectional": bidirectional, "state_outputs": False}
    rng = np.random.default_rng(0)
    inputs = [rng.uniform(-1, 1, (t_len, n, i)), rng.uniform(-0.8, 0.8, (param_size("lstm", h, 1, d, i, p),)),
              rng.uniform(-0.5, 0.5, (d, n, p)), rng.uniform(-0.5, 0.5, (d, n, h))]
    xs, outs = _call(inputs, attrs, record=True)
    head = rng.standard_normal(outs[0].shape)
    outs[0].backward(nd.array(head, dtype="float64"))
    for k in range(len(inputs)):
        direction = rng.standard_normal(inputs[k].shape)

        def loss(sign, k=k, direction=direction):
            moved = [x + sign * 1e-6 * direction if j == k else x for j, x in enumerate(inputs)]
            return float((rnn_ref(*moved, **attrs)[0] * head).sum())
        numeric = (loss(1) - loss(-1)) / 2e-6
        analytic = float((xs[k].grad.asnumpy() * direction).sum())
        assert abs(analytic - numeric) <= 1e-5 * max(1.0, abs(numeric)), (k, analytic, numeric)


def test_symbolic_gradient_matches_eager():
    rs = np.random.RandomState(3)
    attrs = dict(mode="gru", state_size=3, num_layers=2, bidirectional=True, state_outputs=True)
    inputs = {"data": rs.uniform(-1, 1, (4, 2, 3)), "parameters": rs.uniform(-.5, .5, (param_size("gru", 3, 2, 2, 3),)),
              "state": rs.uniform(-1, 1, (4, 2, 3))}
    xs, outs = _call(list(inputs.values()), attrs, record=True)
    heads = [rs.standard_normal(o.shape) for o in outs]
    autograd.backward(outs, [nd.array(h, dtype="float64") for h in heads])
    net = sym.RNN(*[sym.var(n) for n in inputs], name="rnn", **attrs)
    exe = net.simple_bind(None, type_dict={n: "float64" for n in inputs}, **{n: v.shape for n, v in inputs.items()})
    exe.forward(is_train=True, **{n: nd.array(v, dtype="float64") for n, v in inputs.items()})
    exe.backward([nd.array(h, dtype="float64") for h in heads])
    for n, x in zip(inputs, xs):
        np.testing.assert_allclose(exe.grad_dict[n].asnumpy(), x.grad.asnumpy(), rtol=1e-10, atol=1e-12)


# -- dropout between layers -----------------------------------------------------------------------

def _dropout_inputs(layers=3):
    rs = np.random.RandomState(5)
    return [rs.uniform(-1, 1, (4, 2, 3)), rs.uniform(-.6, .6, (param_size("rnn_tanh", 3, layers, 1, 3),)),
            rs.uniform(-1, 1, (layers, 2, 3))]


def test_dropout_only_in_training():
    inputs = _dropout_inputs()
    attrs = dict(mode="rnn_tanh", state_size=3, num_layers=3, p=0.5)
    base = _call(inputs, dict(attrs, p=0.0))[1][0].asnumpy()
    np.testing.assert_array_equal(_call(inputs, attrs)[1][0].asnumpy(), base)      # predict mode
    _, outs = _call(inputs, attrs, record=True, train=True)
    assert not np.allclose(outs[0].asnumpy(), base)
    dropped = _call(inputs, dict(attrs, p=1.0), record=True, train=True)[1][0].asnumpy()
    top = np.r_[inputs[1][36:54], inputs[1][66:72]]   # layer 2's weights, then its biases
    no_input = rnn_ref(np.zeros((4, 2, 3)), top, inputs[2][2:], mode="rnn_tanh", state_size=3,
                       num_layers=1)[0]
    np.testing.assert_allclose(dropped, no_input, atol=1e-12)   # p=1: the top layer sees zeros


def test_dropout_backward_reuses_the_forward_masks():
    inputs = _dropout_inputs()
    attrs = dict(mode="rnn_tanh", state_size=3, num_layers=3, p=0.4)
    nd.random.seed(11)
    xs, outs = _call(inputs, attrs, record=True)
    direction = np.random.RandomState(0).standard_normal(inputs[0].shape)
    autograd.backward(outs, [nd.ones(outs[0].shape, dtype=outs[0].dtype)])
    analytic = float((xs[0].grad.asnumpy() * direction).sum())

    def loss(sign):
        nd.random.seed(11)   # the same masks as the recorded forward
        with autograd.train_mode():
            moved = [inputs[0] + sign * 1e-6 * direction] + inputs[1:]
            return float(nd.RNN(*[nd.array(x, dtype="float64") for x in moved], **attrs).asnumpy().sum())
    assert abs(analytic - (loss(1) - loss(-1)) / 2e-6) < 1e-6


# -- variable sequence lengths ------------------------------------------------------------------

def test_sequence_length_equals_running_each_sequence_alone():
    rs = np.random.RandomState(2)
    attrs = dict(mode="lstm", state_size=3, num_layers=2, bidirectional=True, state_outputs=True)
    data = rs.uniform(-1, 1, (5, 3, 2))
    params = rs.uniform(-.5, .5, (param_size("lstm", 3, 2, 2, 2),))
    h0, c0 = rs.uniform(-1, 1, (4, 3, 3)), rs.uniform(-1, 1, (4, 3, 3))
    lengths = np.array([5, 2, 3], np.int32)
    _, (out, hy, cy) = _call([data, params, h0, c0, lengths], dict(attrs, use_sequence_length=True))
    for b, n in enumerate(lengths):
        _, (o, h, c) = _call([data[:n, b:b + 1], params, h0[:, b:b + 1], c0[:, b:b + 1]], attrs)
        np.testing.assert_allclose(out.asnumpy()[:n, b], o.asnumpy()[:, 0], atol=1e-12)
        assert not out.asnumpy()[n:, b].any()
        np.testing.assert_allclose(hy.asnumpy()[:, b], h.asnumpy()[:, 0], atol=1e-12)
        np.testing.assert_allclose(cy.asnumpy()[:, b], c.asnumpy()[:, 0], atol=1e-12)


# -- shapes, types, structure ------------------------------------------------------------------------

def test_symbol_structure_matches_mxnet():
    s = sym.RNN(mode="lstm", state_size=4, num_layers=2, state_outputs=True, name="r")
    assert s.list_arguments() == ["r_data", "r_parameters", "r_state", "r_state_cell"]
    assert s.list_outputs() == ["r_output", "r_state_output", "r_statecell_output"]
    s = sym.RNN(mode="gru", state_size=4, num_layers=1, use_sequence_length=True, name="r")
    assert s.list_arguments() == ["r_data", "r_parameters", "r_state", "r_sequence_length"]
    assert s.list_outputs() == ["r_output"]


def test_infer_shape_from_data_only():
    s = sym.RNN(mode="gru", state_size=4, num_layers=2, bidirectional=True, state_outputs=True, name="r")
    args, outs, _ = s.infer_shape(r_data=(3, 2, 5))
    assert args == [(3, 2, 5), (600,), (4, 2, 4)]
    assert outs == [(3, 2, 8), (4, 2, 4)]
    s = sym.RNN(mode="lstm", state_size=5, num_layers=1, projection_size=2, state_outputs=True, name="r")
    args, outs, _ = s.infer_shape(r_data=(3, 2, 4))
    assert args == [(3, 2, 4), (param_size("lstm", 5, 1, 1, 4, 2),), (1, 2, 2), (1, 2, 5)]
    assert outs == [(3, 2, 2), (1, 2, 2), (1, 2, 5)]


def test_zero_begin_state_takes_the_batch_size_from_the_data():
    z = sym.zeros(shape=(1, 0, 3), name="h0")
    s = sym.RNN(sym.var("x"), sym.var("w"), z, mode="rnn_tanh", state_size=3, num_layers=1)
    x = np.random.RandomState(0).uniform(-1, 1, (2, 4, 2)).astype(np.float32)
    w = np.full(param_size("rnn_tanh", 3, 1, 1, 2), 0.1, np.float32)
    got = s.eval(x=nd.array(x), w=nd.array(w))[0].asnumpy()
    want = rnn_ref(x, w, np.zeros((1, 4, 3), np.float32), mode="rnn_tanh", state_size=3, num_layers=1)[0]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_float16_and_float64_keep_their_dtype():
    inputs, attrs = _dropout_inputs(1), dict(mode="rnn_tanh", state_size=3, num_layers=1, state_outputs=True)
    for dt in ("float16", "float64"):
        outs = _call(inputs, attrs, dtype=dt)[1]
        assert all(o.dtype == np.dtype(dt) for o in outs)


@pytest.mark.parametrize("attrs, match", [
    (dict(mode="gru", projection_size=2), "projection_size"),
    (dict(mode="lstm", projection_size=3), "projection_size"),
    (dict(mode="lstm", lstm_state_clip_min=-1.0), "lstm_state_clip"),
    (dict(mode="lstm", lstm_state_clip_min=1.0, lstm_state_clip_max=0.0), "lstm_state_clip"),
    (dict(mode="rnn_tanh", p=1.5), "'p'"),
    (dict(mode="tanh"), "mode"),
])
def test_bad_attributes_are_named(attrs, match):
    inputs = _dropout_inputs(1)
    if attrs["mode"] == "lstm":
        inputs += [np.zeros((1, 2, 3))]
    with pytest.raises(AttrError, match=match):
        nd.RNN(*map(nd.array, inputs), **dict(dict(state_size=3, num_layers=1), **attrs))


def test_bad_shapes_are_named():
    data, params, state = _dropout_inputs(1)
    with pytest.raises(ShapeError, match="'parameters'"):
        nd.RNN(nd.array(data), nd.array(params[:-1]), nd.array(state), mode="rnn_tanh", state_size=3,
               num_layers=1)
    with pytest.raises(ShapeError, match="'state'"):
        nd.RNN(nd.array(data), nd.array(params), nd.array(state[:, :1]), mode="rnn_tanh", state_size=3,
               num_layers=1)
    with pytest.raises(ShapeError, match="rank-3"):
        nd.RNN(nd.array(data[0]), nd.array(params), nd.array(state), mode="rnn_tanh", state_size=3,
               num_layers=1)


# -- _rnn_param_concat ------------------------------------------------------------------------------

def test_rnn_param_concat_forward_gradient_and_shapes():
    a, b = nd.array(np.arange(6.0)), nd.array(np.arange(3.0))
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        out = nd._internal._rnn_param_concat(a, b, dim=0)
    np.testing.assert_array_equal(out.asnumpy(), np.r_[np.arange(6.0), np.arange(3.0)])
    out.backward(nd.array(np.arange(9.0)))
    np.testing.assert_array_equal(b.grad.asnumpy(), [6, 7, 8])
    s = sym._internal._rnn_param_concat(sym.var("a"), sym.var("b"), dim=0, name="c")
    assert s.list_arguments() == ["a", "b"]
    assert s.infer_shape_partial(a=(6,))[1] == [(0,)]   # an unknown input leaves the size unknown
    assert s.infer_shape(a=(6,), b=(3,))[1] == [(9,)]
