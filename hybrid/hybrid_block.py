"""HybridBlock: a Block that can be traced into a Symbol graph and run compiled.

`hybrid_forward(F, x, **params)` runs with F = `nd` eagerly and F = `symbol`
when traced; a plain `forward(x)` written with NDArray code is traced too.
`hybridize()` caches one compiled graph per input signature (shape-generic
graphs are reused across batch sizes), and `export()` writes the last trace
as `-symbol.json` / `-%04d.params` that MXNet loads.
"""
from __future__ import annotations

import threading
import warnings
from itertools import repeat
from typing import Any

from hybridgraph import nd
from hybridgraph import symbol as sym_module
from hybridgraph.nd import autograd
from hybridgraph.nd.errors import DTypeError
from hybridgraph.util import is_np_array, is_np_shape
from hybridgraph.nd.numpy.multiarray import as_np
from hybridgraph.symbol import Symbol
from hybridgraph.symbol.plan.plan_cache import plan_cache_info
from hybridgraph.symbol.tracer import current_trace

from .block import Block
from .cached_graph import CachedGraph
from .direct_call import DirectCall
from .call_checks import check_call, check_hybridized_call
from .parameter import DeferredInitializationError, arrays_on
from .tracing import TracedGraph, flatten_call, regroup, signatures, trace_block
from .utils import export_paths


def _zero_size_np(flat: list) -> bool:
    return any(isinstance(x, nd.NDArray) and 0 in x.shape for x in flat)


