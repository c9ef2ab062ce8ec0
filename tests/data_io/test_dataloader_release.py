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
