"""Every exportable op, alone in a graph, gives hybridgraph's outputs in onnxruntime, and
imported back (mx.onnx.import_model) gives them in hybridgraph: the export -> import round trip.

The cases are the operator spec table's (tests/nd/specs: random shapes and attributes per
op), run in float32 (the dtype ONNX runtimes implement for every op) at the default opset.
A case the exporter refuses must be refused with ExportError naming the node (never
another error, never a wrong result).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

onnx = pytest.importorskip("onnx", reason="ONNX export needs the onnx package (hybridgraph[onnx])")
ort = pytest.importorskip("onnxruntime", reason="checking exports needs onnxruntime (a test dependency)")

from hybridgraph import symbol  # noqa: E402
from hybridgraph.nd.lowering import exportable_ops, onnx_lowering_of  # noqa: E402
from hybridgraph.nd.registry import get_op  # noqa: E402
from hybridgraph.onnx import ExportError, build_model  # noqa: E402
from hybridgraph.onnx.importer import import_model  # noqa: E402
from hybridgraph.onnx.verification import _run_hybridgraph  # noqa: E402
from hybridgraph.symbol.symbol import create  # noqa: E402
from tests.nd.specs import all_specs  # noqa: E402

# the samplers (nd/ops/random.py) draw other values in the runtime: test_onnx_random.py compares
# their statistics
DRAWS = ("_random_", "_sample_")
SPECS = [s for s in all_specs() if onnx_lowering_of(get_op(s.name)) is not None and not s.is_train
         and not s.name.startswith(DRAWS)]
# ops whose exported value is a deliberate inference form or a draw: compared elsewhere, not here
_SKIP = {"Dropout": "identity at inference; the spec draws masks",
         "BatchNorm": "its spec is a training case; test_onnx_exact.py checks the inference form"}


# inputs that a real model holds as initializers: exported so, they exercise the importer's constant paths
_PARAM_SLOTS = {"weight", "bias", "gamma", "beta", "parameters", "moving_mean", "moving_var"}


def test_specs_cover_every_exportable_op():
    names = {s.name for s in SPECS}
    missing = [o.name for o in exportable_ops() if o.name not in names and o.name not in _SKIP
               and not o.name.startswith(DRAWS)]
    assert not missing, f"exportable ops without a spec case: {missing}"


def _as32(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32) if x.dtype == np.float64 else x


@pytest.mark.parametrize("spec", [s for s in SPECS if s.name not in _SKIP], ids=lambda s: s.name)
def test_single_op_graph_matches_onnxruntime(spec):
    op = get_op(spec.name)

    @settings(max_examples=min(settings().max_examples, 4))
    @given(st.data())
    def check(data):
        inputs, attrs = spec.case(data.draw)
        inputs = [_as32(np.asarray(x)) for x in inputs]
        names = [f"x{i}" for i in range(len(inputs))]
        sym = create(op, [symbol.var(n) for n in names], dict(attrs), name="op")
        if len(sym.list_outputs()) != 1:
            sym = symbol.Group([sym[i] for i in range(len(sym.list_outputs()))])
        feeds = dict(zip(names, inputs))
        try:
            want = _run_hybridgraph(sym, {}, feeds)
        except Exception:  # noqa: BLE001 - a case hybridgraph itself refuses in float32 is not ours to test
            return
        try:
            model = build_model(sym, {}, [x.shape for x in inputs], [x.dtype for x in inputs])
        except ExportError as exc:
            assert "'op'" in str(exc) and spec.name in str(exc), exc
            return
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        got = sess.run(None, feeds)
        _assert_same(spec.name, attrs, got, want)
        # the round trip: exported with its weights as initializers (as models are), imported back
        slots = op.input_names(op.parse_attrs(dict(attrs)))
        params = {n: feeds[n] for n, slot in zip(names, slots) if slot in _PARAM_SLOTS}
        data = {n: v for n, v in feeds.items() if n not in params}
        model = build_model(sym, params, [v.shape for v in data.values()], [v.dtype for v in data.values()])
        back, arg, aux = import_model(model)
        _assert_same(spec.name + " imported", attrs, _run_hybridgraph(back, {**arg, **aux}, data), want)
    check()


def _assert_same(what: str, attrs, got: list, want: list) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, f"{what}: shape {g.shape} vs {w.shape}"
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-4, atol=1e-4,
                                   equal_nan=True, err_msg=f"{what} {attrs}")
