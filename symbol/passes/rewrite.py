"""Shared helpers of the graph passes: rebuilding a graph bottom-up, consumer counts.

Nodes are immutable, so a pass rewrites a graph by walking it in topological
order and deciding, per node, which entries replace its outputs; nodes whose
inputs did not change are shared with the old graph.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from hybridgraph.nd.attrs import Attrs
from hybridgraph.nd.registry import OpDef

from ..graph import Entry, Node, topo_sort

#: visit(old node, its rewritten input entries) -> entries replacing every output, or None to keep it
Visit = Callable[[Node, tuple], "tuple | None"]


def clone(node: Node, inputs: Sequence[Entry], control_deps: Sequence[Node] | None = None) -> Node:
    """A copy of `node` with new inputs (same op, name, attributes)."""
    out = Node(node.op, node.name, node.attrs, inputs, dict(node.var_attrs))
    out.subgraphs = node.subgraphs
    out.control_deps = tuple(node.control_deps if control_deps is None else control_deps)
    return out


def make_node(op: OpDef, name: str, given: dict, inputs: Sequence[Entry]) -> Node:
    """A new operator node whose attributes are parsed from MXNet strings/values."""
    return Node(op, name, op.parse_attrs(given), inputs)


def outputs_of(node: Node) -> tuple:
    return tuple((node, i) for i in range(node.num_outputs()))


def rebuild(heads: Sequence[Entry], visit: Visit, keep_dep: Callable[[Node], bool] | None = None,
            after: Callable[[Node, tuple], None] | None = None) -> list[Entry]:
    """Rewrite a graph bottom-up; returns the new heads.

    `visit` sees each old node with its inputs already rewritten and returns
    the entries that replace its outputs, or None to keep the node (copied
    only when an input or control dependency changed). `keep_dep(old node)`
    filters control dependencies (all kept by default); `after(old node, new
    entries)` is told every decision (to carry side tables over).
    """
    new: dict[int, tuple] = {}
    for node in topo_sort(heads):
        ins = tuple(new[id(src)][i] for src, i in node.inputs)
        res = visit(node, ins)
        if res is None:
            deps = tuple(new[id(c)][0][0] for c in node.control_deps if keep_dep is None or keep_dep(c))
            same = ins == node.inputs and len(deps) == len(node.control_deps) and all(
                a is b for a, b in zip(deps, node.control_deps))
            res = outputs_of(node if same else clone(node, ins, deps))
        new[id(node)] = tuple(res)
        if after is not None:
            after(node, new[id(node)])
    return [new[id(n)][i] for n, i in heads]


def consumers(heads: Sequence[Entry]) -> Counter:
    """(id(node), output index) -> number of uses (input edges plus head slots)."""
    uses: Counter = Counter()
    for node in topo_sort(heads):
        for src, i in node.inputs:
            uses[(id(src), i)] += 1
    for node, i in heads:
        uses[(id(node), i)] += 1
    return uses


def consumer_nodes(heads: Sequence[Entry]) -> dict[tuple[int, int], list[tuple[Node, int]]]:
    """(id(node), output index) -> [(consumer node, input position)] (heads not included)."""
    out: dict[tuple[int, int], list] = {}
    for node in topo_sort(heads):
        for pos, (src, i) in enumerate(node.inputs):
            out.setdefault((id(src), i), []).append((node, pos))
    return out


def head_keys(heads: Sequence[Entry]) -> set[tuple[int, int]]:
    return {(id(n), i) for n, i in heads}


def visible_given(attrs: Attrs) -> dict:
    """The attributes a call gave, without hidden `__x__` keys."""
    return {k: v for k, v in attrs.given.items() if not (k.startswith("__") and k.endswith("__"))}


def is_plain_op(node: Node) -> bool:
    """An operator node with no side effects a pass must preserve: not random, mutates
    nothing, and has no subgraphs or control dependencies."""
    op = node.op
    return (op is not None and not op.random_for(node.attrs) and not op.mutates
            and not node.subgraphs and not node.control_deps)
