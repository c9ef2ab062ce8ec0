"""The pass registry and manager: requires/provides, lint after each pass, error context."""
from __future__ import annotations

import numpy as np
import pytest

from hybridgraph import symbol as S  # noqa: N812
from hybridgraph.nd.registry import get_op
from hybridgraph.symbol.graph import Node
from hybridgraph.symbol.passes import (DEFAULT_INFERENCE, DEFAULT_TRAINING, PassContext, PassError, apply_passes,
                           list_passes, optimize, register_pass)
from hybridgraph.symbol.passes.rewrite import clone

from .graphs import assert_same_outputs, heads_of, ops_of, run


@register_pass("_test_table", provides=("_test_fact",), changes_graph=False)
def _table(heads, ctx):
    return {"nodes": len(heads)}


@register_pass("_test_needs_fact", requires=("_test_fact",))
def _needs(heads, ctx):
    assert "_test_table" in ctx.tables
    return heads


@register_pass("_test_breaks")
def _breaks(heads, ctx):
    node, _ = heads[0]
    return [(clone(node, ()), 0)]            # drops the inputs: lint must catch it


@register_pass("_test_raises")
def _raises(heads, ctx):
    raise ValueError("boom")


def _graph():
    x = S.var("x")
    return heads_of(S.exp(S.sin(x)))


def test_the_default_pipelines_are_registered():
    assert set(DEFAULT_INFERENCE) | set(DEFAULT_TRAINING) <= set(list_passes())
    assert "fold_batchnorm" not in DEFAULT_TRAINING


def test_requires_are_checked_against_earlier_provides():
    heads = _graph()
    with pytest.raises(PassError, match=r"pass _test_needs_fact requires \['_test_fact'\]"):
        apply_passes(heads, ["_test_needs_fact"])
    ctx = PassContext()
    apply_passes(heads, ["_test_table", "_test_needs_fact"], context=ctx)
    assert ctx.tables == {"_test_table": {"nodes": 1}} and ctx.ran == ["_test_table", "_test_needs_fact"]


def test_a_graph_change_invalidates_analysis_results():
    x = S.var("x")
    twice = heads_of(S.exp(x) + S.exp(x))
    with pytest.raises(PassError, match="requires"):
        apply_passes(twice, ["_test_table", "cse", "_test_needs_fact"])
    apply_passes(_graph(), ["_test_table", "cse", "_test_needs_fact"])   # cse changed nothing


def test_lint_failures_name_the_pass_and_those_before_it():
    with pytest.raises(PassError, match=r"pass _test_breaks failed after \['dce', 'cse'\]: lint: .*0 inputs"):
        apply_passes(_graph(), ["dce", "cse", "_test_breaks"], lint=True)
    apply_passes(_graph(), ["_test_breaks"])     # without lint nobody checks


def test_exceptions_are_rewrapped_with_context():
    with pytest.raises(PassError, match=r"pass _test_raises failed after \['dce'\]: ValueError: boom") as info:
        apply_passes(_graph(), ["dce", "_test_raises"])
    assert isinstance(info.value.__cause__, ValueError)


def test_unknown_passes_and_bad_input_graphs():
    with pytest.raises(PassError, match="unknown graph pass 'nope'"):
        apply_passes(_graph(), ["nope"])
    x = S.var("x")
    bad = [(Node(get_op("exp"), "e", get_op("exp").parse_attrs({}), ()), 0)]
    with pytest.raises(PassError, match="the input graph failed before any pass"):
        apply_passes(bad + heads_of(x), ["dce"], lint=True)
    with pytest.raises(PassError, match="unknown passes"):
        optimize(_graph(), for_training=False, disable=["nope"])


def test_optimize_returns_only_the_constants_the_graph_uses():
    x = S.var("x")
    sym = S.Dropout(x * 1 + S.ones(shape=(2, 2), dtype="float64") * 3, p=0.5) + S.zeros(shape=(2, 2), dtype="float64")
    heads, params = optimize(heads_of(sym), for_training=False, lint=True, shapes={"x": (2, 2)})
    assert ops_of(heads) == ["_fused_elemwise"] and sorted(params) == ["__const0__", "__const1__"]
    vals = {"x": np.arange(4.0).reshape(2, 2)}
    assert_same_outputs(run(heads_of(sym), vals), run(heads, {**vals, **params}))
    heads, _ = optimize(heads_of(sym), for_training=False, disable=["fuse_elemwise", "fold_constants"])
    assert ops_of(heads) == ["_ones", "_mul_scalar", "elemwise_add", "_zeros", "elemwise_add"]
