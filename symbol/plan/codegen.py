"""Code generation for compiled plans: one straight-line Python function per segment.

A segment (the forward, or the backward, of a planned schedule) becomes the
source of one function in which every step is ONE line calling the kernel::

    e7, = K3(xp, A3, e5, e6, out=(b7,))        # pooled buffer
    e3, = K1(xp, A1, e2, out=(b3,), scratch=w1)    # + temporaries in lent pooled memory
    e8, = K4(xp, A4, e7, out=(e7,))            # in place
    e9, _ = K5(xp, A5, e8, is_train=T)         # the kernel allocates
    del e8

Entry values are local variables (no dictionary or list traffic), kernels and
attributes are constants of the function's namespace, buffers of the memory
plan arrive as one tuple unpacked on entry, and `del` drops a dynamic value
right after its last use. `Segment.step_at(lineno)` maps a traceback line back
to the step, so errors name the node, the operator and the input shapes.
"""
from __future__ import annotations

import itertools
import linecache
import weakref
from dataclasses import dataclass, field
from collections.abc import Callable

import numpy as np


from .memory import MemoryPlan
from .schedule import Schedule, Step

_COUNTER = itertools.count()


@dataclass
class Segment:
    """A generated function with what its caller needs to feed it."""

    fn: Callable
    source: str
    filename: str
    line_step: dict = field(default_factory=dict)   # source line -> step index
    buffers: list = field(default_factory=list)     # entry ids whose pooled views `B` holds, in order
    #                                                 (("w", k): step k's lent scratch bytes)

    def step_at(self, lineno: int) -> int | None:
        return self.line_step.get(lineno)


def _destination(xp) -> Callable:
    """`dest(d, spec)`: the caller's destination array `d`, or a new array of `spec`."""
    empty = xp.empty

    def dest(d, spec):
        return empty(*spec) if d is None else d
    return dest


class _Writer:
    def __init__(self, sched: Schedule, plan: MemoryPlan, xp, bound: dict | None = None,
                 dests: dict | None = None):
        self.sched, self.plan, self.xp = sched, plan, xp
        self.bound = dict(bound or {})
        self.dests = dict(dests or {})   # fresh gradient entry -> its slot in the call's `D`
        self.ns: dict = {"xp": xp, "empty": xp.empty, "dest": _destination(xp)}
        self.lines: list[str] = []
        self.line_step: dict[int, int] = {}
        self.buffers: list[int] = []

    def name(self, e: int) -> str:
        if e in self.sched.constants:
            key = f"c{e}"
            self.ns[key] = self.sched.constants[e]
            return key
        return f"e{e}"

    def emit(self, text: str, step: int | None = None) -> None:
        self.lines.append(text)
        if step is not None:
            self.line_step[len(self.lines)] = step

    def out_tuple(self, st: Step) -> str | None:
        """`out=(...)` for a kernel that writes into planned buffers; None to let it allocate."""
        plan = self.plan
        if not st.op.writes_out or not any(o in plan.written or o in self.bound or o in self.dests
                                           for o in st.outputs):
            return None
        parts = []
        for o in st.outputs:
            if o in self.bound:
                self.ns[f"O{o}"] = self.bound[o]
                parts.append(f"O{o}")
            elif o in plan.inplace:
                parts.append(self.name(plan.inplace[o]))
            elif o in plan.written:
                parts.append(f"b{o}")
                self.buffers.append(o)
            else:
                key = f"S{o}"
                self.ns[key] = (tuple(self.sched.shapes[o]), np.dtype(self.sched.dtypes[o]))
                parts.append(f"dest(D[{self.dests[o]}], {key})" if o in self.dests else f"empty(*{key})")
        return "(" + ", ".join(parts) + ",)"

    def step(self, k: int, st: Step, used: set[int]) -> None:
        self.ns[f"K{k}"] = st.op.forward
        self.ns[f"A{k}"] = st.attrs
        args = ["xp", f"A{k}"] + [self.name(i) for i in st.inputs]
        out = self.out_tuple(st)
        if out is not None:
            args.append(f"out={out}")
        if k in self.plan.scratch:
            args.append(f"scratch=w{k}")
            self.buffers.append(("w", k))
        if st.op.train_aware:
            args.append("is_train=T")
        lhs = ", ".join(self.name(o) if o in used else "_" for o in st.outputs)
        self.emit(f"    {lhs}, = K{k}({', '.join(args)})", k)


def _used_entries(sched: Schedule, extra: set[int]) -> set[int]:
    used = set(extra)
    for st in sched.steps:
        used.update(st.inputs)
    return used


