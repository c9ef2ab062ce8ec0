"""fold_constants: input-free subgraphs (and frozen parameters) evaluated at compile time."""
from __future__ import annotations

import numpy as np

from hybridgraph import symbol as S  # noqa: N812
from hybridgraph.symbol.graph import topo_sort
from hybridgraph.symbol.passes import PassContext, apply_passes

from .graphs import assert_same_outputs, heads_of, json_of, ops_of, run


def _fold(heads, **options):
    ctx = PassContext()
    out = apply_passes(heads, ["fold_constants"], lint=True, context=ctx, **options)
    return out, ctx.new_params


def test_scalar_chain_on_zeros_becomes_one_constant():
    x = S.var("x")
    c = (S.zeros(shape=(2, 3), dtype="float64") + 1) * 3
    heads = heads_of(S.elemwise_mul(x, c, name="m"))
    out, params = _fold(heads)
    assert list(params) == ["__const0__"]
    np.testing.assert_array_equal(params["__const0__"], np.full((2, 3), 3.0))
    assert params["__const0__"].dtype == np.float64
    want = S.elemwise_mul(x, S.var("__const0__", shape=(2, 3), dtype="float64"), name="m")
    assert json_of(out) == json_of(heads_of(want))
    values = {"x": np.arange(6.0).reshape(2, 3)}
    assert_same_outputs(run(heads, values), run(out, {**values, **params}))


def test_arange_chain_and_a_constant_head():
    r = S.exp(S.arange(0, 4, dtype="float64") * 0.5)
    out, params = _fold(heads_of(r))
    assert ops_of(out) == [] and out[0][0].name == "__const0__"
    np.testing.assert_allclose(params["__const0__"], np.exp(np.arange(4.0) * 0.5))


def test_only_values_read_by_the_rest_of_the_graph_are_materialised():
    x = S.var("x")
    z = S.zeros(shape=(3,), dtype="float64")
    a, b = z + 1, z + 2
    heads = heads_of(S.Group([x + a, x * b]))
    out, params = _fold(heads)
    assert sorted(params) == ["__const0__", "__const1__"]
    assert ops_of(out) == ["elemwise_add", "elemwise_mul"]


def test_random_ops_are_not_folded():
    x = S.var("x")
    heads = heads_of(x + S.random.uniform(shape=(3,), dtype="float64") * 2)
    out, params = _fold(heads)
    assert params == {} and json_of(out) == json_of(heads)


def test_frozen_parameters_are_constants_only_when_frozen():
    x, w = S.var("x"), S.var("w")
    heads = heads_of(S.FullyConnected(x, S.transpose(w), num_hidden=2, no_bias=True, name="fc"))
    w_val = np.arange(6.0).reshape(3, 2)
    out, params = _fold(heads, params={"w": w_val})
    assert params == {} and "transpose" in ops_of(out)
    out, params = _fold(heads, params={"w": w_val}, frozen=["w"])
    assert ops_of(out) == ["FullyConnected"]
    np.testing.assert_array_equal(params["__const0__"], w_val.T)
    values = {"x": np.ones((4, 3)), "w": w_val}
    assert_same_outputs(run(heads, values), run(out, {**values, **params}))


def test_creation_with_unknown_dims_and_large_results_are_left():
    x = S.var("x")
    open_zeros = S.zeros(shape=(0, 3), dtype="float64") + 1
    out, params = _fold(heads_of(x + open_zeros))
    assert params == {}
    big = S.ones(shape=(64, 64), dtype="float64") * 2
    out, params = _fold(heads_of(x * big), max_constant_bytes=1024)
    assert params == {} and "_mul_scalar" in ops_of(out)


def test_constant_names_avoid_existing_variables():
    c = S.var("__const0__")
    heads = heads_of(c + (S.ones(shape=(2,), dtype="float64") * 2))
    out, params = _fold(heads)
    assert list(params) == ["__const1__"]
    assert sorted(n.name for n in topo_sort(out) if n.op is None) == ["__const0__", "__const1__"]
