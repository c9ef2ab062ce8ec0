"""Fixtures of the compat tests: the real MXNet interpreter, when there is one."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import find_mxnet_python


@pytest.fixture(scope="session")
def mxnet_python() -> Path:
    """The Python of the MXNet 1.9.1 virtualenv, or skip with the reason when there is none."""
    found = find_mxnet_python()
    if found is None:
        pytest.skip("no MXNet 1.9.1 venv (set HYBRIDGRAPH_MXNET_PYTHON or run .ci/run, which creates .mxvenv)")
    return Path(found)
