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
    if not isinstance(x, (NDArray, Symbol)) or args:
        flat = flatten_call((x, *args), kwargs)[0]
        check_mixed(flat)
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


def _arg_format(block: Any, x: Any) -> Any:
    """MXNet's input format of one positional argument: -1 None, 0 an array, a list for a
    (nested) list; anything else is refused, as MXNet refuses it once hybridized."""
    if x is None:
        return -1
    if isinstance(x, (NDArray, Symbol)):
        return 0
    if isinstance(x, (list, tuple)):
        return [_arg_format(block, i) for i in x]
    raise ValueError(f"When hybridized, the input of HybridBlock {block.name} must be (nested) list of "
                     f"Symbol or NDArray, but got {x!r} of type {type(x)}")


def check_mixed(flat: list) -> None:
    """MXNet refuses a call mixing NDArrays and Symbols (hybridized or not)."""
    if any(isinstance(a, NDArray) for a in flat) and any(isinstance(a, Symbol) for a in flat):
        raise ValueError("In HybridBlock, we do not support mixed NDArrays and Symbols types for the input. "
                         "Please check the type of the args.")


def _hybrid_forward_style(block: Any) -> bool:
    """Whether the block is written with `hybrid_forward` (MXNet 1.x) rather than `forward`
    (remembered per class: the check runs on every hybridized call)."""
    base = _BASE[0]
    if base is None:
        from .hybrid_block import HybridBlock  # noqa: PLC0415 - that module imports this one
        base = _BASE[0] = HybridBlock.hybrid_forward
    style = _STYLE[type(block)] = type(block).hybrid_forward is not base
    return style


_BASE: list = [None]
_STYLE: dict = {}


def _check_contexts(block: Any, flat: list) -> None:
    ctxs = {("cpu" if a._ctx.device_type == "cpu_pinned" else a._ctx.device_type, a._ctx.device_id)
            for a in flat if isinstance(a, NDArray)}
    if len(ctxs) > 1:
        raise ValueError(f"Find multiple contexts in the input, After hybridized, the HybridBlock only supports "
                         f"one input context. Got {sorted(ctxs)} in the inputs of {block.name}")


def _expand(fmt: Any) -> list:
    return [0] * fmt if isinstance(fmt, int) else fmt


def check_hybridized_call(block: Any, args: tuple, flat: list) -> None:
    """What MXNet 1.x's cached op refuses: mixed NDArrays and Symbols, and for blocks written
    with `hybrid_forward`, scalars, arrays on several contexts (cpu_pinned counts as cpu) and
    an argument structure (which arguments are None, how lists nest) other than the first
    call's, beyond trailing None defaults."""
    n = len(args)
    if n == len(flat) and (isinstance(args[0], NDArray) if n == 1 else
                           all(isinstance(a, NDArray) for a in args)):   # the common call
        style = _STYLE.get(type(block))
        if not (_hybrid_forward_style(block) if style is None else style):
            return
        if len(args) > 1:
            _check_contexts(block, flat)
        fmt: Any = len(args)         # n plain arrays, compared without building a list
    else:
        check_mixed(flat)
        if not any(isinstance(a, (NDArray, Symbol)) for a in flat):
            return   # check_call's "there must be one NDArray or one Symbol" comes first, as in MXNet
        if not _hybrid_forward_style(block):
            return   # a `forward(x, ...)` block (MXNet 2's style): scalars and any structure are traced in
        fmt = [_arg_format(block, a) for a in args]
        _check_contexts(block, flat)
    stored = block.__dict__.get("_in_format")
    if stored is None:
        block.__dict__["_in_format"] = fmt
        return
    if fmt == stored:
        return
    new, old = _expand(fmt), _expand(stored)
    if new == old:
        return
    short, long_ = (new, old) if len(new) < len(old) else (old, new)
    if len(new) == len(old) or long_[:len(short)] != short or any(f != -1 for f in long_[len(short):]):
        raise ValueError(f"The argument structure of HybridBlock does not match the cached version. Stored "
                         f"format = {old}, input format = {new} (-1 marks None); hybridize() again "
                         "to call the block with another structure")


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
