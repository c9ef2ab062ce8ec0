"""The command line's exit codes end to end: `python -m hybridgraph` as a process (0 ok, 1 a
verification that disagrees, 2 a bad file or argument), and `verify` naming the first node
whose output diverges."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx", reason="the ONNX commands need the onnx package (hybridgraph[onnx])")
pytest.importorskip("onnxruntime", reason="verify needs onnxruntime (a test dependency)")

import hybridgraph as mx  # noqa: E402
from hybridgraph import gluon, nd  # noqa: E402
from hybridgraph.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _exported(tmp_path: Path) -> str:
    net = gluon.nn.HybridSequential(prefix="cli_")
    with net.name_scope():
        net.add(gluon.nn.Dense(6, activation="relu"), gluon.nn.Dense(2))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    net(nd.array(np.ones((1, 4))))
    prefix = str(tmp_path / "cli")
    net.export(prefix)
    return prefix


def test_verify_exit_code_and_first_diverging_node(tmp_path, capsys):
    prefix = _exported(tmp_path)
    out = str(tmp_path / "cli.onnx")
    assert main(["convert", prefix + "-symbol.json", prefix + "-0000.params", "--to", "onnx",
                 "--input", "data:1x4", "-o", out]) == 0
    params = nd.load(prefix + "-0000.params")
    params["arg:cli_dense1_weight"] = params["arg:cli_dense1_weight"] + 1  # the second layer now differs
    nd.save(str(tmp_path / "other.params"), params)
    capsys.readouterr()
    assert main(["verify", out, prefix + "-symbol.json", str(tmp_path / "other.params"), "--per-node"]) == 1
    assert "cli_dense1" in capsys.readouterr().out


def test_module_entry_point_exit_codes(tmp_path):
    prefix = _exported(tmp_path)

    def run(*args):
        return subprocess.run([sys.executable, "-m", "hybridgraph", *args], check=False, cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
    ok = run("inspect", prefix + "-symbol.json")
    assert ok.returncode == 0 and "cli_dense0" in ok.stdout
    missing = run("inspect", str(tmp_path / "nope.onnx"))
    assert missing.returncode == 2 and "hybridgraph: error" in missing.stderr and "nope.onnx" in missing.stderr
