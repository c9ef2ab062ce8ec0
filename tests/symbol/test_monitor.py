"""Executor monitor callbacks as MXNet 1.9.1 reports them (checked in .mxvenv)."""
from __future__ import annotations

import hybridgraph as mx
from hybridgraph import nd
from hybridgraph import symbol as sym


def _names(exe, monitor_all):
    names = []
    exe.set_monitor_callback(lambda name, arr: names.append(name), monitor_all=monitor_all)
    exe.forward()
    return names


def test_monitor_all_reports_a_variable_input_under_its_own_name_first():
    data = sym.var("data", shape=(2, 3, 4, 4))
    conv = sym.Convolution(data, kernel=(2, 2), num_filter=1, name="conv")
    exe = conv.simple_bind(ctx=mx.cpu(), grad_req="null")
    assert _names(exe, True) == ["data", "conv_data", "conv_weight", "conv_weight", "conv_bias", "conv_bias",
                                 "conv_output"]
    assert _names(exe, False) == ["conv_output"]


def test_reshaped_executor_keeps_the_monitor():
    data = sym.var("data")
    fc = sym.FullyConnected(data, num_hidden=2, name="fc")
    exe = fc.simple_bind(ctx=mx.cpu(), data=(1, 3), grad_req="null")
    names = []
    exe.set_monitor_callback(lambda name, arr: names.append(name))
    exe.reshape(data=(4, 3), allow_up_sizing=True).forward(data=nd.ones((4, 3)))
    assert names == ["fc_output"]
