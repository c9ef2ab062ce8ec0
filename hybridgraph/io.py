"""`mx.io`: data iterators for the Module API (MXNet 1.9.1's `mxnet.io`).

`NDArrayIter` serves batches from in-memory arrays with MXNet's exact
batching, shuffling and last-batch rules (so a script sees the same batches
under both libraries for the same numpy seed); `ResizeIter` and
`PrefetchingIter` wrap other iterators.
"""
from __future__ import annotations

import threading
from collections import OrderedDict, namedtuple
from typing import Any

import numpy as np

from hybridgraph import nd
from hybridgraph.nd.ndarray import NDArray

from .base import mx_real_t

__all__ = ["DataDesc", "DataBatch", "DataIter", "NDArrayIter", "ResizeIter", "PrefetchingIter"]


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """Name, shape, dtype and layout of one input of a data iterator.

    It is a `(name, shape)` namedtuple with `dtype` and `layout` attributes;
    `layout` says which axis is the batch axis (``N``).

    Parameters
    ----------
    name : str
        Data name.
    shape : tuple of int
        Data shape.
    dtype : np.dtype, optional
        Data type (float32).
    layout : str, optional
        Data layout ('NCHW').
    """

    def __new__(cls, name: str, shape: tuple, dtype: Any = mx_real_t, layout: str = "NCHW"):
        ret = super().__new__(cls, name, shape)
        ret.dtype = dtype
        ret.layout = layout
        return ret

    def __repr__(self) -> str:
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    @staticmethod
    def get_batch_axis(layout: str | None) -> int:
        """The batch axis of `layout` (the position of 'N'; 0 for None, -1 without 'N')."""
        if layout is None:
            return 0
        return layout.find("N")

    @staticmethod
    def get_list(shapes: list, types: list | None) -> list["DataDesc"]:
        """DataDescs from `(name, shape)` pairs and optional `(name, dtype)` pairs."""
        if types is not None:
            type_dict = dict(types)
            return [DataDesc(x[0], x[1], type_dict[x[0]]) for x in shapes]
        return [DataDesc(x[0], x[1]) for x in shapes]


class DataBatch:
    """One batch: lists of data and label NDArrays, plus padding and indices.

    Parameters
    ----------
    data : list of NDArray
        The input data, each with `batch_size` examples.
    label : list of NDArray, optional
        The labels.
    pad : int, optional
        How many examples at the end are padding (ignored by `predict`).
    index : numpy.array, optional
        The example indices in this batch.
    bucket_key : int, optional
        The bucket key, for bucketing modules.
    provide_data : list of DataDesc, optional
        Describes `data`.
    provide_label : list of DataDesc, optional
        Describes `label`.
    """

    def __init__(self, data: list | None, label: list | None = None, pad: int | None = None,
                 index: Any = None, bucket_key: Any = None, provide_data: list | None = None,
                 provide_label: list | None = None):
        if data is not None:
            assert isinstance(data, (list, tuple)), "Data must be list of NDArrays"
        if label is not None:
            assert isinstance(label, (list, tuple)), "Label must be list of NDArrays"
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self) -> str:
        data_shapes = [d.shape for d in self.data]
        label_shapes = [lbl.shape for lbl in self.label] if self.label else None
        return f"{self.__class__.__name__}: data shapes: {data_shapes} label shapes: {label_shapes}"


class DataIter:
    """Base class of data iterators: `next()` gives a DataBatch until StopIteration.

    Subclasses implement `iter_next`, `getdata`, `getlabel`, `getpad` (and
    optionally `getindex`, `reset`) or override `next`.

    Parameters
    ----------
    batch_size : int, optional
        The number of examples per batch.
    """

    def __init__(self, batch_size: int = 0):
        self.batch_size = batch_size

    def __iter__(self) -> "DataIter":
        return self

    def reset(self) -> None:
        """Reset the iterator to the beginning of the data."""

    def next(self) -> DataBatch:
        """The next batch; raises StopIteration at the end of the data."""
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                             index=self.getindex())
        raise StopIteration

    def __next__(self) -> DataBatch:
        return self.next()

    def iter_next(self) -> bool:
        """Move to the next batch; whether there was one."""
        return False

    def getdata(self) -> list | None:
        """The data of the current batch."""
        return None

    def getlabel(self) -> list | None:
        """The labels of the current batch."""
        return None

    def getindex(self) -> Any:
        """The example indices of the current batch (None when unknown)."""
        return None

    def getpad(self) -> int | None:
        """The number of padding examples in the current batch."""
        return None


