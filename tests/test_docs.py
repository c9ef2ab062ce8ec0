"""docs/operators.md is generated from the registry and must be fresh."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _generator():
    spec = importlib.util.spec_from_file_location("gen_operator_docs", ROOT / "tools" / "gen_operator_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_operator_docs_are_fresh():
    gen = _generator()
    assert (ROOT / "docs" / "operators.md").read_text() == gen.render(), \
        "docs/operators.md is stale: run `python tools/gen_operator_docs.py`"


def test_operator_docs_list_every_operator_with_attributes():
    from hybridgraph.nd.registry import all_ops
    text = (ROOT / "docs" / "operators.md").read_text()
    for name in all_ops():
        assert f"| `{name}` |" in text
    assert "`num_hidden`: int, required" in text


def test_operator_docs_list_onnx_support():
    from hybridgraph.nd.lowering import exportable_ops
    text = (ROOT / "docs" / "operators.md").read_text()
    rows = {line.split("|")[1].strip().strip("`"): line.rsplit("|", 2)[-2].strip()
            for line in text.splitlines() if line.startswith("| `")}
    for op in exportable_ops():
        assert rows[op.name].startswith("yes"), op.name
    assert rows["Convolution"] == "yes" and rows["gammaln"] == "no"
