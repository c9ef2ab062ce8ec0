"""`nd.CachedOp`: a Symbol called like an operator on NDArrays (MXNet's CachedOp).

`CachedOp(sym)(*arrays)` runs the graph's operators one by one through the eager
dispatch, the arrays bound to `sym.list_inputs()` in order (arguments and auxiliary
states as the graph lists them). Every step is an ordinary eager call, so a call
under `autograd.record()` is recorded and differentiates like the same code
written with NDArrays, and auxiliary states (BatchNorm's moving statistics) are
updated in place. For compiled execution of a graph, use `Symbol.bind` or a
hybridized `SymbolBlock`.
"""
from __future__ import annotations

from typing import Any

from .dispatch import run_eager
from .errors import MXNetError


class CachedOp:
    """A Symbol as one callable operator on NDArrays (`flags` are accepted and kept, as MXNet's
    CachedOp flags only tune its engine: static_alloc, static_shape, ...)."""

    def __init__(self, sym: Any, flags: Any = ()):
        from hybridgraph.symbol.graph import topo_sort  # noqa: PLC0415 - nd sits below symbol
        self.sym = sym
        self.flags = dict(flags)
        self._order = topo_sort(sym._outputs)
        self._inputs = sym._graph().input_nodes()

    def __call__(self, *args: Any, out: Any = None, default_ctx: Any = None) -> Any:
        if len(args) != len(self._inputs):
            raise MXNetError(f"CachedOp: the symbol has {len(self._inputs)} inputs "
                             f"{[n.name for n in self._inputs]}, got {len(args)} arrays")
        env: dict[int, list] = {id(n): [a] for n, a in zip(self._inputs, args)}
        for node in self._order:
            if node.op is None:
                continue
            ins = []
            for src, i in node.inputs:
                values = env[id(src)]
                if i >= len(values):
                    raise NotImplementedError(
                        f"CachedOp: node {node.name} reads hidden output {i} of {src.name} "
                        f"({src.op.name}); bind the symbol (Symbol.bind) to run this graph")
                ins.append(values[i])
            res = run_eager(node.op, node.attrs, ins)
            env[id(node)] = list(res) if isinstance(res, (list, tuple)) else [res]
        outs = [env[id(n)][i] for n, i in self.sym._outputs]
        if out is not None:
            targets = out if isinstance(out, (list, tuple)) else [out]
            if len(targets) != len(outs):
                raise MXNetError(f"CachedOp: out= has {len(targets)} arrays for {len(outs)} outputs")
            for t, o in zip(targets, outs):
                t[:] = o
            return out
        return outs[0] if len(outs) == 1 else outs
