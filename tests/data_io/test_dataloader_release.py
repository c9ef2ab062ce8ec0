"""DataLoader with worker processes: deleting a loader whose workers still hold
prefetched batches larger than a pipe buffer must return promptly and leave no
spooled files (Pool.terminate() used to deadlock on the result queue's lock)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import glob, numpy as np, hybridgraph as mx
    for _ in range(4):
        loader = mx.gluon.data.DataLoader(np.random.rand(200, 4000), batch_size=8, num_workers=4)
        it = iter(loader)
        batch = next(it)
        assert batch.shape == (8, 4000)
        spool = loader._spool
        del it, loader
        assert not os.path.exists(spool), spool
    print("released")
""")


@pytest.mark.skipif(os.name == "nt", reason="fork-based worker pools")
def test_deleting_a_busy_loader_releases_the_pool():
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=repo + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", "import os\n" + SCRIPT], capture_output=True, text=True, check=False,
                          timeout=120, env=env, start_new_session=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "released" in proc.stdout


def test_process_workers_return_the_same_batches():
    import numpy as np

    import hybridgraph as mx
    data = np.arange(60, dtype=np.float32).reshape(20, 3)
    single = [b.asnumpy() for b in mx.gluon.data.DataLoader(data, batch_size=6)]
    loader = mx.gluon.data.DataLoader(data, batch_size=6, num_workers=2)
    multi = [b.asnumpy() for b in loader]
    assert len(single) == len(multi) == 4
    for a, b in zip(single, multi):
        np.testing.assert_array_equal(a, b)
    loader.close()


def _nap(seconds: float) -> float:
    import time
    time.sleep(seconds)
    return seconds


@pytest.mark.skipif(os.name == "nt", reason="fork-based worker pools")
def test_stopping_a_pool_lets_busy_workers_exit_instead_of_killing_them():
    """Pool.terminate() SIGTERMs busy workers; one killed while it holds the result queue's
    lock hangs terminate() for good (seen 1 in 6-30 deletions on a loaded machine). The loader
    closes its pool first, so the workers finish their queued tasks and exit on their own."""
    import multiprocessing

    from hybridgraph.gluon.data import dataloader
    pool = multiprocessing.get_context("fork").Pool(2)
    pending = [pool.apply_async(_nap, (0.05,)) for _ in range(6)]
    workers = list(pool._pool)
    dataloader._stop_pool(pool, timeout=30)
    assert [w.exitcode for w in workers] == [0, 0]
    assert all(p.ready() for p in pending)     # no task was cut off (terminate() alone drops them all)


@pytest.mark.skipif(os.name == "nt", reason="fork-based worker pools")
def test_a_worker_stuck_past_the_timeout_is_terminated():
    import multiprocessing
    import time

    from hybridgraph.gluon.data import dataloader
    pool = multiprocessing.get_context("fork").Pool(1)
    pool.apply_async(_nap, (60,))
    time.sleep(0.2)
    t0 = time.monotonic()
    dataloader._stop_pool(pool, timeout=0.5)
    assert time.monotonic() - t0 < 20
