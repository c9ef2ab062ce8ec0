"""MPI between workers for the distributed KVStore: launcher detection, and
collectives that never hang silently.

Workers are the processes of an MPI job (``mpiexec -n N`` or
``python -m hybridgraph.launch``). Every collective is started non-blocking
and polled: it fails after ``timeout`` seconds (env ``HYBRIDGRAPH_KVSTORE_TIMEOUT``,
default 60) with a `WorkerTimeout` naming the ranks waited for, and at once with
a `WorkerFailed` naming the rank when a peer reports that it raised (an
uncaught exception in a worker sends that report to every other rank before the
process exits; see `install_excepthook`).
"""
from __future__ import annotations

import contextlib
import os
import pickle
import sys
import threading
import time
import traceback
from typing import Any

import numpy as np

from hybridgraph.nd import NDArray
from hybridgraph.nd.backend import to_numpy
from hybridgraph.nd.errors import MXNetError

__all__ = ["MPIComm", "WorkerFailed", "WorkerTimeout", "launcher_env", "default_timeout"]

ENV_TIMEOUT = "HYBRIDGRAPH_KVSTORE_TIMEOUT"
_TAG_FAIL, _TAG_ACK = 17, 18
_CHECK_SECONDS = 0.02  # how often a waiting collective looks for failure reports and its deadline
# (rank variable, size variable, launcher) as set by the MPI launchers we know
_LAUNCHERS = (("PMI_RANK", "PMI_SIZE", "MPICH/Hydra mpiexec"),
              ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI mpirun"),
              ("MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "MVAPICH mpirun"),
              ("PMIX_RANK", "PMIX_SIZE", "PMIx launcher"))


class WorkerFailed(MXNetError):
    """Another worker raised or died: raised on every worker still waiting for it."""


class WorkerTimeout(MXNetError, TimeoutError):
    """A collective (allreduce, broadcast, barrier) did not complete in time."""


def default_timeout() -> float:
    """Seconds a collective may wait for the other workers (env HYBRIDGRAPH_KVSTORE_TIMEOUT, default 60)."""
    raw = os.getenv(ENV_TIMEOUT, "60")
    try:
        value = float(raw)
    except ValueError:
        raise MXNetError(f"{ENV_TIMEOUT}={raw!r}: expected a number of seconds") from None
    if value <= 0:
        raise MXNetError(f"{ENV_TIMEOUT}={raw!r}: the timeout must be positive")
    return value


def launcher_env() -> tuple[int, int, str] | None:
    """``(rank, size, launcher)`` read from the environment an MPI launcher sets, or None
    outside a launcher. MXNet's ps-lite variables (DMLC_ROLE, ...) are refused with the
    command that launches hybridgraph's workers instead."""
    for rank_var, size_var, name in _LAUNCHERS:
        if rank_var in os.environ and (size_var in os.environ or rank_var == "PMIX_RANK"):
            size = int(os.environ.get(size_var, "0")) or _pmix_size()
            return int(os.environ[rank_var]), size, name
    role = os.getenv("DMLC_ROLE")
    if role is not None and int(os.getenv("DMLC_NUM_WORKER", "1")) > 1 or role in ("server", "scheduler"):
        raise MXNetError(f"DMLC_ROLE={role!r}: this process was started by MXNet's parameter-server launcher "
                         "(ps-lite), which hybridgraph does not implement. Start the workers over MPI instead: "
                         "`python -m hybridgraph.launch -n N python train.py` or `mpiexec -n N python train.py`")
    return None


def _pmix_size() -> int:
    from mpi4py import MPI
    return MPI.COMM_WORLD.Get_size()


def _import_mpi() -> Any:
    try:
        from mpi4py import MPI
    except ImportError as err:
        raise ImportError("distributed kvstores need mpi4py and an MPI: `pip install 'hybridgraph[dist]'` "
                          "(installs mpi4py and mpich, which provides mpiexec)") from err
    return MPI


class MPIComm:
    """The workers' MPI communicator with timed, failure-aware collectives."""

    def __init__(self, timeout: float | None = None):
        MPI = _import_mpi()  # noqa: N806 - mpi4py's name
        self._mpi = MPI
        world = MPI.COMM_WORLD
        self.data = world.Dup()   # collectives
        self.ctrl = world.Dup()   # failure reports, never mixed with data
        self.rank = world.Get_rank()
        self.size = world.Get_size()
        self.timeout = default_timeout() if timeout is None else float(timeout)
        self.comm_seconds = 0.0   # time spent waiting in collectives (for measurements)
        install_excepthook(self)

    # -- buffers (the same three members as NcclComm's: the store's bucketing uses either) ------------
    xp = np

    @staticmethod
    def local(value: NDArray) -> np.ndarray:
        """`value`'s data in host memory, where MPI reduces it."""
        return to_numpy(value._data)

    @staticmethod
    def wrap(buf: np.ndarray, ctx: Any) -> NDArray:
        """A reduced buffer as an NDArray on `ctx`."""
        return NDArray(buf, ctx=ctx)

    @staticmethod
    def device() -> contextlib.AbstractContextManager:
        """Where buffers are made and summed (host memory: nothing to select)."""
        return contextlib.nullcontext()

    # -- waiting --------------------------------------------------------------------------------------
    def wait(self, requests: list, what: str) -> None:
        """Complete `requests`, watching for failure reports; time out with the ranks named.

        A helper thread blocks in MPI's Waitall (MPI progresses fastest inside its own
        blocking calls; polling with Test from Python is several times slower), while this
        thread checks every `_CHECK_SECONDS` for failure reports and the deadline. After a
        failure or timeout the store is unusable (the helper may stay blocked): end the process."""
        self.finish(self.start(requests, what))

    def start(self, requests: list, what: str) -> tuple:
        """Let a helper thread complete `requests` in the background (the collective progresses
        while the caller goes on, e.g. with the backward pass); `finish` waits for it."""
        done = threading.Event()
        error: list = []

        def complete() -> None:
            try:
                self._mpi.Request.Waitall(requests)
            except BaseException as err:  # noqa: BLE001 - handed to the waiting thread
                error.append(err)
            done.set()

        threading.Thread(target=complete, name="hybridgraph-kvstore-wait", daemon=True).start()
        return done, error, what

    def finish(self, handle: tuple) -> None:
        """Wait for a `start`ed collective, watching for failure reports and the timeout."""
        done, error, what = handle
        start = time.perf_counter()
        deadline = start + self.timeout
        while not done.wait(_CHECK_SECONDS):
            self.check_failures()
            if time.perf_counter() > deadline:
                others = [r for r in range(self.size) if r != self.rank]
                raise WorkerTimeout(
                    f"rank {self.rank}: {what} did not complete within {self.timeout:g} s; no answer from "
                    f"rank{'s' if len(others) > 1 else ''} {', '.join(map(str, others))} (a worker died, hangs, "
                    f"or runs different code). Set {ENV_TIMEOUT} to wait longer.")
        if error:
            self.check_failures()
            raise WorkerFailed(f"rank {self.rank}: {what} failed in MPI: {error[0]}") from error[0]
        self.comm_seconds += time.perf_counter() - start

    def start_allreduce(self, buffers: list[np.ndarray]) -> list:
        """Start an in-place allreduce of each buffer and return its requests (complete them with
        `wait`). No thread waits meanwhile: MPI moves it on inside the MPI calls that follow
        (the next bucket's start), so it takes no core from the computation going on."""
        MPI = self._mpi  # noqa: N806
        return [self.data.Iallreduce(MPI.IN_PLACE, b, op=MPI.SUM) for b in buffers]

    def check_failures(self) -> None:
        """Raise `WorkerFailed` if another rank reported that it failed."""
        MPI = self._mpi  # noqa: N806
        status = MPI.Status()
        if self.ctrl.Iprobe(source=MPI.ANY_SOURCE, tag=_TAG_FAIL, status=status):
            src = status.Get_source()
            message = self.ctrl.recv(source=src, tag=_TAG_FAIL)
            self.ctrl.send(self.rank, dest=src, tag=_TAG_ACK)
            raise WorkerFailed(f"rank {self.rank}: worker rank {src} failed: {message}")

    # -- collectives ----------------------------------------------------------------------------------
    def allreduce_(self, buffers: list[np.ndarray], what: str) -> None:
        """Sum each buffer over the workers, in place, all buckets in flight at once."""
        MPI = self._mpi  # noqa: N806
        self.wait([self.data.Iallreduce(MPI.IN_PLACE, b, op=MPI.SUM) for b in buffers], what)

    def bcast_(self, buffers: list[np.ndarray], what: str, root: int = 0) -> None:
        """Overwrite each buffer with rank `root`'s, in place."""
        self.wait([self.data.Ibcast(b, root=root) for b in buffers], what)

    def allgather(self, buf: np.ndarray, what: str) -> np.ndarray:
        """Every worker's `buf` (same size everywhere), stacked by rank."""
        out = np.empty((self.size, *buf.shape), dtype=buf.dtype)
        self.wait([self.data.Iallgather(buf, out)], what)
        return out

    def bcast_object(self, obj: Any, what: str, root: int = 0) -> Any:
        """Rank `root`'s picklable `obj` on every worker."""
        payload = np.frombuffer(pickle.dumps(obj), dtype=np.uint8) if self.rank == root else None
        size = np.array([payload.size if payload is not None else 0], dtype=np.int64)
        self.bcast_([size], what, root)
        buf = payload.copy() if payload is not None else np.empty(int(size[0]), dtype=np.uint8)
        self.bcast_([buf], what, root)
        return pickle.loads(buf.tobytes())

    def barrier(self, what: str = "barrier") -> None:
        """Wait until every worker reaches a barrier (timed like every collective)."""
        self.wait([self.data.Ibarrier()], what)

    # -- failure reports ------------------------------------------------------------------------------
    def report_failure(self, message: str, wait: float = 5.0) -> None:
        """Tell every other rank that this one fails with `message`; wait (bounded) for
        their acknowledgements so they can print their error before the job is torn down."""
        MPI = self._mpi  # noqa: N806
        others = [r for r in range(self.size) if r != self.rank]
        sends = [self.ctrl.isend(message, dest=r, tag=_TAG_FAIL) for r in others]
        acks = [self.ctrl.irecv(source=r, tag=_TAG_ACK) for r in others]
        deadline = time.perf_counter() + min(wait, self.timeout)
        while time.perf_counter() < deadline:
            if all(a.Test() for a in acks):
                break
            time.sleep(0.01)
        del sends, MPI


_HOOKED: list = []


def install_excepthook(comm: MPIComm) -> None:
    """On an uncaught exception, report it to the other workers, print it, and exit at once
    with status 1 (no MPI_Finalize, which could wait forever for the others)."""
    if _HOOKED:
        _HOOKED[0] = comm
        return
    _HOOKED.append(comm)
    previous = sys.excepthook

    def hook(exc_type, exc, tb):
        previous(exc_type, exc, tb)
        if not issubclass(exc_type, (WorkerFailed, WorkerTimeout)):
            text = "".join(traceback.format_exception_only(exc_type, exc)).strip()
            try:
                _HOOKED[0].report_failure(text)
            except Exception:  # noqa: BLE001 - already failing: the report is best effort
                pass
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)

    sys.excepthook = hook
