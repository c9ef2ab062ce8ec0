"""Schedules: the flat step lists that memory planning and the compiled plan work on.

A `Schedule` is a graph lowered to a topological list of `Step`s over integer
entry ids, with the shape and dtype of every entry (from symbol/infer.py) and
the roles entries play at the boundary: the `inputs` a forward call is given,
the `head_grads` a backward call is given, the forward `outputs` and the
backward `grads`. A training schedule is the forward graph joined with its
backward graph (symbol/gradient.py): `steps[:n_forward]` run in `forward`,
the rest in `backward`, and the entries the backward reads from the forward are
the *saved* activations.

Nothing here is operator-specific: steps hold the `OpDef` and parsed attributes
and everything else is read from the registry.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple
from collections.abc import Sequence

import numpy as np

from hybridgraph.nd.attrs import Attrs
from hybridgraph.nd.errors import MXNetError
from hybridgraph.nd.registry import OpDef, shape_known

from ..gradient import build_backward
from ..graph import Entry, IndexedGraph, Node, topo_sort
from ..infer import graph_shapes, graph_types, is_open_creation, resolved_creation_attrs


class Step(NamedTuple):
    """One kernel call: `outputs = op(inputs)`, all as entry ids."""

    name: str
    op: OpDef
    attrs: Attrs
    inputs: tuple
    outputs: tuple


@dataclass
class Schedule:
    """A lowered graph (see the module docstring)."""

    steps: list[Step]
    n_forward: int
    shapes: list
    dtypes: list
    names: list[str]
    inputs: list[int]
    outputs: list[int]
    head_grads: list = field(default_factory=list)
    grads: list = field(default_factory=list)
    keep: list = field(default_factory=list)
    constants: dict = field(default_factory=dict)

    @property
    def num_entries(self) -> int:
        return len(self.shapes)

    @property
    def forward_steps(self) -> list[Step]:
        return self.steps[:self.n_forward]

    @property
    def backward_steps(self) -> list[Step]:
        return self.steps[self.n_forward:]

    @property
    def has_backward(self) -> bool:
        return self.n_forward < len(self.steps) or any(g is not None for g in self.grads)

    def external(self) -> set[int]:
        """Entries that come from outside (inputs, head gradients, constants): never planned."""
        ext = set(self.inputs) | {h for h in self.head_grads if h is not None} | set(self.constants)
        return ext

    def nbytes(self, eid: int) -> int:
        """Bytes of one entry; 0 when its shape or dtype is unknown."""
        s, t = self.shapes[eid], self.dtypes[eid]
        if s is None or t is None or not shape_known(s):
            return 0
        return int(np.prod(s, dtype=np.int64)) * np.dtype(t).itemsize

    def known(self, eid: int) -> bool:
        s = self.shapes[eid]
        return s is not None and shape_known(s) and self.dtypes[eid] is not None

    def saved(self) -> list[int]:
        """Entries the backward steps read that exist before the backward starts (in id order)."""
        made_in_backward = {o for st in self.backward_steps for o in st.outputs}
        ext_backward = {h for h in self.head_grads if h is not None}
        need = set()
        for st in self.backward_steps:
            need.update(i for i in st.inputs if i not in made_in_backward and i not in ext_backward)
        for g in self.grads:
            if g is not None and g not in made_in_backward and g not in ext_backward:
                need.add(g)
        return sorted(need)

    def producer(self) -> dict[int, int]:
        """entry id -> index of the step that writes it."""
        return {o: k for k, st in enumerate(self.steps) for o in st.outputs}


def head_grad_nodes(heads: Sequence[Entry]) -> list[Node | None]:
    """One `<output>_head_grad` variable per head; None for heads of loss-style operators."""
    from ..symbol import var
    out = []
    for node, idx in heads:
        if node.op is not None and node.op.loss:
            out.append(None)
        else:
            name = node.output_names()[idx]
            out.append(var(f"{name}_head_grad")._outputs[0][0])
    return out


def _resolve_open_creation(steps: list[Step], nodes: list[Node], shapes: list) -> list[Step]:
    """Creation steps with 0 dims in `shape` (`_zeros(shape=(L, 0, H))`) get the inferred shape."""
    out = []
    for st, node in zip(steps, nodes):
        if is_open_creation(node):
            s = shapes[st.outputs[0]]
            if s is not None and shape_known(s):
                st = st._replace(attrs=resolved_creation_attrs(node, s))
        out.append(st)
    return out


def _entry_names(graph: IndexedGraph) -> list[str]:
    names = []
    for node in graph.nodes:
        names.extend(node.output_names())
    return names


def _infer(graph: IndexedGraph, shape_seed: dict, dtype_seed: dict) -> tuple[list, list]:
    return graph_shapes(graph, shape_seed), graph_types(graph, dtype_seed)


def build_schedule(heads: Sequence[Entry], input_nodes: Sequence[Node], shapes: Sequence[Any],
                   dtypes: Sequence[Any], *, wrt: Sequence[Node] = (),
                   constants: dict[Node, Any] | None = None) -> Schedule:
    """Lower `heads` (with a backward for the `wrt` variables when given) to a Schedule.

    `input_nodes` are the variables a forward call provides, with their shapes
    and dtypes (None where unknown); `constants` are variables whose values are
    fixed (folded parameters). Every other variable is an error.
    """
    heads = list(heads)
    constants = dict(constants or {})
    hg_nodes: list = [None] * len(heads)
    grads: list = []
    keep: list = []
    if wrt:
        hg_nodes = head_grad_nodes(heads)
        back = build_backward(heads, list(wrt), [None if n is None else (n, 0) for n in hg_nodes])
        grads, keep = back.grads, back.keep_alive
    graph = IndexedGraph(heads + [g for g in grads if g is not None] + keep)
    present = {id(n) for n in graph.nodes}
    forward_ids = {id(n) for n in topo_sort(heads)}
    _check_variables(graph, input_nodes, hg_nodes, constants, forward_ids)

    def eid(node):
        return graph.entry_id((node, 0))

    shape_seed, dtype_seed = {}, {}
    for node, s, t in zip(input_nodes, shapes, dtypes):
        if id(node) in present:
            if s is not None:
                shape_seed[eid(node)] = tuple(int(d) for d in s)
            if t is not None:
                dtype_seed[eid(node)] = np.dtype(t)
    for node, value in constants.items():
        if id(node) in present:
            shape_seed[eid(node)] = tuple(value.shape)
            dtype_seed[eid(node)] = np.dtype(value.dtype)
    ent_shapes, ent_dtypes = _infer(graph, shape_seed, dtype_seed)
    used_hg = [n if n is not None and id(n) in present else None for n in hg_nodes]
    if any(n is not None for n in used_hg):
        for n, (head, idx) in zip(used_hg, heads):
            if n is not None:
                hid = graph.entry_id((head, idx))
                if ent_shapes[hid] is not None:
                    shape_seed[eid(n)] = ent_shapes[hid]
                if ent_dtypes[hid] is not None:
                    dtype_seed[eid(n)] = ent_dtypes[hid]
        ent_shapes, ent_dtypes = _infer(graph, shape_seed, dtype_seed)

    fwd_nodes = [n for n in graph.nodes if n.op is not None and id(n) in forward_ids]
    bwd_nodes = [n for n in graph.nodes if n.op is not None and id(n) not in forward_ids]
    nodes = fwd_nodes + bwd_nodes
    steps = [Step(n.name, n.op, n.attrs, tuple(graph.entry_id(e) for e in n.inputs),
                  tuple(range(graph.row_ptr[graph.node_id[id(n)]], graph.row_ptr[graph.node_id[id(n)] + 1])))
             for n in nodes]
    steps = _resolve_open_creation(steps, nodes, ent_shapes)
    return Schedule(
        steps=steps, n_forward=len(fwd_nodes), shapes=list(ent_shapes), dtypes=list(ent_dtypes),
        names=_entry_names(graph),
        inputs=[eid(n) if id(n) in present else -1 for n in input_nodes],
        outputs=[graph.entry_id(e) for e in heads],
        head_grads=[None if n is None else eid(n) for n in used_hg],
        grads=[None if g is None else graph.entry_id(g) for g in grads],
        keep=[graph.entry_id(e) for e in keep],
        constants={eid(n): v for n, v in constants.items() if id(n) in present})


def _check_variables(graph: IndexedGraph, input_nodes: Sequence[Node], hg_nodes: Sequence[Node | None],
                     constants: dict, forward_ids: set[int]) -> None:
    """Every variable of the joined graph must be an input, a head gradient or a constant."""
    known = {id(n) for n in input_nodes} | {id(n) for n in hg_nodes if n is not None} | {id(n) for n in constants}
    stray = [n for n in graph.input_nodes() if id(n) not in known]
    if not stray:
        return
    where = "the backward graph" if all(id(n) not in forward_ids for n in stray) else "the graph"
    hint = (": a gradient rule called an operator with a missing input" if where == "the backward graph"
            else "; pass them as inputs")
    raise MXNetError(f"{where} has free variables {[n.name for n in stray]}{hint}")
