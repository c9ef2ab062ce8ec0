"""Overlap of the distributed store's allreduce with the backward pass.

After a push, the store knows which gradient buffers feed which key. It groups
the keys into buckets (last keys first: the last layers' gradients are final
first) and registers a gradient-ready hook with autograd
(`nd.autograd.register_grad_ready_hook`). During the next backward pass, as soon
as every gradient of the next bucket is final, that bucket is summed over the
devices and its non-blocking allreduce starts while backward goes on (MPI moves it
on inside the MPI calls that follow; no thread spins for it, so it takes no core
from the backward pass). The next push completes those collectives and uses their
results.

Every worker starts the buckets in the same order (bucket i only after bucket
i - 1; at push time the rest follow in order), so the sequence of collectives
is the same everywhere whatever the timing. The last bucket (the first layers'
gradients, final last anyway) always starts at push time and carries one flag
per other bucket: a gradient written again after its bucket was sent (a second
backward before the step; grad_req='add' buckets are never sent early) marks
that bucket stale, and since the flags are summed with the last bucket, every
worker knows the same stale buckets and reduces them again. A
hybridized block's backward is one compiled step, so its gradients become final
together at its end: the buckets then start together too (no overlap inside).
"""
from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from hybridgraph.nd import NDArray, autograd
from hybridgraph.nd.backend import to_numpy

__all__ = ["OverlapPlan"]


class OverlapPlan:
    """The buckets of one push signature (keys and gradient buffers) and their state."""

    def __init__(self, comm: Any, keys: list, values: list[list], bucket_bytes: int):
        self.comm = comm
        self.signature = _signature(keys, values)
        self.values = dict(zip(keys, values))
        self.owner = {id(v): k for k, vals in zip(keys, values) for v in vals}
        self.buckets: list[list] = []
        size = 0
        for k in reversed(keys):   # the last keys' gradients are final first
            first = values[keys.index(k)][0]
            nbytes = first.size * np.dtype(first.dtype).itemsize
            prev = self.buckets[-1] if self.buckets else None
            if prev and size + nbytes <= bucket_bytes and self.values[prev[0]][0].dtype == first.dtype:
                prev.append(k)
                size += nbytes
            else:
                self.buckets.append([k])
                size = nbytes
        self.bucket_of = {k: b for b, members in enumerate(self.buckets) for k in members}
        self._reset()
        self._unhook = _register(self)

    def _reset(self) -> None:
        self.ready: dict = {k: set() for k in self.values}
        self.next = 0                    # the next bucket to start
        self.inflight: list = []         # (bucket, MPI requests, flat buffer)
        self.stale = np.zeros(len(self.buckets), dtype=np.int32)

    def close(self) -> None:
        """Stop listening to backward passes."""
        self._unhook()

    # -- during backward --------------------------------------------------------------------------------
    def on_ready(self, leaf: Any) -> None:
        """A variable's gradient is final: count it, and start every bucket now complete."""
        key = self.owner.get(id(leaf.grad))
        if key is None:
            return
        bucket = self.bucket_of[key]
        if bucket < self.next:
            self.stale[bucket] = 1       # written again after it was sent
            return
        if leaf.grad_req != "write":
            return                       # accumulating: sent at push time, never early
        self.ready[key].add(id(leaf.grad))
        while self.next < len(self.buckets) - 1 and all(   # the last one starts at push time
                len(self.ready[k]) == len(self.values[k]) for k in self.buckets[self.next]):
            self._start(self.next)
            self.next += 1

    def _flat(self, bucket: int, flags: np.ndarray | None = None) -> Any:
        """The bucket's gradients, summed over this worker's devices, as one flat buffer where
        the communicator reduces (host memory for MPI, its GPU for NCCL); `flags` appended."""
        comm, parts = self.comm, []
        with comm.device():
            for k in self.buckets[bucket]:
                vals = self.values[k]
                total = comm.xp.array(comm.local(vals[0]), copy=True)
                for v in vals[1:]:
                    total += comm.local(v)
                parts.append(total.reshape(-1))
            if flags is not None:
                parts.append(comm.xp.asarray(flags.astype(parts[0].dtype)))
            return comm.xp.concatenate(parts)

    def _start(self, bucket: int) -> None:
        last = bucket == len(self.buckets) - 1 and bucket
        flat = self._flat(bucket, self.stale[:bucket] if last else None)   # + the stale flags of the others
        self.inflight.append((bucket, self.comm.start_allreduce([flat]), flat))

    # -- at push time ---------------------------------------------------------------------------------
    def matches(self, keys: list, values: list[list]) -> bool:
        return _signature(keys, values) == self.signature

    def finish(self) -> dict:
        """Start the buckets not started yet, wait for all, reduce stale ones again; returns
        ``{key: summed numpy array}`` and resets for the next backward."""
        while self.next < len(self.buckets):
            self._start(self.next)
            self.next += 1
        self.comm.wait([req for _, reqs, _ in self.inflight for req in reqs],
                       f"allreduce of {len(self.inflight)} gradient buckets")
        flats = {bucket: flat for bucket, _, flat in self.inflight}
        last = len(self.buckets) - 1
        stale = to_numpy(flats[last][flats[last].size - last:]) if last else np.zeros(0)
        flats[last] = flats[last][:flats[last].size - last]
        for bucket in np.flatnonzero(stale):   # the same on every worker: the flags were summed
            flats[bucket] = self._flat(bucket)
            self.comm.allreduce_([flats[bucket]], f"allreduce of keys {self.buckets[bucket][:4]} (again)")
        out = {}
        for bucket, flat in flats.items():
            offset = 0
            for k in self.buckets[bucket]:
                first = self.values[k][0]
                out[k] = flat[offset:offset + first.size].reshape(first.shape)
                offset += first.size
        self._reset()
        return out


def _signature(keys: list, values: list[list]) -> tuple:
    return tuple(keys), tuple(id(v) for vals in values for v in vals)


def _register(plan: OverlapPlan) -> Any:
    """Register `plan.on_ready` without keeping the plan alive (the hook holds a weak reference)."""
    ref = weakref.ref(plan)

    def hook(leaf: Any) -> None:
        target = ref()
        if target is not None:
            target.on_ready(leaf)

    remove = autograd.register_grad_ready_hook(hook)
    weakref.finalize(plan, remove)
    return remove


def usable(keys: list, values: list[list]) -> bool:
    """Whether a push can be planned: distinct keys, dense arrays of one dtype per key."""
    return len(set(keys)) == len(keys) and all(
        vals and all(type(v) is NDArray and v.dtype == vals[0].dtype for v in vals) for vals in values)
