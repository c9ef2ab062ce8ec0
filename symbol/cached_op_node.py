"""`_CachedOp` nodes: a hybridized block's call that `autograd.get_symbol` does not inline
(more than `inline_limit` operators, or static_alloc), one node holding the block's graph,
as MXNet 1.9.1 records it.

The graph lives in a process-wide table keyed by the node's `graph` attribute, which is
never written: MXNet writes such a node with no attributes and no subgraph, so neither
MXNet nor hybridgraph can run one read back from JSON (a clear error says so). The
kernel evaluates the graph through the eager dispatch; the gradient
`_backward_CachedOp` replays it on the autograd tape and back-propagates.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any


from hybridgraph.nd import autograd
from hybridgraph.nd.attrs import Attrs
from hybridgraph.nd.dispatch import run_eager
from hybridgraph.nd.errors import MXNetError

from .graph import IndexedGraph, Node, topo_sort
from .loop_op import _wrap_all

#: graph key -> the block's graph (see the module docstring)
GRAPHS: dict[str, "CachedOpGraph"] = {}
_KEYS = itertools.count()


@dataclass
class CachedOpGraph:
    """A block's graph: `heads` over the variables `inputs` (the node's input order)."""

    heads: list
    inputs: list
    _order: list | None = None
    _graph: Any = field(default=None)

    def order(self) -> list:
        if self._order is None:
            self._order = [n for n in topo_sort(self.heads) if n.op is not None]
        return self._order

    def graph(self) -> IndexedGraph:
        if self._graph is None:
            self._graph = IndexedGraph([*self.heads, *((p, 0) for p in self.inputs)])
        return self._graph


def make_node(heads: list, input_names: list, inputs: list, name: str) -> Node:
    """A `_CachedOp` node named `name` computing `heads` (variables named `input_names`)
    from the entries `inputs`."""
    from hybridgraph.nd.registry import get_op  # noqa: PLC0415
    by_name = {n.name: n for n in topo_sort(heads) if n.op is None}
    placeholders = [by_name.get(nm) or Node(None, nm) for nm in input_names]
    key = f"cachedop{next(_KEYS)}"
    GRAPHS[key] = CachedOpGraph(list(heads), placeholders)
    op = get_op("_CachedOp")
    attrs = op.schema.parse({})
    values = attrs.values()
    values["graph"] = key
    hidden = Attrs(values, {})
    hidden._key = (("graph", key),)
    return Node(op, name, hidden, list(inputs))


def graph_of(a) -> CachedOpGraph:
    key = a.graph
    if key not in GRAPHS:
        raise MXNetError("_CachedOp: this node holds no graph; a _CachedOp node runs only as made by "
                         "autograd.get_symbol in this process (MXNet writes it without its graph, "
                         "so one read from JSON cannot run, in MXNet either)")
    return GRAPHS[key]


def num_inputs(a) -> int:
    return len(graph_of(a).inputs)


def num_outputs(a) -> int:
    return len(graph_of(a).heads)


def output_names(a) -> tuple:
    """The graph's output names (MXNet's node output names: `<node>_<block output>`)."""
    return tuple(n.output_names()[i] if n.op is not None else n.name for n, i in graph_of(a).heads)


def _infer(a, values: list, solve) -> tuple[list, list]:
    g = graph_of(a)
    graph = g.graph()
    known = {graph.entry_id((p, 0)): v for p, v in zip(g.inputs, values) if v is not None}
    table = solve(graph, known)
    return [table[graph.entry_id((p, 0))] for p in g.inputs], [table[graph.entry_id(e)] for e in g.heads]


def infer_shape(a, *shapes):
    from .infer import graph_shapes  # noqa: PLC0415
    return _infer(a, list(shapes), graph_shapes)


def infer_type(a, *dtypes):
    from .infer import graph_types  # noqa: PLC0415
    return _infer(a, list(dtypes), graph_types)


def _evaluate(g: CachedOpGraph, values: list) -> list:
    env: dict[int, list] = {id(p): [v] for p, v in zip(g.inputs, values)}
    for node in g.order():
        res = run_eager(node.op, node.attrs, [env[id(src)][i] for src, i in node.inputs])
        env[id(node)] = list(res) if isinstance(res, (list, tuple)) else [res]
    return [env[id(n)][i] for n, i in g.heads]


def forward(xp, a, arrays, is_train: bool) -> tuple:
    """The `_CachedOp` kernel: the block's graph on the node's inputs."""
    with autograd.pause(is_train):
        outs = _evaluate(graph_of(a), _wrap_all(xp, arrays))
    return tuple(o._data for o in outs)


def backward(xp, a, arrays) -> tuple:
    """The `_backward_CachedOp` kernel: the graph replayed on the tape, then backward."""
    nout = num_outputs(a)
    wrapped = _wrap_all(xp, arrays)
    ograds, ins = wrapped[:nout], [x.copy() for x in wrapped[nout:]]
    for x in ins:
        x.attach_grad()
    with autograd.record(True):
        outs = _evaluate(graph_of(a), ins)
    heads = [(o, g) for o, g in zip(outs, ograds) if o._ag is not None]
    if heads:
        autograd.backward([h for h, _ in heads], [g for _, g in heads])
    return tuple(x.grad._data if x.grad is not None else xp.zeros_like(x._data) for x in ins)


