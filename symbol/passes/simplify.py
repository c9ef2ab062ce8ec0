"""simplify: algebraic simplification from the registry's identities.

Two OpDef properties drive every rule (no per-operator code here):

* `identity_when(attrs, is_train, input shape)`: output 0 equals input 0 (in
  value and gradient), e.g. `_copy`, `x*1`, `x+0`, `x-0`, `x/1`, `x**1`,
  `Dropout` at inference or with p=0, `BlockGrad` at inference, a reshape to
  the same shape, an identity transpose. Consumers then read the input
  directly. A head keeps a node of its own: it becomes `_copy` (so a Dropout
  head at inference no longer builds its mask).
* `self_compose(inner attrs, outer attrs, input shape)`: `op(op(x))` is one
  application (reshape of reshape, transpose of transpose); the composed node
  may then be an identity too.

A node is only bypassed when its other outputs (Dropout's mask) are unused and
no consumer mutates it. `ctx.for_training` is the `is_train` the identities
see: in training, Dropout (p > 0) and BlockGrad stay.
"""
from __future__ import annotations

from hybridgraph.nd.registry import get_op

from ..graph import Entry, Node
from . import PassContext, register_pass
from .rewrite import consumer_nodes, consumers, head_keys, make_node, outputs_of, rebuild


class _Simplifier:
    """The state of one simplify run: old-graph facts plus shapes of new entries."""

    def __init__(self, heads: list[Entry], ctx: PassContext):
        self.is_train = ctx.for_training
        self.shapes = ctx.entry_shapes(heads)       # old entries
        self.new_shapes: dict[tuple[int, int], tuple] = {}
        self.uses = consumers(heads)
        self.heads = head_keys(heads)
        self.mutated = {key for key, users in consumer_nodes(heads).items()
                        if any(u.op is not None and pos in u.op.mutated(u.attrs) for u, pos in users)}
        self.copy_op = get_op("_copy")

    def visit(self, node: Node, ins: tuple) -> tuple | None:
        if node.op is None:
            return None
        attrs, x = node.attrs, ins[0] if ins else None
        composed = False
        while (step := self._compose(node.op, attrs, x)) is not None:
            attrs, x = step
            composed = True
        out = self._bypass(node, attrs, x)
        if out is None and composed:
            out = outputs_of(make_node(node.op, node.name, dict(attrs.given), (x,)))
        return out

    def record(self, node: Node, out: tuple) -> None:
        """Rewrites keep shapes: the new entries get the old entries' shapes."""
        for i, e in enumerate(out):
            if (id(node), i) in self.shapes:
                self.new_shapes[(id(e[0]), e[1])] = self.shapes[(id(node), i)]

    def _shape(self, entry: Entry | None) -> tuple | None:
        return None if entry is None else self.new_shapes.get((id(entry[0]), entry[1]))

    def _compose(self, op, attrs, x: Entry | None):
        """(attrs, input) of one application equal to op(inner(input), attrs) when x is the
        output of an `inner` application of the same operator, else None. An `attrs` of None
        means the two cancel out."""
        if op.self_compose is None or x is None or attrs is None:
            return None
        inner, idx = x
        if inner.op is not op or idx != 0 or len(inner.inputs) != 1:
            return None
        given = op.self_compose(inner.attrs, attrs, self._shape(inner.inputs[0]))
        if given is None:
            return None
        return (None if given == "identity" else op.parse_attrs(given)), inner.inputs[0]

    def _bypass(self, node: Node, attrs, x: Entry | None) -> tuple | None:
        """Entries replacing an identity node's outputs, or None when it is not one."""
        op = node.op
        if x is None or (op.identity_when is None and attrs is not None):
            return None
        if attrs is not None and not op.identity_when(attrs, self.is_train, self._shape(x)):
            return None
        if any(self.uses[(id(node), i)] for i in range(1, node.num_outputs())):
            return None
        if (id(node), 0) in self.mutated:
            return None
        rest = tuple((node, i) for i in range(1, node.num_outputs()))  # unused
        if (id(node), 0) in self.heads:
            if op is self.copy_op and node.inputs == (x,):
                return outputs_of(node)
            return ((make_node(self.copy_op, node.name, {}, (x,)), 0),) + rest
        return (x,) + rest


@register_pass("simplify")
def simplify(heads: list[Entry], ctx: PassContext) -> list[Entry]:
    """Bypass identity nodes and compose chains of self-composable operators."""
    simplifier = _Simplifier(heads, ctx)
    return rebuild(heads, simplifier.visit, after=simplifier.record)
