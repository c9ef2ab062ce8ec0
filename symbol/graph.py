"""The graph IR: nodes, entries, and topological views.

A `Node` is `(op, name, attrs, inputs)`; `inputs` are entries `(node, output
index)`. Variables have `op is None` and a plain dict of attribute strings.
Nodes are treated as immutable by every pass (passes build new nodes);
analysis results (shapes, dtypes, storage) live in side tables keyed by entry
id, never on the nodes.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from hybridgraph.nd.attrs import Attrs
from hybridgraph.nd.registry import OpDef

Entry = tuple  # (Node, int)


class Node:
    """One operator application or variable."""

    __slots__ = ("op", "name", "attrs", "inputs", "var_attrs", "subgraphs", "control_deps", "__weakref__")

    def __init__(self, op: OpDef | None, name: str, attrs: Attrs | None = None,
                 inputs: Sequence[Entry] = (), var_attrs: dict | None = None):
        self.op = op
        self.name = name
        self.attrs = attrs
        self.inputs = tuple(inputs)
        self.var_attrs = var_attrs if var_attrs is not None else {}
        self.subgraphs = ()
        self.control_deps = ()

    @property
    def is_variable(self) -> bool:
        return self.op is None

    @property
    def op_name(self) -> str:
        return "null" if self.op is None else self.op.name

    def attr_strings(self) -> dict:
        """Every attribute as MXNet writes it (operator params and hidden `__x__` keys)."""
        if self.op is None:
            return self.var_attrs
        out = dict(self.attrs.given)
        out.update(self.var_attrs)
        return out

    def num_outputs(self) -> int:
        return 1 if self.op is None else self.op.num_outputs(self.attrs)

    def num_visible_outputs(self) -> int:
        return 1 if self.op is None else self.op.num_visible_outputs(self.attrs)

    def output_names(self) -> list[str]:
        """`<name>_output`, `<name>_output0`..., or the op's named outputs."""
        if self.op is None:
            return [self.name]
        return [f"{self.name}_{o}" for o in self.op.output_names(self.attrs)]

    def input_names(self) -> tuple:
        return () if self.op is None else self.op.input_names(self.attrs)

    def aux_input_positions(self) -> tuple:
        return () if self.op is None else self.op.aux_indices(self.attrs)

    def __repr__(self) -> str:
        return f"<Node {self.op_name} {self.name}>"


def topo_sort(heads: Iterable[Entry]) -> list[Node]:
    """Nodes reachable from heads in MXNet's order: DFS post-order, inputs in order.

    Iterative (no recursion limit on deep graphs); raises on cycles.
    """
    order: list[Node] = []
    state: dict[int, int] = {}  # 1 = on stack, 2 = done
    for head, _ in heads:
        if state.get(id(head)) == 2:
            continue
        stack = [(head, 0)]
        state[id(head)] = 1
        while stack:
            node, i = stack[-1]
            deps = list(node.inputs) + [(c, 0) for c in node.control_deps]
            if i < len(deps):
                stack[-1] = (node, i + 1)
                child = deps[i][0]
                st = state.get(id(child))
                if st is None:
                    state[id(child)] = 1
                    stack.append((child, 0))
                elif st == 1:
                    raise ValueError(f"the graph has a cycle through node {child.name!r}")
            else:
                stack.pop()
                state[id(node)] = 2
                order.append(node)
    return order


class IndexedGraph:
    """A read-only indexed view: node ids, entry ids and arguments in MXNet's order."""

    def __init__(self, heads: Sequence[Entry]):
        self.heads = list(heads)
        self.nodes = topo_sort(self.heads)
        self.node_id = {id(n): i for i, n in enumerate(self.nodes)}
        self.row_ptr = [0]
        for n in self.nodes:
            self.row_ptr.append(self.row_ptr[-1] + n.num_outputs())

    def entry_id(self, entry: Entry) -> int:
        node, idx = entry
        return self.row_ptr[self.node_id[id(node)]] + idx

    @property
    def num_entries(self) -> int:
        return self.row_ptr[-1]

    def input_nodes(self) -> list[Node]:
        return [n for n in self.nodes if n.op is None]

    def aux_variable_ids(self) -> set[int]:
        """ids of variables that feed a mutable (aux) input slot of some op."""
        aux = set()
        for n in self.nodes:
            for pos in n.aux_input_positions():
                if pos < len(n.inputs):
                    aux.add(id(n.inputs[pos][0]))
        return aux

    def arguments(self) -> list[Node]:
        aux = self.aux_variable_ids()
        return [n for n in self.nodes if n.op is None and id(n) not in aux]

    def auxiliary_states(self) -> list[Node]:
        aux = self.aux_variable_ids()
        return [n for n in self.nodes if n.op is None and id(n) in aux]
