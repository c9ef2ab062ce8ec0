"""Memory planning over a schedule: liveness, in-place reuse, pooled best-fit storage.

The planner walks the steps of a `Schedule` in order, in the spirit of NNVM's
PlanMemory (MXNet's src/nnvm/plan_memory.cc):

* **liveness**: an entry lives from the step that writes it to the last step
  that reads it; forward outputs, backward gradients and entries that must
  survive the run (`escape`) live to the end;
* **groups**: entries that share memory by construction (a kernel returned a
  view of its input, detected by the compiled plan's first run) form one
  group; a group lives as long as any member, and its memory is its root's;
* **in-place**: an output takes the storage of an input when the operator
  declares the pair in `OpDef.inplace`, the input's group dies at this step,
  the input is planned memory (never an argument, aux state, head gradient or
  constant, never a view) and both have one shape and dtype;
* **pooling**: other outputs that a kernel can write with `out=` get a storage
  from the pool of freed ones, best fit by byte size (the smallest free storage
  that is large enough within a factor `match_range`, else the largest smaller
  one, grown); storages are freed after the step that reads their group last;
* everything else (outputs of kernels that allocate their own results, and
  entries that escape the run) is *dynamic*: the kernel allocates it and the
  reference is dropped after its last use.
* **scratch**: a step whose kernel takes temporaries (`scratch`: step index ->
  bytes, measured by the calibrating run) gets a pooled storage live at that step only;
* **packing**: the pooled storages are laid out in one arena buffer, largest first, each
  at the lowest offset where it overlaps no storage live at a common step (`pack`, the
  greedy-by-size layout of TFLite's arena planner) -- storages of different sizes share
  memory, so the convolutions' column matrices and Winograd tiles live in the memory of
  activations dead by then, and a big early activation's memory serves later small ones.

The result is a side table (`MemoryPlan.storage[entry id] -> storage id`) plus
the storages' sizes and kinds; `validate_plan` proves that no two groups live
at the same step share a storage (except an in-place hand-over the operator
allows). `MemoryStats` reports planned bytes next to the naive figure (every
entry its own buffer) and the lower bound (the most bytes live at one step).
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from collections.abc import Iterable

from hybridgraph.nd.errors import MXNetError

from .schedule import Schedule

POOL = "pool"
DYNAMIC = "dynamic"
EXTERNAL = -1


class PlanError(MXNetError):
    """A memory plan breaks an invariant (two live values share storage, ...)."""


@dataclass
class MemoryStats:
    """Bytes of one plan. `planned` = pooled storages + the peak of dynamic ones; `arena` =
    the pooled storages packed into one buffer (storages live at no common step overlap)."""

    planned: int
    naive: int
    lower_bound: int
    pooled: int
    dynamic_peak: int
    num_storages: int
    num_inplace: int
    #: bytes of the one buffer the pooled storages are packed into (`pack`): what a plan holds
    arena: int = 0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class MemoryPlan:
    """entry id -> storage id (-1: external, never planned), with each storage's size and kind.

    `inplace[e] = x`: output e reuses input x's storage at the step that writes e.
    `scratch[k] = (sid, nbytes)`: storage sid is lent to step k's kernel for its temporaries.
    `root[e]`: the entry whose memory e is (itself unless e is a view of another entry).
    `written[e]`: e is written through `out=` into its storage (pooled or in-place).
    """

    storage: list[int]
    storage_bytes: list[int]
    storage_kind: list[str]
    inplace: dict[int, int]
    root: list[int]
    written: set[int]
    define: list[int]
    last_use: list[int]
    fresh: frozenset = frozenset()
    stats: MemoryStats = field(repr=False, default=None)
    #: step index -> (storage id, bytes) lent to the step's kernel for its temporaries
    scratch: dict = field(default_factory=dict)
    #: byte offset of each pooled storage in the plan's one arena buffer (None: not pooled)
    offsets: list = field(default_factory=list)
    #: bytes of that buffer (storages never live at the same step overlap: `pack`)
    arena_bytes: int = 0

    def group_of(self, eid: int) -> int:
        return self.root[eid]


class _UnionFind:
    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, x: int) -> int:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def liveness(sched: Schedule, escape: Iterable[int]) -> tuple[list[int], list[int]]:
    """(define step, last-use step) per entry; external entries are defined at -1 and
    escaping ones are used at `len(steps)` (the end of the run)."""
    n = sched.num_entries
    end = len(sched.steps)
    define = [-1] * n
    last = [-1] * n
    for k, st in enumerate(sched.steps):
        for o in st.outputs:
            define[o] = k
            last[o] = max(last[o], k)
        for i in st.inputs:
            last[i] = max(last[i], k)
    for e in escape:
        if e is not None and e >= 0:
            last[e] = end
    return define, last


class _Pool:
    """Free pooled storages sorted by size, with MXNet's match range for best fit."""

    def __init__(self, match_range: int):
        self.match_range = match_range
        self.free: list[tuple[int, int]] = []   # (nbytes, sid) sorted

    def take(self, nbytes: int, sizes: list[int]) -> int | None:
        """A free storage id for `nbytes` (growing `sizes[sid]` if needed), or None."""
        i = bisect.bisect_left(self.free, (nbytes, -1))
        if i < len(self.free) and self.free[i][0] <= nbytes * self.match_range:
            return self.free.pop(i)[1]
        if i > 0 and self.free[i - 1][0] * self.match_range >= nbytes:
            size, sid = self.free.pop(i - 1)
            sizes[sid] = max(size, nbytes)
            return sid
        return None

    def give(self, sid: int, sizes: list[int]) -> None:
        bisect.insort(self.free, (sizes[sid], sid))


