"""The compiled plan: a graph lowered, planned and turned into straight-line code.

`compile_graph` is the entry point Gluon's hybridize and the Executor share::

    cg = compile_graph(heads, input_names, for_training=True, shapes=[...], dtypes=[...],
                       ctx=cpu(), static_alloc=False, passes=True)
    outputs, saved = cg.forward(inputs, is_train=True)        # backend arrays in, out
    grads = cg.backward(saved, head_grads)                     # one per input, None if not needed
    cg.backward(saved, head_grads, out=grad_arrays, req="add") # or straight into buffers
    cg.memory_stats()                                          # planned / naive / lower bound bytes

* `inputs` are backend arrays (numpy / cupy) in `input_names` order; parameters
  are inputs too, and are never written (only aux states, by the kernels that
  declare `mutate_inputs`, exactly as eagerly).
* `forward(inputs, is_train, record=None)`: `record` (default: `is_train` when
  compiled `for_training`) keeps the activations the backward needs in `saved`
  (None otherwise). `backward(saved, head_grads, retain_graph=False)`:
  `head_grads` has one array per output; None means zeros, and loss-style
  outputs ignore theirs. Gradients are returned for the inputs named in `wrt`
  (default: all) and None for the others. A `saved` is consumed by its
  backward unless `retain_graph=True`.
* Outputs never alias the plan's buffers: they are fresh (or views of the
  inputs, as eagerly for reshape-like operators). Gradients are fresh too, or
  written straight into the `out=` buffers given to `backward` (the fast path,
  no copy); `pool_grads=True` keeps them in the arena instead (then consume
  the returned arrays before the next call).
* Thread-safe: each call takes its own set of activation buffers (an *arena*)
  from a free list and gives it back when done; with `static_alloc=True` every
  call uses one arena (MXNet's static_alloc: fastest, one call at a time).
* A new input signature (shapes, dtypes) re-runs the passes, inference and
  planning for that signature only (cached; never a retrace). The first call of
  a signature runs the schedule step by step (dropping each value after its
  last use: calibration.py), recording which kernels return views of their
  inputs, and plans memory from that; later calls run the generated code of
  `codegen.py`.

Each variant is one `Plan`: a schedule (schedule.py) with its memory plan
(memory.py), its generated forward and backward functions and its arenas.
"""
from __future__ import annotations

import functools
import os
import threading
import time
import traceback
from collections.abc import Sequence
from operator import attrgetter, is_

import numpy as np

from hybridgraph.nd import profiling
from hybridgraph.nd.backend import Context
from hybridgraph.nd.errors import MXNetError, also_like
from hybridgraph.nd.kernel import kernel_message, run_kernel
from hybridgraph.nd.ops import scratch as _scratch

from ..graph import Entry
from .calibration import Calibration, dead_after
from .lower import lower, run_passes
from .codegen import Segment, generate_backward, generate_forward
from .memory import MemoryPlan, plan_memory, validate_plan
from . import plan_cache
from .plan_cache import new_storage
from .report import plan_report
from .schedule import Schedule, Step

__all__ = ["compile_graph", "CompiledGraph", "Plan", "ExecutionError", "lower", "run_passes"]

#: validate every memory plan when set (tests set it; cheap next to planning)
VALIDATE = os.environ.get("HYBRIDGRAPH_VALIDATE_PLANS", "0") not in ("", "0")
#: an input's (shape, dtype): what selects the variant (Plan) of a call
_SIGNATURE = attrgetter("shape", "dtype")
_tick = plan_cache.tick


class ExecutionError(MXNetError):
    """A kernel failed while a compiled plan or an executor ran a node."""


def step_error(st: Step, shapes: Sequence, exc: BaseException) -> ExecutionError:
    """The error of a failed step: the eager call's class and message (nd.kernel), then the
    node on a line of its own, so every path's first line reads the same."""
    text = ", ".join(str(tuple(s)) if s is not None else "?" for s in shapes)
    core = str(exc) if isinstance(exc, MXNetError) else kernel_message(st.op, exc, shapes)
    # also of the class the same call raises eagerly (ShapeError, DTypeError, ...: nd.kernel)
    return also_like(ExecutionError, exc)(f"{core}\n  while executing node {st.name} ({st.op.name}) "
                                          f"with input shapes [{text}]")


# -- one planned variant ----------------------------------------------------------------------

