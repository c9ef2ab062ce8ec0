"""ONNX -> Symbol: `mx.onnx.import_model(path) -> (sym, arg_params, aux_params)` and `import_to_gluon`.

Initializers become parameters under their ONNX names (so an exported model comes back
with its MXNet parameter names), BatchNormalization's mean and variance become aux
states. Subgraphs computed from constants only (the exporter's weight slicing for RNNs,
shape arithmetic) are folded first with onnx's reference evaluator, so each remaining
node is written by one rule of import_rules.py. A node without a rule raises an error
naming the node and the ONNX op.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from hybridgraph.nd.errors import MXNetError


class ImportError_(MXNetError, NotImplementedError):  # noqa: N801 - distinct from the builtin ImportError
    """An ONNX graph (or one node of it) that cannot be read as a hybridgraph Symbol."""


class Reader:
    """What an import rule sees: the node, its attributes, input symbols and constant values."""

    def __init__(self, consts: dict[str, np.ndarray], params: dict[str, np.ndarray]):
        self.consts, self.params = consts, params
        self.syms: dict[str, Any] = {}
        self.node = None
        self.aux: set[str] = set()
        self._n = 0

    def attr(self, name: str, default: Any = None) -> Any:
        from onnx import helper
        for a in self.node.attribute:
            if a.name == name:
                v = helper.get_attribute_value(a)
                return v.decode() if isinstance(v, bytes) else v
        return default

    def const(self, i: int) -> np.ndarray | None:
        """Input i's value when it is a constant (initializer or folded), else None."""
        if i >= len(self.node.input) or not self.node.input[i]:
            return None
        return self.consts.get(self.node.input[i])

    def need_const(self, i: int, what: str) -> np.ndarray:
        v = self.const(i)
        if v is None:
            raise self.fail(f"its {what} (input {i}) must be a constant")
        return v

    def sym(self, i: int):
        """Input i as a Symbol (constants become parameters named after the tensor)."""
        from hybridgraph import symbol
        name = self.node.input[i]
        if name not in self.syms:
            if name not in self.consts:
                raise self.fail(f"input {name!r} is not produced by any node")
            self.params[name] = self.consts[name]
            self.syms[name] = symbol.var(name, shape=self.consts[name].shape, dtype=self.consts[name].dtype)
        return self.syms[name]

    def has(self, i: int) -> bool:
        return i < len(self.node.input) and bool(self.node.input[i])

    def name(self, suffix: str = "") -> str:
        base = self.node.name or self.node.output[0]
        return base + suffix

    def fail(self, what: str) -> ImportError_:
        return ImportError_(f"cannot import ONNX node {self.node.name or self.node.output[0]!r} "
                            f"(op {self.node.op_type}): {what}")


def _fold(model, consts: dict[str, np.ndarray]) -> None:
    """Evaluate every node whose inputs are all constants (in graph order)."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    for node in model.graph.node:
        if node.op_type in ("RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike"):
            continue
        ins = [i for i in node.input if i]
        if not all(i in consts for i in ins) or (not ins and node.op_type != "Constant"):
            continue
        if node.op_type == "Constant":
            consts[node.output[0]] = _constant_value(node)
            continue
        g = helper.make_graph([node], "fold", [helper.make_tensor_value_info(i, 0, None) for i in ins],
                              [helper.make_tensor_value_info(o, 0, None) for o in node.output if o])
        opsets = [helper.make_opsetid(o.domain, o.version) for o in model.opset_import]
        m = helper.make_model(g, opset_imports=opsets)
        try:
            outs = ReferenceEvaluator(m).run(None, {i: consts[i] for i in ins})
        except Exception:  # noqa: BLE001 - a node the reference evaluator cannot fold stays a node
            continue
        for o, v in zip([o for o in node.output if o], outs):
            consts[o] = np.asarray(v)


def _constant_value(node) -> np.ndarray:
    from onnx import helper, numpy_helper
    a = node.attribute[0]
    v = helper.get_attribute_value(a)
    if a.name == "value":
        return numpy_helper.to_array(v)
    return np.asarray(v)


def import_model(model_file: Any) -> tuple[Any, dict, dict]:
    """Read an ONNX file (or ModelProto) as (sym, arg_params, aux_params), MXNet 1.9.1's contract."""
    import onnx
    from onnx import numpy_helper

    from hybridgraph import nd, symbol
    from hybridgraph.onnx.import_rules import RULES

    model = model_file if isinstance(model_file, onnx.ModelProto) else onnx.load(os.fspath(model_file))
    consts = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    _fold(model, consts)
    params: dict[str, np.ndarray] = {}
    r = Reader(consts, params)
    for inp in model.graph.input:
        if inp.name not in consts:
            r.syms[inp.name] = symbol.var(inp.name)
    needed = _needed(model, consts)
    for node in model.graph.node:
        if not any(o in needed for o in node.output):
            continue
        rule = RULES.get(node.op_type)
        r.node = node
        if rule is None:
            raise r.fail("no import rule for this ONNX op")
        outs = rule(r)
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        for o, s in zip(node.output, outs):
            if o:
                r.syms[o] = s
    heads = []
    for o in model.graph.output:
        if o.name not in r.syms:
            if o.name in consts:
                heads.append(_const_sym(r, o.name))
                continue
            raise ImportError_(f"graph output {o.name!r} is not computed by any node")
        heads.append(r.syms[o.name])
    sym = heads[0] if len(heads) == 1 else symbol.Group(heads)
    used = set(sym.list_inputs())
    arg = {k: nd.array(v, dtype=v.dtype) for k, v in params.items() if k in used and k not in r.aux}
    aux = {k: nd.array(v, dtype=v.dtype) for k, v in params.items() if k in used and k in r.aux}
    return sym, arg, aux


def _const_sym(r: Reader, name: str):
    from hybridgraph import symbol
    r.params[name] = r.consts[name]
    return symbol.var(name, shape=r.consts[name].shape)


def _needed(model, consts: dict) -> set[str]:
    """Tensors the graph outputs depend on that are not constants."""
    producer = {o: n for n in model.graph.node for o in n.output}
    need, stack = set(), [o.name for o in model.graph.output]
    while stack:
        t = stack.pop()
        if t in need or t in consts:
            continue
        need.add(t)
        n = producer.get(t)
        if n is not None:
            stack.extend(i for i in n.input if i)
    return need


def import_to_gluon(model_file: Any, ctx: Any = None):
    """An ONNX model as a gluon SymbolBlock with its parameters loaded."""
    from hybridgraph import nd, symbol
    from hybridgraph.gluon import SymbolBlock

    sym, arg, aux = import_model(model_file)
    params = {**arg, **aux}
    inputs = [symbol.var(n) for n in sym.list_inputs() if n not in params]
    block = SymbolBlock(sym, inputs)
    ctx = ctx or nd.cpu()
    for name, p in block.collect_params().items():
        if name in params:
            value = params[name]
            p.shape, p.dtype = value.shape, value.dtype
            p.initialize(ctx=ctx, force_reinit=True)
            p.set_data(value)
    return block