class _HeldBatchIter(DataIter):
    """An iterator that keeps its whole current DataBatch in `current_batch`; the getters read it."""

    current_batch: DataBatch | None

    def getdata(self) -> list:
        return self.current_batch.data

    def getlabel(self) -> list:
        return self.current_batch.label

    def getindex(self) -> Any:
        return self.current_batch.index

    def getpad(self) -> int:
        return self.current_batch.pad


class ResizeIter(_HeldBatchIter):
    """Resize a data iterator to `size` batches per epoch (restarting it when it runs out).

    Parameters
    ----------
    data_iter : DataIter
        The iterator to resize.
    size : int
        Batches per epoch.
    reset_internal : bool
        Whether `reset()` also resets `data_iter`.

    Examples
    --------
    >>> nd_iter = mx.io.NDArrayIter(mx.nd.ones((100, 10)), batch_size=25)
    >>> resize_iter = mx.io.ResizeIter(nd_iter, 2)
    >>> len(list(resize_iter))
    2
    """

    def __init__(self, data_iter: DataIter, size: int, reset_internal: bool = True):
        super().__init__()
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch: DataBatch | None = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        self.batch_size = data_iter.batch_size
        if hasattr(data_iter, "default_bucket_key"):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self) -> None:
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self) -> bool:
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True


class PrefetchingIter(_HeldBatchIter):
    """Fetch the next batches of other iterators in background threads.

    Batches of several iterators are joined (their data and labels
    concatenated as lists).

    Parameters
    ----------
    iters : DataIter or list of DataIter
        The iterators to prefetch from.
    rename_data : None or list of dict
        For each iterator, a map from its data names to new names.
    rename_label : None or list of dict
        The same for labels.
    """

    def __init__(self, iters: DataIter | list, rename_data: list | None = None,
                 rename_label: list | None = None):
        super().__init__()
        if not isinstance(iters, list):
            iters = [iters]
        self.n_iter = len(iters)
        assert self.n_iter > 0
        self.iters = iters
        self.rename_data = rename_data
        self.rename_label = rename_label
        self.batch_size = self.provide_data[0][1][0]
        self.data_ready = [threading.Event() for _ in range(self.n_iter)]
        self.data_taken = [threading.Event() for _ in range(self.n_iter)]
        for e in self.data_taken:
            e.set()
        self.started = True
        self.current_batch: DataBatch | None = None
        self.next_batch: list = [None] * self.n_iter
        self.prefetch_threads = [threading.Thread(target=self._prefetch, args=(i,), daemon=True)
                                 for i in range(self.n_iter)]
        for thread in self.prefetch_threads:
            thread.start()

    def _prefetch(self, i: int) -> None:
        """Thread body: fetch one batch whenever the previous one was taken."""
        while True:
            self.data_taken[i].wait()
            if not self.started:
                break
            try:
                self.next_batch[i] = self.iters[i].next()
            except StopIteration:
                self.next_batch[i] = None
            self.data_taken[i].clear()
            self.data_ready[i].set()

    def close(self) -> None:
        """Stop the prefetching threads."""
        if not getattr(self, "started", False):
            return
        self.started = False
        for e in self.data_taken:
            e.set()
        for thread in self.prefetch_threads:
            thread.join()

    def __del__(self):
        self.close()

    @staticmethod
    def _renamed(descs: list, renames: list | None, iters: list, attr: str) -> list:
        if renames is None:
            return sum([getattr(i, attr) for i in iters], [])
        return sum([[DataDesc(r[x.name], x.shape, x.dtype) if isinstance(x, DataDesc) else DataDesc(*x)
                     for x in getattr(i, attr)] for r, i in zip(renames, iters)], [])

    @property
    def provide_data(self) -> list:
        return self._renamed([], self.rename_data, self.iters, "provide_data")

    @property
    def provide_label(self) -> list:
        return self._renamed([], self.rename_label, self.iters, "provide_label")

    def reset(self) -> None:
        for e in self.data_ready:
            e.wait()
        for it in self.iters:
            it.reset()
        for e in self.data_ready:
            e.clear()
        for e in self.data_taken:
            e.set()

    def iter_next(self) -> bool:
        for e in self.data_ready:
            e.wait()
        if self.next_batch[0] is None:
            for b in self.next_batch:
                assert b is None, "Number of entry mismatches between iterators"
            return False
        for batch in self.next_batch:
            assert batch.pad == self.next_batch[0].pad, "Number of entry mismatches between iterators"
        self.current_batch = DataBatch(sum([b.data for b in self.next_batch], []),
                                       sum([b.label for b in self.next_batch], []),
                                       self.next_batch[0].pad, self.next_batch[0].index,
                                       provide_data=self.provide_data, provide_label=self.provide_label)
        for e in self.data_ready:
            e.clear()
        for e in self.data_taken:
            e.set()
        return True

    def next(self) -> DataBatch:
        if self.iter_next():
            return self.current_batch
        raise StopIteration


