"""The ONNX lowering table: OpDef -> the function that writes that op as ONNX nodes.

A lowering lives beside its operator (nd/ops/onnx_*.py) and registers onto the
OpDef object itself, so there is no second table of operator names: renaming or
aliasing an op cannot leave its lowering behind, and `onnx_lowering_of(op)` is
the one question the exporter, the docs generator and the tests ask.

A lowering is `fn(g, node) -> list[str]`: `g` is the exporter's node writer
(hybridgraph.onnx.writer.NodeWriter: input names, static shapes and dtypes, `g.op(...)`
to emit ONNX nodes, `g.const(...)` for initializers) and the result names the
ONNX tensors of the node's visible outputs. Nothing here imports onnx.
"""
from __future__ import annotations

from collections.abc import Callable

from .registry import OpDef, get_op

Lowering = Callable
# keyed by id(OpDef): the OpDef object is the key, whether or not its class defines __hash__
_LOWERINGS: dict[int, tuple[OpDef, Lowering, str]] = {}


def onnx_lowering(*ops: OpDef | str, note: str = "") -> Callable[[Lowering], Lowering]:
    """Register `fn` as the ONNX lowering of each op (OpDef objects; a name is looked up once).

    `note` is a short remark for the generated docs (a limit, or how the op is written)."""

    def wrap(fn: Lowering) -> Lowering:
        for op in ops:
            opdef = get_op(op) if isinstance(op, str) else op
            old = _LOWERINGS.get(id(opdef))
            if old is not None and old[1] is not fn:
                raise ValueError(f"operator {opdef.name} has two ONNX lowerings")
            _LOWERINGS[id(opdef)] = (opdef, fn, note)
        return fn

    return wrap


def onnx_lowering_of(op: OpDef) -> Lowering | None:
    """The lowering of an op, or None when it cannot be exported."""
    entry = _LOWERINGS.get(id(op))
    return None if entry is None else entry[1]


def onnx_note(op: OpDef) -> str:
    entry = _LOWERINGS.get(id(op))
    return "" if entry is None else entry[2]


def exportable_ops() -> list[OpDef]:
    """Every op with an ONNX lowering (each once), by name."""
    return sorted((e[0] for e in _LOWERINGS.values()), key=lambda o: o.name)
