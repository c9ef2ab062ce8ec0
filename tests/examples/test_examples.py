"""Every program in examples/ runs, at its small size, and gives its key result.

Examples with a `main(argv) -> dict` are imported and called in-process (fast);
the quickstart demo, the Symbol tutorial (whose automatic names need a fresh
process) and the property-testing script (which loads a hypothesis profile)
run as subprocesses, as a user would run them.

`symbol_tutorial.mxnet.txt` is what MXNet 1.9.1 prints for examples/symbol_tutorial.py
with its import line changed to `import mxnet as mx` (stdout only); with an MXNet venv,
`test_symbol_tutorial_recording_is_current` re-records it and compares.
"""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import GOLDEN, find_mxnet_python

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
TUTORIAL_RECORDING = Path(__file__).with_name("symbol_tutorial.mxnet.txt")


def load_example(name: str) -> ModuleType:
    """Import examples/NAME.py as a module (examples/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_example(script: Path, *args: str, python: str = sys.executable, timeout: int = 120) -> str:
    """Run a script as a user would; return its stdout, failing with its stderr."""
    done = subprocess.run([python, str(script), *args], cwd=str(REPO), capture_output=True, text=True,
                          timeout=timeout, check=False)
    assert done.returncode == 0, f"{script.name} exited with {done.returncode}:\n{done.stderr[-4000:]}"
    return done.stdout


def test_quickstart_quick(tmp_path):
    out = run_example(EXAMPLES / "quickstart.py", "--quick", "--out", str(tmp_path), timeout=300)
    assert "predictions identical to the trained net: True" in out
    accuracy = float(re.search(r"test accuracy: ([0-9.]+)", out).group(1))
    assert accuracy >= 0.95
    assert (tmp_path / "digits_cnn-symbol.json").is_file() and (tmp_path / "digits_cnn-0000.params").is_file()
    if importlib.util.find_spec("onnx") and importlib.util.find_spec("onnxruntime"):
        assert "same predicted classes: True" in out and (tmp_path / "digits_cnn.onnx").is_file()
    else:
        assert "ONNX step skipped" in out


def test_symbol_tutorial_prints_what_mxnet_prints(tmp_path):
    out = run_example(EXAMPLES / "symbol_tutorial.py", "--out", str(tmp_path))
    printed = "".join(line for line in out.splitlines(keepends=True) if not line.startswith("  saved to "))
    assert printed == TUTORIAL_RECORDING.read_text()
    assert (tmp_path / "symbol-c.json").is_file() and (tmp_path / "mlp.gv").is_file()


def test_symbol_tutorial_recording_is_current(tmp_path):
    python = find_mxnet_python()
    if python is None:
        pytest.skip("no MXNet 1.9.1 venv (set HYBRIDGRAPH_MXNET_PYTHON or run .ci/run, which creates .mxvenv)")
    source = (EXAMPLES / "symbol_tutorial.py").read_text()
    assert "\nimport hybridgraph as mx " in source
    script = tmp_path / "symbol_tutorial_mxnet.py"
    script.write_text(re.sub(r"\nimport hybridgraph as mx .*\n", "\nimport mxnet as mx\n", source))
    assert run_example(script, python=python) == TUTORIAL_RECORDING.read_text()


def test_symbolic_training_reaches_90_percent(tmp_path):
    result = load_example("symbolic_training").main(["--quick", "--out", str(tmp_path)])
    assert result["accuracy"] >= 0.9
    assert result["reloaded_accuracy"] == result["accuracy"]
    assert Path(result["prefix"] + "-symbol.json").is_file()


def test_gluon_training_accuracy_and_identical_reload(tmp_path):
    result = load_example("gluon_training").main(["--quick", "--out", str(tmp_path)])
    assert result["accuracy"] >= 0.9
    assert result["identical"] is True


def test_export_and_serve_in_fresh_processes(tmp_path):
    argv = ["--quick", "--out", str(tmp_path)]
    python = find_mxnet_python()
    if python:
        argv += ["--mxnet-python", python]
    result = load_example("export_and_serve").main(argv)
    assert result["accuracy"] > 0.5
    assert result["hybridgraph"]["max_diff"] == 0.0 and result["hybridgraph"]["same_classes"]
    if python is not None:
        assert result["mxnet"] is not None, "MXNet was found but not used"
    if result["mxnet"] is not None:
        assert result["mxnet"]["same_classes"] and result["mxnet"]["max_diff"] < 1e-4


def test_load_mxnet_model_golden_and_zoo(tmp_path):
    if not GOLDEN.is_dir():
        pytest.skip(f"golden data not found at {GOLDEN} (it lives in ../shared beside the repo)")
    result = load_example("load_mxnet_model").main(["--quick", "--golden", str(GOLDEN), "--out", str(tmp_path)])
    lenet = result["golden"]
    assert lenet["shape"] == (2, 10) and lenet["same_top5"] and lenet["rel_err"] < 1e-4
    assert all(len(classes) == 5 for classes in lenet["top5"])
    zoo = result["zoo"]
    assert zoo["shape"] == (1, 1000) and zoo["same_top5"] and zoo["rel_err"] < 1e-4


def test_hybridize_pitfalls_error_and_rewrites():
    result = load_example("hybridize_pitfalls").main(["--quick"])
    for case, code in (("if", "if norm > self.max_norm:"), ("float", ".asscalar()")):
        err = result[case]
        assert Path(err["file"]).name == "hybridize_pitfalls.py" and code in err["code"]
        assert "F.where" in err["message"] and "contrib.cond" in err["message"]
    assert result["where"] is True
    assert result["cond"] in (True, None)   # None only where contrib.cond is not available


def test_property_testing_script_runs_its_tests():
    out = run_example(EXAMPLES / "property_testing.py", "--quick")
    assert out.count("passed on 10 hypothesis examples") == 3


def test_property_testing_functions_are_importable_tests():
    module = load_example("property_testing")
    assert [t.__name__ for t in module.TESTS] == ["test_hybridized_matches_eager", "test_rows_are_independent",
                                                 "test_output_shape_and_finite"]
    module.test_output_shape_and_finite()          # a @given test runs under the session's profile
    out = module.make_block()(module.mx.nd.zeros((2, module.FEATURES)))
    assert out.shape == (2, module.FEATURES)


def test_recordio_training_reads_its_rec_files(tmp_path):
    pytest.importorskip("PIL", reason="the example packs and decodes PNG records with Pillow")
    result = load_example("recordio_training").main(["--quick", "--out", str(tmp_path)])
    assert result["records"] == {"train": 1437, "val": 360}
    assert result["accuracy"] >= 0.9
    assert (tmp_path / "train.rec").stat().st_size > 0 and (tmp_path / "val.idx").is_file()


def test_custom_op_example_eager_autograd_symbol_hybridized():
    result = load_example("custom_op").main([])
    assert result["eager_max_err"] < 1e-5 and result["autograd_max_err"] < 1e-5
    assert result["json_node"] == {"op": "Custom", "name": "act", "attrs": {"op_type": "softplus"},
                                   "inputs": [[0, 0, 0]]}
    assert result["symbol_forward_err"] < 1e-5 and result["symbol_grad_err"] < 1e-5
    assert result["hybridized_vs_eager_err"] < 1e-5 and result["hybridized_vs_eager_grad_err"] < 1e-5
def test_d2l_numpy_workflow(tmp_path):
    """examples/d2l_numpy.py: mx.np / npx code from d2l trains, hybridizes, exports and reloads."""
    from hybridgraph import npx  # noqa: PLC0415
    try:
        result = load_example("d2l_numpy").main(["--quick", "--out", str(tmp_path)])
    finally:
        npx.reset_np()   # the example turns numpy mode on at import, as d2l does
    assert result["linear"]["w_error"] < 0.05 and result["linear"]["loss"] < 1e-3
    assert result["softmax_accuracy"] >= 0.85 and result["mlp_accuracy"] >= 0.85
    assert result["lenet_accuracy"] >= 0.85 and result["reloaded_identical"] is True
    assert Path(result["prefix"] + "-symbol.json").is_file()
