"""Datasets: indexable collections of samples (`mx.gluon.data.Dataset`)."""
from __future__ import annotations

from typing import Any
from collections.abc import Callable

from hybridgraph.nd.ndarray import NDArray

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset"]


class Dataset:
    """Abstract dataset class. All datasets should have this interface.

    Subclasses need to override `__getitem__`, which returns the i-th
    element, and `__len__`, which returns the total number of elements.
    """

    def __getitem__(self, idx: int) -> Any:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def filter(self, fn: Callable[[Any], bool]) -> "Dataset":
        """A dataset of the samples for which `fn(sample)` is true."""
        from .sampler import FilterSampler
        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards: int, index: int) -> "Dataset":
        """The `index`-th of `num_shards` contiguous, near-equal parts of this dataset."""
        if not index < num_shards:
            raise AssertionError(f"Shard index of out bound: {index} out of {num_shards}")
        if not num_shards > 0:
            raise AssertionError("Number of shards must be greater than 0")
        if not index >= 0:
            raise AssertionError("Index must be non-negative")
        length = len(self)
        shard_len = length // num_shards
        rest = length % num_shards
        start = shard_len * index + min(index, rest)
        end = start + shard_len + (index < rest)
        from .sampler import SequentialSampler
        return _SampledDataset(self, SequentialSampler(end - start, start))

    def take(self, count: int | None) -> "Dataset":
        """The first `count` samples (all when None or larger than the dataset)."""
        if count is None or count > len(self):
            count = len(self)
        from .sampler import SequentialSampler
        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler: Any) -> "Dataset":
        """The samples at the indices `sampler` yields."""
        from .sampler import Sampler
        if not isinstance(sampler, Sampler):
            raise TypeError(f"Invalid sampler type: {type(sampler)}. Expected gluon.data.Sampler instead.")
        return _SampledDataset(self, sampler)

    def transform(self, fn: Callable, lazy: bool = True) -> "Dataset":
        """A dataset whose samples are `fn(sample)` (`fn(*sample)` for tuple samples).

        Parameters
        ----------
        fn : callable
            The transform function.
        lazy : bool, default True
            If False, transform every sample now; otherwise on access.
        """
        trans = _LazyTransformDataset(self, fn)
        if lazy:
            return trans
        return SimpleDataset(list(trans))

    def transform_first(self, fn: Callable, lazy: bool = True) -> "Dataset":
        """Like `transform`, but only the first element of each (data, label) sample is transformed."""
        return self.transform(_TransformFirstClosure(fn), lazy)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]


class SimpleDataset(Dataset):
    """A dataset wrapping any object with `__getitem__` and `__len__` (a list, an array).

    Parameters
    ----------
    data : sequence
        The samples.
    """

    def __init__(self, data: Any):
        self._data = data

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx: int) -> Any:
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    """Applies a transform to each sample on access."""

    def __init__(self, data: Any, fn: Callable):
        self._data = data
        self._fn = fn

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx: int) -> Any:
        item = self._data[idx]
        if isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class _TransformFirstClosure:
    """Transforms the first element only (a picklable closure, for worker processes)."""

    def __init__(self, fn: Callable):
        self._fn = fn

    def __call__(self, x: Any, *args: Any) -> Any:
        if args:
            return (self._fn(x), *args)
        return self._fn(x)


class _SampledDataset(Dataset):
    """The samples of `dataset` at the indices of `sampler`."""

    def __init__(self, dataset: Any, sampler: Any):
        self._dataset = dataset
        self._sampler = sampler
        self._indices = list(iter(sampler))

    def __len__(self) -> int:
        return len(self._sampler)

    def __getitem__(self, idx: int) -> Any:
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """A dataset that combines several array-like objects of the same length;
    sample i is the tuple of their i-th elements (or the element itself for one array).

    1-D NDArrays are converted to numpy, so their elements are numbers, as in MXNet.

    Parameters
    ----------
    *args : one or more array-likes
        The data arrays.
    """

    def __init__(self, *args: Any):
        if not args:
            raise AssertionError("Needs at least 1 arrays")
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            if len(data) != self._length:
                raise AssertionError(f"All arrays must have the same length; array[0] has length {self._length} "
                                     f"while array[{i + 1}] has {len(data)}.")
            if isinstance(data, NDArray) and len(data.shape) == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx: int) -> Any:
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self) -> int:
        return self._length


class RecordFileDataset(Dataset):
    """The records of a RecordIO file (raw bytes each); the .idx file beside it gives the order."""

    def __init__(self, filename: str):
        import os

        from hybridgraph import recordio
        self.idx_file = os.path.splitext(filename)[0] + ".idx"
        self.filename = filename
        self._record = recordio.MXIndexedRecordIO(self.idx_file, self.filename, "r")

    def __getitem__(self, idx: int) -> bytes:
        return self._record.read_idx(self._record.keys[idx])

    def __len__(self) -> int:
        return len(self._record.keys)
