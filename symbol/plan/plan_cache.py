"""A byte budget for the per-signature plans of every compiled graph.

A `CompiledGraph` builds one `Plan` per input signature (shapes, dtypes) and
each plan keeps its activation buffers (arenas) for the next call. A model
called with many batch sizes would keep one set per size forever. This module
keeps them within one process-wide budget, least recently used first:

* every plan a `CompiledGraph` builds is registered here with its owner;
* when a plan is built or allocates an arena, the bytes of all registered
  plans (their idle arenas plus a fixed estimate for code and schedule) are
  summed and, over the budget, the least recently used plans are dropped from
  their owners' caches (their arenas freed, their buffers offered to the next
  plan of the same graph, their generated source leaving `linecache` with them);
* a call that is running a dropped plan finishes normally.

The budget is `HYBRIDGRAPH_PLAN_CACHE_BYTES` (default 128 MiB), changed with
`set_plan_cache_limit`; the PROTECT most recently used plans are kept even over it (a
large model's training and inference plans must not evict each other on every call).
`plan_cache_info()` reports the totals.
"""
from __future__ import annotations

import ctypes
import os
import sys
import threading
import weakref
from itertools import count

import numpy as np


#: bytes counted per plan beyond its buffers (generated code, schedule, calibration)
PLAN_OVERHEAD = 64 << 10
#: process-wide budget of cached plans, in bytes
_limit = int(os.environ.get("HYBRIDGRAPH_PLAN_CACHE_BYTES", str(128 << 20)))
#: the most recently used plans are kept whatever their size: a model whose training and
#: inference plans together exceed the budget must not recompile on every call
PROTECT = 4
_tick = count(1).__next__
_lock = threading.RLock()
#: id(plan) -> (weakref to owner, key, weakref to plan)
_registry: dict[int, tuple] = {}
_stats = {"evictions": 0}


def tick() -> int:
    """A use stamp: larger is more recent."""
    return _tick()


def set_plan_cache_limit(nbytes: int) -> int:
    """Set the byte budget of all cached plans together; returns the old one. Plans over
    the new budget are dropped at the next plan build or arena allocation."""
    global _limit
    if not isinstance(nbytes, int) or nbytes < 0:
        raise ValueError(f"set_plan_cache_limit: expected a non-negative int of bytes, got {nbytes!r}")
    old, _limit = _limit, nbytes
    return old


def plan_cache_limit() -> int:
    return _limit


def arena_bytes(plan) -> int:
    """Bytes of one arena of `plan` (0 before its memory is planned)."""
    memory = plan.memory
    if memory is None:
        return 0
    return int(memory.arena_bytes)


def constant_bytes(plan) -> int:
    """Bytes of memory the constants of `plan` hold (BatchNorm-folded weights, Winograd
    transforms: what graph passes made of frozen parameters), each buffer counted once; a
    view counts its base, so a broadcast placeholder holds next to nothing. Reported by
    `plan_cache_info`; the budget (`plan_bytes`) counts the arenas only."""
    seen: dict[int, int] = {}
    for value in plan.sched.constants.values():
        base = value
        while getattr(base, "base", None) is not None:
            base = base.base
        seen[id(base)] = int(getattr(base, "nbytes", 0))
    return sum(seen.values())


def plan_bytes(plan) -> int:
    """What keeping `plan` costs: its idle arenas plus PLAN_OVERHEAD."""
    arenas = len(plan._free) + (plan._static_arena is not None)
    return PLAN_OVERHEAD + arenas * arena_bytes(plan)


def register(owner, key, plan) -> None:
    """Count `plan` (cached by `owner` under `key`) and keep the budget."""
    plan.tick = tick()
    plan.on_new_arena = _on_new_arena
    plan.spare = owner.spare
    with _lock:
        _registry[id(plan)] = (weakref.ref(owner), key, weakref.ref(plan, _forget(id(plan))))
    enforce(keep=plan)


def _forget(pid: int):
    def cb(_ref) -> None:  # no lock: the collector may run this while any lock is held
        _registry.pop(pid, None)
    return cb


def _on_new_arena(plan) -> None:
    enforce(keep=plan)


