"""Symbol + parameters -> ONNX model: MXNet 1.9.1's `mx.onnx.export_model`, and the graph walk under it.

Each MXNet node is written by its op's lowering (nd/lowering.py, registered in
nd/ops/onnx_*.py), which sees the static shapes and dtypes inferred at the
export shapes. ONNX tensors are named as MXNet 1.9.1's exporter names them
(`conv0` for `conv0_output`, `topk01` for a second output), so graph outputs
carry MXNet's names and `verify(per_node=True)` can find every node's tensor.
"""
from __future__ import annotations

import difflib
import logging
import os
import re
from typing import Any

import numpy as np

from hybridgraph.nd.errors import MXNetError
from hybridgraph.nd.lowering import exportable_ops, onnx_lowering_of
from hybridgraph.onnx.writer import ExportError, NodeWriter
from hybridgraph.symbol import foreach_op
from hybridgraph.symbol.symbol import Symbol

DEFAULT_OPSET = 17
OPSETS = range(13, 21)
# the newest IR version each opset's models may declare (onnxruntime refuses newer ones)
_IR_VERSION = {13: 7, 14: 7, 15: 8, 16: 8, 17: 8, 18: 8, 19: 9, 20: 9}


def _onnx():
    try:
        import onnx
    except ImportError:
        raise ImportError("exporting to ONNX needs the onnx package: pip install 'hybridgraph[onnx]'") from None
    return onnx


def tensor_name(output_name: str) -> str:
    """MXNet 1.9.1's ONNX name of a graph entry (`fc_output` -> `fc`, `rnn_state_output` -> `rnn1`)."""
    for suffix, tail in (("_state_output", "1"), ("_statecell_output", "2"), ("_output", "")):
        if output_name.endswith(suffix):
            return output_name[: -len(suffix)] + tail
    if re.search(r"_output[0-9]$", output_name):
        return output_name[: -len("_output0")] + output_name[-1]
    return output_name


def _numpy_params(params: dict) -> dict[str, np.ndarray]:
    out = {}
    for k, v in params.items():
        key = k[4:] if k.startswith(("arg:", "aux:")) else k
        out[key] = v.asnumpy() if hasattr(v, "asnumpy") else np.asarray(v)
    return out


def load_inputs(sym: Any, params: Any) -> tuple[Any, dict[str, np.ndarray]]:
    """MXNet's accepted forms: files, or a Symbol with a dict or [arg_params, aux_params]."""
    from hybridgraph import nd, symbol

    if isinstance(sym, (str, os.PathLike)) and isinstance(params, (str, os.PathLike)):
        for path in (sym, params):
            if not os.path.isfile(path):
                raise ValueError(f"Symbol and params files provided are invalid: {os.fspath(path)!r} is not a file")
        sym, params = symbol.load(os.fspath(sym)), nd.load(os.fspath(params))
        if isinstance(params, list) and not params:  # a model without parameters saves an empty list
            params = {}
        if not isinstance(params, dict):
            raise ValueError("the params file holds a list of arrays; expected named parameters (arg:/aux:)")
    if not isinstance(sym, symbol.Symbol):
        raise ValueError(f"Input sym and params should either be files or objects; got sym of type "
                         f"{type(sym).__name__}")
    if isinstance(params, (list, tuple)) and len(params) == 2 and all(isinstance(p, dict) for p in params):
        params = {**params[0], **params[1]}
    if not isinstance(params, dict):
        raise ValueError(f"Input sym and params should either be files or objects; got params of type "
                         f"{type(params).__name__}")
    return sym, _numpy_params(params)


def _nearest(op_name: str) -> str:
    names = [o.name for o in exportable_ops()]
    close = difflib.get_close_matches(op_name, names, n=3, cutoff=0.5)
    return ("nearest exportable ops: " + ", ".join(close)) if close else \
        "see docs/operators.md for the ops that export to ONNX"


