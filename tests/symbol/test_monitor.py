"""Executor monitor callbacks as MXNet 1.9.1 reports them (checked in .mxvenv)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import nd
from hybridgraph import symbol as sym
from hybridgraph.nd.errors import MXNetError
from tests.data.gen_monitor_names_ref import graph_json


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


def test_monitor_all_names_inputs_as_mxnet_registers_them():
    """Names checked in MXNet 1.9.1: ops without FListInputNames give input0, variadic ones arg0,
    hidden outputs are reported, a failing kernel still reports its inputs first."""
    data = sym.var("data", shape=(2, 3, 4, 4))
    cases = [
        (sym.Activation(data, act_type="relu", name="act"), ["data", "act_input0", "act_output"]),
        (sym.SoftmaxActivation(data, name="sa"), ["data", "sa_input0", "sa_output"]),
        (sym.concat(data, data, dim=0, name="cc"), ["data", "cc_arg0", "data", "cc_arg1", "cc_output"]),
        (sym.UpSampling(data, scale=2, sample_type="nearest", name="up"), ["data", "up_arg0", "up_output"]),
        (sym.LRN(data, nsize=1, name="lrn"), ["data", "lrn_data", "lrn_output", "lrn_tmp_norm"]),
        (sym.softmax(data, name="sm"), ["data", "sm_data", "sm_output"]),
        (sym.relu(data, name="r"), ["data", "r_input0", "r_output"]),
        (sym.elemwise_add(data, data, name="add"), ["data", "add_lhs", "data", "add_rhs", "add_output"]),
    ]
    for s, want in cases:
        assert _names(s.simple_bind(ctx=mx.cpu(), grad_req="null"), True) == want
    # a float `length` binds (as in MXNet) and fails in the kernel, after the inputs are reported
    length = sym.var("length", shape=(2, 4, 4))
    exe = sym.softmax(data, length, axis=1, use_length=True, name="sm").simple_bind(ctx=mx.cpu(), grad_req="null")
    names = []
    exe.set_monitor_callback(lambda name, arr: names.append(name), monitor_all=True)
    with pytest.raises(MXNetError, match="integer dtype"):
        exe.forward()
    assert names == ["data", "sm_data", "length", "sm_length"]


def test_reshaped_executor_keeps_the_monitor():
    data = sym.var("data")
    fc = sym.FullyConnected(data, num_hidden=2, name="fc")
    exe = fc.simple_bind(ctx=mx.cpu(), data=(1, 3), grad_req="null")
    names = []
    exe.set_monitor_callback(lambda name, arr: names.append(name))
    exe.reshape(data=(4, 3), allow_up_sizing=True).forward(data=nd.ones((4, 3)))
    assert names == ["fc_output"]


# -- every operator against MXNet 1.9.1 (tests/data/gen_monitor_names_ref.py) --------------------

_REF = json.loads((Path(__file__).parent.parent / "data" / "monitor_names_ref.json").read_text())
#: ops whose OUTPUT names differ from MXNet's (their FListOutputNames, or MXNet's output0.. where we
#: name them): list_outputs shares those names, so they are a separate fix from the monitor's inputs
_OUTPUT_NAME_GAPS = {"_npi_concatenate", "_npi_eig", "_npi_eigh", "_npi_exponential", "_npi_logistic",
                     "_npi_matmul", "_npi_normal", "_npi_normal_n", "_npi_pareto", "_npi_rayleigh",
                     "_npi_slogdet", "_npi_svd", "_npi_weibull", "_npi_gumbel", "_split_v2"}


def _ref_params():
    for op in sorted(_REF):
        marks = [pytest.mark.xfail(strict=True, reason="output names differ from MXNet's")] \
            if op in _OUTPUT_NAME_GAPS else []
        yield pytest.param(op, marks=marks, id=op)


@pytest.mark.parametrize("op", list(_ref_params()))
def test_monitor_names_match_mxnet(op):
    """Input names from MXNet's FListInputNames (input0.. for ops without one, arg0.. for
    variadic ones), hidden outputs included. Inputs are zeros: where our kernel rejects them
    (a singular matrix, a zero rate) only the names reported before the failure are compared."""
    case = _REF[op]
    s = sym.load_json(graph_json(op, case["attrs"], len(case["shapes"])))
    exe = s.simple_bind(ctx=mx.cpu(), grad_req="null",
                        type_dict={f"in{i}": np.dtype(d) for i, d in enumerate(case["dtypes"])},
                        **{f"in{i}": tuple(sh) for i, sh in enumerate(case["shapes"])})
    for key, monitor_all in (("all", True), ("out", False)):
        names = []
        exe.set_monitor_callback(lambda name, arr: names.append(name), monitor_all=monitor_all)
        try:
            exe.forward(is_train=False)
        except MXNetError:
            n_in = len(case["all"]) - len(case["out"])
            assert names == case[key][:len(names)] and (key == "out" or len(names) >= n_in), (key, names)
            continue
        assert names == case[key], key