def plan_memory(sched: Schedule, *, poolable: Iterable[int] | None = None,
                aliases: dict[int, Iterable[int]] | None = None, not_writable: Iterable[int] = (),
                escape: Iterable[int] | None = None, fresh: Iterable[int] | None = None,
                pinned: Iterable[int] = (), external: Iterable[int] = (), inplace: bool = True,
                pool: bool = True, match_range: int = 16, scratch: dict[int, int] | None = None) -> MemoryPlan:
    """Plan the storage of every entry of `sched` (see the module docstring).

    poolable: entries a kernel writes with `out=` (default: every internal entry
    of known shape, as NNVM assumes); aliases: entry -> entries it shares memory
    with; not_writable: entries that may not be an in-place target (read-only
    or non-contiguous results); escape: entries that live to the end of the run
    (default: outputs, gradients and `keep`); fresh: entries whose memory must
    be new in every call, never pooled (default: `escape`; an Executor, which
    copies its outputs, passes none); pinned: entries that live to the end but
    may stay in pooled storage (saved activations a retained backward reads
    again); external: entries written straight into the caller's buffers
    (MXNet's bound gradient arrays): not planned and not counted, like inputs;
    scratch: step index -> bytes of temporaries its kernel takes (lent pooled storage).
    """
    n = sched.num_entries
    external = {e for e in sched.external() if e >= 0} | {e for e in external if e is not None and e >= 0}
    if escape is None:
        escape = set(sched.outputs) | {g for g in sched.grads if g is not None} | set(sched.keep)
    escape = {e for e in escape if e is not None and e >= 0}
    fresh = escape if fresh is None else {e for e in fresh if e is not None and e >= 0}
    if poolable is None:
        poolable = {e for e in range(n) if e not in external and sched.known(e)}
    poolable = set(poolable)
    not_writable = set(not_writable)
    define, last = liveness(sched, escape)
    for e in pinned:
        last[e] = len(sched.steps)

    uf = _UnionFind(n)
    for e, others in (aliases or {}).items():
        for x in others:
            uf.union(e, x)
    root = [uf.find(e) for e in range(n)]
    g_last = {}
    g_external = set()
    g_fresh = set()
    for e in range(n):
        r = root[e]
        g_last[r] = max(g_last.get(r, -1), last[e])
        if e in external:
            g_external.add(r)
        if e in fresh:
            g_fresh.add(r)

    storage = [EXTERNAL] * n
    sizes: list[int] = []
    kinds: list[str] = []
    live_groups: list[int] = []
    inplace_of: dict[int, int] = {}
    written: set[int] = set()
    free = _Pool(match_range)

    def new_storage(nbytes: int, kind: str) -> int:
        sizes.append(nbytes)
        kinds.append(kind)
        live_groups.append(0)
        return len(sizes) - 1

    released: set[int] = set()
    lent_to: dict[int, tuple[int, int]] = {}
    for k, st in enumerate(sched.steps):
        taken: set[int] = set()
        for j, e in enumerate(st.outputs):
            r = root[e]
            if r in g_external:
                continue                          # a view of an argument: never planned
            if r != e:
                storage[e] = storage[r]           # a view of an entry planned before it
                continue
            src = _inplace_source(sched, st, j, e, k, root, g_last, storage, kinds, taken, not_writable,
                                  fresh=r in g_fresh) if inplace and e in poolable else None
            if src is not None:
                storage[e] = storage[src]
                inplace_of[e] = src
                written.add(e)
                taken.add(src)
                sizes[storage[e]] = max(sizes[storage[e]], sched.nbytes(e))
            elif e in poolable and pool and r not in g_fresh:
                nb = sched.nbytes(e)
                sid = free.take(nb, sizes)
                if sid is None:
                    sid = new_storage(nb, POOL)
                storage[e] = sid
                written.add(e)
            else:
                storage[e] = new_storage(sched.nbytes(e), DYNAMIC)
            live_groups[storage[e]] += 1
        if pool and scratch and scratch.get(k, 0) > 0:
            nb = int(scratch[k])
            lent_to[k] = (new_storage(nb, POOL), nb)    # its own; `pack` overlaps it with others
        for e in dict.fromkeys(st.inputs + st.outputs):
            r = root[e]
            if r in released or r in g_external or g_last[r] != k or storage[r] < 0:
                continue
            released.add(r)
            sid = storage[r]
            live_groups[sid] -= 1
            if live_groups[sid] == 0 and kinds[sid] == POOL:
                free.give(sid, sizes)
    plan = MemoryPlan(storage, sizes, kinds, inplace_of, root, written, define, last, frozenset(fresh),
                      scratch=lent_to)
    plan.offsets, plan.arena_bytes = pack(sched, plan)
    plan.stats = memory_stats(sched, plan)
    return plan


