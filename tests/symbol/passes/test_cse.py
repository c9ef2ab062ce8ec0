"""cse: identical operator applications merged; random and mutating ones never."""
from __future__ import annotations

import numpy as np

from hybridgraph import symbol as S  # noqa: N812
from hybridgraph.symbol.graph import topo_sort
from hybridgraph.symbol.passes import apply_passes

from .graphs import assert_same_outputs, heads_of, json_of, ops_of, run

VALUES = {"x": np.linspace(-1, 1, 6).reshape(2, 3), "y": np.linspace(0, 2, 6).reshape(2, 3)}


def test_same_op_same_inputs_merge_into_the_first():
    x = S.var("x")
    a, b = S.exp(x, name="a"), S.exp(x, name="b")
    heads = heads_of(S.elemwise_add(a, b, name="s"))
    out = apply_passes(heads, ["cse"], lint=True)
    e = S.exp(x, name="a")
    want = S.elemwise_add(e, e, name="s")
    assert json_of(out) == json_of(heads_of(want))
    assert_same_outputs(run(heads, VALUES), run(out, VALUES))


def test_merging_is_transitive_through_chains():
    x = S.var("x")
    left = S.sin(S.exp(x, name="e1"), name="s1")
    right = S.sin(S.exp(x, name="e2"), name="s2")
    heads = heads_of(S.Group([left, right]))
    out = apply_passes(heads, ["cse"], lint=True)
    assert ops_of(out) == ["exp", "sin"]
    assert out[0] == out[1]
    assert_same_outputs(run(heads, VALUES), run(out, VALUES))


def test_different_attributes_or_inputs_do_not_merge():
    x, y = S.var("x"), S.var("y")
    heads = heads_of(S.Group([x * 2, x * 3, S.exp(x), S.exp(y)]))
    out = apply_passes(heads, ["cse"], lint=True)
    assert len({id(n) for n, _ in out}) == 4


def test_random_ops_are_never_merged():
    x = S.var("x")
    heads = heads_of(S.Dropout(x, p=0.5) + S.Dropout(x, p=0.5))
    out = apply_passes(heads, ["cse"], lint=True)
    assert ops_of(out).count("Dropout") == 2
    u = heads_of(S.Group([S.random.uniform(shape=(2,)), S.random.uniform(shape=(2,))]))
    assert len({id(n) for n, _ in apply_passes(u, ["cse"], lint=True)}) == 2


def test_mutating_ops_are_never_merged():
    w, g, m = S.var("w"), S.var("g"), S.var("m")
    a = S._internal.sgd_mom_update(w, g, m, lr=0.1)
    b = S._internal.sgd_mom_update(w, g, m, lr=0.1)
    out = apply_passes(heads_of(S.Group([a, b])), ["cse"], lint=True)
    assert len({id(n) for n, _ in out}) == 2


def test_variables_are_never_merged_and_the_input_is_untouched():
    x = S.var("x")
    heads = heads_of(S.Group([S.exp(x), S.exp(x)]))
    before = json_of(heads)
    apply_passes(heads, ["cse"], lint=True)
    assert json_of(heads) == before
    assert sum(1 for n in topo_sort(heads) if n.op is None) == 1
