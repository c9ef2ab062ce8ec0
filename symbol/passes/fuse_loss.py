"""fuse_loss: Gluon's softmax cross-entropy chain becomes one `_sparse_softmax_ce` node.

A hybridized `SoftmaxCrossEntropyLoss` (class-index labels, from logits, unweighted) traces
to MXNet's operators, which its export keeps:

    log_softmax(pred, axis) -> pick(., label, axis, keepdims=True) -> -1 * .
        [-> mean(., axis=batch_axis, exclude=True)]

Four kernels forward and four backward for a few thousand numbers: in a small model's
training step the loss costs more than a layer. Plans (not exports) run the chain as the
fused kernel the eager loss already uses (nd/ops/loss_fused.py), whose gradient is one
kernel. Its values are the chain's: the same numpy operations in the same order.

Each intermediate entry must be read by its one consumer only and be no head; log_softmax
must have no temperature, dtype or length, pick must clip, and the scalar must be -1.
Switch: ``disable=("fuse_loss",)`` where passes can be disabled, or HYBRIDGRAPH_FUSE_LOSS=0.
"""
from __future__ import annotations

import os

from hybridgraph.nd.registry import get_op

from ..graph import Entry, Node
from . import PassContext, register_pass
from .rewrite import consumers, head_keys, make_node, rebuild


def enabled() -> bool:
    """Whether the pass rewrites anything (HYBRIDGRAPH_FUSE_LOSS=0 turns it off)."""
    return os.environ.get("HYBRIDGRAPH_FUSE_LOSS", "1") not in ("0", "")


class _Matcher:
    def __init__(self, heads: list[Entry], ctx: PassContext):
        self.uses = consumers(heads)
        self.heads = head_keys(heads)
        self.shapes = ctx.entry_shapes(heads)
        self.ops = {name: get_op(name) for name in ("log_softmax", "pick", "_mul_scalar", "negative", "mean")}

    def private(self, entry: Entry) -> bool:
        key = (id(entry[0]), entry[1])
        return entry[1] == 0 and self.uses[key] == 1 and key not in self.heads

    def _axis(self, axis: int, entry: Entry) -> int | None:
        """`axis` made non-negative with the rank of `entry` (None when the rank is unknown)."""
        if axis >= 0:
            return axis
        shape = self.shapes.get((id(entry[0]), entry[1]))
        return None if shape is None else axis + len(shape)

    def negated_pick(self, node: Node) -> tuple | None:
        """(pred entry, label entry, axis) when `node` is -pick(log_softmax(pred), label)."""
        op, a = node.op, node.attrs
        if not ((op is self.ops["_mul_scalar"] and a.scalar == -1.0) or op is self.ops["negative"]):
            return None
        pick_e = node.inputs[0]
        pick = pick_e[0]
        if pick.op is not self.ops["pick"] or not self.private(pick_e):
            return None
        pa = pick.attrs
        if not pa.keepdims or pa.mode != "clip" or pa.axis is None:
            return None
        ls_e, label = pick.inputs
        ls = ls_e[0]
        if ls.op is not self.ops["log_softmax"] or not self.private(ls_e):
            return None
        la = ls.attrs
        if la.temperature is not None or la.dtype is not None or la.use_length:
            return None
        pred = ls.inputs[0]
        if la.axis != pa.axis:
            ax, bx = self._axis(la.axis, pred), self._axis(pa.axis, ls_e)
            if ax is None or ax != bx:
                return None
        return pred, label, la.axis

    def batch_mean(self, node: Node) -> tuple | None:
        """(negated pick node, batch axis) when `node` is mean(-pick(...), axis=b, exclude=True)."""
        a = node.attrs
        if node.op is not self.ops["mean"] or not a.exclude or a.keepdims or a.axis is None:
            return None
        axes = a.axis if isinstance(a.axis, tuple) else (a.axis,)
        if len(axes) != 1 or not self.private(node.inputs[0]):
            return None
        return node.inputs[0][0], axes[0]


@register_pass("fuse_loss", provides=("loss_fused",))
def fuse_loss(heads: list[Entry], ctx: PassContext) -> list[Entry]:
    """Run softmax cross-entropy chains as one `_sparse_softmax_ce` node."""
    if not enabled():
        return heads
    m = _Matcher(heads, ctx)
    fused_op = get_op("_sparse_softmax_ce")
    rewritten: dict[int, tuple] = {}   # old node id -> the entries replacing its outputs

    def fused(node: Node, neg: Node, batch_axis: int | None) -> tuple | None:
        found = m.negated_pick(neg)
        if found is None:
            return None
        pred, label, axis = found       # entries of the old graph: their rewritten entries
        pred, label = rewritten[id(pred[0])][pred[1]], rewritten[id(label[0])][label[1]]
        given = {"axis": str(axis)}
        if batch_axis is not None:
            given["batch_axis"] = str(batch_axis)
        return ((make_node(fused_op, node.name, given, (pred, label)), 0),)

    def visit(node: Node, ins: tuple) -> tuple | None:
        if node.op is None:
            return None
        mean = m.batch_mean(node)
        out = fused(node, mean[0], mean[1]) if mean is not None else None
        if out is None and node.op in (m.ops["_mul_scalar"], m.ops["negative"]):
            out = fused(node, node, None)
        return out

    def after(node: Node, new: tuple) -> None:
        rewritten[id(node)] = new

    return rebuild(heads, visit, after=after)
