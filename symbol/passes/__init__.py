"""Graph optimization passes: a registry of named passes, a manager, default pipelines.

A pass is a pure function `fn(heads, ctx) -> new heads` over the graph IR of
symbol/graph.py (a graph is its list of head entries). Passes never mutate a
node: they build new nodes and share untouched ones. Analysis passes
(`changes_graph=False`) return a side table instead, kept in `ctx.tables[name]`
until a later pass changes the graph.

Every pass is registered by name with what it `requires` (capabilities earlier
passes must have `provided`) and what it `provides` (NNVM's pass.h). The
manager, `apply_passes`, checks those, runs `lint` after each graph-changing
pass when asked (tests always ask), and re-raises any failure as
`PassError("pass X failed after [A, B]: ...")` (torch.fx's PassManager).

Options every pass may read (`ctx.options`):

* `for_training` (bool, default True): the graph runs in training mode and is
  differentiated; inference-only rewrites (Dropout/BlockGrad removal, BatchNorm
  folding) are off. True is the safe default.
* `shapes` / `dtypes`: shapes and dtypes of variables by name (as `simple_bind`
  takes them); passes derive entry shapes of the current graph from them
  (`ctx.entry_shapes(heads)`), so the table never goes stale between passes.
* `params`: values (numpy arrays) of parameters by name; `frozen`: names of the
  parameters whose values are fixed for the compiled graph (constant folding
  and BatchNorm folding may read them).
* `max_constant_bytes`: the largest array constant folding materialises.

Passes that add or rewrite constants put them in `ctx.new_params` (variable
name -> numpy array); `optimize` returns them.
"""
from __future__ import annotations

import dataclasses
import itertools
from typing import Any
from collections.abc import Callable, Sequence

import numpy as np

from hybridgraph.nd.errors import MXNetError

from ..graph import Entry, IndexedGraph, topo_sort

__all__ = ["register_pass", "apply_passes", "optimize", "get_pass", "list_passes", "PassContext",
           "PassError", "DEFAULT_INFERENCE", "DEFAULT_TRAINING"]


class PassError(MXNetError):
    """A graph pass failed, or its result failed lint."""


@dataclasses.dataclass(frozen=True)
class PassInfo:
    """A registered pass: the function and its declared dependencies."""

    name: str
    fn: Callable
    requires: tuple
    provides: tuple
    changes_graph: bool


_PASSES: dict[str, PassInfo] = {}


def register_pass(name: str, requires: Sequence[str] = (), provides: Sequence[str] = (),
                  changes_graph: bool = True) -> Callable:
    """Register `fn(heads, ctx)` as the pass `name` (a decorator).

    The pass provides its own name as well as `provides`.
    """
    def wrap(fn: Callable) -> Callable:
        if name in _PASSES and _PASSES[name].fn is not fn:
            raise ValueError(f"graph pass {name!r} is registered twice")
        _PASSES[name] = PassInfo(name, fn, tuple(requires), tuple(dict.fromkeys((name, *provides))),
                                 changes_graph)
        return fn
    return wrap


def get_pass(name: str) -> PassInfo:
    try:
        return _PASSES[name]
    except KeyError:
        raise PassError(f"unknown graph pass {name!r}; registered passes: {sorted(_PASSES)}") from None


def list_passes() -> list[str]:
    return sorted(_PASSES)


class PassContext:
    """Options, side tables and new constants shared by the passes of one pipeline."""

    def __init__(self, options: dict | None = None):
        self.options: dict = dict(options or {})
        self.new_params: dict[str, np.ndarray] = {}
        self.tables: dict[str, Any] = {}
        self.ran: list[str] = []
        self._shape_cache: tuple | None = None

    @property
    def for_training(self) -> bool:
        return bool(self.options.get("for_training", True))

    def value_of(self, name: str) -> np.ndarray | None:
        """The fixed value of a frozen parameter (or a constant a pass added), else None."""
        if name in self.new_params:
            return self.new_params[name]
        params = self.options.get("params") or {}
        if name in params and name in set(self.options.get("frozen") or ()):
            return np.asarray(params[name])
        return None

    def _known(self, key: str, convert: Callable) -> dict[str, Any]:
        known = {n: convert(v) for n, v in (self.options.get(key) or {}).items()}
        for src in (self.options.get("params") or {}, self.new_params):
            for n, v in src.items():
                known.setdefault(n, convert(v.shape if key == "shapes" else v.dtype))
        return known

    def entry_shapes(self, heads: Sequence[Entry]) -> dict[tuple[int, int], tuple]:
        """(id(node), output index) -> shape for every entry whose shape is known (from the
        `shapes` option, parameter values and new constants; empty when inference fails)."""
        return self._entry_table(heads, "shapes")

    def entry_dtypes(self, heads: Sequence[Entry]) -> dict[tuple[int, int], np.dtype]:
        """(id(node), output index) -> dtype for every entry whose dtype is known."""
        return self._entry_table(heads, "dtypes")

    def _entry_table(self, heads: Sequence[Entry], key: str) -> dict:
        from ..infer import graph_shapes, graph_types
        from hybridgraph.nd.registry import shape_known
        graph = IndexedGraph(heads)
        convert = tuple if key == "shapes" else np.dtype
        known = self._known(key, convert)
        seed = {graph.entry_id((n, 0)): known[n.name] for n in graph.input_nodes() if n.name in known}
        try:
            values = (graph_shapes if key == "shapes" else graph_types)(graph, seed)
        except MXNetError:  # inconsistent inputs: no facts here; binding reports the error with context
            return {}
        ok = shape_known if key == "shapes" else (lambda v: v is not None)
        return {(id(n), i): values[graph.row_ptr[k] + i]
                for k, n in enumerate(graph.nodes) for i in range(n.num_outputs())
                if ok(values[graph.row_ptr[k] + i])}

    def taken_names(self, heads: Sequence[Entry]) -> set[str]:
        """Variable names the graph, the parameters and earlier constants use."""
        taken = {n.name for n in topo_sort(heads) if n.op is None}
        return taken | set(self.new_params) | set(self.options.get("params") or ())

    @staticmethod
    def fresh_name(pattern: str, taken: set[str]) -> str:
        """A name not in `taken` (which it joins): `pattern.format(k)` for k = 0, 1, ... when the
        pattern has a `{}`, else the pattern itself or the pattern followed by 1, 2, ..."""
        candidates = (pattern.format(k) if "{}" in pattern else pattern + (str(k) if k else "")
                      for k in itertools.count())
        name = next(c for c in candidates if c not in taken)
        taken.add(name)
        return name