#: the planner's best-fit range for compiled plans: storages hold entries of about one size
#: and `memory.pack` lets storages of different sizes share the arena (MXNet's 16 would
#: put small entries in large storages, which then stay live through most of the run)
PACKED_MATCH_RANGE = 2


class _Arena:
    """The pooled memory of one call: its buffer (`storages`: what an evicted plan leaves to
    the next plan of its graph) and per-entry views for each segment."""

    __slots__ = ("fwd", "bwd", "storages")

    def __init__(self, storages: list, fwd: tuple, bwd: tuple):
        self.storages, self.fwd, self.bwd = storages, fwd, bwd


class Saved:
    """What a recording forward keeps for its backward (opaque to callers)."""

    __slots__ = ("plan", "arena", "values", "is_train", "env", "consumed")

    def __init__(self, plan: "Plan", arena: _Arena | None, values: tuple | None, is_train: bool,
                 env: dict | None = None):
        self.plan, self.arena, self.values, self.is_train, self.env = plan, arena, values, is_train, env
        self.consumed = False


class Plan:
    """One schedule for one input signature: calibrated, planned and compiled on first use.

    `retain=True` keeps the saved activations intact through the backward (the
    Executor may run backward several times per forward); `static=True` uses
    one arena for every call; `pool_outputs` / `pool_grads` let the forward
    outputs / the gradients live in the arena (for callers that consume them
    before the arena is used again: an Executor copies both, a backward given
    `out=` buffers copies the gradients before it gives the arena back).
    `bound` (entry id -> array, for static plans) names buffers of the caller
    that kernels writing `out=` fill directly (an Executor's outputs and
    gradients): such entries get no storage of their own.
    """

    def __init__(self, sched: Schedule, ctx: Context, *, retain: bool = False, static: bool = False,
                 pool_outputs: bool = False, pool_grads: bool = False, bound: dict | None = None,
                 label: str = "graph", passes_ran: Sequence[str] = ()):
        self.sched = sched
        self.ctx = ctx
        self.xp = ctx.xp
        self.retain = retain
        self.static = static
        self.pool_outputs = pool_outputs
        self.pool_grads = pool_grads
        self.bound = self._check_bound(bound or {})
        self.label = label
        self.passes_ran = list(passes_ran)
        self.saved = sched.saved() if sched.has_backward else []
        self._lock = threading.Lock()
        self._calib: Calibration | None = Calibration(sched, self.xp)
        self._dead: dict[int, tuple[int, ...]] | None = None
        self.memory: MemoryPlan | None = None
        self.fwd: Segment | None = None
        self.bwd: Segment | None = None
        self._free: list[_Arena] = []
        self._arena_lock = threading.Lock()
        self._static_arena: _Arena | None = None
        self._external = sched.external()
        self._last_dests: tuple | None = None
        self.tick, self.on_new_arena, self.spare = 0, None, None  # set by plan_cache.register

    def _check_bound(self, bound: dict) -> dict:
        """Keep the bound buffers that fit: one buffer per entry, of the entry's shape and dtype,
        for entries a kernel writes (not inputs)."""
        sched = self.sched
        ext = sched.external()
        ok = {}
        for e, arr in bound.items():
            if e is None or e < 0 or e in ext or not sched.known(e) or any(arr is a for a in ok.values()):
                continue
            if tuple(arr.shape) == tuple(sched.shapes[e]) and arr.dtype == sched.dtypes[e]:
                ok[e] = arr
        return ok

    # -- planning ------------------------------------------------------------------------------
    @property
    def compiled(self) -> bool:
        return self.fwd is not None

    @functools.cached_property
    def aliased_outputs(self) -> tuple[int, ...]:
        """Positions of the outputs that are a constant of the plan or one of its inputs (a
        parameter, or what folding made of it): the same array at every call, which a caller
        handing outputs to users must copy."""
        shared = set(self.sched.inputs) | set(self.sched.constants)
        return tuple(i for i, e in enumerate(self.sched.outputs) if e in shared)

    def static_memory_plan(self) -> MemoryPlan:
        """The plan NNVM would make (every internal entry writable), for reports before any run."""
        return plan_memory(self.sched, escape=self._escape(), fresh=self._fresh(), pinned=self._pinned())

    def _escape(self) -> set[int]:
        sched = self.sched
        return set(sched.outputs) | {g for g in sched.grads if g is not None}

    def _fresh(self) -> set[int]:
        sched = self.sched
        out = set() if self.pool_outputs else set(sched.outputs)
        if not self.pool_grads:
            out |= {g for g in sched.grads if g is not None}
        return out

    def _pinned(self) -> set[int]:
        return set(self.saved) if self.retain else set()

    def _finalize(self) -> None:
        calib = self._calib
        sched = self.sched
        calib.assume_unobserved()
        memory = plan_memory(sched, poolable=calib.poolable() - set(self.bound), aliases=calib.aliases,
                             not_writable=calib.not_writable | calib.bad, escape=self._escape(),
                             fresh=self._fresh(), pinned=self._pinned(), scratch=calib.scratch,
                             match_range=PACKED_MATCH_RANGE)
        if VALIDATE:
            validate_plan(sched, memory)
        fwd = generate_forward(sched, memory, self.xp, self.saved, f"{self.label} forward", self.bound)
        bwd = None
        if sched.has_backward:
            bwd = generate_backward(sched, memory, self.xp, self.saved, not self.retain,
                                    f"{self.label} backward", self.bound)
        self.memory, self.bwd = memory, bwd
        self.fwd = fwd            # last: `compiled` turns true once everything is in place
        self._calib = None

    def _new_arena(self) -> _Arena:
        sched, memory = self.sched, self.memory
        # one buffer; each pooled storage a slice of it at its packed offset (memory.pack)
        whole = new_storage(self, max(int(memory.arena_bytes), 1))
        storages = [None if off is None else whole[off:off + max(int(nb), 1)]
                    for nb, off in zip(memory.storage_bytes, memory.offsets)]

        def views(seg: Segment | None) -> tuple:
            if seg is None:
                return ()
            out = []
            for e in seg.buffers:
                if isinstance(e, tuple):           # ("w", step): the step's lent scratch bytes
                    sid, nb = memory.scratch[e[1]]
                    out.append(storages[sid][:nb])
                    continue
                nb = sched.nbytes(e)
                buf = storages[memory.storage[e]][:nb]
                out.append(buf.view(np.dtype(sched.dtypes[e])).reshape(tuple(sched.shapes[e])))
            return tuple(out)
        if self.on_new_arena is not None:
            self.on_new_arena(self)       # plan_cache: keep the byte budget
        return _Arena([whole], views(self.fwd), views(self.bwd))

    def _take_arena(self) -> _Arena:
        if self.static:
            if self._static_arena is None:
                self._static_arena = self._new_arena()
            return self._static_arena
        with self._arena_lock:    # plan_cache.evict harvests `_free` from whichever thread evicts
            if self._free:
                return self._free.pop()
        return self._new_arena()  # outside the lock: a new arena may evict plans (plan_cache)

    def _give_arena(self, arena: _Arena) -> None:
        if not self.static:
            with self._arena_lock:
                self._free.append(arena)

    # -- running -------------------------------------------------------------------------------
    def forward(self, inputs: Sequence, is_train: bool, record: bool, monitor=None
                ) -> tuple[list, Saved | None]:
        """Run the forward on backend arrays (in the schedule's input order).

        `monitor(step, env, done)` (optional) is called before (done False) and after every step; it makes the
        call run step by step.
        """
        if self.fwd is None or monitor is not None or profiling.ACTIVE:  # the profiler times each step
            return self._forward_interpreted(inputs, is_train, record, monitor)
        arena = self._take_arena()
        try:
            outs, kept = self.fwd.fn(inputs, arena.fwd, is_train)
        except Exception as exc:
            self._give_arena(arena)
            raise self._error(self.fwd, exc) from exc
        if not record:
            self._give_arena(arena)
            return list(outs), None
        return list(outs), Saved(self, arena, kept, is_train)

    def backward(self, saved: Saved, head_grads: Sequence, retain_graph: bool = False,
                 out: Sequence | None = None, req: str | Sequence[str] = "write", monitor=None) -> list:
        """Gradients (one per `sched.grads`) from a recording forward's `saved`.

        With `out` (one array or None per gradient) the gradients are written
        (`req` "write") or added ("add") into those arrays before the arena is
        given back, and `out` is returned. Without it, pooled gradients
        (`pool_grads`) are views of the arena: valid until its next use.
        """
        if saved.plan is not self:
            raise MXNetError("backward() got the saved state of another compiled graph")
        if saved.consumed:
            raise MXNetError("the saved activations of this forward were already used by a backward; "
                             "run forward again or pass retain_graph=True to the first backward")
        hg = self._head_grads(head_grads)
        if (saved.env is not None or (retain_graph and not self.retain) or monitor is not None
                or profiling.ACTIVE):
            return _deliver(self._backward_interpreted(saved, hg, retain_graph, monitor), out, req)
        values = list(saved.values)
        if not self.retain:
            saved.values = None
            saved.consumed = True
        arena = saved.arena
        try:
            grads = self.bwd.fn(values, hg, arena.bwd, saved.is_train, self._destinations(out, req))
            return _deliver(grads, out, req)
        except Exception as exc:
            raise self._error(self.bwd, exc) from exc
        finally:
            if not self.retain:
                saved.arena = None
                self._give_arena(arena)

    def _destinations(self, out: Sequence | None, req: str | Sequence[str]) -> tuple:
        """Per gradient, the `out` array the generated backward may write directly: one given
        for "write", of the gradient's exact shape and dtype, C-contiguous, used once."""
        sched = self.sched
        if out is None:
            return (None,) * len(sched.grads)
        key = (tuple(map(id, out)), req if isinstance(req, str) else tuple(req))
        last = self._last_dests      # the same buffers as last time (held there: ids stay unique)
        if last is not None and last[0] == key:
            return last[1]
        reqs = [req] * len(out) if isinstance(req, str) else list(req)
        dests, seen = [], set()
        for g, dst, r in zip(sched.grads, out, reqs):
            ok = (dst is not None and r == "write" and g is not None and id(dst) not in seen
                  and tuple(dst.shape) == tuple(sched.shapes[g]) and dst.dtype == sched.dtypes[g]
                  and dst.flags.c_contiguous)
            dests.append(dst if ok else None)
            if ok:
                seen.add(id(dst))
        dests = tuple(dests) + (None,) * (len(sched.grads) - len(dests))
        self._last_dests = (key, dests)
        return dests

    def _head_grads(self, given: Sequence) -> list:
        sched = self.sched
        given = list(given) + [None] * (len(sched.head_grads) - len(given))
        out = []
        for h, g in zip(sched.head_grads, given):
            if h is None:
                out.append(None)
                continue
            if sched.shapes[h] is None:          # known only at run time (boolean_mask, unique)
                if g is None:
                    raise ValueError(f"head gradient for {sched.names[h]!r}: its shape depends on the "
                                     "data, so it must be given")
            elif g is None:
                g = self.xp.zeros(tuple(sched.shapes[h]), dtype=sched.dtypes[h])
            elif tuple(g.shape) != tuple(sched.shapes[h]):
                raise ValueError(f"head gradient for {sched.names[h]!r}: expected shape "
                                 f"{tuple(sched.shapes[h])}, got {tuple(g.shape)}")
            out.append(g)
        return out

    # -- the step-by-step path (first call of a signature, monitors, retained backward) ----------
    def interpret(self, steps: Sequence[tuple[int, Step]], env: dict, is_train: bool,
                  observe=None, monitor=None, scratch: dict | None = None) -> None:
        """Run steps one by one on `env` (entry id -> array); kernels allocate their results.
        `scratch` (step index -> bytes) records the temporaries of kernels declaring `scratch`.

        Entries nothing reads later are dropped from `env` after their last step, so
        the run holds only live values (about the eager peak, not every intermediate).
        """
        xp = self.xp
        if self._dead is None:
            self._dead = dead_after(self.sched)
        dead = self._dead
        for k, st in steps:
            args = [env[i] for i in st.inputs]
            if monitor is not None:   # inputs before the kernel runs (MXNet's order; it may fail or mutate them)
                monitor(st, env, False)
            t0 = profiling.ACTIVE and time.perf_counter_ns()
            try:
                if scratch is not None and st.op.scratch:
                    with _scratch.recording() as rec:
                        res = run_kernel(st.op, st.attrs, args, xp, is_train)
                    scratch[k] = rec.nbytes
                else:
                    res = run_kernel(st.op, st.attrs, args, xp, is_train)
            except Exception as exc:
                raise step_error(st, [a.shape for a in args], exc) from exc
            if t0:
                profiling.record(st.op.name, "symbolic", t0, time.perf_counter_ns())
            if len(res) != len(st.outputs):
                raise ExecutionError(f"node {st.name} ({st.op.name}) returned {len(res)} outputs; its "
                                     f"declaration has {len(st.outputs)}")
            for e, r in zip(st.outputs, res):
                env[e] = r
            if observe is not None:
                observe(st, args, res)
            if monitor is not None:
                monitor(st, env, True)
            for e in dead.get(k, ()):
                env.pop(e, None)

    def start_env(self, inputs: Sequence) -> dict:
        env = dict(self.sched.constants)
        for e, a in zip(self.sched.inputs, inputs):
            if e >= 0:
                env[e] = a
        return env

    def _forward_interpreted(self, inputs: Sequence, is_train: bool, record: bool, monitor=None):
        sched = self.sched
        env = self.start_env(inputs)
        calib = self._calib
        self.interpret(list(enumerate(sched.forward_steps)), env, is_train,
                       observe=None if calib is None else calib.observe, monitor=monitor,
                       scratch=None if calib is None else calib.scratch)
        outs = [env[e] for e in sched.outputs]
        if calib is not None:
            calib.forward_runs += 1
            # a plan with a backward waits for one (to see its kernels), but not forever
            if not sched.has_backward or calib.forward_runs >= 2:
                self._finish_calibration()
        if not record:
            return outs, None
        keep = {e: env[e] for e in self.saved}
        return outs, Saved(self, None, None, is_train, env=keep)

    def _backward_interpreted(self, saved: Saved, hg: list, retain_graph: bool, monitor=None) -> list:
        """The backward step by step. A consuming call lets go of `saved` first, so each saved
        activation is freed at its last use (as in the compiled backward), not at the end."""
        sched = self.sched
        env = dict(saved.env) if saved.env is not None else dict(zip(self.saved, saved.values))
        env.update(sched.constants)
        for h, g in zip(sched.head_grads, hg):
            if h is not None:
                env[h] = g
        calib = self._calib if saved.env is not None else None
        consume = not retain_graph and not self.retain
        if consume:
            saved.consumed = True
            saved.env = saved.values = None
        nf = sched.n_forward
        try:
            self.interpret(list(enumerate(sched.backward_steps, start=nf)), env, saved.is_train,
                           observe=None if calib is None else calib.observe, monitor=monitor,
                           scratch=None if calib is None else calib.scratch)
        finally:
            if consume and saved.arena is not None:
                self._give_arena(saved.arena)
                saved.arena = None
        if calib is not None:
            self._finish_calibration()
        return [None if g is None else env[g] for g in sched.grads]

    def _finish_calibration(self) -> None:
        with self._lock:
            if self._calib is not None:
                self._finalize()

    def _error(self, seg: Segment, exc: BaseException) -> BaseException:
        """An ExecutionError naming the step a generated function failed in."""
        k = None
        for frame, lineno in traceback.walk_tb(exc.__traceback__):
            if frame.f_code.co_filename == seg.filename:
                k = seg.step_at(lineno)
        if k is None:
            return exc
        st = self.sched.steps[k]
        return step_error(st, [self.sched.shapes[i] for i in st.inputs], exc)

    # -- inspection ----------------------------------------------------------------------------
    def memory_plan(self) -> MemoryPlan:
        return self.memory if self.memory is not None else self.static_memory_plan()

    def memory_stats(self) -> dict:
        """planned / naive / lower-bound bytes (and the parts of `planned`) of this variant."""
        plan = self.memory_plan()
        stats = plan.stats.as_dict()
        stats["calibrated"] = self.memory is not None
        return stats

    def describe(self) -> list[str]:
        """The schedule: one line per step with output shapes, storage ids and in-place marks."""
        sched, plan = self.sched, self.memory_plan()
        lines = []
        for k, st in enumerate(sched.steps):
            if k == sched.n_forward and k > 0:
                lines.append("  -- backward --")
            outs = []
            for o in st.outputs:
                sid = plan.storage[o]
                mark = ""
                if o in plan.inplace:
                    mark = f" inplace<-{sched.names[plan.inplace[o]]}"
                elif plan.root[o] != o:
                    mark = f" view-of {sched.names[plan.root[o]]}"
                where = "ext" if sid < 0 else f"{plan.storage_kind[sid]}#{sid}"
                outs.append(f"{sched.names[o]}{tuple(sched.shapes[o]) if sched.shapes[o] else '?'}@{where}{mark}")
            lines.append(f"  [{k}] {st.name} ({st.op.name}): " + ", ".join(outs))
        return lines