def _inplace_source(sched: Schedule, st, j: int, e: int, k: int, root: list[int], g_last: dict,
                    storage: list[int], kinds: list[str], taken: set[int], not_writable: set[int],
                    fresh: bool) -> int | None:
    """The input whose storage output j of step k may take over, or None."""
    for i, jj in st.op.inplace:
        if jj != j or i >= len(st.inputs):
            continue
        x = st.inputs[i]
        if (root[x] != x or storage[x] < 0 or x in taken or x in not_writable or g_last[x] != k
                or not _same_layout(sched, st.op, x, e)):
            continue
        if fresh and kinds[storage[x]] == POOL:
            continue                              # pooled memory is reused by the next call
        return x
    return None


def _same_layout(sched: Schedule, op, x: int, e: int) -> bool:
    """x's buffer can hold e: same dtype and size; a kernel handed `out=(x,)` also needs the shape."""
    if not (sched.known(x) and sched.known(e)) or sched.dtypes[x] != sched.dtypes[e]:
        return False
    if op.writes_out:
        return tuple(sched.shapes[x]) == tuple(sched.shapes[e])
    return sched.nbytes(x) == sched.nbytes(e)


# -- packing --------------------------------------------------------------------------------

#: offsets of storages of at least this many bytes in the arena are multiples of it (smaller
#: ones: of 16, 8 or 4 -- the alignment of every dtype that fits)
ARENA_ALIGN = 64


def storage_intervals(sched: Schedule, plan: MemoryPlan) -> dict[int, list[tuple[int, int]]]:
    """Pooled storage -> the step intervals it is live in: its groups' lifetimes (a group live
    to the end of the run -- an output, a gradient, a pinned value -- counts as live from the
    start: the caller may hand it back as an input of the next call) and its scratch step."""
    end = len(sched.steps)
    out: dict[int, list[tuple[int, int]]] = {}
    for r, (lo, hi) in _group_intervals(sched, plan).items():
        sid = plan.storage[r]
        if plan.storage_kind[sid] == POOL:
            out.setdefault(sid, []).append((0 if hi >= end else max(lo, 0), hi))
    for k, (sid, _) in plan.scratch.items():
        out.setdefault(sid, []).append((k, k))
    return out


