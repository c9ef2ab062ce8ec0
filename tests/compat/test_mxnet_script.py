"""One MXNet 1.x training script, two libraries (issue 8, acceptance 2).

`mlp_script.SCRIPT` trains the tutorial MLP with Module.fit over an
NDArrayIter (shuffled with numpy's seeded generator) from initial weights
saved to a file; it is run as `import mxnet as mx` and as
`import hybridgraph as mx`, and the accuracy curves, scores, predictions and
final weights must agree within float32 tolerance.
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

from hybridgraph import nd

from ._helpers import both, run_script
from .mlp_script import SCRIPT

SHAPES = {"fc1_weight": (128, 64), "fc1_bias": (128,), "fc2_weight": (64, 128), "fc2_bias": (64,),
          "fc3_weight": (10, 64), "fc3_bias": (10,)}


@pytest.fixture
def inputs(tmp_path) -> list:
    """[data .npz, initial weights .params]: the digits split and fixed uniform weights."""
    datasets = pytest.importorskip("sklearn.datasets", reason="scikit-learn provides the digits data")
    d = datasets.load_digits()
    rng = np.random.RandomState(0)
    perm = rng.permutation(len(d.data))
    x = (d.data[perm] / 16.0).astype(np.float32)
    y = d.target[perm].astype(np.float32)
    np.savez(tmp_path / "digits.npz", X_train=x[:1400], y_train=y[:1400], X_val=x[1400:], y_val=y[1400:], epochs=3)
    nd.save(str(tmp_path / "init.params"), {k: nd.array(rng.uniform(-0.1, 0.1, s)) for k, s in SHAPES.items()})
    return [tmp_path / "digits.npz", tmp_path / "init.params"]


def _args(inputs: list, tmp_path, name: str) -> list:
    return [*inputs, tmp_path / f"out_{name}.npz", tmp_path / f"ck_{name}"]


def test_script_runs_under_hybridgraph(inputs, tmp_path):
    res = run_script(sys.executable, SCRIPT.format(MX="hybridgraph"), _args(inputs, tmp_path, "hybridgraph"),
                     tmp_path, "mlp_hybridgraph")
    out = np.load(tmp_path / "out_hybridgraph.npz")
    assert out["val_curve"][-1] >= 0.9 and out["pred"].shape == (397, 10)
    assert "Epoch[2] Batch [20-40]\tSpeed:" in res.stderr and "Epoch[2] Train-accuracy=" in res.stderr
    assert (tmp_path / "ck_hybridgraph-0003.params").exists()


def test_same_script_same_curve_as_mxnet(mxnet_python, inputs, tmp_path):
    runs = {}
    for name in ("mxnet", "hybridgraph"):
        text = SCRIPT.format(MX=name)
        python = mxnet_python if name == "mxnet" else sys.executable
        runs[name] = run_script(python, text, _args(inputs, tmp_path, name), tmp_path, f"mlp_{name}")
    theirs, ours = (np.load(tmp_path / f"out_{n}.npz") for n in ("mxnet", "hybridgraph"))
    # accuracy after every batch and after every epoch: the same examples are classified the same
    np.testing.assert_allclose(ours["curve"], theirs["curve"], atol=1e-6)
    np.testing.assert_allclose(ours["val_curve"], theirs["val_curve"], atol=1e-6)
    assert ours["val_curve"][-1] >= 0.9
    assert float(ours["score"]) == pytest.approx(float(theirs["score"]))
    np.testing.assert_allclose(ours["pred"], theirs["pred"], rtol=1e-4, atol=1e-5)
    for k in SHAPES:
        np.testing.assert_allclose(ours["w_" + k], theirs["w_" + k], rtol=1e-4, atol=1e-5)
    # the training log lines have the same shape (speeds differ)
    strip = [[line.split("\tSpeed")[0] for line in r.stderr.splitlines() if line.startswith("Epoch[")]
             for r in (runs["mxnet"], runs["hybridgraph"])]
    assert [line for line in strip[0] if "Time cost" not in line] == \
        [line for line in strip[1] if "Time cost" not in line]


def test_checkpoints_load_across_libraries(mxnet_python, inputs, tmp_path):
    """Each library's do_checkpoint files give the same predictions in the other."""
    for name, python in (("mxnet", mxnet_python), ("hybridgraph", sys.executable)):
        run_script(python, SCRIPT.format(MX=name), _args(inputs, tmp_path, name), tmp_path, f"train_{name}")
    from .mlp_script import PREDICT
    for reader, writer in (("mxnet", "hybridgraph"), ("hybridgraph", "mxnet")):
        python = mxnet_python if reader == "mxnet" else sys.executable
        run_script(python, PREDICT.format(MX=reader), [tmp_path / f"ck_{writer}", 3, inputs[0],
                                                       tmp_path / f"pred_{reader}.npz"], tmp_path, f"pred_{reader}")
        got = np.load(tmp_path / f"pred_{reader}.npz")
        want = np.load(tmp_path / f"out_{writer}.npz")["pred"]
        np.testing.assert_allclose(got["pred"], want, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(got["gluon_pred"], want, rtol=1e-4, atol=1e-5)


def test_both_helper_runs_one_template(mxnet_python, tmp_path):
    runs = both(mxnet_python, "import {MX} as mx\nprint(mx.nd.ones((2,)).asnumpy().sum())\n", [], tmp_path, "tiny")
    assert runs["mxnet"].stdout == runs["hybridgraph"].stdout == "2.0\n"