def _init_data(data: Any, allow_empty: bool, default_name: str) -> list[tuple[str, NDArray]]:
    """Data as a sorted list of (name, NDArray): one array gets `default_name`, a list
    `_0_<default_name>`, `_1_<default_name>`, ...; numpy arrays become float32 NDArrays."""
    assert data is not None or allow_empty
    if data is None:
        data = []
    if isinstance(data, (np.ndarray, NDArray)):
        data = [data]
    if isinstance(data, list):
        if not allow_empty:
            assert len(data) > 0
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict([(f"_{i}_{default_name}", d) for i, d in enumerate(data)])
    if not isinstance(data, dict):
        raise TypeError("Input must be NDArray, numpy.ndarray, a list of them or dict with them as values")
    out = {}
    for k, v in data.items():
        if isinstance(v, NDArray):
            out[k] = v
            continue
        try:
            out[k] = nd.array(v)
        except Exception as exc:
            raise TypeError(f"Invalid type '{type(v)}' for {k}, should be NDArray or numpy.ndarray") from exc
    return sorted(out.items())


def _getdata_by_idx(data: list, idx: np.ndarray) -> list:
    """Reorder every array by `idx` (as MXNet does: the result is float32)."""
    return [(k, nd.array(v.asnumpy()[idx], v.context)) for k, v in data]