def _deliver(grads: Sequence, out: Sequence | None, req: str | Sequence[str]) -> list:
    """The gradients as a list, or written / added into `out` when given: then `out`'s arrays
    are returned, and the gradient itself where `out` has None."""
    if out is None:
        return list(grads)
    if req == "write" and all(map(is_, grads, out)):   # every gradient was written in place
        return list(out)
    reqs = [req] * len(grads) if isinstance(req, str) else list(req)
    for g, dst, r in zip(grads, out, reqs):
        if dst is None or r == "null" or (g is dst and r == "write"):
            continue
        if r == "add":
            if g is not None:
                dst += g
        elif r == "write":
            dst[...] = 0 if g is None else g
        else:
            raise ValueError(f"req must be 'write', 'add' or 'null', got {r!r}")
    return [g if dst is None else dst for g, dst in zip(grads, out)]


# -- the public object ------------------------------------------------------------------------

class CompiledGraph:
    """A graph compiled for repeated calls (see the module docstring)."""

    def __init__(self, heads: Sequence[Entry], input_names: Sequence[str], *, for_training: bool,
                 ctx: Context, static_alloc: bool = False, passes: bool = True,
                 wrt: Sequence[str] | None = None, mirror: bool = False, disable: Sequence[str] = (),
                 pool_grads: bool | None = None, params: dict | None = None):
        self.heads = list(heads)
        self.params = params
        self.input_names = list(input_names)
        self.for_training = for_training
        self.ctx = ctx
        self.static_alloc = static_alloc
        self.pool_grads = bool(pool_grads)
        self.passes = passes
        self.mirror = mirror
        self.disable = tuple(disable)
        self.wrt = list(self.input_names if wrt is None else wrt)
        self._wrt_pos = [self.wrt.index(n) if n in self.wrt else None for n in self.input_names]
        self.wrt_inputs = [i for i, p in enumerate(self._wrt_pos) if p is not None]  # positions in wrt
        self._wrt_src = [self.input_names.index(n) if n in self.input_names else None for n in self.wrt]
        self._plans: dict = {}
        self._lock = threading.Lock()
        self.last_plan: Plan | None = None
        self.spare: list = []             # byte buffers of evicted plans (plan_cache.py)

    def _key(self, inputs: Sequence, is_train: bool, record: bool) -> tuple:
        return tuple(map(_SIGNATURE, inputs)), record, is_train

    def plan_for(self, shapes: Sequence, dtypes: Sequence, *, is_train: bool = False,
                 record: bool = False) -> Plan:
        """The variant for one signature (built on first request)."""
        sig = tuple((tuple(s), np.dtype(t)) for s, t in zip(shapes, dtypes))
        return self._get((sig, bool(record), bool(is_train)))

    def _get(self, key: tuple) -> Plan:
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        with self._lock:
            plan = self._plans.get(key)
            if plan is not None:
                return plan
            plan = self._plans[key] = self._build(key)
        plan_cache.register(self, key, plan)  # outside the lock: may evict plans of this graph
        return plan

    def _build(self, key: tuple) -> Plan:
        sig, record, is_train = key
        shapes = [tuple(s) for s, _ in sig]
        dtypes = [np.dtype(t) for _, t in sig]
        training = record or is_train
        sched, ran = lower(self.heads, self.input_names, shapes, dtypes,
                           wrt=self.wrt if record else (), passes=self.passes, for_training=training,
                           mirror=self.mirror and record, disable=self.disable, ctx=self.ctx,
                           params=self.params)
        return Plan(sched, self.ctx, static=self.static_alloc, pool_grads=self.pool_grads, label="hybrid",
                    passes_ran=ran)

    def forward(self, inputs: Sequence, is_train: bool = False, record: bool | None = None
                ) -> tuple[list, Saved | None]:
        """Outputs (and, when recording, the saved state for `backward`) for backend arrays."""
        return self.run(inputs, is_train, record)[1:]

    def run(self, inputs: Sequence, is_train: bool = False, record: bool | None = None, monitor=None
            ) -> tuple[Plan, list, Saved | None]:
        """`forward`, also returning the plan that ran (`last_plan` is only a hint: another
        thread's call, or the plan cache evicting it, may change it meanwhile). `monitor`:
        as for `Plan.forward` (the steps then run one by one)."""
        if record is None:
            record = is_train and self.for_training
        plan = self._plans.get((tuple(map(_SIGNATURE, inputs)), record, is_train))
        if plan is None:
            plan = self._first_call(inputs, bool(is_train), bool(record))
        plan.tick = _tick()               # least recently used plans go first (plan_cache.py)
        self.last_plan = plan
        return (plan, *plan.forward(inputs, is_train, record, monitor))

    def _first_call(self, inputs: Sequence, is_train: bool, record: bool) -> Plan:
        """Check a call the fast path has not seen, and build its variant."""
        if record and not self.for_training:
            raise MXNetError("this graph was compiled with for_training=False; it cannot record")
        if len(inputs) != len(self.input_names):
            raise ValueError(f"expected {len(self.input_names)} inputs {self.input_names}, got {len(inputs)}")
        return self._get(self._key(inputs, is_train, record))

    def backward(self, saved: Saved, head_grads: Sequence, retain_graph: bool = False,
                 out: Sequence | None = None, req: str | Sequence[str] = "write") -> list:
        """Gradients of the inputs (None for inputs outside `wrt` or without a path).

        `out` (one array or None per input) receives the gradients (`req`: "write",
        "add" or "null", one string or one per input) and is returned; "write" buffers
        of the gradient's shape and dtype are written directly (no copy).
        """
        if saved is None:
            raise MXNetError("backward() needs the saved state of a recording forward (record=True)")
        if out is not None:
            if len(out) != len(self.input_names):
                raise ValueError(f"out has {len(out)} arrays for {len(self.input_names)} inputs")
            src = self._wrt_src
            wrt_out = [None if i is None else out[i] for i in src]
            wrt_req = req if isinstance(req, str) else ["null" if i is None else req[i] for i in src]
            grads = saved.plan.backward(saved, head_grads, retain_graph, wrt_out, wrt_req)
            return self._with_fresh(out, grads)
        grads = saved.plan.backward(saved, head_grads, retain_graph)
        return [None if p is None else grads[p] for p in self._wrt_pos]

    def _with_fresh(self, out: Sequence, grads: Sequence) -> list:
        """`out`, where it has no array: the gradient itself (a copy if pooled: arenas are reused).
        `grads` (from `_deliver`) already holds the `out` array wherever one was given."""
        res = list(out)
        for i in self.wrt_inputs:
            if res[i] is None:
                g = grads[self._wrt_pos[i]]
                res[i] = g.copy() if self.pool_grads and g is not None else g
        return res

    def memory_stats(self, plan: Plan | None = None) -> dict:
        """Bytes of the last variant that ran (planned, naive, lower bound, pooled, dynamic peak)."""
        plan = plan or self.last_plan
        if plan is None:
            raise MXNetError("memory_stats(): no variant has been built yet; call forward first")
        return plan.memory_stats()

    def debug_str(self, plan: Plan | None = None) -> str:
        plan = plan or self.last_plan
        if plan is None:
            return "CompiledGraph (not run yet)\n"
        return plan_report(plan)


