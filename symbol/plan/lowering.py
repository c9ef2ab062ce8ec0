"""Lowering a graph for the compiled plan: symbol/passes' pipeline, then the schedule (with the
backward for the requested inputs, inference and optional mirroring) that `Plan` runs."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hybridgraph.nd.backend import Context

from ..graph import Entry, Node, topo_sort
from .mirror import mirror_schedule
from .schedule import Schedule, build_schedule

__all__ = ["lower", "run_passes"]


def run_passes(heads: list[Entry], *, for_training: bool, shapes: dict, dtypes: dict,
               disable: Sequence[str] = (), lint: bool = False, params: dict | None = None
               ) -> tuple[list[Entry], dict, list[str]]:
    """Run symbol/passes' default pipeline (an import error there is an error here: a graph
    never runs unoptimised behind the user's back).

    `params` (numpy arrays by variable name) are frozen at inference: their values may be
    folded into the graph (BatchNorm into the Convolution before it); ignored for training.
    Returns (new heads, new constant parameters by name, names of the passes that ran).
    """
    from .. import passes  # noqa: PLC0415 - passes import the plan package (cycle)
    new_heads, new_params = passes.optimize(heads, for_training=for_training, disable=tuple(disable),
                                            lint=lint, shapes=shapes, dtypes=dtypes,
                                            params=None if for_training else params)
    pipeline = passes.DEFAULT_TRAINING if for_training else passes.DEFAULT_INFERENCE
    return list(new_heads), dict(new_params), [p for p in pipeline if p not in disable]


def lower(heads: Sequence[Entry], inputs: Sequence[str | Node], shapes: Sequence, dtypes: Sequence, *,
          wrt: Sequence[str | Node] = (), passes: bool = False, for_training: bool = True, mirror: bool = False,
          disable: Sequence[str] = (), lint: bool = False, ctx: Context | None = None,
          params: dict | None = None) -> tuple[Schedule, list[str]]:
    """Graph -> (Schedule, passes that ran): passes, backward for `wrt`, inference, mirror.

    `inputs` / `wrt` are variable nodes or names; after graph passes variables
    are matched by name (a pass may rebuild them). `params`: see `run_passes`.
    """
    heads = list(heads)
    names = [x if isinstance(x, str) else x.name for x in inputs]
    ran: list[str] = []
    new_params: dict = {}
    if passes:
        new_heads, new_params, ran = run_passes(
            heads, for_training=for_training or bool(wrt),
            shapes={n: tuple(s) for n, s in zip(names, shapes) if s is not None},
            dtypes={n: np.dtype(t) for n, t in zip(names, dtypes) if t is not None},
            disable=disable, lint=lint, params=params)
        changed = new_heads != heads
        heads = new_heads
    else:
        changed = False
    variables: dict[str, Node] = {}
    present: set[int] = set()
    for node in topo_sort(heads):
        if node.op is None:
            variables.setdefault(node.name, node)
            present.add(id(node))

    def node_of(x):
        if isinstance(x, Node) and (not changed or id(x) in present):
            return x
        name = x if isinstance(x, str) else x.name
        return variables.get(name)

    input_nodes = []
    for x, name in zip(inputs, names):
        node = node_of(x)
        if node is None:       # the input is not used by (what is left of) the graph
            from ..symbol import var
            node = var(name)._outputs[0][0]
        input_nodes.append(node)
    xp = (ctx or Context("cpu")).xp
    constants = {variables[n]: xp.asarray(v) for n, v in new_params.items() if n in variables}
    wrt_found = [node_of(x) for x in wrt]
    wrt_nodes = [n for n in wrt_found if n is not None]
    sched = build_schedule(heads, input_nodes, shapes, dtypes, wrt=wrt_nodes, constants=constants)
    if wrt:
        it = iter(sched.grads)
        sched.grads = [None if n is None else next(it) for n in wrt_found]
    if mirror and sched.has_backward:
        sched = mirror_schedule(sched)
        ran = ran + ["mirror"]
    return sched, ran
