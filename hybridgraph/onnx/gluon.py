"""Gluon's door to ONNX: `HybridBlock.export_onnx` traces the block on example inputs and exports."""
from __future__ import annotations

from typing import Any

from hybridgraph.onnx.export import DEFAULT_OPSET, build_model


def block_model(block: Any, example_inputs: Any, dynamic_batch: bool = True, opset: int = DEFAULT_OPSET):
    """The ONNX model of a HybridBlock traced on `example_inputs` (an array or a sequence of arrays).

    With `dynamic_batch` the first dimension of every input and output is the symbolic
    `batch`; every other dimension keeps the example's size."""
    from hybridgraph import nd
    from hybridgraph.gluon.tracing import trace_block

    args = tuple(example_inputs) if isinstance(example_inputs, (list, tuple)) else (example_inputs,)
    if not args or not all(isinstance(a, nd.NDArray) for a in args):
        raise TypeError("export_onnx: example_inputs must be an NDArray or a list/tuple of NDArrays, got "
                        f"{[type(a).__name__ for a in args] or 'nothing'}")
    traced = trace_block(block, args, {})
    params = {p.name: p.data(p.list_ctx()[0]) for p in traced.params}
    shapes = [a.shape for a in args]
    dyn = [("batch", *s[1:]) for s in shapes] if dynamic_batch else None
    return build_model(traced.symbol, params, shapes, [a.dtype for a in args], opset=opset,
                       dynamic=dynamic_batch, dynamic_input_shapes=dyn)


def export_block(block: Any, path: str, example_inputs: Any, dynamic_batch: bool = True,
                 opset: int = DEFAULT_OPSET) -> str:
    """Write `block` traced on `example_inputs` to the ONNX file `path`; returns `path`."""
    from hybridgraph.nd.serialization import atomic_write

    atomic_write(path, block_model(block, example_inputs, dynamic_batch, opset).SerializeToString())
    return path