def compile_graph(heads: Sequence[Entry], input_names: Sequence[str], *, for_training: bool,
                  shapes: Sequence | None = None, dtypes: Sequence | None = None, ctx: Context | None = None,
                  static_alloc: bool = False, passes: bool = True, wrt: Sequence[str] | None = None,
                  mirror: bool = False, disable: Sequence[str] = (), pool_grads: bool | None = None,
                  params: dict | None = None) -> CompiledGraph:
    """Compile `heads` (graph entries) taking `input_names` variables as inputs.

    `params` (numpy arrays by input name) are frozen into the inference variants: the
    passes may fold their values into new constants (BatchNorm into the Convolution or
    FullyConnected before it); the caller must not change them afterwards (the inputs of
    those names are then ignored). Training variants never use them.

    `shapes` / `dtypes` (optional) pre-build the variant of that signature so the
    first call does not pay for lowering; other signatures are built on demand.
    """
    cg = CompiledGraph(heads, input_names, for_training=for_training, ctx=ctx or Context("cpu"),
                       static_alloc=static_alloc, passes=passes, wrt=wrt, mirror=mirror, disable=disable,
                       pool_grads=pool_grads, params=params)
    if shapes is not None and dtypes is not None and all(s is not None for s in shapes):
        cg.last_plan = cg.plan_for(shapes, dtypes, is_train=False, record=False)
    return cg
