"""Run the per-operator golden cases MXNet 1.9.1 wrote (../shared/golden/mxnet-ops).

Shared by the eager test (tests/nd/test_golden_ops.py) and the symbolic one
(tests/symbol): a case gives the op, its attribute strings, inputs, head
gradients, outputs, input gradients, aux states after a step and tolerances.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np

from hybridgraph import nd
from hybridgraph.nd import autograd
from hybridgraph.nd.dispatch import invoke
from hybridgraph.nd.registry import get_op, has_op

# operators whose golden cases belong to later issues ([convnets], RNN layers)
LATER = {"Convolution": "convnets", "Deconvolution": "convnets", "Pooling": "convnets",
         "UpSampling": "convnets", "_contrib_BilinearResize2D": "convnets",
         "_contrib_AdaptiveAvgPooling2D": "convnets", "Crop": "convnets", "RNN": "gluon (RNN layers)"}


# cases whose recorded gradient is an MXNet 1.9.1 defect: forward is compared, the
# gradient is checked against float64 finite differences by tests/nd/test_op_specs.py
KNOWN_GRADIENT_DEFECTS = {
    "act.LeakyReLU.3": "SELU backward is lambda*(y+alpha) for x<0 in MXNet, not the derivative (formats.md 3)",
    "act.SoftmaxActivation.0": "instance mode on >2-D data: MXNet's forward uses the last axis, its backward axis 1",
}


@functools.cache
def load_cases(golden: Path) -> list[dict]:
    return json.loads((golden / "mxnet-ops" / "cases.json").read_text())["cases"]


@functools.cache
def load_npz(golden: Path, name: str) -> dict:
    with np.load(golden / "mxnet-ops" / name) as f:
        return {k: f[k] for k in f.files}


def case_arrays(golden: Path, case: dict) -> dict:
    data = load_npz(golden, case["npz"])
    prefix = case["id"] + "/"
    return {k[len(prefix):]: v for k, v in data.items() if k.startswith(prefix)}


def run_eager(case: dict, arrays: dict):
    """Forward (and backward when the case has gradients) with the eager front end.

    Returns (outputs, input grads by name, aux states after by name), all numpy.
    """
    op = get_op(case["op"])
    inputs = [nd.array(arrays["in:" + i["name"]], dtype=i["dtype"]) for i in case["inputs"]]
    grads = {}
    with_grad = case["has_grad"]
    for spec, x in zip(case["inputs"], inputs):
        if with_grad and spec["grad"]:
            x.attach_grad()
    if with_grad:
        with autograd.record(train_mode=case["is_train"]):
            outs = invoke(op, inputs, dict(case["attrs"]))
        outs = outs if isinstance(outs, list) else [outs]
        heads = [nd.array(arrays[f"head{j}"], dtype=o.dtype) for j, o in enumerate(outs)
                 if f"head{j}" in arrays]
        autograd.backward(outs[:len(heads)], heads)
        for spec, x in zip(case["inputs"], inputs):
            if spec["grad"]:
                grads[spec["name"]] = x.grad.asnumpy()
    else:
        scope = autograd.train_mode() if case["is_train"] else autograd.predict_mode()
        with scope:
            outs = invoke(op, inputs, dict(case["attrs"]))
        outs = outs if isinstance(outs, list) else [outs]
    aux = {spec["name"]: x.asnumpy() for spec, x in zip(case["inputs"], inputs) if spec["role"] == "aux"}
    return [o.asnumpy() for o in outs], grads, aux


def check_case(case: dict, arrays: dict, outs, grads, aux) -> None:
    """Assert outputs, gradients and aux states against MXNet's within the case's tolerances."""
    tol = case["tol"]
    for j, spec in enumerate(case["outputs"]):
        got = outs[j]
        assert tuple(got.shape) == tuple(spec["shape"]), f"{case['id']} out{j}: shape {got.shape} vs {spec['shape']}"
        assert str(got.dtype) == spec["dtype"], f"{case['id']} out{j}: dtype {got.dtype} vs {spec['dtype']}"
        if tol is None:
            continue
        _close(got, arrays[f"out{j}"], tol, f"{case['id']} out{j}")
    if tol is None or case["id"] in KNOWN_GRADIENT_DEFECTS:
        return
    for name, g in grads.items():
        key = "grad:" + name
        if key in arrays:
            _close(g, arrays[key], tol, f"{case['id']} grad:{name}")
    for name, a in aux.items():
        key = "aux_after:" + name
        if key in arrays:
            _close(a, arrays[key], tol, f"{case['id']} aux_after:{name}")


def _close(got, want, tol, what):
    rtol, atol = tol["rtol"], tol["atol"]
    if rtol == 0 and atol == 0 and np.asarray(want).dtype.kind == "f":
        # "exact" float64/float16 cases: allow a few ulps of libm difference
        rtol = 4 * float(np.finfo(np.asarray(want).dtype).eps)
    got = np.asarray(got, dtype=np.float64) if got.dtype != np.bool_ else got
    want = np.asarray(want, dtype=np.float64) if want.dtype != np.bool_ else want
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what, equal_nan=True)


def skip_reason(case: dict) -> str | None:
    if case["op"] in LATER and not has_op(case["op"]):
        return f"{case['op']} belongs to [{LATER[case['op']]}]"
    return None
