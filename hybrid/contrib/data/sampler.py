"""`gluon.contrib.data.IntervalSampler`: indices of [0, length) at a fixed stride."""
from __future__ import annotations

from collections.abc import Iterator

from ...data.sampler import Sampler

__all__ = ["IntervalSampler"]


class IntervalSampler(Sampler):
    """0, interval, 2*interval, ...; with `rollover` it then starts again from 1, 2, ... until every
    index is visited. `len()` is `length` either way, as in MXNet 1.9.1."""

    def __init__(self, length: int, interval: int, rollover: bool = True):
        if interval > length:
            raise AssertionError(f"Interval {interval} must be smaller than or equal to length {length}")
        self._length, self._interval, self._rollover = length, interval, rollover

    def __iter__(self) -> Iterator[int]:
        for start in range(self._interval if self._rollover else 1):
            yield from range(start, self._length, self._interval)

    def __len__(self) -> int:
        return self._length
