"""cse: common-subexpression elimination.

Two operator nodes with the same operator, the same attributes
(`Attrs.key()`) and the same (already merged) inputs compute the same values,
so the second is replaced by the first. Nodes that draw random numbers
(`op.random_for(attrs)`: Dropout, samplers), mutate inputs, or carry
subgraphs / control dependencies are never merged; variables are distinct by
name and never merged either.
"""
from __future__ import annotations

from ..graph import Entry, Node
from . import PassContext, register_pass
from .rewrite import clone, is_plain_op, outputs_of, rebuild


def _key(node: Node, ins: tuple) -> tuple:
    return (node.op.name, node.attrs.key(), tuple((id(src), i) for src, i in ins))


@register_pass("cse")
def cse(heads: list[Entry], ctx: PassContext) -> list[Entry]:
    """Merge operator nodes that compute the same thing from the same inputs."""
    seen: dict[tuple, tuple] = {}

    def visit(node: Node, ins: tuple):
        if not is_plain_op(node):
            return None
        key = _key(node, ins)
        if key not in seen:
            seen[key] = outputs_of(node if ins == node.inputs else clone(node, ins))
        return seen[key]

    return rebuild(heads, visit)
