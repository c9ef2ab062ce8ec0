"""Differentiable gradients of a hybridized call (autograd with `create_graph=True`).

A hybridized call is one tape node whose backward runs compiled code on raw arrays,
so its gradients are not recorded and cannot be differentiated again. When the
backward is itself being recorded (`autograd.grad(..., create_graph=True)`, e.g. a
gradient penalty), the node replays its compiled schedule instead — the forward and
backward steps — eagerly on the tape, from the same inputs and head gradients. Every
step is a registry operator with a gradient rule, so the input gradients come out
recorded, exactly as for an un-hybridized block.

A replay recomputes the forward: graphs with random operators (new random numbers)
or operators that update state in place (BatchNorm's moving statistics, updated
twice) cannot be replayed and raise a clear error instead.
"""
from __future__ import annotations

from typing import Sequence

from hybridgraph.nd import autograd
from hybridgraph.nd.dispatch import run_eager
from hybridgraph.nd.errors import AutogradError
from hybridgraph.nd.ndarray import NDArray
from hybridgraph.symbol.plan.schedule import Schedule


def _check_replayable(sched: Schedule, name: str) -> None:
    hidden_used = {e for st in sched.steps for e in st.inputs}
    for st in sched.steps:
        why = None
        if st.op.random_for(st.attrs):
            why = "draws random numbers"
        elif st.op.mutates:
            why = "updates its inputs in place"
        elif any(e in hidden_used for e in st.outputs[st.op.num_visible_outputs(st.attrs):]):
            why = "passes hidden outputs to its gradient"
        if why is not None:
            raise AutogradError(
                f"higher-order gradients (create_graph=True) through hybridized block {name!r}: node "
                f"{st.name} ({st.op.name}) {why}, so the block's computation cannot be replayed on the "
                "tape. Call this block un-hybridized (hybridize(False)) where you need them.")


def replay_gradients(sched: Schedule, arrays: Sequence[NDArray], ograds: Sequence[NDArray],
                     is_train: bool, name: str) -> list:
    """Recorded gradients (one per `sched.grads` entry, None where there is none) of the
    schedule's outputs, weighted by `ograds`, with respect to its inputs `arrays`."""
    _check_replayable(sched, name)
    ctx = arrays[0].context if arrays else None
    env: dict[int, NDArray] = {e: a for e, a in zip(sched.inputs, arrays) if e is not None and e >= 0}
    env.update({e: NDArray._wrap(v, ctx) for e, v in sched.constants.items()})
    env.update({e: g for e, g in zip(sched.head_grads, ograds) if e is not None})
    with autograd.train_mode() if is_train else autograd.predict_mode():
        for st in sched.steps:
            res = run_eager(st.op, st.attrs, [env[i] for i in st.inputs])
            for e, r in zip(st.outputs, res if isinstance(res, list) else [res]):
                env[e] = r
    return [None if g is None else env[g] for g in sched.grads]