def _live() -> list[tuple]:
    """(owner, key, plan) of every registered plan still alive and cached."""
    out = []
    for owner_ref, key, plan_ref in list(_registry.values()):
        owner, plan = owner_ref(), plan_ref()
        if owner is not None and plan is not None:
            out.append((owner, key, plan))
    return out


def enforce(keep=None) -> int:
    """Drop least recently used plans until the total fits the budget; returns how many."""
    with _lock:
        live = _live()
        total = sum(plan_bytes(p) for _, _, p in live)
        if total <= _limit:
            return 0
        dropped = 0
        by_age = sorted(live, key=lambda t: t[2].tick)
        for owner, key, plan in by_age[:max(0, len(by_age) - PROTECT)]:
            if total <= _limit:
                break
            if plan is keep:
                continue
            total -= plan_bytes(plan)
            evict(owner, key, plan)
            dropped += 1
        return dropped


def evict(owner, key, plan) -> None:
    """Remove `plan` from `owner`'s cache and free its idle arenas (their storages go to
    the owner's spare buffers, for the next plan of the same graph)."""
    with owner._lock:
        if owner._plans.get(key) is plan:
            del owner._plans[key]
        if owner.last_plan is plan:
            owner.last_plan = None
    with plan._arena_lock:        # atomically: no other thread takes one of these arenas meanwhile
        free, plan._free = plan._free, []
    spare = owner.spare
    for arena in free:
        spare.extend(s for s in arena.storages if s is not None)
    del spare[:-SPARE_KEEP]
    plan._static_arena = None
    plan.on_new_arena = None
    _registry.pop(id(plan), None)
    _stats["evictions"] += 1


#: spare storages kept per graph (most recently freed last)
SPARE_KEEP = 16


def new_storage(plan, nbytes: int):
    """A byte buffer for an arena of `plan`: a spare one of the same graph, or a new one.

    Before a new one, the C heap's free memory goes back to the OS (`trim_heap`): an arena
    is made once per plan, after the plan's first, step-by-step run freed every value it
    made, and a large arena is mapped fresh rather than carved from that freed memory."""
    if plan.spare:
        with _lock:               # evict (under _lock) extends and trims the same list
            buf = take_spare(plan.spare, nbytes)
        if buf is not None:
            return buf
    if plan.xp is np:
        trim_heap()
    return plan.xp.empty(nbytes, dtype="uint8")


_malloc_trim: list = []


def trim_heap() -> None:
    """Return the free memory of glibc's heap to the OS (malloc_trim(0)); nothing elsewhere.
    glibc keeps freed blocks below its trim threshold -- which it raises to twice the largest
    block freed, up to 64 MiB -- so without this a process holds tens of MB it no longer uses."""
    if not _malloc_trim:
        fn = None
        if sys.platform.startswith("linux"):
            try:
                fn = ctypes.CDLL(None).malloc_trim
                fn.argtypes, fn.restype = [ctypes.c_size_t], ctypes.c_int
            except (OSError, AttributeError):    # not glibc (musl has no malloc_trim)
                fn = None
        _malloc_trim.append(fn)
    if _malloc_trim[0] is not None:
        _malloc_trim[0](0)


def take_spare(spare: list, nbytes: int):
    """A spare storage of at least `nbytes` (the smallest such), removed from `spare`, or None."""
    best = None
    for i, s in enumerate(spare):
        if s.nbytes >= nbytes and (best is None or s.nbytes < spare[best].nbytes):
            best = i
    return None if best is None else spare.pop(best)


def plan_cache_info(owners=None) -> dict:
    """Cached plans and their bytes (of the plans of `owners`, a collection of compiled
    graphs, when given), the budget and the plans dropped so far (process-wide)."""
    with _lock:
        ids = None if owners is None else {id(o) for o in owners}
        live = [p for o, _, p in _live() if ids is None or id(o) in ids]
        return {"plans": len(live), "plan_bytes": sum(plan_bytes(p) for p in live),
                "constant_bytes": sum(constant_bytes(p) for p in live),
                "plan_cache_limit": _limit, "plan_evictions": _stats["evictions"]}
