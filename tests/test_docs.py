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


def test_operator_docs_name_the_declaring_file():
    """Each operator's row links the nd/ops file whose source declares it."""
    import re

    from hybridgraph.nd.registry import all_ops
    text = (ROOT / "docs" / "operators.md").read_text()
    for name, op in all_ops().items():
        m = re.search(rf"^\| `{re.escape(name)}` \| \[(nd/ops/[a-z_0-9]+\.py)\]\(\.\./\1\) \|", text, re.M)
        assert m, f"{name}: no 'defined in' file in docs/operators.md"
        path = ROOT / m.group(1)
        assert path.is_file(), f"{name}: {path} does not exist"
        assert op.forward.__code__.co_filename.endswith(m.group(1).split("/")[-1]), name


def test_architecture_doc_is_linked_and_names_real_files():
    """docs/architecture.md is linked from the README, and every repository path it names
    in backquotes exists."""
    import re
    readme = (ROOT / "README.md").read_text()
    assert "docs/architecture.md" in readme
    text = (ROOT / "docs" / "architecture.md").read_text()
    top = "nd|symbol|hybrid|hybridgraph|tools|tests|benchmarks|examples"
    paths = set(re.findall(rf"`((?:{top})/[A-Za-z0-9_/.]*)`", text))
    assert len(paths) > 20
    for p in sorted(paths):
        assert (ROOT / p.rstrip("/")).exists(), f"docs/architecture.md names {p}, which does not exist"


def test_operator_docs_list_onnx_support():
    from hybridgraph.nd.lowering import exportable_ops
    text = (ROOT / "docs" / "operators.md").read_text()
    rows = {line.split("|")[1].strip().strip("`"): line.rsplit("|", 2)[-2].strip()
            for line in text.splitlines() if line.startswith("| `")}
    for op in exportable_ops():
        assert rows[op.name].startswith("yes"), op.name
    assert rows["Convolution"] == "yes" and rows["gammaln"] == "no"
