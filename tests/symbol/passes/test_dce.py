"""dce: reachable graph, control dependencies on side-effect-free nodes dropped."""
from __future__ import annotations

import numpy as np

from hybridgraph import symbol as S  # noqa: N812
from hybridgraph.symbol.graph import topo_sort
from hybridgraph.symbol.passes import apply_passes
from hybridgraph.symbol.passes.rewrite import clone

from .graphs import heads_of, json_of, run


def _with_deps(sym, deps):
    """`sym`'s head node rebuilt with control dependencies on the heads of `deps`."""
    node, _ = sym._outputs[0]
    return [(clone(node, node.inputs, [d._outputs[0][0] for d in deps]), 0)]


def test_graph_without_control_deps_is_unchanged_and_shares_nodes():
    x = S.var("x")
    y = S.exp(x) + x
    heads = heads_of(y)
    out = apply_passes(heads, ["dce"], lint=True)
    assert out[0][0] is heads[0][0]
    assert json_of(out) == json_of(heads)


def test_control_dependency_on_a_pure_node_is_dropped():
    x = S.var("x")
    dead = S.sin(x, name="dead")
    heads = _with_deps(S.exp(x, name="e"), [dead])
    assert any(n.name == "dead" for n in topo_sort(heads))
    out = apply_passes(heads, ["dce"], lint=True)
    assert [n.name for n in topo_sort(out)] == ["x", "e"]
    np.testing.assert_allclose(run(out, {"x": np.ones(3)})[0], np.exp(np.ones(3)))


def test_control_dependencies_on_side_effects_are_kept():
    x = S.var("x")
    drop = S.Dropout(x, p=0.5, name="drop")           # draws random numbers
    heads = _with_deps(S.exp(x, name="e"), [drop])
    out = apply_passes(heads, ["dce"], lint=True)
    assert out[0][0].control_deps and out[0][0].control_deps[0].name == "drop"


def test_heads_are_never_dropped_even_mutating_ones():
    w, g, m = S.var("w"), S.var("g"), S.var("m")
    upd = S._internal.sgd_mom_update(w, g, m, lr=0.1, momentum=0.9, name="upd")
    other = S.exp(w, name="e")
    heads = heads_of(other) + heads_of(upd)
    out = apply_passes(heads, ["dce"], lint=True)
    assert [n.name for n, _ in out] == ["e", "upd"]
