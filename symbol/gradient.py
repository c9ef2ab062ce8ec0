"""The symbolic gradient pass: backward graphs from the registry's gradient rules.

Each operator's rule `gradient(F, attrs, inputs, outputs, ograds)` is called
with `F = symbol.ops_namespace`, so the same rule that runs eagerly on the
autograd tape builds backward nodes here. Gradients reaching one entry from
several consumers are summed (`elemwise_add` / `add_n`); loss-style operators
(`OpDef.loss`) ignore their head gradient; `ZERO_GRAD` rules stop the
gradient (nothing flows behind them, so what lies behind needs no rule; an
argument reached only through them gets zeros); an operator without a rule on a path that needs a gradient is an
error naming it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Sequence

from hybridgraph.nd.errors import MXNetError
from hybridgraph.nd.registry import ZERO_GRAD, call_gradient, has_op

from . import naming
from .graph import Entry, Node, topo_sort
from .naming import AttrScope, Prefix
from .symbol import Group, Symbol, var


@dataclass
class Backward:
    """What the gradient pass built for one forward graph.

    `grads[i]` is the gradient entry of `wrt[i]` (None when no path connects
    it to the heads); `head_grads[j]` is the variable node holding head j's
    gradient (None for loss heads, whose rule ignores it); `keep_alive` are
    outputs of backward nodes that mutate inputs (BatchNorm's moving stats),
    which must run even when none of their gradients is used.
    """

    grads: list
    head_grads: list
    keep_alive: list = field(default_factory=list)


def _key(entry: Entry) -> tuple[int, int]:
    return id(entry[0]), entry[1]


def _needs_grad(order: list[Node], wrt: Sequence[Node]) -> set[int]:
    """ids of the nodes that depend on some `wrt` variable (only those need a rule)."""
    need = {id(n) for n in wrt}
    for node in order:
        if any(id(src) in need for src, _ in node.inputs):
            need.add(id(node))
    return need


def _sum(grads: list[Symbol]) -> Symbol:
    """The sum of the gradients reaching one entry (fan-out)."""
    from . import ops_namespace as F  # noqa: N812 - the gradient rules' F
    if len(grads) == 1:
        return grads[0]
    if len(grads) > 2 and has_op("add_n"):
        return F.add_n(*grads)
    total = grads[0]
    for g in grads[1:]:
        total = F.elemwise_add(total, g)
    return total


def _call_rule(node: Node, ograds: list[Symbol], wanted: tuple | None = None) -> list:
    """Run one node's gradient rule symbolically; one entry (or None) per input (`wanted`:
    the inputs whose gradients are needed, None = all)."""
    from . import ops_namespace as F  # noqa: N812
    op = node.op
    inputs = [Symbol([e]) for e in node.inputs]
    outputs = [Symbol([(node, i)]) for i in range(node.num_outputs())]
    if op.gradient is None:
        raise MXNetError(f"operator {op.name} (node {node.name!r}) is not differentiable: it has no "
                         "gradient rule, but a gradient has to flow through it. Stop the gradient "
                         "before it (BlockGrad) or set grad_req='null' for the arguments behind it.")
    if op.gradient == ZERO_GRAD:
        return [F.zeros_like(x) for x in inputs]
    res = call_gradient(op, F, node.attrs, inputs, outputs, ograds, wanted)
    if len(res) != len(inputs):
        raise MXNetError(f"the gradient rule of {op.name} (node {node.name!r}) returned {len(res)} "
                         f"gradients for {len(inputs)} inputs")
    return res


def _node_ograds(node: Node, grads: dict) -> list[Symbol] | None:
    """The summed gradients of every output of a node, zeros where none arrived."""
    from . import ops_namespace as F  # noqa: N812
    lists = [grads.pop((id(node), i), None) for i in range(node.num_outputs())]
    if all(g is None for g in lists) and not node.op.loss:
        return None
    return [F.zeros_like(Symbol([(node, i)])) if g is None else _sum(g)
            for i, g in enumerate(lists)]


class _BackwardScope:
    """Backward nodes get `<forward node>_backward_<op><k>` names and no user attribute scope,
    and leave the user's automatic-name counters untouched."""

    def __init__(self, node: Node):
        self._nm = Prefix(f"{node.name}_backward_")
        self._token = None

    def __enter__(self):
        self._nm.__enter__()
        self._token = naming._current_scope.set(AttrScope())
        return self

    def __exit__(self, *exc):
        naming._current_scope.reset(self._token)
        self._nm.__exit__(*exc)


