"""Recompute ("mirror") mode: trade compute for memory in training schedules.

Like MXNet's MXNET_BACKWARD_DO_MIRROR, cheap forward steps are not saved for
the backward: the backward re-runs them from the nearest saved value just
before their result is first needed. Which steps are cheap comes from the
registry: elementwise operators that draw no random numbers, mutate nothing
and do not depend on the train flag. To bound the memory of long chains, every
`segment`-th mirrored value in a chain is kept as a checkpoint (sqrt(n)
checkpointing when `segment` is left to its default).
"""
from __future__ import annotations

import math
from collections.abc import Callable

from .schedule import Schedule, Step


def cheap(step: Step) -> bool:
    """The default policy: recompute pointwise, deterministic, pure operators."""
    op = step.op
    return bool(op.elementwise and not op.random_for(step.attrs) and not op.mutates
                and not op.train_aware)


def mirror_schedule(sched: Schedule, policy: Callable[[Step], bool] = cheap,
                    segment: int | None = None) -> Schedule:
    """A schedule whose backward recomputes the forward values `policy` accepts."""
    nf = sched.n_forward
    if nf == len(sched.steps):
        return sched
    fwd = sched.steps[:nf]
    producer = {o: k for k, st in enumerate(fwd) for o in st.outputs}
    escaping = set(sched.outputs)
    mirrored = _mirrored_entries(fwd, policy, escaping, segment)
    if not mirrored:
        return sched
    shapes, dtypes, names = list(sched.shapes), list(sched.dtypes), list(sched.names)
    remap: dict[int, int] = {}
    back: list[Step] = []

    def ensure(e: int) -> int:
        if e in remap:
            return remap[e]
        if e not in mirrored:
            return e
        st = fwd[producer[e]]
        ins = tuple(ensure(i) for i in st.inputs)
        outs = []
        for o in st.outputs:
            outs.append(len(shapes))
            shapes.append(sched.shapes[o])
            dtypes.append(sched.dtypes[o])
            names.append(sched.names[o] + "_mirror")
        back.append(Step(st.name + "_mirror", st.op, st.attrs, ins, tuple(outs)))
        remap.update(zip(st.outputs, outs))
        return remap[e]

    for st in sched.steps[nf:]:
        ins = tuple(ensure(i) for i in st.inputs)
        back.append(st._replace(inputs=ins))
    grads = [None if g is None else ensure(g) for g in sched.grads]
    return Schedule(steps=fwd + back, n_forward=nf, shapes=shapes, dtypes=dtypes, names=names,
                    inputs=list(sched.inputs), outputs=list(sched.outputs), head_grads=list(sched.head_grads),
                    grads=grads, keep=[remap.get(k, k) for k in sched.keep], constants=dict(sched.constants))


def _mirrored_entries(fwd: list[Step], policy: Callable[[Step], bool], escaping: set[int],
                      segment: int | None) -> set[int]:
    """Outputs of forward steps to recompute; every `segment`-th link of a chain is kept."""
    cheap_steps = {k for k, st in enumerate(fwd) if policy(st)}
    if not cheap_steps:
        return set()
    if segment is None:
        segment = max(2, math.isqrt(len(cheap_steps)) + 1)
    depth: dict[int, int] = {}
    out: set[int] = set()
    for k, st in enumerate(fwd):
        if k not in cheap_steps:
            continue
        d = 1 + max((depth.get(i, 0) for i in st.inputs), default=0)
        if d >= segment or any(o in escaping for o in st.outputs):
            continue                              # a checkpoint: saved, chains restart after it
        for o in st.outputs:
            depth[o] = d
            out.add(o)
    return out

