"""Symbol.name follows MXNet 1.9.1: the node's name when every output comes from one node (a
multi-output op such as split), None for a group of several nodes; repr follows the name."""
from __future__ import annotations

import hybridgraph as mx


def test_multi_output_symbol_has_its_node_name():
    s = mx.sym.split(mx.sym.var("x"), num_outputs=2, name="split0")
    assert len(s.list_outputs()) == 2
    assert s.name == "split0"
    assert s[1].name == "split0"
    assert repr(s) == "<Symbol split0>"


def test_group_of_nodes_has_no_name():
    g = mx.sym.Group([mx.sym.var("a"), mx.sym.var("b")])
    assert g.name is None
    assert repr(g) == "<Symbol group [a, b]>"
