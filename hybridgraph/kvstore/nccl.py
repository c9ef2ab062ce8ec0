"""NCCL between GPUs for the KVStore, through `cupy.cuda.nccl`.

When the values a store reduces live on GPU contexts (cupy arrays) and cupy was
built with NCCL, the store sums them on the GPUs instead of copying them to
host memory:

* between the workers of an MPI job (``dist_sync``, ``dist_device_sync``,
  ``horovod``): one `NcclComm` per process, on the GPU of the first value it
  reduces; rank 0 makes the NCCL unique id and MPI broadcasts it. The same
  buckets as on the CPU are allreduced in place on the current cupy stream,
  `init` broadcasts from rank 0. Waiting polls a CUDA event with the store's
  timeout and failure reports, so a dead worker still ends the job with its
  rank named (the NCCL communicator is aborted first).
* between the GPUs of one process (``device`` types): `reduce_devices` runs one
  NCCL group of in-place allreduces, one per GPU, and returns the sum on the
  stored value's GPU; values that NCCL cannot take (two on one GPU, dtypes it
  lacks, CPU contexts) fall back to the plain summation.

cupy is never imported here: `nccl_api` only answers once some GPU context has
imported it (`backend.gpus_in_use`); environment ``HYBRIDGRAPH_KVSTORE_NCCL=0``
turns the path off. Nothing changes on the CPU.
"""
from __future__ import annotations

import importlib
import os
import time
from typing import Any

import numpy as np

from hybridgraph.nd import NDArray
from hybridgraph.nd import backend

from .comm import _CHECK_SECONDS, ENV_TIMEOUT, MPIComm, WorkerFailed, WorkerTimeout

__all__ = ["NcclComm", "nccl_api", "on_gpus", "reduce_devices", "ENV_NCCL"]