def _check_heads(heads: Any, name: str) -> list[Entry]:
    if not isinstance(heads, (list, tuple)):
        raise PassError(f"pass {name} returned {type(heads).__name__}; expected a list of head entries")
    return list(heads)


def _lint_or_raise(heads: list[Entry], ctx: PassContext, what: str) -> None:
    from .lint import LintError, lint
    try:
        lint(heads, shapes=ctx.options.get("shapes"))
    except LintError as exc:
        raise PassError(f"{what}: lint: {exc}") from exc


def apply_passes(heads: list[Entry], names: Sequence[str], *, lint: bool = False,
                 context: PassContext | None = None, **options: Any) -> list[Entry]:
    """Run the named passes in order and return the new heads (the input graph is untouched).

    `context` (optional) collects side tables and new constants across calls;
    `options` (see the module docstring) are added to it.
    """
    ctx = context if context is not None else PassContext()
    ctx.options.update(options)
    heads = list(heads)
    if lint:
        _lint_or_raise(heads, ctx, "the input graph failed before any pass")
    available: set[str] = set()
    analysis: set[str] = set()
    ran: list[str] = []
    for name in names:
        info = get_pass(name)
        missing = [r for r in info.requires if r not in available]
        if missing:
            raise PassError(f"pass {name} requires {missing}, which no earlier pass of {ran} provides "
                            f"(after a graph change, analysis results must be recomputed)")
        try:
            result = info.fn(heads, ctx)
        except Exception as exc:
            raise PassError(f"pass {name} failed after {ran}: {type(exc).__name__}: {exc}") from exc
        if info.changes_graph:
            result = _check_heads(result, name)
            if result != heads:   # a pass that rewrote nothing keeps earlier analyses valid
                available -= analysis
                for stale in analysis:
                    ctx.tables.pop(stale, None)
                analysis.clear()
            heads = result
            if lint:
                _lint_or_raise(heads, ctx, f"pass {name} failed after {ran}")
        else:
            ctx.tables[name] = result
            analysis.update(info.provides)
        available.update(info.provides)
        ran.append(name)
    ctx.ran.extend(ran)
    return heads


#: pipeline for graphs run at inference only (never differentiated)
DEFAULT_INFERENCE = ("dce", "simplify", "fold_constants", "cse", "fuse_loss", "fold_batchnorm",
                     "fuse_conv_epilogue", "fuse_elemwise")
#: pipeline for forward graphs that will be differentiated (no BN folding, no Dropout removal)
DEFAULT_TRAINING = ("dce", "simplify", "fold_constants", "cse", "fuse_loss", "fuse_elemwise")


def optimize(heads: list[Entry], *, for_training: bool, params: dict[str, np.ndarray] | None = None,
             disable: Sequence[str] = (), lint: bool = False, **options: Any) -> tuple[list[Entry], dict]:
    """Run the default pipeline; returns (new heads, new_params).

    `new_params` holds the constants the passes added or rewrote (folded
    constants, BatchNorm-folded weights and biases), keyed by variable name; only
    those the new graph uses. For inference every parameter in `params` counts as
    frozen unless `frozen=` says otherwise. Extra `options` (`shapes`, `dtypes`,
    `frozen`, ...) go to the passes.
    """
    pipeline = DEFAULT_TRAINING if for_training else DEFAULT_INFERENCE
    unknown = [d for d in disable if d not in _PASSES]
    if unknown:
        raise PassError(f"disable={list(disable)}: unknown passes {unknown}; registered: {sorted(_PASSES)}")
    options.setdefault("frozen", () if for_training else tuple(params or ()))
    ctx = PassContext(dict(options, for_training=for_training, params=dict(params or {})))
    out = apply_passes(heads, [p for p in pipeline if p not in disable], lint=lint, context=ctx)
    used = {n.name for n in topo_sort(out) if n.op is None}
    return out, {k: v for k, v in ctx.new_params.items() if k in used}


# the passes register themselves on import
from . import cse, dce, fold_batchnorm, fold_constants, fuse_conv_epilogue, fuse_elemwise, fuse_loss, simplify  # noqa: E402,F401,I001