class HybridBlock(Block):
    """A Block whose computation can be traced into a graph (Gluon's HybridBlock)."""

    def __init__(self, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self._active = False
        self._flags: dict = {}
        self._cache: dict = {}
        self._cache_lock = threading.Lock()
        self._last_trace: TracedGraph | None = None
        self._cache_stats = {"traces": 0, "hits": 0, "retrace_reasons": []}

    def hybridize(self, active: bool = True, static_alloc: bool = False, static_shape: bool = False,
                  **kwargs: Any) -> None:
        """Trace and compile this block on its next call (children are traced with it)."""
        self._active = active
        self._flags = dict(static_alloc=static_alloc, static_shape=static_shape, **kwargs)
        self._clear_cache()
        super().hybridize(active, static_alloc=static_alloc, static_shape=static_shape, **kwargs)

    def register_op_hook(self, callback: Any, monitor_all: bool = False) -> None:
        """Install `callback(name, op_name, array)` for this block's hybridized calls: each
        operator's outputs (with monitor_all its inputs first) as `<node>_<slot>`, the graph
        then run unoptimised, step by step. As in MXNet 1.9.1 the direct children get it
        too (for their own hybridized calls), not the blocks below them."""
        self._op_hook = (callback, bool(monitor_all))
        for child in self._children.values():
            child._op_hook = self._op_hook

    def _clear_cache(self) -> None:
        with self._cache_lock:
            self._cache.clear()
            self.__dict__["_in_format"] = None   # call_checks.check_hybridized_call
            self.__dict__["_direct"] = None      # direct_call.DirectCall

    def cache_info(self) -> dict:
        """Traces made, cache hits, why each retrace happened, and the per-shape plans this
        block keeps (`plans`, `plan_bytes`) within the process-wide budget (`plan_cache_limit`,
        set with HYBRIDGRAPH_PLAN_CACHE_BYTES or symbol.plan.plan_cache.set_plan_cache_limit)."""
        graphs = [cg for _, graph in list(self._cache.values()) for cg in graph.compiled_graphs()]
        return {"traces": self._cache_stats["traces"], "hits": self._cache_stats["hits"],
                "entries": len(self._cache), "retrace_reasons": list(self._cache_stats["retrace_reasons"]),
                **plan_cache_info(graphs)}

    def register_child(self, block: Block, name: str | None = None) -> None:
        if not isinstance(block, HybridBlock):
            raise ValueError(f"Children of HybridBlock must also be HybridBlock, but {block} has type "
                             f"{type(block)}. If you are using Sequential, please try HybridSequential instead.")
        super().register_child(block, name)
        self._clear_cache()

    # -- calling ------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        direct = self.__dict__.get("_direct")
        if direct is not None and len(args) == 1 and not kwargs:
            out = direct(args[0])   # a repeat of the last inference call (None: it is not)
            if out is not None:
                return out
        if self._active and current_trace() is None:
            flat = flatten_call(args, kwargs)[0]
            check_hybridized_call(self, args, flat)
            # a hybridized call on arrays; zero-size np arrays run eagerly: the graph planner's
            # shape inference reads a 0 dimension as unknown (MXNet's legacy convention)
            if any(isinstance(x, nd.NDArray) for x in flat) and not (is_np_shape() and _zero_size_np(flat)):
                if self._forward_pre_hooks:
                    for hook in list(self._forward_pre_hooks.values()):
                        hook(self, args)
                out = self._call_cached(args, kwargs, flat)
                if self._forward_hooks:
                    for hook in list(self._forward_hooks.values()):
                        hook(self, args, out)
                return out
        if _has_symbol(args, kwargs):
            state = current_trace()
            saved = state.enter_block(self) if state is not None else None
            try:
                with self.name_scope():  # op names get this block's prefix, as in MXNet
                    return super().__call__(*args, **kwargs)
            finally:
                if state is not None:
                    state.block_path = saved
        return super().__call__(*args, **kwargs)

    def forward(self, x: Any, *args: Any, **kwargs: Any) -> Any:
        """Run hybrid_forward with F = nd (arrays) or F = symbol (symbols, tracers)."""
        check_call(self, x, args, kwargs)
        if isinstance(x, Symbol):
            params = {k: (v.data() if current_trace() is not None else v.var())
                      for k, v in self._reg_params.items()}
            return self.hybrid_forward(sym_module, x, *args, **kwargs, **params)
        ctx = x._ctx if isinstance(x, nd.NDArray) else None
        try:
            params = {k: v.data(ctx) for k, v in self._reg_params.items()} if self._reg_params else {}
        except DeferredInitializationError:
            self._deferred_infer_shape(x, *args, **kwargs)
            params = {k: v.data(ctx) for k, v in self._reg_params.items()}
        return self.hybrid_forward(nd, x, *args, **kwargs, **params)

    def hybrid_forward(self, F: Any, x: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N803
        raise NotImplementedError(f"{type(self).__name__} must implement hybrid_forward() or forward()")

    def _deferred_infer_shape(self, *args: Any, **kwargs: Any) -> None:
        """Learn unknown parameter shapes from the inputs by tracing, then initialise them."""
        try:
            trace_block(self, args, kwargs)
        except (DeferredInitializationError, DTypeError):   # MXNet infers shapes only: a dtype
            raise                                            # error is the call's own (as eagerly)
        except Exception as exc:
            raise ValueError(f"Deferred initialization failed because shape cannot be inferred. {exc}") from exc
        for p in self.collect_params().values():
            p._finish_deferred_init()

    def infer_shape(self, *args: Any) -> None:
        """Infer and set the shapes of this block's parameters from example inputs."""
        trace_block(self, args, {})

    def _call_cached(self, args: tuple, kwargs: dict, flat: list) -> Any:
        """Run the compiled graph of this call's signature (`flat`: the flattened arguments),
        tracing and compiling it first when the cache has none."""
        recording, training = autograd._STATE.get()
        mode = (training, recording)
        sig, gsig = signatures(flat)
        key, gkey = (sig, mode), (gsig, mode)
        entry = self._cache.get(key) or self._cache.get(gkey)
        if entry is None:
            entry = self._build_cache(args, kwargs, key, gkey)
        else:
            with self._cache_lock:
                self._cache_stats["hits"] += 1
        traced, graph = entry
        positions = traced.array_positions
        arrays = flat if len(positions) == len(flat) else [flat[i] for i in positions]
        ctx = arrays[0]._ctx if arrays else nd.current_context()
        hook = self.__dict__.get("_op_hook")
        if hook is not None and (self._flags.get("static_alloc") or self._flags.get("static_shape")):
            warnings.warn("register_op_hook is experimental when static_alloc=True / static_shape=True "
                          " and may not work correctly", stacklevel=3)
        outs = graph(arrays, arrays_on(traced.params, ctx), hook)
        if is_np_array():   # numpy mode: a hybridized block returns mx.np arrays
            as_np(outs)
        elif len(flat) == 1 and mode == (False, False) and self._active:
            self.__dict__["_direct"] = DirectCall.after_call(self, traced, graph, flat[0])
        return regroup(traced.fill_outputs(outs), traced.out_fmt, lists=True)

    def _build_cache(self, args, kwargs, key, gkey):
        with self._cache_lock:
            entry = self._cache.get(key) or self._cache.get(gkey)
            if entry is not None:
                return entry
            reason = self._retrace_reason(key, gkey)
            traced = trace_block(self, args, kwargs)
            for p in self.collect_params().values():
                p._finish_deferred_init()
            entry = (traced, CachedGraph(traced, static_alloc=bool(self._flags.get("static_alloc")),
                                         name=self.name, inline_limit=int(self._flags.get("inline_limit", 2))))
            self._cache[gkey if traced.shape_generic else key] = entry
            self._last_trace = traced
            self._cache_stats["traces"] += 1
            self._cache_stats["retrace_reasons"].append(reason)
            return entry

    def _retrace_reason(self, key: tuple, gkey: tuple) -> str:
        """Why the call with cache keys (key, gkey) found no trace (for cache_info())."""
        if not self._cache:
            return "first call"
        (sig, mode), gsig = key, gkey[0]
        same_mode = [k[0] for k in self._cache if k[1] == mode]
        if not same_mode:
            return (f"autograd mode training={mode[0]}, recording={mode[1]} has no trace yet "
                    "(train and predict never share a trace)")
        for old in same_mode:
            if _generic_of(old) == gsig:
                return (f"input shapes {_shapes_of(sig)} differ from the traced {_shapes_of(old)} and the "
                        "traced code read a concrete shape (x.shape, len(x), ...)")
        return f"new input signature {sig}: array ranks, dtypes or non-array arguments changed"

    def memory_stats(self) -> dict | None:
        """Memory of the last compiled graph: planned, naive and lower-bound bytes (None before a call)."""
        if self._last_trace is None:
            return None
        for traced, graph in list(self._cache.values())[::-1]:
            if traced is self._last_trace:
                return graph.memory_stats()
        return None

    # -- export -----------------------------------------------------------------------------
    def export(self, path: str, epoch: int = 0, remove_amp_cast: bool = True) -> None:
        """Write `path-%04d.params` (arg:/aux: keys), then `path-symbol.json`, from the last trace.

        Returns None, as MXNet 1.9.1 does; `gluon.utils.export_paths(path, epoch)` names the files.
        Each file is written atomically and the symbol last, so a kill midway leaves
        new weights beside the old symbol of the same graph, never a new graph beside
        old weights; `SymbolBlock.imports` names a pair whose parameters do not match."""
        if self._last_trace is None:
            raise RuntimeError("Please first call block.hybridize() and then run forward with this block at "
                               "least once before calling export.")
        from hybridgraph.nd.serialization import save
        from hybridgraph.symbol.json_io import save as save_json
        traced = self._last_trace
        sym_file, params_file = export_paths(path, epoch)
        aux_names = set(traced.symbol.list_auxiliary_states())
        arrays = {}
        for p in traced.params:
            kind = "aux" if p.name in aux_names else "arg"
            arrays[f"{kind}:{p.name}"] = p.data(p.list_ctx()[0]).copyto(nd.cpu())
        save(params_file, arrays)
        save_json(traced.symbol, sym_file, remove_amp_cast)

    def export_onnx(self, path: str, example_inputs: Any, dynamic_batch: bool = True, opset: int = 17) -> str:
        """Write this block, traced on `example_inputs`, as the ONNX model `path` (hybridgraph.onnx.gluon)."""
        from hybridgraph.onnx.gluon import export_block
        return export_block(self, path, example_inputs, dynamic_batch, opset)


def _generic_of(sig: tuple) -> tuple:
    """The shape-generic form of a full signature (array shapes -> ranks)."""
    return tuple((len(e[0]), e[1]) if isinstance(e[0], tuple) else e for e in sig)


def _shapes_of(sig: tuple) -> list:
    return [e[0] for e in sig if isinstance(e[0], tuple)]


def _has_symbol(args: tuple, kwargs: dict) -> bool:
    if not kwargs and all(map(isinstance, args, repeat(nd.NDArray))):
        return False                      # the common eager call: arrays only
    flat, _ = flatten_call(args, kwargs)
    return any(isinstance(x, Symbol) for x in flat)

