"""simplify: identities and self-composition read from the registry."""
from __future__ import annotations

import numpy as np
import pytest

from hybridgraph import symbol as S  # noqa: N812
from hybridgraph.symbol.passes import apply_passes

from .graphs import assert_same_outputs, heads_of, json_of, ops_of, run

X = np.arange(12.0).reshape(3, 4) - 5


def _simplify(heads, for_training=False, **options):
    return apply_passes(heads, ["simplify"], lint=True, for_training=for_training, **options)


@pytest.mark.parametrize("make", [lambda x: x * 1, lambda x: x + 0, lambda x: x - 0, lambda x: x / 1,
                                  lambda x: x ** 1, S._internal._copy, S.identity])
def test_scalar_no_ops_and_copies_disappear(make):
    x = S.var("x")
    heads = heads_of(S.exp(make(x), name="e"))
    out = _simplify(heads)
    assert json_of(out) == json_of(heads_of(S.exp(x, name="e")))
    assert_same_outputs(run(heads, {"x": X}), run(out, {"x": X}))


def test_real_scalar_ops_stay():
    x = S.var("x")
    heads = heads_of(S.exp(x * 2 + 1))
    assert json_of(_simplify(heads)) == json_of(heads)


def test_an_identity_head_becomes_a_copy():
    x = S.var("x")
    heads = heads_of(S.Dropout(S.exp(x, name="e"), p=0.5, name="drop"))
    out = _simplify(heads)
    assert ops_of(out) == ["exp", "_copy"] and out[0][0].name == "drop"
    copy_head = heads_of(S._internal._copy(S.exp(x), name="c"))
    assert _simplify(copy_head)[0][0] is copy_head[0][0]


def test_dropout_and_blockgrad_only_at_inference():
    x = S.var("x")
    heads = heads_of(S.exp(S.BlockGrad(S.Dropout(x, p=0.3))))
    assert ops_of(_simplify(heads)) == ["exp"]
    assert ops_of(_simplify(heads, for_training=True)) == ["Dropout", "BlockGrad", "exp"]
    always = heads_of(S.exp(S.Dropout(x, p=0.3, mode="always")))
    assert ops_of(_simplify(always)) == ["Dropout", "exp"]


def test_dropout_with_p_zero_goes_in_training_too():
    x = S.var("x")
    heads = heads_of(S.exp(S.Dropout(x, p=0.0)))
    out = _simplify(heads, for_training=True)
    assert ops_of(out) == ["exp"]
    assert_same_outputs(run(heads, {"x": X}, is_train=True), run(out, {"x": X}, is_train=True))


def test_a_node_whose_hidden_output_is_used_stays():
    x = S.var("x")
    drop = S.Dropout(x, p=0.5)
    heads = [(S.exp(drop)._outputs[0]), (drop._outputs[0][0], 1)]   # the mask is a head
    assert ops_of(_simplify(heads)) == ["Dropout", "exp"]


def test_reshape_of_reshape_composes_when_the_outer_shape_is_self_contained():
    x = S.var("x")
    heads = heads_of(S.reshape(S.reshape(S.reshape(x, shape=(2, 6)), shape=(0, -1)), shape=(4, -1), name="r"))
    out = _simplify(heads)
    assert json_of(out) == json_of(heads_of(S.reshape(x, shape=(4, -1), name="r")))
    assert_same_outputs(run(heads, {"x": X}), run(out, {"x": X}))


def test_reshape_codes_reading_the_middle_shape_need_known_shapes():
    x = S.var("x")
    heads = heads_of(S.reshape(S.reshape(x, shape=(2, 6)), shape=(0, -1, 2), name="r"))
    assert ops_of(_simplify(heads)) == ["Reshape", "Reshape"]
    out = _simplify(heads, shapes={"x": (3, 4)})
    assert json_of(out) == json_of(heads_of(S.reshape(x, shape=(2, 3, 2), name="r")))
    assert_same_outputs(run(heads, {"x": X}), run(out, {"x": X}))


def test_reshape_back_to_the_input_shape_is_an_identity():
    x = S.var("x")
    heads = heads_of(S.exp(S.reshape(S.reshape(x, shape=(2, 6)), shape=(3, 4)), name="e"))
    assert ops_of(_simplify(heads)) == ["Reshape", "exp"]       # shape of x unknown
    out = _simplify(heads, shapes={"x": (3, 4)})
    assert json_of(out) == json_of(heads_of(S.exp(x, name="e")))


def test_transpose_of_transpose():
    x = S.var("x")
    back = heads_of(S.exp(S.transpose(S.transpose(x)), name="e"))
    assert json_of(_simplify(back)) == json_of(heads_of(S.exp(x, name="e")))
    y = S.var("y")
    heads = heads_of(S.transpose(S.transpose(y, axes=(1, 2, 0)), axes=(1, 2, 0), name="t"))
    out = _simplify(heads)
    assert json_of(out) == json_of(heads_of(S.transpose(y, axes=(2, 0, 1), name="t")))
    v = {"y": np.arange(24.0).reshape(2, 3, 4)}
    assert_same_outputs(run(heads, v), run(out, v))
