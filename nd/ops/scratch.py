"""Scratch memory of kernels: temporaries carved from one buffer the memory planner lends.

A kernel whose operator declares `workspace=True` (the convolutions) takes `workspace=`, a
uint8 buffer, and asks `take` for all its temporaries at once (column matrices, Winograd
tiles, padded copies). In a compiled plan the buffer is a pooled storage of the plan's
arena that is dead at that step (symbol/plan/memory.py), so the temporaries live in memory
the activations of other steps use, and no call allocates them again; elsewhere (eager
calls, the calibrating first run of a plan) `workspace` is None and `take` allocates. The
calibrating run records the bytes each step's kernel took (`recording`), which is what the
planner lends it: the bytes depend only on the input shapes, fixed for a plan.
"""
from __future__ import annotations

import math
import threading
from contextlib import contextmanager

import numpy as np

#: offsets of carved arrays are multiples of this many bytes (cache lines; SIMD loads)
ALIGN = 64

_local = threading.local()


class Record:
    """Bytes of scratch the kernels run inside `recording()` asked for."""

    def __init__(self):
        self.nbytes = 0


@contextmanager
def recording():
    """Count the scratch bytes the kernels called inside take (this thread)."""
    prev = getattr(_local, "record", None)
    rec = _local.record = Record()
    try:
        yield rec
    finally:
        _local.record = prev


def _layout(specs) -> tuple[list[int], int]:
    offsets, end = [], 0
    for shape, dtype in specs:
        start = -(-end // ALIGN) * ALIGN
        offsets.append(start)
        end = start + math.prod(shape) * np.dtype(dtype).itemsize
    return offsets, end


def take(xp, workspace, specs) -> list:
    """Uninitialised arrays of `specs` ((shape, dtype) pairs): views of `workspace` when it is
    large enough (it is, in the plan that sized it), else new arrays."""
    offsets, total = _layout(specs)
    if workspace is not None and workspace.nbytes >= total:
        return [workspace[o:o + math.prod(s) * np.dtype(d).itemsize].view(d).reshape(s)
                for o, (s, d) in zip(offsets, specs)]
    rec = getattr(_local, "record", None)
    if rec is not None:
        rec.nbytes += total
    return [xp.empty(s, dtype=d) for s, d in specs]


def zero_margins(xpad, ph: int, pw: int, h: int, w: int) -> None:
    """Zero a channel-last padded buffer (k, H', W', C) around its interior [ph:ph + h,
    pw:pw + w], which the caller fills: a scratch buffer holds what it held before."""
    xpad[:, :ph] = 0
    xpad[:, ph + h:] = 0
    xpad[:, ph:ph + h, :pw] = 0
    xpad[:, ph:ph + h, pw + w:] = 0