ENV_NCCL = "HYBRIDGRAPH_KVSTORE_NCCL"
#: numpy dtype name -> the name of NCCL's datatype constant (bool has none: such values use MPI)
_NCCL_DTYPES = {"float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64",
                "int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "int32": "NCCL_INT32", "int64": "NCCL_INT64"}
_GROUP_COMMS: dict[tuple, list] = {}   # devices -> the communicators of `initAll(devices)`


def nccl_api() -> tuple[Any, Any] | None:
    """``(cupy, cupy.cuda.nccl)`` when the NCCL path can be used, else None.

    None when turned off by ``HYBRIDGRAPH_KVSTORE_NCCL=0``, when no GPU context was used yet
    (then no value can live on a GPU, and cupy is not imported for nothing), or when cupy
    lacks NCCL."""
    if os.getenv(ENV_NCCL, "1") == "0" or not backend.gpus_in_use():
        return None
    cp = backend._import_cupy()
    nccl = getattr(cp.cuda, "nccl", None)
    if nccl is None:
        try:
            nccl = importlib.import_module(f"{cp.__name__}.cuda.nccl")
        except ImportError:
            return None
    if not getattr(nccl, "available", True):
        return None
    return cp, nccl


def on_gpus(arrays: list) -> bool:
    """Whether every array is a dense array on a GPU context, of a dtype NCCL reduces."""
    return bool(arrays) and all(
        a.context.device_type == "gpu" and a.stype == "default" and np.dtype(a.dtype).name in _NCCL_DTYPES
        for a in arrays)


def _dtype_code(nccl: Any, buf: Any) -> int:
    return getattr(nccl, _NCCL_DTYPES[np.dtype(buf.dtype).name])


class NcclComm:
    """This process's NCCL communicator over the workers of the MPI job (one GPU per process).

    The collectives mirror `MPIComm`'s (`allreduce_`, `bcast_`, `start_allreduce` + `wait`),
    so the store's bucketing and the backward overlap use either without knowing which."""

    def __init__(self, mpi: MPIComm, device_id: int, api: tuple[Any, Any]):
        self.cp, self.nccl = api
        self.mpi = mpi
        self.rank, self.size = mpi.rank, mpi.size
        self.ctx = backend.gpu(device_id)
        uid = self.nccl.get_unique_id() if mpi.rank == 0 else None
        uid = mpi.bcast_object(uid, "broadcast of the NCCL unique id from rank 0")
        with self.cp.cuda.Device(device_id):
            self.comm = self.nccl.NcclCommunicator(mpi.size, uid, mpi.rank)

    @property
    def timeout(self) -> float:
        return self.mpi.timeout

    # -- buffers ----------------------------------------------------------------------------------------
    @property
    def xp(self) -> Any:
        return self.cp

    def local(self, value: NDArray) -> Any:
        """`value`'s data on this communicator's GPU (copied there if it lives elsewhere)."""
        return (value if value.context == self.ctx else value.as_in_context(self.ctx))._data

    def wrap(self, buf: Any, ctx: Any) -> NDArray:
        """A reduced buffer (on this communicator's GPU) as an NDArray on `ctx`."""
        out = NDArray(buf, ctx=self.ctx)
        return out if ctx == self.ctx else out.as_in_context(ctx)

    def device(self) -> Any:
        """Makes this communicator's GPU the current device (buffers are made and summed there)."""
        return self.cp.cuda.Device(self.ctx.device_id)

    # -- collectives ------------------------------------------------------------------------------------
    def start_allreduce(self, buffers: list) -> list:
        """Enqueue an in-place sum of each buffer over the workers on the current stream; returns
        the event that `wait` polls."""
        with self.cp.cuda.Device(self.ctx.device_id):
            stream = self.cp.cuda.get_current_stream()
            for buf in buffers:
                ptr = buf.data.ptr
                self.comm.allReduce(ptr, ptr, buf.size, _dtype_code(self.nccl, buf), self.nccl.NCCL_SUM, stream.ptr)
            return [self._record(stream)]

    def allreduce_(self, buffers: list, what: str) -> None:
        """Sum each buffer over the workers, in place."""
        self.wait(self.start_allreduce(buffers), what)

    def bcast_(self, buffers: list, what: str, root: int = 0) -> None:
        """Overwrite each buffer with rank `root`'s, in place."""
        with self.cp.cuda.Device(self.ctx.device_id):
            stream = self.cp.cuda.get_current_stream()
            for buf in buffers:
                self.comm.bcast(buf.data.ptr, buf.size, _dtype_code(self.nccl, buf), root, stream.ptr)
            events = [self._record(stream)]
        self.wait(events, what)

    def _record(self, stream: Any) -> Any:
        event = self.cp.cuda.Event(disable_timing=True)
        event.record(stream)
        return event

    def wait(self, events: list, what: str) -> None:
        """Wait until the GPU has run the collectives, watching the MPI failure reports, NCCL's
        asynchronous errors and the timeout; on failure the communicator is aborted (a
        collective a dead peer never joins would otherwise block the GPU)."""
        start = time.perf_counter()
        deadline = start + self.timeout
        while not all(e.done for e in events):
            try:
                self.mpi.check_failures()
                self.comm.check_async_error()
            except Exception as err:
                self.comm.abort()
                if isinstance(err, WorkerFailed):
                    raise
                raise WorkerFailed(f"rank {self.rank}: {what} failed in NCCL: {err}") from err
            if time.perf_counter() > deadline:
                self.comm.abort()
                others = ", ".join(str(r) for r in range(self.size) if r != self.rank)
                raise WorkerTimeout(f"rank {self.rank}: {what} (NCCL) did not complete within {self.timeout:g} s; "
                                    f"no answer from rank(s) {others}. Set {ENV_TIMEOUT} to wait longer.")
            time.sleep(_CHECK_SECONDS)
        self.mpi.comm_seconds += time.perf_counter() - start

    def close(self) -> None:
        """Free the communicator."""
        self.comm.destroy()


def reduce_devices(vals: list[NDArray], ctx: Any) -> NDArray | None:
    """The sum of `vals` (one per GPU of this process) on `ctx`, by one NCCL group of in-place
    allreduces over copies of them; None when NCCL cannot do it (the caller then sums)."""
    if len(vals) < 2 or not on_gpus(vals) or ctx.device_type != "gpu":
        return None
    devices = [v.context.device_id for v in vals]
    if len(set(devices)) != len(devices) or ctx.device_id not in devices or len({v.dtype for v in vals}) != 1:
        return None
    api = nccl_api()
    if api is None:
        return None
    cp, nccl = api
    key = tuple(devices)
    comms = _GROUP_COMMS.get(key)
    if comms is None:
        comms = _GROUP_COMMS[key] = nccl.NcclCommunicator.initAll(list(devices))
    bufs = []
    for v in vals:   # the pushed values are never written: reduce copies
        with cp.cuda.Device(v.context.device_id):
            bufs.append(cp.array(v._data, copy=True))
    events = []
    nccl.groupStart()
    try:
        for comm, dev, buf in zip(comms, devices, bufs):
            with cp.cuda.Device(dev):
                stream = cp.cuda.get_current_stream()
                comm.allReduce(buf.data.ptr, buf.data.ptr, buf.size, _dtype_code(nccl, buf), nccl.NCCL_SUM,
                               stream.ptr)
    finally:
        nccl.groupEnd()
    for dev in devices:   # the result is read on the stored value's stream: order it after every GPU's part
        with cp.cuda.Device(dev):
            event = cp.cuda.Event(disable_timing=True)
            event.record(cp.cuda.get_current_stream())
            events.append(event)
    with cp.cuda.Device(ctx.device_id):
        stream = cp.cuda.get_current_stream()
        for event in events:
            stream.wait_event(event)
    return NDArray(bufs[devices.index(ctx.device_id)], ctx=ctx)
