"""lint: structural checks of a graph, run after every graph-changing pass in tests.

Reports every problem found in one `LintError`: head entries out of range,
cycles, operator nodes whose input count does not match their declaration,
variables with inputs, two variable nodes sharing a name, mutated (aux) inputs
that are not variables, and, when variable shapes are given, shapes that no
longer infer consistently.
"""
from __future__ import annotations

from collections.abc import Sequence

from hybridgraph.nd.attrs import Attrs
from hybridgraph.nd.errors import MXNetError
from hybridgraph.nd.registry import OpDef

from ..graph import Entry, IndexedGraph, Node, topo_sort


class LintError(MXNetError):
    """A graph violates an invariant of the IR."""


def _entry_problem(entry: object, where: str) -> str | None:
    if not (isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], Node)
            and isinstance(entry[1], int)):
        return f"{where}: expected an entry (Node, int), got {entry!r}"
    node, idx = entry
    if not 0 <= idx < node.num_outputs():
        return f"{where}: output index {idx} out of range for node {node.name!r} ({node.op_name}, " \
               f"{node.num_outputs()} outputs)"
    return None


def _node_problems(node: Node) -> list[str]:
    where = f"node {node.name!r} ({node.op_name})"
    if node.op is None:
        return [f"{where}: a variable has inputs"] if node.inputs else []
    if not isinstance(node.op, OpDef) or not isinstance(node.attrs, Attrs):
        return [f"{where}: op must be an OpDef and attrs an Attrs, got {type(node.op).__name__} / "
                f"{type(node.attrs).__name__}"]
    problems = []
    want = len(node.op.input_names(node.attrs))
    if len(node.inputs) != want:
        problems.append(f"{where}: {len(node.inputs)} inputs, its declaration has {want} "
                        f"{list(node.op.input_names(node.attrs))}")
    for pos, e in enumerate(node.inputs):
        bad = _entry_problem(e, f"{where} input {pos}")
        if bad:
            problems.append(bad)
    for pos in node.op.mutated(node.attrs):
        if pos < len(node.inputs) and node.inputs[pos][0].op is not None:
            problems.append(f"{where}: input {pos} is mutated in place but comes from operator node "
                            f"{node.inputs[pos][0].name!r}, not a variable")
    return problems


def _shape_problems(heads: Sequence[Entry], shapes: dict) -> list[str]:
    from ..infer import graph_shapes
    graph = IndexedGraph(heads)
    seed = {graph.entry_id((n, 0)): tuple(shapes[n.name]) for n in graph.input_nodes() if n.name in shapes}
    try:
        graph_shapes(graph, seed)
    except MXNetError as exc:
        return [f"shapes no longer infer: {exc}"]
    return []


def lint(heads: Sequence[Entry], shapes: dict | None = None) -> None:
    """Raise LintError listing every problem of the graph `heads` (None when it is sound).

    `shapes` (variable name -> shape) also checks that shape inference succeeds.
    """
    problems = [p for k, e in enumerate(heads) if (p := _entry_problem(e, f"head {k}"))]
    if problems:
        raise LintError("; ".join(problems))
    try:
        nodes = topo_sort(heads)
    except ValueError as exc:
        raise LintError(str(exc)) from None
    seen: dict[str, Node] = {}
    for node in nodes:
        problems += _node_problems(node)
        if node.op is None:
            other = seen.setdefault(node.name, node)
            if other is not node:
                problems.append(f"two different variable nodes are named {node.name!r}")
    if not problems and shapes:
        problems += _shape_problems(heads, shapes)
    if problems:
        raise LintError(f"{len(problems)} problem(s): " + "; ".join(problems))