class NDArrayIter(DataIter):
    """Iterate over in-memory arrays (NDArray or numpy) in batches.

    Parameters
    ----------
    data : array or list of array or dict of str to array
        The input data.
    label : array or list of array or dict of str to array, optional
        The labels.
    batch_size : int
        Batch size.
    shuffle : bool, optional
        Shuffle the examples (with `np.random`) at every reset.
    last_batch_handle : str, optional
        'pad' (fill the last batch with examples from the beginning and report
        `pad`), 'discard' (drop the incomplete last batch) or 'roll_over'
        (carry the remaining examples over to the next epoch).
    data_name : str, optional
        The name of the data when `data` is not a dict.
    label_name : str, optional
        The name of the label when `label` is not a dict.
    layout : str, optional
        The data layout ('N' marks the batch axis).

    Examples
    --------
    >>> data = np.arange(40).reshape((10, 2, 2))
    >>> it = mx.io.NDArrayIter(data, np.ones([10, 1]), 3, last_batch_handle='discard')
    >>> [batch.data[0].shape for batch in it]
    [(3, 2, 2), (3, 2, 2), (3, 2, 2)]
    >>> it.provide_data
    [DataDesc[data,(3, 2, 2),<class 'numpy.float32'>,NCHW]]
    """

    def __init__(self, data: Any, label: Any = None, batch_size: int = 1, shuffle: bool = False,
                 last_batch_handle: str = "pad", data_name: str = "data",
                 label_name: str = "softmax_label", layout: str = "NCHW"):
        super().__init__(batch_size)
        if last_batch_handle not in ("pad", "discard", "roll_over"):
            raise ValueError(f"last_batch_handle must be 'pad', 'discard' or 'roll_over', "
                             f"got {last_batch_handle!r}")
        self.data = _init_data(data, allow_empty=False, default_name=data_name)
        self.label = _init_data(label, allow_empty=True, default_name=label_name)
        self.idx = np.arange(self.data[0][1].shape[0])
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.batch_size = batch_size
        self.cursor = -self.batch_size
        self.num_data = self.idx.shape[0]
        self.layout = layout
        self.reset()
        self.data_list = [x[1] for x in self.data] + [x[1] for x in self.label]
        self.num_source = len(self.data_list)
        self._cache_data: list | None = None
        self._cache_label: list | None = None

    def _descs(self, source: list) -> list[DataDesc]:
        axis = self.layout.find("N")
        # dtype as MXNet gives it: the numpy scalar type (np.float32), not a np.dtype
        return [DataDesc(k, tuple(list(v.shape[:axis]) + [self.batch_size] + list(v.shape[axis + 1:])),
                         np.dtype(v.dtype).type, layout=self.layout) for k, v in source]

    @property
    def provide_data(self) -> list[DataDesc]:
        """Name, batch shape, dtype and layout of each data array."""
        return self._descs(self.data)

    @property
    def provide_label(self) -> list[DataDesc]:
        """Name, batch shape, dtype and layout of each label array."""
        return self._descs(self.label)

    def hard_reset(self) -> None:
        """Reset to the beginning, dropping rolled-over data."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None

    def reset(self) -> None:
        """Reset to the beginning (keeping rolled-over data with 'roll_over')."""
        if self.shuffle:
            self._shuffle_data()
        if self.last_batch_handle == "roll_over" and \
                self.num_data - self.batch_size < self.cursor < self.num_data:
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self) -> bool:
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self) -> DataBatch:
        if not self.iter_next():
            raise StopIteration
        data = self.getdata()
        label = self.getlabel()
        # an incomplete batch (discard / roll_over) ends the epoch; roll_over keeps it
        if data[0].shape[self.layout.find("N")] != self.batch_size:
            self._cache_data = data
            self._cache_label = label
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    def _getdata(self, source: list, start: int | None = None, end: int | None = None) -> list:
        assert start is not None or end is not None, "should at least specify start or end"
        start = start if start is not None else 0
        if end is None:
            end = source[0][1].shape[0] if source else 0
        axis = self.layout.find("N")
        return [nd.slice_axis(x[1], axis=axis, begin=start, end=end) for x in source]

    def _concat(self, first: list, second: list) -> list:
        if not first or not second:
            return first if first else second
        assert len(first) == len(second), "data source should contain the same size"
        return [nd.concat(a, b, dim=self.layout.find("N")) for a, b in zip(first, second)]

    @staticmethod
    def _tile(data: list, repeats: int) -> list:
        res = []
        for datum in data:
            reps = [1] * len(datum.shape)
            reps[0] = repeats
            res.append(nd.tile(datum, reps=tuple(reps)))
        return res

    def _batchify(self, source: list) -> list:
        assert self.cursor < self.num_data, "DataIter needs reset."
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            assert self._cache_data is not None or self._cache_label is not None, \
                "next epoch should have cached data"
            cache = self._cache_data if self._cache_data is not None else self._cache_label
            second = self._getdata(source, end=self.cursor + self.batch_size)
            if self._cache_data is not None:
                self._cache_data = None
            else:
                self._cache_label = None
            return self._concat(cache, second)
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            pad = self.batch_size - self.num_data + self.cursor
            first = self._getdata(source, start=self.cursor)
            if pad > self.num_data:
                second = self._tile(self._getdata(source, end=self.num_data), pad // self.num_data)
                if pad % self.num_data != 0:
                    second = self._concat(second, self._getdata(source, end=pad % self.num_data))
            else:
                second = self._getdata(source, end=pad)
            return self._concat(first, second)
        end = min(self.cursor + self.batch_size, self.num_data)
        return self._getdata(source, self.cursor, end)

    def getdata(self) -> list:
        return self._batchify(self.data)

    def getlabel(self) -> list:
        return self._batchify(self.label)

    def getpad(self) -> int:
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0

    def _shuffle_data(self) -> None:
        np.random.shuffle(self.idx)
        self.data = _getdata_by_idx(self.data, self.idx)
        self.label = _getdata_by_idx(self.label, self.idx)


def __getattr__(name: str):
    """The file-reading iterators (io_iters.py) load on first use."""
    from . import io_iters
    if name in io_iters.__all__:
        return getattr(io_iters, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
