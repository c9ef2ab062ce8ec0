"""Every MXNet 1.9.1 operator name is either registered or raises hybridgraph's UnsupportedAttribute.

tests/data/mxnet_1.9.1_op_names.txt is the list real MXNet 1.9.1 registers (`MXListAllOpNames`);
a name that drops out of the registry without a reason, or a reason that loses its name, fails here.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import hybridgraph as mx
from hybridgraph.nd.errors import OperatorNotFound
from hybridgraph.nd.registry import all_names
from hybridgraph.nd.unsupported_ops import UNSUPPORTED_OPS, unsupported_reason
from hybridgraph.unsupported import UnsupportedAttribute

MXNET_OPS = [n for n in (Path(__file__).parents[1] / "data" / "mxnet_1.9.1_op_names.txt").read_text().split()]


def test_the_list_is_mxnet_1_9_1s():
    assert len(MXNET_OPS) == 1167 and len(set(MXNET_OPS)) == 1167
    assert {"Convolution", "_contrib_quantize_v2", "_backward_Convolution"} <= set(MXNET_OPS)


def test_every_mxnet_operator_is_registered_or_has_a_reason():
    registered = all_names()
    lacking = [n for n in MXNET_OPS if n not in registered and n not in UNSUPPORTED_OPS]
    assert not lacking, f"MXNet 1.9.1 operators neither registered nor given a reason: {lacking}"


def test_reasons_name_only_mxnet_operators():
    assert set(UNSUPPORTED_OPS) <= set(MXNET_OPS)


def test_no_registered_operator_keeps_a_reason():
    stale = sorted(set(UNSUPPORTED_OPS) & set(all_names()))
    assert not stale, f"registered operators still listed as unsupported: {stale}"


@pytest.mark.parametrize("path", ["nd.contrib.quantize_v2", "sym.contrib.quantize_v2", "nd.contrib.dgl_subgraph",
                                  "nd.Pooling_v1", "sym.Pooling_v1", "nd._internal._sg_mkldnn_conv",
                                  "sym._internal._backward_Pooling_v1", "nd.contrib.fft"])
def test_unsupported_operator_attribute_says_why(path):
    ns, *rest = path.split(".")
    obj = mx.nd if ns == "nd" else mx.sym
    for part in rest[:-1]:
        obj = getattr(obj, part)
    with pytest.raises(UnsupportedAttribute) as info:
        getattr(obj, rest[-1])
    assert isinstance(info.value, NotImplementedError) and isinstance(info.value, AttributeError)
    assert "Instead:" in str(info.value)
    assert not hasattr(obj, rest[-1])        # hasattr keeps working


def test_quantization_message_names_the_alternative():
    with pytest.raises(UnsupportedAttribute, match="_contrib_quantize_v2.*float32"):
        mx.nd.contrib.quantize_v2  # noqa: B018


@pytest.mark.parametrize("obj", [mx.nd, mx.sym, mx.nd.contrib, mx.sym.contrib, mx.nd.linalg])
def test_a_name_that_is_no_mxnet_operator_stays_a_plain_attribute_error(obj):
    with pytest.raises(AttributeError) as info:
        obj.no_such_operator_anywhere  # noqa: B018
    assert not isinstance(info.value, UnsupportedAttribute)


def test_loading_a_json_with_an_unsupported_operator():
    js = json.loads(mx.sym.relu(mx.sym.var("x"), name="q").tojson())
    js["nodes"][1]["op"] = "_contrib_quantize_v2"
    with pytest.raises(UnsupportedAttribute, match="'q'.*INT8 quantization") as info:
        mx.sym.load_json(json.dumps(js))
    assert isinstance(info.value, OperatorNotFound)   # still the registry's not-found error
    js["nodes"][1]["op"] = "no_such_op"
    with pytest.raises(OperatorNotFound) as info:
        mx.sym.load_json(json.dumps(js))
    assert not isinstance(info.value, UnsupportedAttribute)


def test_a_registered_name_wins_over_the_list():
    assert unsupported_reason("Convolution") is None
    assert mx.nd.Convolution is not None
