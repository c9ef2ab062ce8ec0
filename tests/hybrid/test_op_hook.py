"""HybridBlock.register_op_hook: names, operator names and values as MXNet 1.9.1 reports
them (names checked against MXNet 1.9.1; it passes bytes and raw handles where we pass
str and NDArrays)."""
import warnings

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph.base import py_str


def _dense_relu():
    model = mx.gluon.nn.HybridSequential("dense_")
    with model.name_scope():
        model.add(mx.gluon.nn.Dense(2))
        model.add(mx.gluon.nn.Activation("relu"))
    model.initialize()
    return model


def _hooked(model, x, monitor_all, record=False):
    seen = []
    model.register_op_hook(lambda name, op, arr: seen.append((py_str(name), py_str(op), arr.asnumpy())),
                           monitor_all)
    if record:
        with mx.autograd.record():
            out = model(x)
    else:
        out = model(x)
    return seen, out


@pytest.mark.parametrize("record", [False, True])
def test_outputs_only(record):
    model = _dense_relu()
    model.hybridize()
    x = mx.nd.array(np.random.RandomState(0).randn(2, 3, 4))
    seen, out = _hooked(model, x, False, record)
    assert [(n, o) for n, o, _ in seen] == [("dense_dense0_fwd_output", "FullyConnected"),
                                            ("dense_relu0_fwd_output", "Activation")]
    fc = model[0](x).asnumpy()   # the child, hybridized and hooked too (a direct child)
    np.testing.assert_allclose(seen[0][2], fc, rtol=1e-6)
    np.testing.assert_allclose(seen[1][2], np.maximum(fc, 0), rtol=1e-6)
    np.testing.assert_allclose(out.asnumpy(), np.maximum(fc, 0), rtol=1e-6)


def test_monitor_all_names_inputs_by_slot_or_position():
    model = _dense_relu()
    model.hybridize()
    x = mx.nd.ones((2, 3, 4))
    seen, _ = _hooked(model, x, True)
    assert [n for n, _, _ in seen] == ["dense_dense0_fwd_data", "dense_dense0_fwd_weight", "dense_dense0_fwd_bias",
                                       "dense_dense0_fwd_output", "dense_relu0_fwd_input0", "dense_relu0_fwd_output"]
    np.testing.assert_array_equal(seen[0][2], x.asnumpy())
    np.testing.assert_array_equal(seen[1][2], model[0].weight.data().asnumpy())


def test_hooked_call_still_differentiates():
    model = _dense_relu()
    model.hybridize()
    x = mx.nd.array(np.random.RandomState(1).randn(2, 3, 4))
    with mx.autograd.record():
        ref = model(x)
    ref.backward()
    want = model[0].weight.grad().asnumpy().copy()
    _, out = _hooked(model, x, False, record=True)
    out.backward()
    np.testing.assert_allclose(model[0].weight.grad().asnumpy(), want, rtol=1e-6)


def test_static_alloc_warns_and_unhybridized_is_silent():
    model = _dense_relu()
    seen, _ = _hooked(model, mx.nd.ones((2, 3, 4)), False)
    assert seen == []                       # MXNet: only hybridized calls are hooked
    model.hybridize(static_alloc=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        seen, _ = _hooked(model, mx.nd.ones((2, 3, 4)), False)
    assert any("register_op_hook is experimental" in str(w.message) for w in caught)
    assert len(seen) == 2


def test_executor_monitor_names_unnamed_inputs_by_position():
    x = mx.sym.var("x")
    y = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=2, name="fc"), act_type="relu", name="r")
    ex = y.simple_bind(mx.cpu(), x=(2, 3))
    names = []
    ex.set_monitor_callback(lambda n, a: names.append(n), True)
    ex.forward()
    # MXNet 1.9.1's list, variables first under their own names
    assert names == ["x", "fc_data", "fc_weight", "fc_weight", "fc_bias", "fc_bias", "fc_output",
                     "r_input0", "r_output"]
