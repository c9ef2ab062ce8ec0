"""DataLoader: mini-batches from a Dataset, optionally loaded by worker threads
or processes (`mx.gluon.data.DataLoader`).

With ``num_workers > 0`` batches are built by a pool: threads with
``thread_pool=True``, processes otherwise. Process workers receive the dataset
once (inherited on fork, pickled on spawn), build and batchify a batch, and
write it pickled to a file in the loader's spool folder (on /dev/shm where it
exists); only the file name goes back through the pool's pipe. MXNet sends
shared-memory handles the same way: a pipe filled by large pickled batches would
leave a worker blocked holding the result queue's lock, and `Pool.terminate()`
would then wait for that lock forever. A worker SIGTERMed while it sends a name
holds the lock the same way, so a deleted loader closes its pool and lets the
workers finish their queued tasks before terminating it (`_stop_pool`). Every wait
for a worker is bounded by `timeout`.
"""
from __future__ import annotations

import multiprocessing
import multiprocessing.pool
import os
import pickle
import shutil
import signal
import tempfile
import threading
import time
from typing import Any
from collections.abc import Callable, Iterator

import numpy as np

from hybridgraph import nd
from hybridgraph.nd.ndarray import NDArray
from hybridgraph.util import is_np_array

from . import sampler as _sampler

__all__ = ["DataLoader", "default_batchify_fn", "default_mp_batchify_fn"]


def default_batchify_fn(data: list) -> Any:
    """Collate samples into a batch: NDArrays are stacked, tuples are batchified
    element-wise (into a list), anything else goes through `numpy.asarray` and
    becomes an NDArray of the same dtype."""
    if isinstance(data[0], NDArray):
        return nd.stack(*data)
    if isinstance(data[0], tuple):
        return [default_batchify_fn(list(i)) for i in zip(*data)]
    data = np.asarray(data)
    return nd.array(data, dtype=data.dtype)


def default_mp_batchify_fn(data: list) -> Any:
    """`default_batchify_fn` for worker processes (MXNet puts these in shared memory;
    here batches are pickled back, so it is the same function)."""
    return default_batchify_fn(data)


def _as_np_batch(data: Any) -> Any:
    """A batch with every NDArray turned into an `mx.np.ndarray` view (same buffer)."""
    if isinstance(data, NDArray):
        return data.as_np_ndarray()
    if isinstance(data, (list, tuple)):
        return type(data)(_as_np_batch(d) for d in data)
    return data


def _as_in_context(data: Any, ctx: Any) -> Any:
    if isinstance(data, NDArray):
        return data.as_in_context(ctx)
    if isinstance(data, (list, tuple)):
        return [_as_in_context(d, ctx) for d in data]
    return data


# -- workers ------------------------------------------------------------------------------------

_worker_dataset = None


#: seconds a deleted loader waits for its workers to finish the batches already queued
POOL_STOP_TIMEOUT_S = 10.0


def _stop_pool(pool, timeout: float = POOL_STOP_TIMEOUT_S) -> None:
    """Stop a worker pool without the deadlock of killing busy workers: `Pool.terminate()`
    SIGTERMs them, and one killed while it holds the result queue's lock (sending a batch's
    name) leaves that lock taken, so terminate() then waits forever on its task-handler thread
    (seen 1 in 6-30 deletions on a loaded machine). Closing instead lets each worker finish the
    few prefetched tasks and exit on its sentinel; terminate() then has no live worker to
    kill. A worker still running after `timeout` seconds (a very slow dataset) is terminated."""
    pool.close()
    deadline = time.monotonic() + timeout
    for worker in list(pool._pool):    # processes (Pool) or threads (ThreadPool)
        worker.join(max(0.0, deadline - time.monotonic()))
    pool.terminate()


def _worker_initializer(dataset: Any) -> None:
    """Process-pool initializer: keep the dataset in the worker."""
    global _worker_dataset
    _worker_dataset = dataset


def _worker_fn(samples: list, batchify_fn: Callable, spool_dir: str) -> str:
    """Build one batch in a worker process; writes it pickled into `spool_dir`, returns the file name."""
    batch = batchify_fn([_worker_dataset[i] for i in samples])
    fd, path = tempfile.mkstemp(dir=spool_dir, suffix=".batch")
    with os.fdopen(fd, "wb") as f:
        pickle.dump(batch, f, pickle.HIGHEST_PROTOCOL)
    return path


def _read_spooled(path: str) -> Any:
    """Load and delete a batch a worker process spooled."""
    try:
        with open(path, "rb") as f:
            return pickle.load(f)
    finally:
        os.remove(path)


