"""What a compiled plan learns from running a schedule step by step, and how that run stays small.

The first call of a new input signature runs the schedule one kernel at a time
(`Plan.interpret`) so `Calibration` can observe which results are views of
their inputs, which are read-only or non-contiguous, and which kernels return
a shape or dtype other than the inferred one; the memory plan is made from
that. The run keeps only live values: `dead_after` lists, per step, the
entries nothing reads later, and the interpreter drops them there, so the
first call peaks near the eager peak instead of holding every intermediate
(the naive total) at once.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from .memory import liveness
from .schedule import Schedule, Step

__all__ = ["Calibration", "dead_after"]


def dead_after(sched: Schedule, keep: Iterable[int] = ()) -> dict[int, tuple[int, ...]]:
    """step index -> entries whose last reader (or writer) is that step.

    Never listed: external entries (inputs, head gradients, constants), forward
    outputs, gradients and `keep` (what else the caller holds past the run).
    Entries the backward reads have their last use in the backward, so a
    recording forward keeps its saved activations by construction. The
    schedule's own `keep` (backward nodes kept only for their side effects) is
    freed like any other value, as in the compiled plan.
    """
    hold = set(sched.external()) | set(sched.outputs) | set(keep)
    hold |= {g for g in sched.grads if g is not None}
    _, last = liveness(sched, ())
    out: dict[int, list[int]] = {}
    for e, k in enumerate(last):
        if k >= 0 and e not in hold:
            out.setdefault(k, []).append(e)
    return {k: tuple(v) for k, v in out.items()}


class Calibration:
    """What the step-by-step first run saw: views, unwritable results, wrong shapes."""

    def __init__(self, sched: Schedule, xp):
        self.sched, self.xp = sched, xp
        self.aliases: dict[int, set[int]] = {}
        self.not_writable: set[int] = set()
        self.bad: set[int] = set()
        self.share = getattr(xp, "may_share_memory", None)
        self.forward_runs = 0
        self.observed: set[int] = set()
        #: step index -> bytes of temporaries its kernel took (ops declaring `scratch`)
        self.scratch: dict[int, int] = {}

    def _may_share(self, a, b) -> bool:
        if not hasattr(a, "shape") or not hasattr(b, "shape"):
            return False
        if self.share is not None:
            try:
                return bool(self.share(a, b))
            except (TypeError, ValueError):
                return True
        return True

    def observe(self, st: Step, args: list, res: Sequence) -> None:
        sched = self.sched
        self.observed.update(st.outputs)
        for j, (e, r) in enumerate(zip(st.outputs, res)):
            if not hasattr(r, "shape") or tuple(r.shape) != tuple(sched.shapes[e] or ()) \
                    or sched.dtypes[e] is None or r.dtype != sched.dtypes[e]:
                self.bad.add(e)
            flags = getattr(r, "flags", None)
            if flags is None or not flags.c_contiguous or not getattr(flags, "writeable", True):
                self.not_writable.add(e)
            for x, a in zip(st.inputs, args):
                if self._may_share(r, a):
                    self.aliases.setdefault(e, set()).add(x)
            for e2, r2 in zip(st.outputs[:j], res[:j]):
                if self._may_share(r, r2):
                    self.aliases.setdefault(e, set()).add(e2)

    def assume_unobserved(self) -> None:
        """Steps never run (a backward not seen yet): results of kernels that allocate are taken
        to be views of their inputs and are never written in place (safe, if less frugal)."""
        ext = self.sched.external()
        for st in self.sched.steps:
            if st.op.writes_out or all(o in self.observed for o in st.outputs):
                continue
            for o in st.outputs:
                if o not in self.observed:
                    self.aliases.setdefault(o, set()).update(i for i in st.inputs if i not in ext)
                    self.not_writable.add(o)

    def poolable(self) -> set[int]:
        """Entries the compiled code may write through `out=`."""
        sched = self.sched
        ext = sched.external()
        out = set()
        for st in sched.steps:
            if not st.op.writes_out or any(o in self.bad or not sched.known(o) for o in st.outputs):
                continue
            out.update(o for o in st.outputs if o not in ext)
        return out
