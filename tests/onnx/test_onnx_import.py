"""The importer reads back every ONNX op type the exporter writes.

The op types a lowering can emit are the string literals of nd/ops/onnx_*.py (and of the
exporter's node writer) that name ONNX operators: collected from the source, so that a new
lowering emitting a new op type fails here until it has an import rule. That each rule
imports correctly is checked by the round trip of test_onnx_ops.py (every exportable op) and
test_onnx_zoo.py / test_onnx_rnn.py (whole models).
"""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="ONNX import needs the onnx package (hybridgraph[onnx])")

from hybridgraph.onnx import build_model  # noqa: E402
from hybridgraph.onnx.import_rules import RULES  # noqa: E402
from hybridgraph.onnx.importer import ImportError_, import_model  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "nd" / "ops").glob("onnx_*.py")) + [ROOT / "hybridgraph" / "onnx" / "writer.py"]


def _emitted_op_types() -> dict[str, str]:
    found = {}
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value[:1].isupper() \
                    and onnx.defs.has(node.value):
                found.setdefault(node.value, path.name)
    return found


def test_source_scan_finds_the_lowerings():
    found = _emitted_op_types()
    # a few the exporter certainly writes: guards the scan itself
    assert {"Conv", "Gemm", "TopK", "LSTM", "Resize", "OneHot"} <= set(found), sorted(found)


def test_every_exported_op_type_has_an_import_rule():
    from hybridgraph.onnx import import_tensor  # noqa: F401 - registers its rules
    missing = {t: f for t, f in _emitted_op_types().items() if t not in RULES}
    assert not missing, f"ONNX op types the exporter writes but cannot import: {missing}"


def test_op_without_rule_names_node_and_op():
    from onnx import TensorProto, helper
    node = helper.make_node("Einsum", ["a", "b"], ["y"], name="mix", equation="ij,jk->ik")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 2])
                                            for n in "ab"],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(ImportError_, match=r"'mix'.*Einsum.*no import rule"):
        import_model(model)


def test_dynamic_batch_reshape_and_shape_ops_import():
    """Shape arithmetic that follows a symbolic batch dim (Flatten, reshape codes) imports as MXNet's 0/-1."""
    from hybridgraph import nd, symbol
    from hybridgraph.onnx.verification import _run_hybridgraph
    x = symbol.var("data")
    y = symbol.reshape(symbol.reshape(x, shape=(0, -3, -2)), shape=(0, -1))
    y = symbol.broadcast_like(symbol.sum(y, axis=1, keepdims=True), y) + symbol.zeros_like(y)
    y = symbol.Group([y, symbol.contrib.arange_like(x, start=1, step=0.5),
                      symbol.contrib.arange_like(x, axis=0, repeat=2)])
    data = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    model = build_model(y, {}, [(1, 3, 4, 5)], dynamic=True, dynamic_input_shapes=[("batch", 3, 4, 5)])
    assert {"Shape", "Range", "Size"} <= {n.op_type for n in model.graph.node}
    back, arg, aux = import_model(model)
    got = _run_hybridgraph(back, {**arg, **aux}, {"data": data})
    for g, w in zip(got, y.eval(data=nd.array(data))):
        np.testing.assert_allclose(g, w.asnumpy(), rtol=1e-6)
