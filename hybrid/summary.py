"""`Block.summary`: MXNet's table of layers, output shapes and parameter counts.

The table is built the way MXNet 1.9.1 builds it: a forward hook on every
block except (Hybrid)Sequential containers records each call's output shape
and parameter counts, in call order, and the rows print in MXNet's layout.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any

from hybridgraph import nd
from hybridgraph.symbol import Symbol

_LINE = "{:>20}  {:>42} {:>15}"


def _shape_str(args: Any) -> str:
    """Shapes of (nested lists of) outputs, formatted as MXNet does."""
    def shapes(x: Any) -> Any:
        if isinstance(x, (list, tuple)):
            return [shapes(i) for i in x]
        if isinstance(x, nd.NDArray):
            return x.shape
        if isinstance(x, Symbol):  # a hook fired while deferred initialisation traced the block
            return _SymbolRepr(x.name)
        return x
    out = shapes(args)
    text = str(out)[1:-1] if isinstance(out, list) else str(out)
    return text.replace("L", "")


class _SymbolRepr:
    """Prints like MXNet's `<Symbol name>` inside the shape column."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<Symbol {self.name}>"


def _row(block: Any, outputs: Any, seen: set) -> dict:
    params = trainable = shared = 0
    for p in block.params.values():
        size = p.data().size
        params += size
        trainable += 0 if p.grad_req == "null" else size
        if id(p) in seen:
            shared += size
        else:
            seen.add(id(p))
    return {"output_shape": _shape_str(outputs), "n_params": params, "trainable": trainable, "shared": shared}


def summary(block: Any, *inputs: Any) -> None:
    """Print the summary of the model's outputs and parameters (MXNet's `Block.summary`).

    The network must have been initialized, and must not have been hybridized.

    Parameters
    ----------
    block : Block
        The model.
    inputs : object
        Any input that the model supports (NDArrays, or nested lists of them).
    """
    from .hybrid_block import HybridBlock
    from .nn.containers import HybridSequential, Sequential
    rows: OrderedDict[str, dict] = OrderedDict()
    rows["Input"] = {"output_shape": _shape_str(inputs), "n_params": 0, "trainable": 0, "shared": 0}
    seen: set = set()
    hooks = []

    def hook(blk: Any, _: Any, outputs: Any) -> None:
        rows[f"{blk.__class__.__name__}-{len(rows)}"] = _row(blk, outputs, seen)

    def register(blk: Any) -> None:
        if isinstance(blk, HybridBlock) and blk._active:
            raise AssertionError(f'"{blk.name}" must not be hybridized to print summary.')
        if not isinstance(blk, (Sequential, HybridSequential)):
            hooks.append(blk.register_forward_hook(hook))

    try:
        block.apply(register)
        block(*inputs)
        _print_table(rows)
    finally:
        for h in hooks:
            h.detach()


def _print_table(rows: OrderedDict) -> None:
    print("-" * 80)
    print(_LINE.format("Layer (type)", "Output Shape", "Param #"))
    print("=" * 80)
    total = sum(r["n_params"] for r in rows.values())
    trainable = sum(r["trainable"] for r in rows.values())
    shared = sum(r["shared"] for r in rows.values())
    for name, r in rows.items():
        print(_LINE.format(name, str(r["output_shape"]), r["n_params"]))
    print("=" * 80)
    print("Parameters in forward computation graph, duplicate included")
    print(f"   Total params: {total}")
    print(f"   Trainable params: {trainable}")
    print(f"   Non-trainable params: {total - trainable}")
    print(f"Shared params in forward computation graph: {shared}")
    print(f"Unique parameters in model: {total - shared}")
    print("-" * 80)
