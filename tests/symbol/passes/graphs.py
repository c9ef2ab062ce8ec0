"""Helpers for the pass tests: run a graph through the executor, describe its structure."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hybridgraph import nd
from hybridgraph.symbol.graph import Entry, topo_sort
from hybridgraph.symbol.json_io import tojson
from hybridgraph.symbol.symbol import Symbol


def heads_of(sym: Symbol) -> list[Entry]:
    return list(sym._outputs)


def as_symbol(heads: Sequence[Entry]) -> Symbol:
    return Symbol(list(heads))


def json_of(heads: Sequence[Entry]) -> str:
    return tojson(as_symbol(heads))


def ops_of(heads: Sequence[Entry]) -> list[str]:
    """Operator names of the graph in topological order (variables left out)."""
    return [n.op.name for n in topo_sort(heads) if n.op is not None]


def bind(heads: Sequence[Entry], values: dict, grad: bool = False, const: Sequence[str] = ()):
    """An executor over `heads` with arrays copied from `values` (by name); with `grad`,
    gradients are written for every argument not in `const`."""
    sym = as_symbol(heads)
    args = {n: nd.array(values[n], dtype=np.asarray(values[n]).dtype) for n in sym.list_arguments()}
    aux = {n: nd.array(values[n], dtype=np.asarray(values[n]).dtype) for n in sym.list_auxiliary_states()}
    grads, reqs = None, "null"
    if grad:
        grads = {n: nd.zeros(a.shape, dtype=a.dtype) for n, a in args.items()}
        reqs = {n: ("null" if n in const else "write") for n in args}
    return sym.bind(None, args, args_grad=grads, grad_req=reqs, aux_states=aux or None)


def run(heads: Sequence[Entry], values: dict, is_train: bool = False) -> list[np.ndarray]:
    """Forward outputs of the graph as numpy arrays."""
    return [o.asnumpy() for o in bind(heads, values).forward(is_train=is_train)]


def run_grads(heads: Sequence[Entry], values: dict, head_grads: list, const: Sequence[str] = ()):
    """(outputs, {argument: gradient}, {aux: value after backward}) of a training step."""
    ex = bind(heads, values, grad=True, const=const)
    outs = [o.asnumpy() for o in ex.forward(is_train=True)]
    ex.backward([nd.array(g, dtype=g.dtype) for g in head_grads])
    grads = {k: v.asnumpy() for k, v in ex.grad_dict.items() if v is not None}
    aux = {k: v.asnumpy() for k, v in ex.aux_dict.items()}
    return outs, grads, aux


def assert_same_outputs(before: list, after: list, rtol: float = 1e-6, atol: float = 1e-8) -> None:
    assert len(before) == len(after)
    for a, b in zip(before, after):
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol)
