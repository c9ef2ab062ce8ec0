"""SymbolBlock: a HybridBlock made from a Symbol graph (`SymbolBlock.imports` of
MXNet's exported `-symbol.json` / `.params` files)."""
from __future__ import annotations

import os
from typing import Any, Sequence

from hybridgraph import nd
from hybridgraph import symbol as sym_module
from hybridgraph.nd.errors import MXNetError
from hybridgraph.util import is_np_array
from hybridgraph.nd.numpy.multiarray import as_np
from hybridgraph.symbol import Symbol
from hybridgraph.symbol.graph import IndexedGraph

from hybridgraph.symbol.tracer import Tracer, abstract_eval, current_trace

from .cached_graph import CachedGraph
from .hybrid_block import HybridBlock
from .parameter import ParameterDict
from .tracing import TracedGraph, flatten, regroup


def _common_prefix(names: Sequence[str]) -> str:
    if not names:
        return ""
    prefix = os.path.commonprefix(list(names))
    return prefix


def _replay(graph: Symbol, bindings: dict[str, Symbol]) -> list[Tracer]:
    """Apply `graph`'s operators to the bound tracers, node by node, keeping node names."""
    from hybridgraph.symbol.graph import Node
    env: dict[int, list] = {}
    for n in IndexedGraph(graph._outputs).nodes:
        if n.op is None:
            if n.name not in bindings:
                raise MXNetError(f"SymbolBlock: graph input {n.name!r} is neither an input nor a parameter")
            env[id(n)] = bindings[n.name]._outputs
            continue
        entries = [env[id(src)][i] for src, i in n.inputs]
        node = Node(n.op, n.name, n.attrs, entries, dict(n.var_attrs))
        outs = [(node, i) for i in range(node.num_outputs())]
        abstract_eval(n.op, n.attrs, entries, outs)
        env[id(n)] = outs
    return [Tracer([env[id(n)][i]]) for n, i in graph._outputs]


class SymbolBlock(HybridBlock):
    """Wraps a Symbol graph; inputs are the given variables, every other argument a Parameter."""

    @staticmethod
    def imports(symbol_file: str, input_names: str | Sequence[str], param_file: str | None = None,
                ctx: Any = None, allow_missing: bool = False, ignore_extra: bool = False) -> "SymbolBlock":
        """Load a model exported by `HybridBlock.export` (hybridgraph's or MXNet's), or an ONNX file
        (`model.onnx`: its weights are inside, `param_file` is not used)."""
        if str(symbol_file).endswith(".onnx"):
            from hybridgraph.onnx.importer import import_to_gluon
            return import_to_gluon(symbol_file, ctx)
        from hybridgraph.symbol.json_io import load
        graph = load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        inputs = [sym_module.var(i, dtype="float32") if param_file is None else sym_module.var(i)
                  for i in input_names]
        block = SymbolBlock(graph, inputs)
        if param_file is not None:
            try:
                block.collect_params().load(param_file, ctx, allow_missing, ignore_extra, cast_dtype=True,
                                            dtype_source="saved")
            except AssertionError as exc:  # names or shapes differ: say the pair is mismatched
                raise AssertionError(
                    f"{exc}\n{symbol_file} and {param_file} do not belong together: the parameters do not "
                    "match the graph (files of different models, or an export / save_checkpoint that was "
                    "interrupted between its two files; the .params file is written first, the "
                    "-symbol.json last)") from None
        return block

    def __init__(self, outputs: Symbol | Sequence[Symbol], inputs: Symbol | Sequence[Symbol],
                 params: ParameterDict | None = None):
        super().__init__(prefix=None, params=None)
        self._prefix = ""
        self._params = ParameterDict("", params)
        if isinstance(inputs, Symbol) and len(inputs.list_outputs()) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        in_syms, self._in_format = flatten(inputs)
        out_syms, out_fmt = flatten(outputs)
        out = Symbol([e for s in out_syms for e in s._outputs])
        input_names = []
        for s in in_syms:
            if not isinstance(s, Symbol) or len(s.get_internals().list_outputs()) != 1:
                raise MXNetError(f"Input symbols must be variable, but {s} is an output of operators")
            input_names.append(s.name)
        graph_args = set(out.list_inputs())
        missing = [n for n in input_names if n not in graph_args]
        if missing:
            raise MXNetError(f"input(s) {missing} are not inputs of the graph; its inputs are "
                             f"{sorted(graph_args)}")
        for name in out.list_arguments():
            if name not in input_names:
                self.params.get(name, allow_deferred_init=True)
        for name in out.list_auxiliary_states():
            if name not in input_names:
                self.params.get(name, grad_req="null", allow_deferred_init=True)
        len_prefix = len(_common_prefix(list(self._params.keys())))
        self._reg_params = {key[len_prefix:]: val for key, val in self._params.items()}
        order = [n.name for n in IndexedGraph(out._outputs).input_nodes()]
        params = [self._params[n] for n in order if n in self._params]
        if len(out_syms) == 1:  # one (possibly multi-output) symbol: a list when it has several
            out_fmt = ("list", (0,) * len(out._outputs)) if len(out._outputs) > 1 else 0
        self._traced = TracedGraph(out, input_names, [], params, out_fmt, True)
        self._graph: CachedGraph | None = None
        self._last_trace = self._traced

    def forward(self, x: Any, *args: Any) -> Any:
        if isinstance(x, Symbol):
            inputs = dict(zip(self._traced.input_names, (x, *args)))
            if current_trace() is None:
                return self._traced.symbol(**inputs)
            # traced inside a hybridized parent: replay the graph on the tracers (shapes flow on)
            inputs.update((p.name, p.data()) for p in self._traced.params)
            outs = _replay(self._traced.symbol, inputs)
            return regroup(outs, self._traced.out_fmt) if self._traced.out_fmt != 0 else outs[0]
        arrays = [x, *args]
        ctx = x.context
        self._finish_params(arrays)
        if self._graph is None:
            self._graph = CachedGraph(self._traced, static_alloc=bool(self._flags.get("static_alloc")),
                                      name="symbolblock")
        outs = self._graph(arrays, [p.data(ctx) for p in self._traced.params])
        if is_np_array():   # numpy mode: mx.np arrays out
            as_np(outs)
        return regroup(outs, self._traced.out_fmt, lists=True) if self._traced.out_fmt != 0 else outs[0]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return super(HybridBlock, self).__call__(*args, **kwargs)

    def _finish_params(self, arrays: Sequence[nd.NDArray]) -> None:
        pending = [p for p in self._traced.params if p._data is None]
        if not pending:
            return
        shapes = {n: a.shape for n, a in zip(self._traced.input_names, arrays)}
        arg_shapes, _, aux_shapes = self._traced.symbol.infer_shape_partial(**shapes)
        names = self._traced.symbol.list_arguments() + self._traced.symbol.list_auxiliary_states()
        for name, shape in zip(names, list(arg_shapes) + list(aux_shapes)):
            if name in self._params and self._params[name]._data is None and shape:
                self._params[name].shape = tuple(shape)
        for p in pending:
            p._finish_deferred_init()

    def hybridize(self, active: bool = True, **kwargs: Any) -> None:
        self._active = active
