"""numpy-mode interop with real MXNet 1.9.1 (its venv, in a subprocess): a model with
`F.np` / `F.npx` code exported by hybridgraph under `npx.set_np()` loads into MXNet's
`SymbolBlock.imports` and gives the same outputs, and MXNet's np-mode export loads into
hybridgraph. Both exports name the same operators. Skipped without an MXNet venv."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as onp
import pytest

from hybridgraph import gluon, initializer, np, npx

INTEROP = Path(__file__).resolve().parent.parent / "data" / "interop"
sys.path.insert(0, str(INTEROP))
from np_archs import INPUT_SHAPE, build  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5


@pytest.fixture(scope="module")
def exchanged(mxnet_python: str, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("np_interop")
    npx.set_np()
    try:
        net = build(gluon)
        net.initialize(initializer.Xavier())
        net.hybridize()
        data = onp.random.default_rng(11).standard_normal(INPUT_SHAPE).astype(onp.float32)
        out = net(np.array(data))
        assert isinstance(out, np.ndarray)
        net.export(str(folder / "hg_np"))
        onp.savez(folder / "hg_np-io.npz", data=data, out=out.asnumpy())
    finally:
        npx.reset_np()
    proc = subprocess.run([mxnet_python, str(INTEROP / "np_mx_side.py"), str(folder)],
                          check=False, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        pytest.fail(f"MXNet side failed (rc={proc.returncode}):\n{proc.stdout}\n{proc.stderr[-4000:]}")
    return folder


def test_mxnet_runs_hybridgraph_np_export(exchanged: Path) -> None:
    want = onp.load(exchanged / "hg_np-io.npz")["out"]
    onp.testing.assert_allclose(onp.load(exchanged / "hg_np-mx_out.npy"), want, rtol=RTOL, atol=ATOL)


def test_hybridgraph_runs_mxnet_np_export(exchanged: Path) -> None:
    io = onp.load(exchanged / "mx_np-io.npz")
    npx.set_np()
    try:
        net = gluon.SymbolBlock.imports(str(exchanged / "mx_np-symbol.json"), ["data"],
                                        str(exchanged / "mx_np-0000.params"))
        got = net(np.array(io["data"]))
        assert isinstance(got, np.ndarray)
        onp.testing.assert_allclose(got.asnumpy(), io["out"], rtol=RTOL, atol=ATOL)
    finally:
        npx.reset_np()


def test_np_exports_name_the_same_operators(exchanged: Path) -> None:
    ours = json.loads((exchanged / "hg_np-symbol.json").read_text())
    theirs = json.loads((exchanged / "mx_np-symbol.json").read_text())
    assert [n["op"] for n in ours["nodes"]] == [n["op"] for n in theirs["nodes"]]
    assert ours["attrs"] == theirs["attrs"]   # is_np_shape and mxnet_version
    for a, b in zip(ours["nodes"], theirs["nodes"]):
        assert a.get("attrs") == b.get("attrs"), (a, b)