def generate_forward(sched: Schedule, plan: MemoryPlan, xp, keep: list[int], label: str,
                     bound: dict | None = None) -> Segment:
    """`forward(IN, B, T) -> (outputs, kept)`: runs steps[:n_forward]; `kept` are the entries
    listed in `keep` (the saved activations of a training plan). `bound` maps entries to the
    caller's arrays that kernels writing `out=` fill directly (an Executor's outputs)."""
    w = _Writer(sched, plan, xp, bound)
    steps = sched.forward_steps
    returned = set(sched.outputs) | set(keep)
    used = _used_entries(sched, returned)
    ins = ", ".join(w.name(e) if e >= 0 and e in used else "_" for e in sched.inputs)
    w.emit("def forward(IN, B, T):")
    if sched.inputs:
        w.emit(f"    {ins}, = IN")
    buf_line = len(w.lines)
    w.emit("    pass")
    _emit_steps(w, steps, 0, used, returned)
    outs = "".join(w.name(e) + ", " for e in sched.outputs)
    kept = "".join(w.name(e) + ", " for e in keep)
    w.emit(f"    return ({outs}), ({kept})")
    _buffer_unpack(w, buf_line)
    return _compile(w, label)


def generate_backward(sched: Schedule, plan: MemoryPlan, xp, saved: list[int], clear_saved: bool,
                      label: str, bound: dict | None = None) -> Segment:
    """`backward(S, HG, B, T, D) -> grads`: runs steps[n_forward:] from the saved entries `S` (a
    list, emptied on entry when `clear_saved` so values die at their last use) and the head
    gradients `HG` (one per output). `D` holds one array or None per gradient: a gradient the
    plan leaves unpooled is written straight into its array when given (the caller's
    gradient buffer, so no copy follows); the returned gradient is then that array."""
    w = _Writer(sched, plan, xp, bound, _fresh_gradient_slots(sched, plan, bound))
    nf = sched.n_forward
    returned = {g for g in sched.grads if g is not None}
    used = _used_entries(sched, returned)
    w.emit("def backward(S, HG, B, T, D):")
    if saved:
        w.emit(f"    {''.join(w.name(e) + ', ' for e in saved)}= S")
        if clear_saved:
            w.emit("    S.clear()")
    if sched.head_grads:
        hg = ", ".join(w.name(h) if h is not None and h in used else "_" for h in sched.head_grads)
        w.emit(f"    {hg}, = HG")
    buf_line = len(w.lines)
    w.emit("    pass")
    _emit_steps(w, sched.steps[nf:], nf, used, returned)
    grads = "".join(("None" if g is None else w.name(g)) + ", " for g in sched.grads)
    w.emit(f"    return ({grads})")
    _buffer_unpack(w, buf_line)
    return _compile(w, label)


def _fresh_gradient_slots(sched: Schedule, plan: MemoryPlan, bound: dict | None) -> dict:
    """Gradient entry -> its first index in `sched.grads`, for gradients that get a new array
    (neither pooled, nor in place, nor bound, nor an external value)."""
    ext = sched.external()
    slots: dict = {}
    for j, g in enumerate(sched.grads):
        if g is None or g in slots or g in ext or g in plan.written or g in plan.inplace \
                or (bound and g in bound) or g in sched.constants:
            continue
        slots[g] = j
    return slots


def _emit_steps(w: _Writer, steps: list[Step], base: int, used: set[int], returned: set[int]) -> None:
    """The kernel lines, each followed by `del` of the dynamic values it read last."""
    plan = w.plan
    ext = w.sched.external()
    for k, st in enumerate(steps, start=base):
        w.step(k, st, used)
        dead = [e for e in dict.fromkeys(st.inputs) if plan.last_use[e] == k and e not in returned
                and e not in ext and e not in w.sched.constants]
        if dead:
            w.emit("    del " + ", ".join(w.name(e) for e in dead))


def _buffer_unpack(w: _Writer, line_index: int) -> None:
    """Replace the placeholder line with `b3, b7, = B` (the pooled views this segment writes)."""
    if w.buffers:
        w.buffers = list(dict.fromkeys(w.buffers))
        w.lines[line_index] = "    " + "".join(f"w{e[1]}, " if isinstance(e, tuple) else f"b{e}, "
                                                for e in w.buffers) + "= B"
    else:
        w.lines[line_index] = "    pass"


def _compile(w: _Writer, label: str) -> Segment:
    source = "\n".join(w.lines) + "\n"
    filename = f"<compiled plan {label} #{next(_COUNTER)}>"
    code = compile(source, filename, "exec")
    exec(code, w.ns)  # noqa: S102 - the source is generated above from the schedule
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    fn = w.ns["forward"] if "def forward" in w.lines[0] else w.ns["backward"]
    weakref.finalize(fn, linecache.cache.pop, filename, None)  # the source leaves with the plan
    return Segment(fn, source, filename, dict(w.line_step), list(w.buffers))
