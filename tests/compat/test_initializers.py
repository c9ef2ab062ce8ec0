"""mx.init beyond the plain random fills: user subclasses passed as objects, Mixed, Load,
Orthogonal, Bilinear, LSTMBias, FusedRNN, MSRAPrelu and Constant's dump (values from MXNet 1.9.1)."""
import json

import numpy as np
import pytest

import hybridgraph as mx


class _Half(mx.init.Initializer):
    """Never registered: works only if the object itself reaches the parameter."""

    def _init_weight(self, _, arr):
        arr[:] = 0.5


def test_unregistered_subclass_as_global_and_parameter_init():
    net = mx.gluon.nn.Dense(3, in_units=2)
    net.initialize(_Half())
    assert (net.weight.data().asnumpy() == 0.5).all()
    assert (net.bias.data().asnumpy() == 0).all()
    net = mx.gluon.nn.Dense(3, in_units=2, weight_initializer=_Half())
    net.initialize()
    assert (net.weight.data().asnumpy() == 0.5).all()


def test_bilinear_kernel_matches_mxnet():
    w = mx.nd.empty((1, 1, 4, 4))
    mx.init.Bilinear()._init_weight(None, w)
    k = np.array([0.25, 0.75, 0.75, 0.25])
    np.testing.assert_array_equal(w.asnumpy()[0, 0], np.outer(k, k))


def test_legacy_name_call_warns_and_picks_bilinear_for_upsampling():
    w = mx.nd.zeros((1, 1, 4, 4))
    with pytest.warns(DeprecationWarning):
        mx.init.Zero()("upsampling0_weight", w)
    assert w.asnumpy()[0, 0, 1, 1] == pytest.approx(0.5625)


def test_lstm_bias_sets_forget_quarter():
    w = mx.nd.zeros((8,))
    mx.init.LSTMBias(2.0)._init_weight("b", w)
    assert w.asnumpy().tolist() == [0, 0, 2, 2, 0, 0, 0, 0]


def test_orthogonal_rows_are_orthogonal_with_scale():
    w = mx.nd.zeros((3, 5))
    mx.init.Orthogonal(scale=2.0)._init_weight("w", w)
    a = w.asnumpy()
    np.testing.assert_allclose(a @ a.T, 4 * np.eye(3), atol=1e-5)
    with pytest.raises(mx.MXNetError, match="rand_type"):
        mx.init.Orthogonal(rand_type="bad")._init_weight("w", w)


def test_mixed_first_match_and_no_match():
    m = mx.init.Mixed(["bias", ".*"], [mx.init.Zero(), mx.init.One()])
    b, w = mx.nd.ones((2,)), mx.nd.zeros((2,))
    m(mx.init.InitDesc("bias"), b)
    m(mx.init.InitDesc("fc_weight"), w)
    assert b.asnumpy().tolist() == [0, 0] and w.asnumpy().tolist() == [1, 1]
    with pytest.raises(ValueError, match="did not match"):
        mx.init.Mixed(["x"], [mx.init.One()])(mx.init.InitDesc("y_weight"), w)


def test_load_strips_prefix_and_falls_back(tmp_path):
    fname = str(tmp_path / "p.params")
    mx.nd.save(fname, {"arg:fc_weight": mx.nd.ones((2,)) * 3})
    init = mx.init.Load(fname, default_init=mx.init.One())
    w, b = mx.nd.zeros((2,)), mx.nd.zeros((2,))
    init(mx.init.InitDesc("fc_weight"), w)
    init(mx.init.InitDesc("fc_bias"), b)
    assert w.asnumpy().tolist() == [3, 3] and b.asnumpy().tolist() == [0, 0]
    with pytest.raises(AssertionError, match="Shape mismatch"):
        init(mx.init.InitDesc("fc_weight"), mx.nd.zeros((3,)))
    with pytest.raises(AssertionError, match="no default"):
        mx.init.Load({})(mx.init.InitDesc("x"), w)


def test_fused_rnn_lstm_layout_and_forget_bias():
    init = mx.init.FusedRNN(mx.init.One(), 2, 1, "lstm", forget_bias=5.0)
    assert json.loads(init.dumps()) == ["fusedrnn", {"init": '["one", {}]', "num_hidden": 2, "num_layers": 1,
                                                     "mode": "lstm", "bidirectional": False, "forget_bias": 5.0}]
    w = mx.nd.zeros(((3 + 2 + 2) * 2 * 4,))
    init._init_weight(mx.init.InitDesc("lstm_parameters"), w)
    a = w.asnumpy()
    assert (a[:40] == 1).all()  # i2h (4 gates x 2x3) and h2h (4 x 2x2) weights
    # biases: i2h then h2h, gates i f c o; only f is set
    assert a[40:].tolist() == [0, 0, 5, 5, 0, 0, 0, 0] * 2


def test_fused_rnn_uses_global_init_when_none():
    init = mx.init.FusedRNN(None, 2, 2, "gru", bidirectional=True)
    size = (3 + 2 + 2) * 2 * 3 * 2 + 3 * 2 * (2 + 2 * 2 + 2) * 2
    w = mx.nd.zeros((size,))
    init._init_weight(mx.init.InitDesc("p", global_init=mx.init.One()), w)
    assert w.asnumpy().sum() == 132.0  # every weight 1, every bias 0 (MXNet gives the same)


def test_constant_dumps_stores_list_back():
    c = mx.init.Constant(mx.nd.ones((2,)))
    assert c.dumps() == json.dumps(["constant", c._kwargs]) == '["constant", {"value": [1.0, 1.0]}]'
    assert mx.init.Constant(1).dumps() == '["constant", {"value": 1}]'


def test_initializer_equality_by_type_and_kwargs():
    assert mx.init.Uniform() == mx.init.Uniform()
    assert mx.init.Uniform(0.1) != mx.init.Uniform()
    assert mx.init.MSRAPrelu().dumps() == '["msraprelu", {"factor_type": "avg", "slope": 0.25}]'


def test_fused_rnn_dump_round_trips_through_create():
    # the dump carries an 'init' key of its own: create() must not confuse it with its argument
    dump = mx.init.FusedRNN(mx.init.One(), 2, 1, "lstm").dumps()
    again = mx.init.create(dump)
    assert isinstance(again, mx.init.FusedRNN) and again.dumps() == dump
