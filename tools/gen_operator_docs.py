"""Write docs/operators.md: every registered operator, the file that declares it, its
names, inputs and attributes.

    python tools/gen_operator_docs.py          # rewrite the file
    python tools/gen_operator_docs.py --check  # exit 1 when the file is stale

The text is generated from the operator registry (nd/registry.py), so it can
never disagree with what the code accepts; tests/test_docs.py checks it is fresh.
"""
from __future__ import annotations

import argparse
import inspect
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hybridgraph import nd  # noqa: E402,F401 - registers every operator
from hybridgraph.nd.attrs import REQUIRED  # noqa: E402
from hybridgraph.nd.lowering import onnx_lowering_of, onnx_note  # noqa: E402
from hybridgraph.nd.registry import all_ops  # noqa: E402
from hybridgraph.nd.serialization import atomic_write  # noqa: E402

TARGET = ROOT / "docs" / "operators.md"


def defined_in(op) -> str:
    """The repository file declaring `op` (its kernel and its `register` call live together
    in one nd/ops module), relative to the repository root."""
    path = Path(os.path.realpath(inspect.getsourcefile(op.forward)))
    return path.relative_to(ROOT.resolve()).as_posix()


def _inputs(op) -> str:
    if op.key_var_num_args:
        return f"variable number (`{op.key_var_num_args}`)"
    try:
        names = op.input_names(op.schema.parse_lenient({}))
    except Exception:  # noqa: BLE001 - inputs that depend on required attributes
        names = ()
    marked = [f"{n} (aux)" if n in op.aux else n for n in names]
    return ", ".join(marked) if marked else "none"


def _attrs(op) -> str:
    items = []
    for name, decl in op.schema.attrs.items():
        default = "required" if decl.default is REQUIRED else f"`{decl.default!r}`"
        choices = f" ∈ {{{', '.join(map(str, decl.choices))}}}" if decl.choices else ""
        items.append(f"`{name}`: {decl.type_name}{choices}, {default}")
    return "; ".join(items) if items else "—"


def _flags(op) -> str:
    flags = []
    if not op.differentiable:
        flags.append("not differentiable")
    if op.elementwise:
        flags.append("elementwise")
    if op.is_random:
        flags.append("random")
    if op.loss:
        flags.append("loss-style gradient")
    if op.mutates:
        flags.append("mutates inputs")
    if not op.public:
        flags.append("internal")
    return ", ".join(flags) or "—"


def _onnx(op) -> str:
    """ONNX export support (the op's lowering in nd/ops/onnx_*.py), with its note."""
    if onnx_lowering_of(op) is None:
        return "no" if op.public else "—"
    note = onnx_note(op)
    return f"yes ({note})" if note else "yes"


def render() -> str:
    ops = all_ops()
    lines = ["# Supported operators", "",
             "Generated from the operator registry by `python tools/gen_operator_docs.py`; "
             "do not edit by hand.", "",
             f"{len(ops)} operators ({sum(op.public for op in ops.values())} public, the rest internal "
             "helpers such as hidden backward operators).", "",
             f"{sum(onnx_lowering_of(op) is not None for op in ops.values())} export to ONNX "
             "(`mx.onnx.export_model`, `HybridBlock.export_onnx`, opsets 13-20); the ONNX column says which.", "",
             "| operator | defined in | also registered as | inputs | attributes (type, default) | properties | ONNX |",
             "|---|---|---|---|---|---|---|"]
    for name in sorted(ops, key=lambda n: (n.lstrip("_").lower(), n)):
        op = ops[name]
        aliases = ", ".join(f"`{a}`" for a in op.aliases) or "—"
        src = defined_in(op)
        lines.append(f"| `{name}` | [{src}](../{src}) | {aliases} | {_inputs(op)} | {_attrs(op)} | {_flags(op)} "
                     f"| {_onnx(op)} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when docs/operators.md is stale")
    args = parser.parse_args()
    text = render()
    if args.check:
        if not TARGET.exists() or TARGET.read_text() != text:
            print(f"{TARGET} is stale: run python tools/gen_operator_docs.py", file=sys.stderr)
            return 1
        return 0
    TARGET.parent.mkdir(exist_ok=True)
    atomic_write(TARGET, text.encode("utf-8"))
    print(f"wrote {TARGET} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
