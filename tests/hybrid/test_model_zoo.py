"""model_zoo.vision against MXNet 1.9.1's model zoo.

Cheap checks run for every architecture: parameter names and shapes, and the
exported graph (JSON) equal to what MXNet writes (tests/data/model_zoo/, made
by tests/data/gen_model_zoo_ref.py). Running a model is expensive on a small
CPU, so outputs and the MXNet round trips run in CI for the models of
``CI_MODELS`` only; ``HYBRIDGRAPH_ZOO_ALL=1`` (or the thorough hypothesis
profile) runs them for every architecture:

* our model with the deterministic case weights gives MXNet's committed outputs (no
  MXNet needed: this one also runs for the cheap models of ``CHEAP_MODELS``);
* MXNet's exported files load with ``SymbolBlock.imports`` and give MXNet's outputs;
* our model loads MXNet's ``save_parameters`` file and gives the same outputs;
* our export loads in MXNet (subprocess) and gives the same outputs.

MXNet's large files are written on demand (by the MXNet venv) into
``$HYBRIDGRAPH_ZOO_CACHE`` or ``~/.cache/hybridgraph-zoo``.
"""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph.gluon import SymbolBlock
from hybridgraph.gluon.model_zoo import model_store, vision
from hybridgraph.gluon.tracing import trace_block
from hybridgraph.symbol.json_io import save as save_json
from hybridgraph.symbol.naming import NameManager

REF_DIR = Path(__file__).resolve().parent.parent / "data" / "model_zoo"
GEN_SCRIPT = REF_DIR.parent / "gen_model_zoo_ref.py"
sys.path.insert(0, str(REF_DIR))
from zoo_cases import CI_MODELS, MODELS, make_input, make_param  # noqa: E402

RUN_ALL = os.environ.get("HYBRIDGRAPH_ZOO_ALL") == "1" or os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
RTOL = 1e-4

_REF_OUTPUTS = dict(np.load(REF_DIR / "outputs.npz"))
with gzip.open(REF_DIR / "params.json.gz", "rt") as _f:
    _REF_PARAMS = json.load(_f)
with gzip.open(REF_DIR / "reprs.json.gz", "rt") as _f:
    _REF_REPRS = json.load(_f)


# models cheap enough to run without MXNet in every run, beside CI_MODELS: one of most families
CHEAP_MODELS = (*CI_MODELS, "resnet18_v2", "squeezenet1.0", "mobilenet0.25", "alexnet")


def _select(names: tuple) -> list:
    """Parametrize values: every model, those not in `names` skipped unless RUN_ALL."""
    skip = pytest.mark.skip(reason="slow model: set HYBRIDGRAPH_ZOO_ALL=1 to run it")
    return [n if n in names or RUN_ALL else pytest.param(n, marks=skip) for n in MODELS]


FULL_RUN = _select(CI_MODELS)


def _build(name: str, **kwargs):
    with NameManager():  # fresh counters: the model is `resnetv10_`, as in the reference process
        return vision.get_model(name, **kwargs)


def _input(name: str) -> nd.NDArray:
    return nd.array(make_input(MODELS[name]))


def _assert_close(out: np.ndarray, ref: np.ndarray, what: str) -> None:
    assert out.shape == ref.shape, f"{what}: shape {out.shape} != {ref.shape}"
    err = float(np.abs(out - ref).max() / np.abs(ref).max())
    assert err <= RTOL, f"{what}: max error {err:.3g} relative to max |ref| (tolerance {RTOL})"


def _with_case_weights(name: str):
    """Our model, hybridized, with the case weights set after the first (deferred-init) call."""
    net = _build(name)
    x = _input(name)
    net.initialize()
    net.hybridize()
    net(x)
    for key, p in net._collect_params_with_prefix().items():
        p.set_data(nd.array(make_param(key, p.shape)))
    return net, x


def _load_json(path: Path) -> dict:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return json.load(f)


# -- every architecture: names, shapes, graphs ---------------------------------------------------
def test_model_list_matches_mxnet():
    assert sorted(vision._MODELS) == sorted(MODELS)
    with pytest.raises(ValueError, match="Model resnet19_v1 is not supported. Available options are"):
        vision.get_model("resnet19_v1")
    assert type(vision.get_model("ResNet18_V1")).__name__ == "ResNetV1"


@pytest.mark.parametrize("name", list(MODELS))
def test_param_names_and_shapes(name):
    net = _build(name)
    net.infer_shape(_input(name))
    ours = [[key, p.name, list(p.shape)] for key, p in net._collect_params_with_prefix().items()]
    assert ours == _REF_PARAMS[name]
    assert repr(net) == _REF_REPRS[name]


@pytest.mark.parametrize("name", list(MODELS))
def test_exported_graph_equals_mxnet(name, tmp_path):
    # the graph `export()` writes is the one traced on the first hybridized call (tracing
    # alone: the forward pass would be expensive for the large models)
    net = _build(name)
    traced = trace_block(net, (_input(name),), {})
    save_json(traced.symbol, str(tmp_path / "net-symbol.json"))
    ours, ref = _load_json(tmp_path / "net-symbol.json"), _load_json(REF_DIR / f"{name}-symbol.json.gz")
    assert len(ours["nodes"]) == len(ref["nodes"])
    for i, (a, b) in enumerate(zip(ours["nodes"], ref["nodes"])):
        assert a == b, f"node {i} differs"
    assert ours == ref
    with gzip.open(REF_DIR / f"{name}-symbol.json.gz", "rb") as f:  # and byte for byte
        assert (tmp_path / "net-symbol.json").read_bytes() == f.read()


