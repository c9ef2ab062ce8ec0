"""MXNet's hidden attribute keys (ctx_group, lr_mult, wd_mult, force_mirroring, mirror_stage): given
as an operator keyword or in a Variable's `attr` dict they become ``__key__`` attributes, readable
under both names (MXNet's test_attr, test_viz's `FullyConnected(..., lr_mult=0)`)."""
from __future__ import annotations

import pickle

import pytest

import hybridgraph as mx


def test_operator_keyword_is_an_attribute_not_a_parameter():
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, lr_mult=0, wd_mult=2, name="fc1")
    assert fc.list_attr() == {"num_hidden": "3", "__lr_mult__": "0", "lr_mult": "0", "__wd_mult__": "2",
                              "wd_mult": "2"}
    assert fc.attr("lr_mult") == "0" and fc.attr("__wd_mult__") == "2"
    assert '"__lr_mult__": "0"' in fc.tojson()
    with pytest.raises(mx.base.MXNetError, match="unknown attribute 'lr_mul'"):
        mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, lr_mul=0)


def test_variable_attr_dict_hidden_keys():
    with mx.AttrScope(group="4"):
        data = mx.sym.Variable("data", attr={"group": "1", "force_mirroring": "True", "mood": "x"}, lr_mult=1)
    assert data.attr("force_mirroring") == "True" and data.attr("__force_mirroring__") == "True"
    assert data.attr("group") == "1" and data.attr("mood") == "x" and data.attr("lr_mult") == "1"
    assert "__force_mirroring__" in data.list_attr() and "__mood__" not in data.list_attr()
    assert pickle.loads(pickle.dumps(data)).attr("__force_mirroring__") == "True"
