"""Fixtures shared by the mx.np tests."""
from __future__ import annotations

import pytest

from hybridgraph import npx


@pytest.fixture
def np_mode():
    """Run the test under `npx.set_np()` and restore classic mode afterwards."""
    npx.set_np()
    yield
    npx.reset_np()
