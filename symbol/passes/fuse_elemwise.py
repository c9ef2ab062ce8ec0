"""fuse_elemwise: trees of elementwise operators become one `_fused_elemwise` node.

A node can join a group when its operator is `elementwise` with one output,
is plain (not random, mutates nothing, not train-aware) and has a kernel.
Groups grow from a root (visited consumers first) towards inputs through
entries read by exactly one group member and by nothing else (no head), so
each group is a tree whose only outside-visible value is the root's output
(this also rules out cycles through the group).

Every member must produce the group's output shape and dtype, so the fused
kernel can compute everything in buffers of that shape: with known shapes
(`ctx.entry_shapes`) broadcasting operators may join when their output has the
group's shape; without shapes only operators using the shared same-shape rule
(and the default same-dtype rule) join. Groups of one node stay as they are.

The fused node keeps the root's name; its gradient replays the members' own
rules (nd/ops/fused.py), so the pass is valid for training graphs too.
"""
from __future__ import annotations

from hybridgraph.nd.ops.fused import encode_program
from hybridgraph.nd.registry import get_op, same_shape, same_type

from ..graph import Entry, Node, topo_sort
from . import PassContext, register_pass
from .rewrite import consumers, head_keys, make_node, rebuild, visible_given


class _Grouper:
    """Partition of the old graph's fusable nodes into trees (root id -> members)."""

    def __init__(self, heads: list[Entry], ctx: PassContext):
        self.uses = consumers(heads)
        self.heads = head_keys(heads)
        self.shapes = ctx.entry_shapes(heads)
        self.dtypes = ctx.entry_dtypes(heads)
        self.order = topo_sort(heads)

    def fusable(self, node: Node) -> bool:
        op = node.op
        return (op is not None and op.elementwise and op.forward is not None and node.num_outputs() == 1
                and not op.random_for(node.attrs) and not op.mutates and not op.train_aware
                and not node.subgraphs and not node.control_deps)

    def compatible(self, node: Node, root: Node) -> bool:
        """Same output shape and dtype as the root (or provably so without shapes)."""
        key, rkey = (id(node), 0), (id(root), 0)
        if rkey in self.shapes:
            if self.shapes.get(key) != self.shapes[rkey]:
                return False
        elif node.op.infer_shape is not same_shape:
            return False
        if rkey in self.dtypes:
            ins_ok = all(self.dtypes.get((id(s), i)) == self.dtypes[rkey] for s, i in node.inputs)
            return ins_ok and self.dtypes.get(key) == self.dtypes[rkey]
        return node.op.infer_type is same_type

    def groups(self) -> dict[int, list[Node]]:
        """root id -> members in topological order, for every tree of two or more nodes."""
        position = {id(n): k for k, n in enumerate(self.order)}
        assigned: set[int] = set()
        out: dict[int, list[Node]] = {}
        for root in reversed(self.order):
            if id(root) in assigned or not self.fusable(root) or not self.compatible(root, root):
                continue
            members, stack = {id(root): root}, [root]
            while stack:
                reader = stack.pop()
                for src, idx in reader.inputs:
                    if id(src) in members or id(src) in assigned or not self._joins(src, idx, reader, root):
                        continue
                    members[id(src)] = src
                    stack.append(src)
            if len(members) > 1:
                assigned.update(members)
                out[id(root)] = sorted(members.values(), key=lambda m: position[id(m)])
        return out

    def _joins(self, src: Node, idx: int, reader: Node, root: Node) -> bool:
        """`src` joins the reader's group: fusable, compatible, and read by the reader only."""
        only_reader = self.uses[(id(src), idx)] == sum(1 for s, _ in reader.inputs if s is src)
        return (only_reader and (id(src), idx) not in self.heads and self.fusable(src)
                and self.compatible(src, root))


def _program(members: list[Node], new_ins: dict[int, tuple]) -> tuple[str, list[Entry]]:
    """The program text of a group (members in topological order) and its external input
    entries in the new graph."""
    in_group = {id(m) for m in members}
    externals: list[Entry] = []
    ext_reg: dict[tuple[int, int], int] = {}
    for n in members:
        for (src, _), e in zip(n.inputs, new_ins[id(n)]):
            if id(src) not in in_group and (id(e[0]), e[1]) not in ext_reg:
                ext_reg[(id(e[0]), e[1])] = len(externals)
                externals.append(e)
    reg = {id(n): len(externals) + j for j, n in enumerate(members)}
    steps = [(n.op.name, visible_given(n.attrs),
              [reg[id(src)] if id(src) in in_group else ext_reg[(id(e[0]), e[1])]
               for (src, _), e in zip(n.inputs, new_ins[id(n)])])
             for n in members]
    return encode_program(steps), externals


@register_pass("fuse_elemwise", provides=("fused",))
def fuse_elemwise(heads: list[Entry], ctx: PassContext) -> list[Entry]:
    """Replace each tree of two or more compatible elementwise nodes by one fused node."""
    groups = _Grouper(heads, ctx).groups()
    if not groups:
        return list(heads)
    fused_op = get_op("_fused_elemwise")
    new_ins: dict[int, tuple] = {}

    def visit(node: Node, ins: tuple):
        new_ins[id(node)] = ins
        members = groups.get(id(node))
        if members is None:
            return None
        text, externals = _program(members, new_ins)
        fused = make_node(fused_op, node.name, {"program": text, "num_args": len(externals)}, externals)
        return ((fused, 0),)

    return rebuild(heads, visit)
