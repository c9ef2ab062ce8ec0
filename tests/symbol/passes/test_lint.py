"""lint: every invariant violation is reported, in one error."""
from __future__ import annotations

import pytest

from hybridgraph import symbol as S  # noqa: N812
from hybridgraph.nd.registry import get_op
from hybridgraph.symbol.graph import Node
from hybridgraph.symbol.passes.lint import LintError, lint
from hybridgraph.symbol.passes.rewrite import clone

from .graphs import heads_of


def test_a_sound_graph_passes():
    x, w = S.var("x"), S.var("w")
    lint(heads_of(S.Group([S.FullyConnected(x, w, num_hidden=2, no_bias=True), S.exp(x)])),
         shapes={"x": (3, 4)})


def test_bad_heads_are_reported():
    x = S.var("x")
    with pytest.raises(LintError, match="output index 3 out of range"):
        lint([(x._outputs[0][0], 3)])
    with pytest.raises(LintError, match="expected an entry"):
        lint(["x"])


def test_wrong_input_counts_and_duplicate_variables_are_all_listed():
    x1, x2 = S.var("x"), S.var("x")
    add = S.elemwise_add(x1, x2)._outputs[0][0]
    short = clone(add, add.inputs[:1])
    with pytest.raises(LintError, match=r"2 problem\(s\).*1 inputs, its declaration has 2.*two different "
                                        r"variable nodes are named 'x'"):
        lint([(short, 0), (add, 0)])


def test_cycles_and_variables_with_inputs():
    x = S.var("x")
    bad_var = Node(None, "v", inputs=[x._outputs[0]])
    with pytest.raises(LintError, match="a variable has inputs"):
        lint([(bad_var, 0)])
    a = Node(get_op("exp"), "a", get_op("exp").parse_attrs({}), [x._outputs[0]])
    b = Node(get_op("exp"), "b", get_op("exp").parse_attrs({}), [(a, 0)])
    a.inputs = ((b, 0),)
    with pytest.raises(LintError, match="cycle"):
        lint([(b, 0)])


def test_mutated_inputs_must_be_variables():
    w, g, m = S.var("w"), S.var("g"), S.var("m")
    upd = S._internal.sgd_mom_update(w, g, S.exp(m), lr=0.1)
    with pytest.raises(LintError, match="mutated in place but comes from operator node"):
        lint(heads_of(upd))


def test_shapes_that_no_longer_infer_are_reported():
    x, y = S.var("x"), S.var("y")
    with pytest.raises(LintError, match="shapes no longer infer"):
        lint(heads_of(x + y), shapes={"x": (2, 3), "y": (3, 2)})