def _spool_dir() -> str:
    """A private folder for worker results, in memory (/dev/shm) where possible."""
    shm = "/dev/shm"
    base = shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None
    return tempfile.mkdtemp(prefix="hybridgraph-dataloader-", dir=base)


def _thread_worker_fn(samples: list, batchify_fn: Callable, dataset: Any) -> Any:
    """Build one batch in a worker thread."""
    return batchify_fn([dataset[i] for i in samples])


class _MultiWorkerIter:
    """Iterates over batches computed by a worker pool, keeping `prefetch` batches in flight.

    `dataset` is what `worker_fn` gets after the batchify function: the dataset for thread
    workers, the spool folder for process workers (which hold the dataset themselves)."""

    def __init__(self, worker_pool: multiprocessing.pool.Pool, batchify_fn: Callable, batch_sampler: Any,
                 pin_memory: bool = False, pin_device_id: int = 0, worker_fn: Callable = _worker_fn,
                 prefetch: int = 0, dataset: Any = None, data_loader: Any = None, timeout: float = 120):
        self._worker_pool = worker_pool
        self._batchify_fn = batchify_fn
        self._batch_sampler = batch_sampler
        self._data_buffer: dict = {}
        self._rcvd_idx = 0
        self._sent_idx = 0
        self._iter = iter(self._batch_sampler)
        self._worker_fn = worker_fn
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._dataset = dataset
        self._data_loader = data_loader  # keeps the loader (and its pool) alive while iterating
        self._timeout = timeout
        for _ in range(prefetch):
            self._push_next()

    def __len__(self) -> int:
        return len(self._batch_sampler)

    def _push_next(self) -> None:
        r = next(self._iter, None)
        if r is None:
            return
        async_ret = self._worker_pool.apply_async(self._worker_fn, (r, self._batchify_fn, self._dataset))
        self._data_buffer[self._sent_idx] = async_ret
        self._sent_idx += 1

    def __next__(self) -> Any:
        self._push_next()
        if self._rcvd_idx == self._sent_idx:
            if self._data_buffer:
                raise RuntimeError("Data buffer should be empty at this moment")
            raise StopIteration
        ret = self._data_buffer.pop(self._rcvd_idx)
        try:
            batch = ret.get(self._timeout)
        except multiprocessing.TimeoutError:
            msg = (f"Worker timed out after {self._timeout} seconds. This might be caused by a slow transform; "
                   "increase `timeout` to allow slower data loading in each worker.")
            raise multiprocessing.TimeoutError(msg) from None
        if self._worker_fn is _worker_fn:
            batch = _read_spooled(batch)
        if self._pin_memory:
            batch = _as_in_context(batch, nd.cpu_pinned(self._pin_device_id))
        self._rcvd_idx += 1
        return batch

    def next(self) -> Any:
        return self.__next__()

    def __iter__(self) -> "_MultiWorkerIter":
        return self


