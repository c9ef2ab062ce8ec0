"""Samplers: iterables of dataset indices (`mx.gluon.data.*Sampler`)."""
from __future__ import annotations

from typing import Any
from collections.abc import Callable, Iterator

import numpy as np

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "FilterSampler", "BatchSampler"]

_LAST_BATCH = ("keep", "discard", "rollover")


class Sampler:
    """Base class for samplers: an iterable of indices with a length."""

    def __iter__(self) -> Iterator:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """Samples ``start, start + 1, ..., start + length - 1`` in order.

    Parameters
    ----------
    length : int
        Number of elements.
    start : int, default 0
        The first index.
    """

    def __init__(self, length: int, start: int = 0):
        self._length = length
        self._start = start

    def __iter__(self) -> Iterator:
        return iter(range(self._start, self._start + self._length))

    def __len__(self) -> int:
        return self._length


class RandomSampler(Sampler):
    """Samples ``[0, length)`` in a random order (numpy's global RNG, as MXNet).

    Parameters
    ----------
    length : int
        Number of elements.
    """

    def __init__(self, length: int):
        self._length = length

    def __iter__(self) -> Iterator:
        indices = np.arange(self._length)
        np.random.shuffle(indices)
        return iter(indices)

    def __len__(self) -> int:
        return self._length


class FilterSampler(Sampler):
    """Samples the indices of the elements of `dataset` for which `fn(sample)` is true.

    Parameters
    ----------
    fn : callable
        The filter function.
    dataset : Dataset
        The dataset to filter.
    """

    def __init__(self, fn: Callable[[Any], bool], dataset: Any):
        self._fn = fn
        self._dataset = dataset
        self._indices = [i for i, sample in enumerate(dataset) if fn(sample)]

    def __iter__(self) -> Iterator:
        return iter(self._indices)

    def __len__(self) -> int:
        return len(self._indices)


class BatchSampler(Sampler):
    """Wraps another sampler to yield lists of indices (mini-batches).

    Parameters
    ----------
    sampler : Sampler
        The source sampler.
    batch_size : int
        Size of a mini-batch.
    last_batch : {'keep', 'discard', 'rollover'}
        What to do with a last batch smaller than `batch_size`: keep it, drop it,
        or carry its indices over to the start of the next epoch.
    """

    def __init__(self, sampler: Any, batch_size: int, last_batch: str = "keep"):
        self._sampler = sampler
        self._batch_size = batch_size
        self._last_batch = last_batch
        self._prev: list = []

    def __iter__(self) -> Iterator[list]:
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == "keep":
                yield batch
            elif self._last_batch == "discard":
                return
            elif self._last_batch == "rollover":
                self._prev = batch
            else:
                raise ValueError(_bad_last_batch(self._last_batch))

    def __len__(self) -> int:
        if self._last_batch == "keep":
            return (len(self._sampler) + self._batch_size - 1) // self._batch_size
        if self._last_batch == "discard":
            return len(self._sampler) // self._batch_size
        if self._last_batch == "rollover":
            return (len(self._prev) + len(self._sampler)) // self._batch_size
        raise ValueError(_bad_last_batch(self._last_batch))


def _bad_last_batch(value: Any) -> str:
    return f"last_batch must be one of 'keep', 'discard', or 'rollover', but got {value}"