def build_backward(heads: Sequence[Entry], wrt: Sequence[Node], head_grads: Sequence[Entry | None]) -> Backward:
    """Gradient entries of `wrt` variables given gradient entries for the heads.

    `head_grads[j]` may be None for heads whose operator is loss-style.
    """
    from . import ops_namespace as F  # noqa: N812
    order = topo_sort(heads)
    need = _needs_grad(order, wrt)
    grads: dict[tuple[int, int], list[Symbol]] = {}
    for head, hg in zip(heads, head_grads):
        if hg is not None and id(head[0]) in need:
            grads.setdefault(_key(head), []).append(Symbol([hg]))
    produced: list[Entry] = []
    cut: list[Entry] = []
    for node in reversed(order):
        if node.op is None or id(node) not in need:
            continue
        with _BackwardScope(node):
            ograds = _node_ograds(node, grads)
            if ograds is None:
                continue
            if node.op.gradient == ZERO_GRAD:
                # a zero gradient (BlockGrad, comparisons) propagates as "no gradient", as NNVM's
                # zero_ops do: the nodes behind it need no rule (MXNet binds stop_gradient(batch_take))
                cut.extend(e for e in node.inputs if id(e[0]) in need)
                continue
            res = _call_rule(node, ograds, tuple(i for i, (src, _) in enumerate(node.inputs) if id(src) in need))
        for entry, g in zip(node.inputs, res):
            if g is None:
                continue
            produced.append(g._outputs[0])
            if id(entry[0]) in need:
                grads.setdefault(_key(entry), []).append(g)
    out = []
    behind_cut = {id(n) for n in topo_sort(cut)} if cut else set()
    for node in wrt:
        got = grads.get((id(node), 0))
        with _BackwardScope(node):
            if got is None and id(node) in behind_cut:   # reached only through zero gradients
                got = [F.zeros_like(Symbol([(node, 0)]))]
            out.append(None if got is None else _sum(got)._outputs[0])
    return Backward(out, list(head_grads), _mutating_entries(produced, {id(n) for n in order}))


def _mutating_entries(produced: list[Entry], forward: set[int]) -> list[Entry]:
    """Outputs of backward nodes that mutate their inputs (they must run)."""
    if not produced:
        return []
    return [(n, 0) for n in topo_sort(produced)
            if id(n) not in forward and n.op is not None and n.op.mutates]


def head_grad_variables(sym: Symbol) -> list[Node | None]:
    """One `<output>_head_grad` variable per output; None for outputs of loss-style ops."""
    names = sym.list_outputs()
    out = []
    for (node, _), name in zip(sym._outputs, names):
        if node.op is not None and node.op.loss:
            out.append(None)
        else:
            out.append(var(f"{name}_head_grad")._outputs[0][0])
    return out


def gradient(sym: Symbol, wrt: Sequence[str]) -> Symbol:
    """The gradients of `sym`'s outputs with respect to the named arguments (a Group).

    Head gradients are new variables `<output>_head_grad` (loss-style outputs
    need none); a named argument that does not reach the outputs gets
    `zeros_like` of itself.
    """
    from . import ops_namespace as F  # noqa: N812
    if isinstance(wrt, str):
        wrt = [wrt]
    args = {n.name: n for n in sym._graph().arguments()}
    missing = [w for w in wrt if w not in args]
    if missing:
        raise MXNetError(f"gradient: {missing} are not arguments of the symbol; its arguments are "
                         f"{list(args)}")
    nodes = [args[w] for w in wrt]
    hg_nodes = head_grad_variables(sym)
    hg = [None if n is None else (n, 0) for n in hg_nodes]
    back = build_backward(sym._outputs, nodes, hg)
    out = []
    for node, g in zip(nodes, back.grads):
        if g is None:
            with _BackwardScope(node):
                g = F.zeros_like(Symbol([(node, 0)]))._outputs[0]
        out.append(Symbol([g]))
    return Group(out)