class DataLoader:
    """Loads data from a dataset and returns mini-batches of data.

    Parameters
    ----------
    dataset : Dataset
        Source dataset. Note that numpy and mxnet arrays can be directly used as a Dataset.
    batch_size : int
        Size of mini-batch.
    shuffle : bool
        Whether to shuffle the samples.
    sampler : Sampler
        The sampler to use. Either specify sampler or shuffle, not both.
    last_batch : {'keep', 'discard', 'rollover'}
        How to handle the last batch if batch_size does not evenly divide
        ``len(dataset)`` (default 'keep').
    batch_sampler : Sampler
        A sampler that returns mini-batches. Do not specify batch_size, shuffle,
        sampler, and last_batch if batch_sampler is specified.
    batchify_fn : callable
        Callback function to allow users to specify how to merge samples into a batch.
    num_workers : int, default 0
        The number of workers (threads or processes) to use for data preprocessing.
    pin_memory : bool, default False
        If True, batches are returned on the `cpu_pinned` context.
    pin_device_id : int, default 0
        The device id of `cpu_pinned`.
    prefetch : int, default is `num_workers * 2`
        The number of batches prefetched by the workers.
    thread_pool : bool, default False
        Use threads instead of processes for the workers.
    timeout : int, default 120
        Seconds to wait for a worker's batch before raising `multiprocessing.TimeoutError`.
    auto_reload : bool, default False
        Start the next epoch's prefetching as soon as an epoch ends.
    """

    def __init__(self, dataset: Any, batch_size: int | None = None, shuffle: bool = False, sampler: Any = None,
                 last_batch: str | None = None, batch_sampler: Any = None, batchify_fn: Callable | None = None,
                 num_workers: int = 0, pin_memory: bool = False, pin_device_id: int = 0,
                 prefetch: int | None = None, thread_pool: bool = False, timeout: float = 120,
                 auto_reload: bool = False):
        self._worker_pool: multiprocessing.pool.Pool | None = None
        self._spool: str | None = None
        self._iter: Any = None
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._thread_pool = thread_pool
        self._timeout = timeout
        if not timeout > 0:
            raise AssertionError(f"timeout must be positive, given {timeout}")
        self._batch_sampler = _make_batch_sampler(dataset, batch_size, shuffle, sampler, last_batch, batch_sampler)
        self._num_workers = num_workers if num_workers >= 0 else 0
        self._prefetch = max(0, int(prefetch) if prefetch is not None else 2 * self._num_workers)
        if self._num_workers > 0:
            self._worker_pool = self._make_pool()
        if batchify_fn is None:
            batchify_fn = default_mp_batchify_fn if num_workers > 0 else default_batchify_fn
        self._batchify_fn = batchify_fn
        self.auto_reload = auto_reload
        if self.auto_reload:
            self.refresh()

    def _make_pool(self) -> multiprocessing.pool.Pool:
        if self._thread_pool:
            return multiprocessing.pool.ThreadPool(self._num_workers)
        # workers ignore Ctrl-C: the main process handles it and terminates them
        in_main = threading.current_thread() is threading.main_thread()
        handler = signal.signal(signal.SIGINT, signal.SIG_IGN) if in_main else None
        self._spool = _spool_dir()
        try:
            return multiprocessing.Pool(self._num_workers, initializer=_worker_initializer,
                                        initargs=(self._dataset,))
        finally:
            if in_main:
                signal.signal(signal.SIGINT, handler)

    def __iter__(self) -> Iterator:
        if self._iter is None:
            self.refresh()
        t = self._iter
        self._iter = None
        if is_np_array():   # numpy mode (npx.set_np()): batches are mx.np arrays, as MXNet's
            t = map(_as_np_batch, t)
        yield from t
        if self._iter is None and self.auto_reload:
            self.refresh()

    def _prefetch_iter(self) -> Iterator:
        if self._num_workers == 0:
            def same_process_iter():
                for batch in self._batch_sampler:
                    ret = self._batchify_fn([self._dataset[idx] for idx in batch])
                    if self._pin_memory:
                        ret = _as_in_context(ret, nd.cpu_pinned(self._pin_device_id))
                    yield ret
            return same_process_iter()
        return _MultiWorkerIter(self._worker_pool, self._batchify_fn, self._batch_sampler,
                                pin_memory=self._pin_memory, pin_device_id=self._pin_device_id,
                                worker_fn=_thread_worker_fn if self._thread_pool else _worker_fn,
                                prefetch=self._prefetch,
                                dataset=self._dataset if self._thread_pool else self._spool,
                                data_loader=self, timeout=self._timeout)

    def __len__(self) -> int:
        return len(self._batch_sampler)

    def __del__(self) -> None:
        pool = getattr(self, "_worker_pool", None)
        if pool is not None:
            self._worker_pool = None
            _stop_pool(pool)
        spool = getattr(self, "_spool", None)
        if spool is not None:
            self._spool = None
            shutil.rmtree(spool, ignore_errors=True)  # batches spooled but never read

    def close(self) -> None:
        """Stop the workers now (they are also stopped when the loader is garbage-collected)."""
        self.__del__()

    def refresh(self) -> None:
        """Start a new epoch's iterator (and its prefetching)."""
        self._iter = self._prefetch_iter()

    def clean(self) -> None:
        """Drop the pending iterator."""
        self._iter = None


def _make_batch_sampler(dataset: Any, batch_size: int | None, shuffle: bool, sampler: Any,
                        last_batch: str | None, batch_sampler: Any) -> Any:
    """The BatchSampler from DataLoader's arguments, with MXNet's consistency checks."""
    if batch_sampler is not None:
        if batch_size is not None or shuffle or sampler is not None or last_batch is not None:
            raise ValueError("batch_size, shuffle, sampler and last_batch must not be specified if batch_sampler "
                             "is specified.")
        return batch_sampler
    if batch_size is None:
        raise ValueError("batch_size must be specified unless batch_sampler is specified")
    if sampler is None:
        sampler = _sampler.RandomSampler(len(dataset)) if shuffle else _sampler.SequentialSampler(len(dataset))
    elif shuffle:
        raise ValueError("shuffle must not be specified if sampler is specified")
    return _sampler.BatchSampler(sampler, batch_size, last_batch if last_batch else "keep")
