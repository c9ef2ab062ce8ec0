"""Soak tests (thorough profile, or RELIABILITY_SOAK=1): long runs keep memory bounded.

* 3,000 hybridized calls over 1,500 batch sizes grow RSS by less than 150 MB (the per-shape
  plans stay within the plan cache's budget; before it: +1.48 GB for 1..3000 twice);
* 3,000 training steps keep RSS and the number of live objects flat.
Each runs in a fresh process (_soak.py).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

from tests.conftest import REPO

pytestmark = [
    pytest.mark.skipif(settings().max_examples < 100 and os.environ.get("RELIABILITY_SOAK") != "1",
                       reason="soak tests run in the thorough profile (or with RELIABILITY_SOAK=1)"),
    pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="RSS is read from /proc (Linux)"),
]


def _soak(kind: str, n: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, str(Path(__file__).with_name("_soak.py")), kind, str(n)],
                         capture_output=True, text=True, env=env, timeout=3000, cwd=str(REPO), check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_many_batch_sizes_keep_memory_bounded():
    res = _soak("shapes", 1500)
    assert res["calls"] == 3000
    assert res["rss_growth_mb"] < 150, res
    assert res["cache"]["plan_bytes"] <= res["cache"]["plan_cache_limit"] + (64 << 20), res


def test_training_keeps_memory_and_objects_flat():
    res = _soak("train", 3000)
    assert res["rss_growth_mb"] < 20, res
    assert res["objects_growth"] < 500, res
