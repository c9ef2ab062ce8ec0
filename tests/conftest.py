"""Shared test configuration: hypothesis profiles and the golden-data location."""
from __future__ import annotations

import ipaddress
import os
import socket
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


_real_connect = socket.socket.connect
_real_getaddrinfo = socket.getaddrinfo


def _loopback_only(host) -> None:
    """Tests talk to this machine only: a name or address elsewhere fails at once."""
    if host in ("localhost", "", None):
        return
    try:
        if ipaddress.ip_address(host).is_loopback:
            return
    except ValueError:
        pass
    raise OSError(f"test tried to reach {host!r}: tests never use the network (simulate it)")


def _guarded_connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _loopback_only(address[0])
    return _real_connect(self, address)


def _guarded_getaddrinfo(host, *args, **kwargs):
    _loopback_only(host.decode() if isinstance(host, bytes) else host)
    return _real_getaddrinfo(host, *args, **kwargs)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    """No test reaches beyond loopback (downloads are simulated by patching the fetcher)."""
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket, "getaddrinfo", _guarded_getaddrinfo)
