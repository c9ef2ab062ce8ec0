"""Interop with real MXNet 1.9.1, run in its own venv in a subprocess.

hybridgraph's exports of an MLP, a LeNet-style CNN and a BatchNorm/Dropout net
load into MXNet (`mx.gluon.SymbolBlock.imports`) and give the same outputs;
MXNet's exports of the same architectures load into hybridgraph and give the
same outputs; and the two exported graphs are the same JSON. Skipped, with the
reason, when no MXNet venv exists (see tests/conftest.py).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph.gluon import SymbolBlock, initializer, nn
from hybridgraph.nd import autograd

INTEROP = Path(__file__).resolve().parent.parent / "data" / "interop"
sys.path.insert(0, str(INTEROP))
from archs import INPUT_SHAPES, build  # noqa: E402

NAMES = sorted(INPUT_SHAPES)
RTOL, ATOL = 1e-4, 1e-5


def _export_hybridgraph_model(folder: Path, name: str) -> None:
    """Build, train-mode step (BatchNorm stats move), export `hg_NAME`, and save its input and output."""
    rng = np.random.default_rng(11)
    nd.random.seed(11)
    net = build(nn, name)
    net.initialize(initializer.Xavier())
    net.hybridize()
    for _ in range(2):
        with autograd.record():
            net(nd.array(rng.standard_normal(INPUT_SHAPES[name]).astype(np.float32)))
    data = rng.standard_normal(INPUT_SHAPES[name]).astype(np.float32)
    out = net(nd.array(data)).asnumpy()
    net.export(str(folder / f"hg_{name}"))
    np.savez(folder / f"hg_{name}-io.npz", data=data, out=out)


@pytest.fixture(scope="module")
def exchanged(mxnet_python: str, tmp_path_factory) -> Path:
    """A folder with both sides' exports and each side's outputs on the other's files."""
    folder = tmp_path_factory.mktemp("interop")
    for name in NAMES:
        _export_hybridgraph_model(folder, name)
    proc = subprocess.run([mxnet_python, str(INTEROP / "mx_side.py"), str(folder), *NAMES],
                          check=False, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        pytest.fail(f"MXNet side failed (rc={proc.returncode}):\n{proc.stdout}\n{proc.stderr[-4000:]}")
    return folder


@pytest.mark.parametrize("name", NAMES)
def test_mxnet_runs_hybridgraph_export(exchanged: Path, name: str) -> None:
    want = np.load(exchanged / f"hg_{name}-io.npz")["out"]
    got = np.load(exchanged / f"hg_{name}-mx_out.npy")
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", NAMES)
def test_hybridgraph_runs_mxnet_export(exchanged: Path, name: str) -> None:
    prefix = exchanged / f"mx_{name}"
    io = np.load(f"{prefix}-io.npz")
    net = SymbolBlock.imports(f"{prefix}-symbol.json", ["data"], f"{prefix}-0000.params")
    np.testing.assert_allclose(net(nd.array(io["data"])).asnumpy(), io["out"], rtol=RTOL, atol=ATOL)
    net.hybridize()
    np.testing.assert_allclose(net(nd.array(io["data"])).asnumpy(), io["out"], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", NAMES)
def test_exported_graphs_equal(exchanged: Path, name: str) -> None:
    """The same architecture exports the same graph (nodes, names, attributes) on both sides."""
    ours = json.loads((exchanged / f"hg_{name}-symbol.json").read_text())
    theirs = json.loads((exchanged / f"mx_{name}-symbol.json").read_text())
    assert ours["nodes"] == theirs["nodes"]
    assert ours["arg_nodes"] == theirs["arg_nodes"]
    assert ours["heads"] == theirs["heads"]


@pytest.mark.parametrize("name", NAMES)
def test_exported_params_have_mxnets_keys(exchanged: Path, name: str) -> None:
    ours = nd.load(str(exchanged / f"hg_{name}-0000.params"))
    theirs = nd.load(str(exchanged / f"mx_{name}-0000.params"))
    assert sorted(ours) == sorted(theirs)
    assert {k: v.shape for k, v in ours.items()} == {k: v.shape for k, v in theirs.items()}
