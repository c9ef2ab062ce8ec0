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