def _overlap(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> bool:
    return any(lo1 <= hi2 and lo2 <= hi1 for lo1, hi1 in a for lo2, hi2 in b)


def pack(sched: Schedule, plan: MemoryPlan) -> tuple[list, int]:
    """(offset per storage, None unless pooled; arena bytes): storages largest first, each
    at the lowest aligned offset clear of every placed storage live at a common step."""
    live = storage_intervals(sched, plan)
    offsets: list = [None] * len(plan.storage_bytes)
    placed: list[tuple[int, int, list]] = []          # (offset, bytes, intervals)
    order = sorted((sid for sid, kind in enumerate(plan.storage_kind) if kind == POOL),
                   key=lambda sid: (-plan.storage_bytes[sid], sid))
    total = 0
    for sid in order:
        size = max(int(plan.storage_bytes[sid]), 1)
        align = ARENA_ALIGN if size >= ARENA_ALIGN else 16 if size >= 16 else 8 if size >= 8 else 4
        iv = live.get(sid, [])
        at = 0
        for off, nb, _ in sorted((p for p in placed if _overlap(iv, p[2])), key=lambda p: p[0]):
            if at + size <= off:
                break
            at = max(at, -(-(off + nb) // align) * align)
        offsets[sid] = at
        placed.append((at, size, iv))
        total = max(total, at + size)
    return offsets, total


# -- statistics -----------------------------------------------------------------------------

def _group_bytes(sched: Schedule, plan: MemoryPlan) -> dict[int, int]:
    out: dict[int, int] = {}
    for e in range(sched.num_entries):
        if plan.storage[e] >= 0:
            r = plan.root[e]
            out[r] = max(out.get(r, 0), sched.nbytes(e))
    return out


def _group_intervals(sched: Schedule, plan: MemoryPlan) -> dict[int, list[int]]:
    iv: dict[int, list[int]] = {}
    for e in range(sched.num_entries):
        if plan.storage[e] < 0:
            continue
        r = plan.root[e]
        lo, hi = plan.define[e], plan.last_use[e]
        if r in iv:
            iv[r][0] = min(iv[r][0], lo)
            iv[r][1] = max(iv[r][1], hi)
        else:
            iv[r] = [lo, hi]
    return iv


def _peak(intervals: Iterable[tuple[int, int, int]], nsteps: int) -> int:
    """Largest sum of bytes over intervals (lo, hi, bytes) covering one step."""
    delta = [0] * (nsteps + 2)
    for lo, hi, nb in intervals:
        delta[max(lo, 0)] += nb
        delta[min(hi, nsteps) + 1] -= nb
    best = cur = 0
    for d in delta:
        cur += d
        best = max(best, cur)
    return best


def memory_stats(sched: Schedule, plan: MemoryPlan) -> MemoryStats:
    """Planned, naive and lower-bound bytes of a plan (internal entries, and the scratch lent
    to kernels: the lower bound counts it at its step)."""
    nsteps = len(sched.steps)
    naive = sum(sched.nbytes(e) for e in range(sched.num_entries) if plan.define[e] >= 0) \
        + sum(nb for _, nb in plan.scratch.values())
    gbytes = _group_bytes(sched, plan)
    giv = _group_intervals(sched, plan)
    lent = [(k, k, nb) for k, (_, nb) in plan.scratch.items()]      # a kernel's temporaries
    lower = _peak([(lo, hi, gbytes.get(r, 0)) for r, (lo, hi) in giv.items()] + lent, nsteps)
    pooled = sum(s for s, kd in zip(plan.storage_bytes, plan.storage_kind) if kd == POOL)
    siv: dict[int, list[int]] = {}
    for r, (lo, hi) in giv.items():
        sid = plan.storage[r]
        if plan.storage_kind[sid] != DYNAMIC:
            continue
        if sid in siv:
            siv[sid][0] = min(siv[sid][0], lo)
            siv[sid][1] = max(siv[sid][1], hi)
        else:
            siv[sid] = [lo, hi]
    dyn = _peak(((lo, hi, plan.storage_bytes[sid]) for sid, (lo, hi) in siv.items()), nsteps)
    return MemoryStats(planned=pooled + dyn, naive=naive, lower_bound=lower, pooled=pooled,
                       dynamic_peak=dyn, num_storages=len(plan.storage_bytes), num_inplace=len(plan.inplace),
                       arena=plan.arena_bytes)


# -- validation ------------------------------------------------------------------------------

def validate_plan(sched: Schedule, plan: MemoryPlan, fresh: Iterable[int] | None = None) -> None:
    """Prove the plan safe; raise PlanError naming the entries otherwise.

    Checks: external entries are never planned and never share storage with
    planned ones; a view shares its root's storage; storages are big enough for
    what is written into them; escaping groups are not in pooled storage; and
    no two groups whose lifetimes overlap share a storage, except the in-place
    hand-over at the step where the input dies, for a pair the operator
    declares, between entries of one shape and dtype.
    """
    ext = sched.external()
    producer = sched.producer()
    for e in fresh if fresh is not None else plan.fresh:
        sid = plan.storage[e] if e is not None and e >= 0 else EXTERNAL
        if sid >= 0 and plan.storage_kind[sid] == POOL:
            raise PlanError(f"{_desc(sched, e)} must be fresh memory but lives in pooled storage {sid}")
    for e in range(sched.num_entries):
        sid = plan.storage[e]
        if e in ext and sid != EXTERNAL:
            raise PlanError(f"external entry {_desc(sched, e)} was given storage {sid}")
        if sid < 0:
            continue
        r = plan.root[e]
        if plan.storage[r] != sid:
            raise PlanError(f"view {_desc(sched, e)} is in storage {sid} but its root "
                            f"{_desc(sched, r)} is in {plan.storage[r]}")
        if e in plan.written and sched.nbytes(e) > plan.storage_bytes[sid]:
            raise PlanError(f"{_desc(sched, e)} needs {sched.nbytes(e)} bytes; storage {sid} has "
                            f"{plan.storage_bytes[sid]}")
    intervals = _group_intervals(sched, plan)
    for e, x in plan.inplace.items():
        _check_inplace(sched, plan, producer, intervals, e, x)
    by_storage: dict[int, list[tuple[int, int, int]]] = {}
    for r, (lo, hi) in intervals.items():
        if plan.define[r] > lo:
            raise PlanError(f"{_desc(sched, r)} is the memory of a group but is written after a member of it")
        by_storage.setdefault(plan.storage[r], []).append((lo, hi, r))
    _check_packing(sched, plan)
    for k, (sid, nb) in plan.scratch.items():
        if plan.storage_kind[sid] != POOL or plan.storage_bytes[sid] < nb:
            raise PlanError(f"step {k}'s scratch ({nb} bytes) is lent storage {sid} of "
                            f"{plan.storage_bytes[sid]} bytes ({plan.storage_kind[sid]})")
        for lo, hi, r in by_storage.get(sid, ()):
            if lo <= k <= hi:
                raise PlanError(f"step {k}'s scratch is lent storage {sid}, which {_desc(sched, r)} "
                                f"holds (live steps {lo}..{hi})")
    for sid, groups in by_storage.items():
        groups.sort()
        for (lo1, hi1, r1), (lo2, hi2, r2) in zip(groups, groups[1:]):
            if hi1 < lo2:
                continue
            if hi1 == lo2 and plan.inplace.get(r2) is not None and plan.root[plan.inplace[r2]] == r1 \
                    and hi2 >= lo2:
                continue
            raise PlanError(f"storage {sid} is shared by {_desc(sched, r1)} (live steps {lo1}..{hi1}) and "
                            f"{_desc(sched, r2)} (live steps {lo2}..{hi2}) at the same time")


def _check_packing(sched: Schedule, plan: MemoryPlan) -> None:
    """Pooled storages that overlap in the arena are never live at a common step."""
    live = storage_intervals(sched, plan)
    spans = sorted((off, off + max(int(plan.storage_bytes[sid]), 1), sid)
                   for sid, off in enumerate(plan.offsets) if off is not None)
    if spans and spans[-1][1] > plan.arena_bytes:
        raise PlanError(f"storage {spans[-1][2]} ends past the arena ({plan.arena_bytes} bytes)")
    for i, (_, hi1, s1) in enumerate(spans):
        for lo2, hi2, s2 in spans[i + 1:]:
            if lo2 >= hi1:
                break
            if _overlap(live.get(s1, []), live.get(s2, [])):
                raise PlanError(f"storages {s1} and {s2} overlap in the arena (bytes {lo2}..{min(hi1, hi2)}) "
                                f"and are live at a common step")


def _check_inplace(sched: Schedule, plan: MemoryPlan, producer: dict, intervals: dict, e: int, x: int) -> None:
    if plan.storage[x] < 0 or x in sched.external():
        raise PlanError(f"{_desc(sched, e)} is written in place over the external {_desc(sched, x)}")
    k = producer.get(e)
    st = sched.steps[k]
    j = st.outputs.index(e)
    pairs = [i for i, jj in st.op.inplace if jj == j and i < len(st.inputs) and st.inputs[i] == x]
    if not pairs:
        raise PlanError(f"{_desc(sched, e)} reuses {_desc(sched, x)} in place but {st.op.name} declares "
                        f"no such in-place pair")
    if not _same_layout(sched, st.op, x, e):
        raise PlanError(f"in-place {_desc(sched, x)} -> {_desc(sched, e)} changes the layout")
    if plan.root[x] != x or intervals[x][1] != k:
        raise PlanError(f"{_desc(sched, e)} overwrites {_desc(sched, x)} at step {k} but it is read later")
    if plan.storage[e] != plan.storage[x]:
        raise PlanError(f"in-place {_desc(sched, x)} -> {_desc(sched, e)} has different storages")


def _desc(sched: Schedule, e: int) -> str:
    name = sched.names[e] if e < len(sched.names) else f"#{e}"
    return f"entry {e} ({name}, {sched.shapes[e]})"
