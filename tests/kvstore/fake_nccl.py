"""A test double for cupy with NCCL, so that the KVStore's NCCL path runs without a GPU.

`install()` puts a fake ``cupy`` module where hybridgraph's backend keeps the real one
(`backend._cupy`): GPU contexts then compute with numpy, buffers that the NCCL code
makes (`concatenate`, `array`) carry a ``.data.ptr`` like cupy's, and
``cuda.nccl`` is a fake NCCL whose communicators really reduce: across processes with
MPI (`NcclCommunicator`, reading and writing the memory behind the pointers they get,
as NCCL does), inside one process between the communicators of `initAll` at
`groupEnd`. Every call is appended to `CALLS` as ``(name, details)``.
"""
from __future__ import annotations

import ctypes
import types
from typing import Any

import numpy as np

CALLS: list[tuple[str, Any]] = []
# NCCL's own values of ncclDataType_t and ncclRedOp_t
_DTYPES = {0: np.int8, 1: np.uint8, 2: np.int32, 4: np.int64, 6: np.float16, 7: np.float32, 8: np.float64}
_CURRENT = [0]   # the current device


class _Memory:
    def __init__(self, ptr: int):
        self.ptr = ptr


class DeviceArray(np.ndarray):
    """A numpy array that exposes its address as cupy's ``.data.ptr``."""

    @property
    def data(self) -> _Memory:  # type: ignore[override]
        return _Memory(self.__array_interface__["data"][0])


def _view(ptr: int, count: int, dtype_code: int) -> np.ndarray:
    """The memory at `ptr` as `count` values of NCCL type `dtype_code` (what NCCL reads/writes)."""
    dtype = np.dtype(_DTYPES[dtype_code])
    raw = (ctypes.c_byte * (count * dtype.itemsize)).from_address(ptr)
    return np.frombuffer(raw, dtype=dtype)


class Device:
    def __init__(self, device_id: int = 0):
        self.id = int(device_id)

    def __enter__(self) -> "Device":
        self._prev = _CURRENT[0]
        _CURRENT[0] = self.id
        return self

    def __exit__(self, *exc) -> None:
        _CURRENT[0] = self._prev


class Stream:
    def __init__(self, device: int):
        self.device = device
        self.ptr = 1000 + device
        self.waited: list = []

    def synchronize(self) -> None:
        pass

    def wait_event(self, event: "Event") -> None:
        CALLS.append(("stream.wait_event", (self.device, event.device)))


class Event:
    def __init__(self, disable_timing: bool = False):
        self.device = _CURRENT[0]
        self.recorded = False

    def record(self, stream: Stream) -> None:
        self.recorded = True
        CALLS.append(("event.record", stream.device))

    @property
    def done(self) -> bool:
        return self.recorded


class NcclCommunicator:
    """One process's communicator: the collectives run over MPI on the memory behind the pointers."""

    def __init__(self, ndev: int, uid: Any, rank: int):
        self.mpi = None   # one rank: no MPI needed (the in-process tests)
        if ndev > 1:
            from mpi4py import MPI
            self.mpi = MPI.COMM_WORLD.Dup()
            uids = self.mpi.allgather(uid)
            if ndev != self.mpi.Get_size() or rank != self.mpi.Get_rank() or any(u != uids[0] for u in uids):
                raise RuntimeError(f"fake NCCL: bad communicator ({ndev}, rank {rank}, unique ids {uids})")
        self.rank, self.device = rank, _CURRENT[0]
        CALLS.append(("NcclCommunicator", (ndev, rank, self.device)))

    def allReduce(self, send: int, recv: int, count: int, dtype: int, op: int, stream: int) -> None:  # noqa: N802
        assert op == NCCL_SUM and stream == 1000 + _CURRENT[0] and _CURRENT[0] == self.device
        CALLS.append(("allReduce", (count, dtype, send == recv)))
        out = _view(recv, count, dtype)
        if self.mpi is None:
            out[:] = _view(send, count, dtype)
            return
        from mpi4py import MPI
        self.mpi.Allreduce(_view(send, count, dtype).copy(), out, op=MPI.SUM)

    def bcast(self, buff: int, count: int, dtype: int, root: int, stream: int) -> None:
        assert stream == 1000 + _CURRENT[0] and _CURRENT[0] == self.device
        CALLS.append(("bcast", (count, dtype, root)))
        if self.mpi is not None:
            self.mpi.Bcast(_view(buff, count, dtype), root=root)

    def check_async_error(self) -> None:
        pass

    def abort(self) -> None:
        CALLS.append(("abort", self.rank))

    def destroy(self) -> None:
        CALLS.append(("destroy", self.rank))

    @staticmethod
    def initAll(devices: list) -> list:  # noqa: N802 - NCCL's name
        group = _Group()
        CALLS.append(("initAll", tuple(devices)))
        return [_GroupComm(group, d) for d in devices]


