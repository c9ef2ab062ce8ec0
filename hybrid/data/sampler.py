"""Samplers: iterables of dataset indices (`mx.gluon.data.*Sampler`)."""
from __future__ import annotations

from typing import Any
from collections.abc import Callable, Iterator

import numpy as np

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "FilterSampler", "BatchSampler", "SplitSampler"]

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


class SplitSampler(Sampler):
    """Samples one worker's part of ``[0, length)``: with ``n = length // num_parts``,
    part `part_index` is ``[n * part_index, n * (part_index + 1))``, in a new random
    order every epoch (numpy's global RNG) unless ``shuffle=False``. The
    ``length % num_parts`` last indices are left out, so every worker sees as many
    samples (and runs as many synchronous steps). The class of MXNet's distributed
    training example, for ``DataLoader(dataset, batch_size, sampler=SplitSampler(
    len(dataset), kv.num_workers, kv.rank))``.

    Parameters
    ----------
    length : int
        Number of elements of the dataset.
    num_parts : int, default 1
        Number of parts (workers).
    part_index : int, default 0
        The part to sample (this worker's rank).
    shuffle : bool, default True
        Shuffle within the part every epoch.
    """

    def __init__(self, length: int, num_parts: int = 1, part_index: int = 0, shuffle: bool = True):
        if num_parts < 1 or not 0 <= part_index < num_parts:
            raise ValueError(f"SplitSampler: part_index must be in [0, num_parts={num_parts}), got {part_index}")
        self._part_len = length // num_parts
        self._start = self._part_len * part_index
        self._shuffle = shuffle

    def __iter__(self) -> Iterator:
        indices = np.arange(self._start, self._start + self._part_len)
        if self._shuffle:
            np.random.shuffle(indices)
        return iter(indices.tolist())

    def __len__(self) -> int:
        return self._part_len


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
