"""dce: dead-code elimination.

A graph is what its heads reach, so a node no head reaches is already gone
from every topological view; the rebuilt graph shares no unreachable node with
the old one. What heads can still drag along are control dependencies: one on
a node without side effects only keeps alive a value nobody reads, so it is
dropped (and the node with it, unless something else uses it). Dependencies on
nodes that mutate inputs (BatchNorm's backward updating the moving statistics)
or draw random numbers are kept, and heads are never dropped: a head that
mutates inputs stays whatever uses it.
"""
from __future__ import annotations

from ..graph import Entry, Node
from . import PassContext, register_pass
from .rewrite import rebuild


def has_side_effects(node: Node) -> bool:
    """Running the node changes state beyond its outputs (mutated inputs, the RNG)."""
    return node.op is not None and (node.op.mutates or node.op.random_for(node.attrs))


@register_pass("dce")
def dce(heads: list[Entry], ctx: PassContext) -> list[Entry]:
    """The graph of `heads` without control dependencies on side-effect-free nodes."""
    return rebuild(heads, lambda node, ins: None, keep_dep=has_side_effects)