class _Export:
    """One export: the symbol's graph walked in MXNet's order."""

    def __init__(self, sym, params, in_shapes, in_types, opset, dynamic_shapes):
        from hybridgraph.symbol.infer import graph_shapes, graph_types

        self.sym, self.graph = sym, sym._graph()
        self.params = {k: v for k, v in params.items() if k in set(sym.list_inputs())}
        # MXNet's rule: the label variable of a loss head is named after the graph's last node
        last = self.graph.nodes[-1] if self.graph.nodes else None
        self.label = f"{last.name}_label" if last is not None else None
        names = [n for n in sym.list_inputs() if n not in self.params and n != self.label]
        if len(in_shapes) != len(names):
            raise ValueError(f"in_shapes has {len(in_shapes)} shapes, but the model has {len(names)} inputs "
                             f"{names} (parameters excluded)")
        self.input_shapes = {n: tuple(int(d) for d in s) for n, s in zip(names, in_shapes)}
        self.input_types = {n: np.dtype(t) for n, t in zip(names, in_types)}
        if foreach_op.has_foreach(sym._outputs):   # ONNX gets the loop unrolled (lengths are static)
            known = {**self.input_shapes, **{k: v.shape for k, v in self.params.items()}}
            sym = Symbol(foreach_op.unroll(list(sym._outputs), known))
            self.sym, self.graph = sym, sym._graph()
        self.dynamic_shapes = dict(zip(names, dynamic_shapes)) if dynamic_shapes is not None else None
        g = self.graph
        vars_ = {n.name: n for n in g.input_nodes()}
        known_s = {g.entry_id((vars_[k], 0)): s for k, s in self.input_shapes.items()}
        known_s.update({g.entry_id((vars_[k], 0)): v.shape for k, v in self.params.items() if k in vars_})
        known_t = {g.entry_id((vars_[k], 0)): t for k, t in self.input_types.items()}
        known_t.update({g.entry_id((vars_[k], 0)): v.dtype for k, v in self.params.items() if k in vars_})
        self.shapes, self.dtypes = graph_shapes(g, known_s), graph_types(g, known_t)
        self.w = NodeWriter(opset, self.params, dynamic=dynamic_shapes is not None)
        self.sources = self._dim_sources(known_s, vars_) if dynamic_shapes is not None else {}
        self.tensor: dict[int, str] = {}  # entry id -> ONNX tensor name
        self.inputs: list = []

    def _dim_sources(self, known: dict, vars_: dict) -> dict[int, list]:
        """entry id -> per dim (input name, axis, scale) when the dim follows a symbolic input dim.

        Inference reruns with one symbolic input dim doubled; dims that double with it follow
        it (dim = scale * input dim), so lowerings that write a shape (zeros of the batch
        size, reshape targets) can compute it from `Shape(input)` instead of baking it."""
        from hybridgraph.symbol.infer import graph_shapes

        out: dict[int, list] = {}
        for name, dyn in self.dynamic_shapes.items():
            base = self.input_shapes[name]
            for axis, d in enumerate(dyn):
                if isinstance(d, int) or base[axis] == 0:
                    continue
                probe = dict(known)
                eid0 = self.graph.entry_id((vars_[name], 0))
                probe[eid0] = tuple(2 * v if i == axis else v for i, v in enumerate(base))
                try:
                    shapes = graph_shapes(self.graph, probe)
                except (MXNetError, ValueError):
                    continue
                for eid, (s0, s1) in enumerate(zip(self.shapes, shapes)):
                    if s0 is None or s1 is None or len(s0) != len(s1):
                        continue
                    for j, (x, y) in enumerate(zip(s0, s1)):
                        if x and y == 2 * x:
                            row = out.setdefault(eid, [None] * len(s0))
                            row[j] = row[j] or (name, axis, x / base[axis])
        return out

    def _unique(self, name: str) -> str:
        out, i = name, 0
        while out in self.w._used:
            i += 1
            out = f"{name}_{i}"
        self.w.reserve(out)
        return out

    def _variable(self, node) -> None:
        from onnx import helper

        eid = self.graph.entry_id((node, 0))
        if node.name in self.params:
            arr = self.params[node.name]
            self.w.reserve(node.name)
            self.w.initializers[node.name] = self.w._numpy_helper.from_array(np.ascontiguousarray(arr), node.name)
        elif node.name == self.label:
            return
        else:
            shape: Any = self.input_shapes[node.name]
            if self.dynamic_shapes is not None:
                shape = self.dynamic_shapes[node.name]
            elem = helper.np_dtype_to_tensor_dtype(self.input_types[node.name])
            self.inputs.append(helper.make_tensor_value_info(node.name, elem, list(shape)))
            self.w.reserve(node.name)
        self.tensor[eid] = node.name

    def _operator(self, node) -> None:
        g, w = self.graph, self.w
        lower = onnx_lowering_of(node.op)
        if lower is None:
            raise ExportError(f"cannot export node {node.name!r}: operator {node.op.name} has no ONNX lowering "
                              f"({_nearest(node.op.name)})")
        ins, in_shapes, in_dtypes = [], [], []
        for e in node.inputs:
            eid = g.entry_id(e)
            ins.append(self.tensor.get(eid, ""))
            in_shapes.append(self.shapes[eid])
            in_dtypes.append(self.dtypes[eid])
        base = g.entry_id((node, 0))
        n_out = node.num_outputs()
        w.begin(node, ins, in_shapes, in_dtypes, self.shapes[base:base + n_out], self.dtypes[base:base + n_out])
        w.out_sources = [self.sources.get(base + i) for i in range(n_out)]
        start = len(w.nodes)
        try:
            outs = lower(w, node)
        except MXNetError:
            raise
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise ExportError(f"cannot export node {node.name!r} (operator {node.op.name}): {exc}") from exc
        wanted = [tensor_name(n) for n in node.output_names()]
        for i, t in enumerate(outs):
            produced = any(t in n.output for n in w.nodes[start:])
            name = self._unique(wanted[i]) if produced else t
            if produced and name != t:
                for n in w.nodes[start:]:
                    for field in (n.input, n.output):
                        for j, x in enumerate(field):
                            if x == t:
                                field[j] = name
                    if n.name == t:
                        n.name = name
            self.tensor[base + i] = name

    def run(self, out_names: list[str], out_shapes: list, out_types: list):
        from onnx import helper

        for node in self.graph.nodes:
            if node.op is None:
                self._variable(node)
            else:
                self._operator(node)
        outputs = []
        for entry, name, shape, dtype in zip(self.sym._outputs, out_names, out_shapes, out_types):
            t = self.tensor[self.graph.entry_id(entry)]
            if t != name or t in self.w.initializers or any(i.name == t for i in self.inputs) or \
                    any(o.name == t for o in outputs):
                name = self._unique(name) if t != name else self._unique(name + "_out")
                self.w.nodes.append(helper.make_node("Identity", [t], [name], name=name))
            outputs.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(dtype), shape))
        graph = helper.make_graph(self.w.nodes, "hybridgraph_converted_model", self.inputs, outputs,
                                  initializer=list(self.w.initializers.values()))
        return graph