class _Group:
    def __init__(self):
        self.pending: list = []


_OPEN: list = []   # groupStart depth


class _GroupComm:
    """A communicator of `initAll`: its allReduce only queues; `groupEnd` sums the group's buffers."""

    def __init__(self, group: _Group, device: int):
        self.group, self.device = group, device

    def allReduce(self, send: int, recv: int, count: int, dtype: int, op: int, stream: int) -> None:  # noqa: N802
        if not _OPEN:
            raise RuntimeError("fake NCCL: allReduce of a single-process clique outside groupStart/groupEnd "
                               "would deadlock")
        assert op == NCCL_SUM and stream == 1000 + _CURRENT[0] and _CURRENT[0] == self.device
        CALLS.append(("group.allReduce", (self.device, count, dtype, send == recv)))
        self.group.pending.append((send, recv, count, dtype))
        _OPEN[-1].add(self.group)


def groupStart() -> None:  # noqa: N802
    CALLS.append(("groupStart", None))
    _OPEN.append(set())


def groupEnd() -> None:  # noqa: N802
    CALLS.append(("groupEnd", None))
    for group in _OPEN.pop():
        total = sum(_view(s, c, d).copy() for s, _, c, d in group.pending)
        for _, recv, count, dtype in group.pending:
            _view(recv, count, dtype)[:] = total
        group.pending.clear()


def get_unique_id() -> tuple:
    CALLS.append(("get_unique_id", None))
    return tuple(np.random.RandomState().randint(-128, 128, 128).tolist())


NCCL_SUM = 0
nccl = types.SimpleNamespace(
    available=True, NcclCommunicator=NcclCommunicator, groupStart=groupStart, groupEnd=groupEnd,
    get_unique_id=get_unique_id, NCCL_SUM=NCCL_SUM, NCCL_INT8=0, NCCL_UINT8=1, NCCL_INT32=2, NCCL_INT64=4,
    NCCL_FLOAT16=6, NCCL_FLOAT32=7, NCCL_FLOAT64=8)


def _make_module(num_gpus: int) -> types.ModuleType:
    cupy = types.ModuleType("fake_cupy")
    cupy.__getattr__ = lambda name: getattr(np, name)   # everything else computes with numpy
    cupy.concatenate = lambda arrays, **kw: np.concatenate([np.asarray(a) for a in arrays], **kw).view(DeviceArray)
    cupy.array = lambda obj, **kw: np.array(obj, **kw).view(DeviceArray)
    streams = {}
    cupy.cuda = types.SimpleNamespace(
        nccl=nccl, Device=Device, Event=Event,
        get_current_stream=lambda: streams.setdefault(_CURRENT[0], Stream(_CURRENT[0])),
        runtime=types.SimpleNamespace(getDeviceCount=lambda: num_gpus, getDevice=lambda: _CURRENT[0],
                                      deviceSynchronize=lambda: None))
    return cupy


def install(num_gpus: int = 2) -> types.ModuleType:
    """Make hybridgraph use the fake cupy (GPU contexts gpu(0) .. gpu(num_gpus - 1)); returns it."""
    from hybridgraph.nd import backend
    fake = _make_module(num_gpus)
    _SAVED.append((backend._cupy, backend._gpu_count))
    backend._cupy, backend._gpu_count = fake, num_gpus
    CALLS.clear()
    return fake


def uninstall() -> None:
    """Restore the backend's state from before `install`."""
    from hybridgraph.nd import backend
    backend._cupy, backend._gpu_count = _SAVED.pop()


_SAVED: list = []


def names() -> list[str]:
    """The names of the calls recorded so far."""
    return [name for name, _ in CALLS]
