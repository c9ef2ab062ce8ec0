"""Checks of a HybridBlock call's inputs that give the user's error, not an operator's.

Without them, `net(x, y)` on a block that takes one input fails inside the
first layer ("hybrid_forward() got multiple values for argument 'weight'") and
a Python list fails inside FullyConnected ("too many positional arguments").
These name the block, what it takes, what it got and the fix.
"""
from __future__ import annotations

import inspect
from typing import Any

from hybridgraph.nd.ndarray import NDArray
from hybridgraph.symbol import Symbol

from .tracing import flatten_call

#: hybrid_forward function -> (names of its positional inputs, takes *args)
_ARITY: dict = {}


def _inputs_of(fn: Any) -> tuple[list[str], bool]:
    hit = _ARITY.get(fn)
    if hit is None:
        try:
            params = list(inspect.signature(fn).parameters.values())[2:]  # self, F
        except (TypeError, ValueError):
            params = []
        names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        star = any(p.kind == p.VAR_POSITIONAL for p in params) or not params
        hit = _ARITY[fn] = (names, star)
    return hit


def check_call(block: Any, x: Any, args: tuple, kwargs: dict) -> None:
    """Raise ValueError when no input is an NDArray or Symbol, TypeError when the block's
    `hybrid_forward` takes fewer inputs than were given."""
    if not isinstance(x, (NDArray, Symbol)):
        flat = flatten_call((x, *args), kwargs)[0]
        if not any(isinstance(a, (NDArray, Symbol)) for a in flat):
            raise ValueError(
                "In HybridBlock, there must be one NDArray or one Symbol in the input. Please check the "
                f"type of the args.\n{block.name} ({type(block).__name__}) got "
                f"{', '.join(type(a).__name__ for a in (x, *args))}: convert data with mx.nd.array(...)")
    names, star = _inputs_of(type(block).hybrid_forward)
    if star:
        return
    inputs = [n for n in names if n not in block._reg_params]
    if 1 + len(args) > len(inputs):
        raise TypeError(
            f"{block.name} ({type(block).__name__}) takes {len(inputs)} input(s) ({', '.join(inputs)}) but "
            f"{1 + len(args)} were given. A HybridSequential passes all its inputs to its first "
            "block; pass one input per argument of the block's hybrid_forward")


_NOT_NP = ("Block's output ndarrays/symbols must be of type `mxnet.numpy.ndarray` or "
           "`mxnet.symbol.numpy._Symbol`, while got output type {}: convert classic arrays with "
           "as_np_ndarray()")
_MIXED = ("Found both classic symbol (mx.sym.Symbol) and numpy symbol (mx.sym.np._Symbol) in the outputs of "
          "{}: a hybridized block cannot group them into one graph; convert them to one kind, with "
          "as_np_ndarray() (numpy outputs) or as_nd_ndarray() (classic outputs) on each")


def check_np_outputs(out: Any) -> None:
    """In numpy mode a block returns mx.np arrays only (MXNet's TypeError otherwise): a classic
    NDArray, or a traced value made classic with as_nd_ndarray(), among the outputs is refused."""
    from hybridgraph.nd.numpy.multiarray import ndarray as np_ndarray  # noqa: PLC0415 - nd.numpy imports gluon
    from hybridgraph.symbol.tracer import LegacyTracer  # noqa: PLC0415
    if (isinstance(out, NDArray) and not isinstance(out, np_ndarray)) or type(out) is LegacyTracer:
        raise TypeError(_NOT_NP.format(type(out)))
    if isinstance(out, (list, tuple)):
        for o in out:
            check_np_outputs(o)


def check_traced_outputs(block: Any, outs: list) -> None:
    """A numpy-mode trace whose outputs mix classic and numpy values is MXNet's TypeError."""
    from hybridgraph.symbol.tracer import LegacyTracer  # noqa: PLC0415
    kinds = {type(o) is LegacyTracer for o in outs}
    if len(kinds) > 1:
        raise TypeError(_MIXED.format(block.name))
    check_np_outputs(outs)
