"""Shared test configuration: hypothesis profiles and the golden-data location."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=15, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("thorough", max_examples=300, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO.parent / "shared" / "golden"


@pytest.fixture(scope="session")
def golden() -> Path:
    """../shared/golden, or skip with the reason when it is absent."""
    if not GOLDEN.is_dir():
        pytest.skip(f"golden data not found at {GOLDEN} (it lives in ../shared beside the repo)")
    return GOLDEN


def find_mxnet_python() -> str | None:
    """The Python of a venv with real MXNet 1.9.1, for interop tests, or None.

    Looked up in $HYBRIDGRAPH_MXNET_PYTHON, then .mxvenv in the repo (made by .ci/run),
    then /work/mxvenv.
    """
    candidates = [os.environ.get("HYBRIDGRAPH_MXNET_PYTHON", ""), str(REPO / ".mxvenv" / "bin" / "python"),
                  "/work/mxvenv/bin/python"]
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return c
    return None


@pytest.fixture(scope="session")
def mxnet_python() -> str:
    """Path of a Python with MXNet 1.9.1, or skip the test with the reason."""
    found = find_mxnet_python()
    if found is None:
        pytest.skip("no MXNet 1.9.1 venv (set HYBRIDGRAPH_MXNET_PYTHON or run .ci/run, which creates .mxvenv)")
    return found