# -- outputs (CHEAP_MODELS in CI, all with HYBRIDGRAPH_ZOO_ALL=1) -------------------------------------
@pytest.mark.parametrize("name", _select(CHEAP_MODELS))
def test_outputs_equal_mxnet(name, tmp_path):
    net, x = _with_case_weights(name)
    out = net(x).asnumpy()
    _assert_close(out, _REF_OUTPUTS[name], f"{name} hybridized")
    net.export(str(tmp_path / name))
    assert _load_json(tmp_path / f"{name}-symbol.json") == _load_json(REF_DIR / f"{name}-symbol.json.gz")
    if name in CI_MODELS:
        net.hybridize(False)
        _assert_close(net(x).asnumpy(), _REF_OUTPUTS[name], f"{name} eager")


# -- MXNet interop (needs the MXNet venv) ----------------------------------------------------------
def _cache_dir() -> Path:
    return Path(os.environ.get("HYBRIDGRAPH_ZOO_CACHE") or os.path.expanduser("~/.cache/hybridgraph-zoo"))


def _cache_is_fresh(cache: Path, name: str) -> bool:
    files = [cache / f"{name}{s}" for s in ("-symbol.json", "-0000.params", ".params", "-out.npy")]
    if not all(f.is_file() for f in files):
        return False
    out = np.load(cache / f"{name}-out.npy")
    return out.shape == _REF_OUTPUTS[name].shape and np.allclose(out, _REF_OUTPUTS[name], rtol=1e-5, atol=0)


@pytest.fixture(scope="session")
def mxnet_files(mxnet_python):
    """name -> prefix of MXNet's files for that model (export, save_parameters, output), made on demand."""
    cache = _cache_dir()
    wanted = [n for n in MODELS if n in CI_MODELS or RUN_ALL]
    missing = [n for n in wanted if not _cache_is_fresh(cache, n)]
    if missing:
        print(f"writing MXNet's files for {', '.join(missing)} into {cache}")
        proc = subprocess.run([mxnet_python, str(GEN_SCRIPT), "--cache-only", "--cache", str(cache),
                               "--models", ",".join(missing)], check=False, capture_output=True, text=True,
                              timeout=1800)
        assert proc.returncode == 0, f"{GEN_SCRIPT.name} failed:\n{proc.stderr[-3000:]}"
    return {n: cache / n for n in wanted}


@pytest.mark.parametrize("name", FULL_RUN)
def test_symbolblock_imports_mxnet_export(name, mxnet_files):
    prefix = str(mxnet_files[name])
    net = SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    _assert_close(net(_input(name)).asnumpy(), _REF_OUTPUTS[name], f"{name} imported")


@pytest.mark.parametrize("name", FULL_RUN)
def test_load_parameters_from_mxnet(name, mxnet_files):
    net = _build(name)
    net.load_parameters(str(mxnet_files[name]) + ".params")
    net.hybridize()
    _assert_close(net(_input(name)).asnumpy(), _REF_OUTPUTS[name], f"{name} with MXNet's parameters")


@pytest.mark.parametrize("name", FULL_RUN)
def test_our_export_runs_in_mxnet(name, mxnet_python, tmp_path):
    net, x = _with_case_weights(name)
    out = net(x).asnumpy()
    net.export(str(tmp_path / name))
    result = tmp_path / "mxnet_out.npy"
    proc = subprocess.run([mxnet_python, str(GEN_SCRIPT), "--run-exported", str(tmp_path / name),
                           "--shape", ",".join(map(str, MODELS[name])), "--out", str(result)],
                          check=False, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    _assert_close(np.load(result), out, f"{name} exported by hybridgraph, run by MXNet")


# -- pretrained weights: never downloaded ------------------------------------------------------------
def test_pretrained_true_without_local_file_explains(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        vision.get_model("squeezenet1.1", pretrained=True, root=str(tmp_path))
    msg = str(info.value)
    assert "cannot be downloaded" in msg
    assert "net.load_parameters(" in msg
    assert str(tmp_path / "squeezenet1.1-33ba0f93.params") in msg


def _saved_weights(name: str, path: Path) -> np.ndarray:
    """Save the case weights of model `name` (structural names) to `path`; return one of them."""
    net, _ = _with_case_weights(name)
    net.save_parameters(str(path))
    return net.features[0].weight.data().asnumpy()


def test_pretrained_from_root_and_from_file(tmp_path):
    expected = _saved_weights("mobilenetv2_0.25", tmp_path / "weights.params")
    net = vision.mobilenet_v2_0_25(pretrained=str(tmp_path / "weights.params"))
    np.testing.assert_array_equal(net.features[0].weight.data().asnumpy(), expected)

    (tmp_path / "weights.params").rename(tmp_path / "mobilenetv2_0.25-ae8f9392.params")
    with pytest.warns(UserWarning, match="does not match the published SHA-1"):
        net = vision.get_model("mobilenetv2_0.25", pretrained=True, root=str(tmp_path))
    np.testing.assert_array_equal(net.features[0].weight.data().asnumpy(), expected)


def test_model_store_names(monkeypatch):
    assert model_store.short_hash("resnet18_v1") == "a0666292"
    with pytest.raises(ValueError, match="Pretrained model for foo is not available"):
        model_store.short_hash("foo")
    monkeypatch.setenv("MXNET_HOME", "/some/where")
    assert model_store.default_root() == os.path.join("/some/where", "models")
