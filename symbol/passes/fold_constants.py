"""fold_constants: evaluate at compile time what does not depend on the inputs.

A node is constant when it is a plain operator (not random, mutates nothing)
whose inputs are all constant: operators without inputs (`_zeros`, `_arange`,
`_full`), and anything computed from them or from frozen parameters
(`ctx.value_of`). Such subgraphs are run once with numpy, and every output of
a constant operator node that a non-constant node or a head reads becomes a
new variable `__const<k>__` whose value goes into `ctx.new_params` (with
`__shape__` / `__dtype__` attributes so inference still works).

Not folded: creation nodes whose shape has unknown (0) dims (only inference at
bind time decides them), results larger than `max_constant_bytes` (default
16 MiB: a per-call allocation is better than a resident copy), values that feed
an input the consumer mutates, and nodes whose kernel fails here (the executor
will report that failure with the node's context).
"""
from __future__ import annotations

import numpy as np

from hybridgraph.nd.backend import DTYPE_TO_FLAG
from hybridgraph.nd.kernel import run_kernel

from ..graph import Entry, Node, topo_sort
from ..infer import is_open_creation
from . import PassContext, register_pass
from .rewrite import consumer_nodes, is_plain_op, rebuild

DEFAULT_MAX_CONSTANT_BYTES = 1 << 24


def _evaluate(node: Node, arrays: list, ctx: PassContext) -> tuple | None:
    """The node's outputs computed with numpy, or None when it cannot run here."""
    try:
        res = run_kernel(node.op, node.attrs, arrays, np, ctx.for_training)
    except Exception:  # noqa: BLE001 - left to the executor, which names the node
        return None
    return tuple(np.asarray(r) for r in res)


def constant_values(heads: list[Entry], ctx: PassContext) -> dict[int, tuple]:
    """id(node) -> output values, for every constant node (frozen variables included)."""
    values: dict[int, tuple] = {}
    for node in topo_sort(heads):
        if node.op is None:
            v = ctx.value_of(node.name)
            if v is not None:
                values[id(node)] = (v,)
        elif (is_plain_op(node) and node.op.forward is not None and not is_open_creation(node)
              and all(id(src) in values for src, _ in node.inputs)):
            res = _evaluate(node, [values[id(src)][i] for src, i in node.inputs], ctx)
            if res is not None:
                values[id(node)] = res
    return values


def _mutated_entries(heads: list[Entry]) -> set[tuple[int, int]]:
    """Entries some node writes into (they cannot become shared constants)."""
    out = set()
    for key, users in consumer_nodes(heads).items():
        if any(pos in node.op.mutated(node.attrs) for node, pos in users if node.op is not None):
            out.add(key)
    return out


def _const_variable(name: str, value: np.ndarray) -> Node:
    attrs = {}
    if value.shape:
        attrs["__shape__"] = str(tuple(value.shape))
    if value.dtype in DTYPE_TO_FLAG:
        attrs["__dtype__"] = str(DTYPE_TO_FLAG[value.dtype])
    return Node(None, name, var_attrs=attrs)


def _frontier(heads: list[Entry], folded: set[int]) -> set[tuple[int, int]]:
    """Outputs of folded nodes that a head or a node that stays reads."""
    out = {(id(n), i) for n, i in heads if id(n) in folded}
    for key, users in consumer_nodes(heads).items():
        if key[0] in folded and any(id(u) not in folded for u, _ in users):
            out.add(key)
    return out


@register_pass("fold_constants", provides=("constants_folded",))
def fold_constants(heads: list[Entry], ctx: PassContext) -> list[Entry]:
    """Replace constant subgraphs by variables holding their values."""
    values = constant_values(heads, ctx)
    limit = ctx.options.get("max_constant_bytes", DEFAULT_MAX_CONSTANT_BYTES)
    mutated = _mutated_entries(heads)
    folded = {id(n) for n in topo_sort(heads)
              if n.op is not None and id(n) in values and all(v.nbytes <= limit for v in values[id(n)])
              and not any((id(n), i) in mutated for i in range(n.num_outputs()))}
    if not folded:
        return list(heads)
    frontier = _frontier(heads, folded)
    taken = ctx.taken_names(heads)

    def visit(node: Node, ins: tuple):
        if not any((id(node), i) in frontier for i in range(node.num_outputs())):
            return None
        out = []
        for i, v in enumerate(values[id(node)]):
            if (id(node), i) in frontier:
                name = ctx.fresh_name("__const{}__", taken)
                ctx.new_params[name] = v
                out.append((_const_variable(name, v), 0))
            else:  # read only by folded nodes, which are gone from the new graph
                out.append((node, i))
        return tuple(out)

    return rebuild(heads, visit)