def build_model(sym: Any, params: Any, in_shapes: list, in_types: Any = np.float32, *, opset: int = DEFAULT_OPSET,
                dynamic: bool = False, dynamic_input_shapes: list | None = None):
    """The ONNX ModelProto of a symbol (checked by onnx.checker); what `export_model` writes."""
    onnx = _onnx()
    if opset not in OPSETS:
        raise ValueError(f"opset {opset} is not supported: choose one of {OPSETS.start}..{OPSETS.stop - 1}")
    sym, params = load_inputs(sym, params)
    in_shapes = [tuple(s) for s in in_shapes]
    if not isinstance(in_types, (list, tuple)):
        in_types = [in_types] * len(in_shapes)
    if len(in_types) != len(in_shapes):
        raise ValueError(f"The lengths of in_types ({len(in_types)}) and in_shapes ({len(in_shapes)}) must equal")
    if dynamic_input_shapes is not None and not dynamic:
        raise ValueError("dynamic_input_shapes is specified. Please set dynamic=True to enable dynamic input shapes")
    dyn = None
    if dynamic:
        dyn = [tuple(None for _ in s) for s in in_shapes] if dynamic_input_shapes is None else \
            [tuple(s) for s in dynamic_input_shapes]
        if len(dyn) != len(in_shapes) or any(len(a) != len(b) for a, b in zip(dyn, in_shapes)):
            raise ValueError("dynamic_input_shapes must give one shape of the same rank for each input")
    ex = _Export(sym, params, in_shapes, in_types, opset, dyn)
    out_ids = [ex.graph.entry_id(e) for e in ex.sym._outputs]
    out_shapes = [ex.shapes[i] for i in out_ids]
    if dyn:  # a graph without inputs has nothing symbolic
        batch_only = all(all(d is None or isinstance(d, str) for d in s[:1]) and
                         all(isinstance(d, int) for d in s[1:]) for s in dyn)
        out_shapes = [(dyn[0][0],) + tuple(s[1:]) if batch_only and s else tuple(None for _ in s)
                      for s in out_shapes]
    out_types = [ex.dtypes[i] for i in out_ids]
    graph = ex.run([tensor_name(n) for n in sym.list_outputs()], out_shapes, out_types)
    model = onnx.helper.make_model(graph, producer_name="hybridgraph", producer_version="1.9.1",
                                   opset_imports=[onnx.helper.make_opsetid("", opset)])
    model.ir_version = _IR_VERSION[opset]
    onnx.checker.check_model(model)
    return model


