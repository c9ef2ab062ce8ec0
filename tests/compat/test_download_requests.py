"""gluon.utils.download goes through `requests` when it is installed, as MXNet 1.9.1's does
(MXNet's own test_gluon_utils mocks `requests.get`)."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

requests = pytest.importorskip("requests", reason="download uses requests only when it is installed")

import hybridgraph as mx  # noqa: E402


class _Response(requests.Response):
    def __init__(self, status: int, body: bytes):
        super().__init__()
        self.status_code = status
        self.raw = io.BytesIO(body)


def test_download_uses_requests_get(tmp_path, monkeypatch):
    calls = []

    def get(url, **kwargs):
        calls.append((url, kwargs))
        return _Response(200, b"payload" * 300)

    monkeypatch.setattr(requests, "get", get)
    with pytest.warns(UserWarning, match="Unverified HTTPS request"):
        fname = mx.gluon.utils.download("https://example.com/f.bin", path=str(tmp_path), verify_ssl=False)
    assert calls == [("https://example.com/f.bin", {"stream": True, "verify": False})]
    assert Path(fname).read_bytes() == b"payload" * 300
    assert [p.name for p in tmp_path.iterdir()] == ["f.bin"]   # written atomically: nothing else left


def test_download_retries_then_raises(tmp_path, monkeypatch):
    tries = []

    def get(url, **kwargs):
        tries.append(url)
        raise requests.exceptions.ConnectionError("offline")

    monkeypatch.setattr(requests, "get", get)
    with pytest.raises(OSError, match="without network access"):
        mx.gluon.utils.download("http://doesnotexist.notfound/x", path=str(tmp_path / "x"), retries=3)
    assert len(tries) == 3
    monkeypatch.setattr(requests, "get", lambda url, **kw: _Response(404, b""))
    with pytest.raises(RuntimeError, match="Failed downloading url"):
        mx.gluon.utils.download("http://e/y", path=str(tmp_path / "y"), retries=1)
