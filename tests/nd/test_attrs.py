"""Attribute schemas parse MXNet's strings and print them back exactly."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from hybridgraph.nd.attrs import Attr, AttrSchema, format_value, parse_bool, parse_float, parse_int, parse_shape
from hybridgraph.nd.errors import AttrError
from hybridgraph.nd.registry import all_ops, get_op


@given(st.integers(-10**12, 10**12))
def test_int_round_trip(v):
    assert parse_int(format_value(v)) == v


@given(st.floats(allow_nan=False, allow_infinity=True, width=64))
def test_float_round_trip(v):
    assert parse_float(format_value(v)) == v


@given(st.booleans())
def test_bool_round_trip(v):
    assert parse_bool(format_value(v)) is v


@given(st.lists(st.integers(0, 10**6), max_size=5).map(tuple))
def test_shape_round_trip(v):
    assert parse_shape(format_value(v)) == v


@pytest.mark.parametrize("text,want", [("(3, 3)", (3, 3)), ("(3,3)", (3, 3)), ("[3, 3]", (3, 3)),
                                       ("(8L, 3L, 3L)", (8, 3, 3)), ("3", (3,)), ("()", ()),
                                       ("(None, 2)", (None, 2))])
def test_shape_accepts_every_spelling_mxnet_files_use(text, want):
    assert parse_shape(text) == want


def test_special_floats_and_bool_spellings():
    assert math.isinf(parse_float("inf")) and parse_float("-inf") < 0 and math.isnan(parse_float("nan"))
    assert parse_bool("1") and parse_bool("true") and not parse_bool("False") and not parse_bool("0")
    with pytest.raises(ValueError):
        parse_bool("yes")


def test_given_strings_are_kept_verbatim_for_json():
    op = get_op("FullyConnected")
    a = op.parse_attrs({"num_hidden": "128", "no_bias": "True"})
    assert a.num_hidden == 128 and a.no_bias is True and a.flatten is True
    assert a.given == {"num_hidden": "128", "no_bias": "True"}


def test_python_values_are_written_as_mxnet_does():
    a = get_op("Convolution").parse_attrs({"kernel": (3, 3), "num_filter": 8, "no_bias": False})
    assert a.given == {"kernel": "(3, 3)", "num_filter": "8", "no_bias": "False"}
    assert get_op("_plus_scalar").parse_attrs({"scalar": 1}).given == {"scalar": "1"}
    assert get_op("Cast").parse_attrs({"dtype": np.float16}).given == {"dtype": "float16"}


def test_errors_name_operator_attribute_and_value():
    op = get_op("FullyConnected")
    with pytest.raises(AttrError, match=r"FullyConnected.*required attribute 'num_hidden'"):
        op.parse_attrs({})
    with pytest.raises(AttrError, match=r"FullyConnected.*'num_hidden'.*int.*'abc'"):
        op.parse_attrs({"num_hidden": "abc"})
    with pytest.raises(AttrError, match=r"unknown attribute 'bogus'"):
        op.parse_attrs({"num_hidden": "3", "bogus": "1"})
    with pytest.raises(AttrError, match=r"act_type"):
        get_op("Activation").parse_attrs({"act_type": "nope"})


def test_hidden_attributes_ride_along():
    a = get_op("FullyConnected").parse_attrs({"num_hidden": "3", "__ctx_group__": "dev1"})
    assert a.given["__ctx_group__"] == "dev1"


def test_every_declared_default_survives_its_own_string_form():
    """Each attribute default printed MXNet's way parses back to the same value."""
    for name, op in all_ops().items():
        for attr_name, decl in op.schema.attrs.items():
            if decl.required or decl.default is None:
                continue
            assert decl.convert(decl.fmt(decl.default)) == decl.default, (name, attr_name)


def test_schema_of_a_custom_declaration():
    schema = AttrSchema("demo", {"k": Attr("shape", (1, 1)), "p": Attr("float", None)})
    a = schema.parse({"k": "(2, 2)", "p": "None"})
    assert a.k == (2, 2) and a.p is None and a.key() == (("k", "(2, 2)"), ("p", "None"))


def test_format_value_writes_numpy_ints_inside_tuples_as_plain_ints():
    # numpy 2's repr is np.int64(3); MXNet's attribute strings say (3, 3)
    assert format_value((np.int64(3), np.int32(2))) == "(3, 2)"
    assert parse_shape(format_value([np.int64(1), 4])) == (1, 4)