def export_model(sym: Any, params: Any, in_shapes: list | None = None, in_types: Any = np.float32,
                 onnx_file_path: str = "model.onnx", verbose: bool = False, dynamic: bool = False,
                 dynamic_input_shapes: list | None = None, run_shape_inference: bool = False,
                 input_type: Any = None, input_shape: list | None = None, opset_version: int | None = None) -> str:
    """Exports an MXNet model (Symbol + params, or -symbol.json + .params files) to ONNX.

    MXNet 1.9.1's signature and meaning: `params` is a dict (with or without `arg:`/`aux:`
    prefixes), `[arg_params, aux_params]` or a .params path; `in_shapes`/`in_types` list the
    non-parameter inputs in `sym.list_inputs()` order; `dynamic=True` leaves every input
    dimension symbolic unless `dynamic_input_shapes` gives them (None = symbolic).
    `input_type`/`input_shape` are the old names. `opset_version` (13..20, default 17) is
    hybridgraph's addition. Returns `onnx_file_path`.
    """
    from hybridgraph.nd.serialization import atomic_write

    if input_type is not None:
        in_types = input_type
    if input_shape is not None:
        in_shapes = input_shape
    if in_shapes is None:
        raise ValueError("in_shapes is required: the shape of each input, e.g. [(1, 3, 224, 224)]")
    model = build_model(sym, params, in_shapes, in_types, opset=opset_version or DEFAULT_OPSET,
                        dynamic=dynamic, dynamic_input_shapes=dynamic_input_shapes)
    if run_shape_inference:
        onnx = _onnx()
        try:
            model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        except Exception as exc:  # noqa: BLE001 - MXNet keeps the model when inference fails
            logging.info("Shape inference failed, original export is kept: %s", exc)
    if verbose:
        logging.info("Exported %d ONNX nodes to %s", len(model.graph.node), onnx_file_path)
    atomic_write(onnx_file_path, model.SerializeToString())
    return onnx_file_path


def get_operator_support(opset_version: int | None = None) -> list[str]:
    """The names (and aliases) of every operator that exports to ONNX."""
    names = set()
    for op in exportable_ops():
        names.update((op.name, *op.aliases))
    return sorted(names)
