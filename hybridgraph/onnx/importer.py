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

    def __init__(self, consts: dict[str, np.ndarray], params: dict[str, np.ndarray],
                 shapes: dict[str, tuple] | None = None, producers: dict | None = None):
        self.consts, self.params = consts, params
        #: inferred shapes (ints, or a dim_param string / None for a symbolic dim) by tensor name
        self.shapes = shapes or {}
        self.producers = producers or {}
        self.syms: dict[str, Any] = {}
        self.node = None
        self.aux: set[str] = set()
        #: tensors whose node could not be written as symbols: the error, raised if a rule reads one
        self.failed: dict[str, Exception] = {}
        self._n = 0

    def attr(self, name: str, default: Any = None) -> Any:
        from onnx import helper
        for a in self.node.attribute:
            if a.name == name:
                v = helper.get_attribute_value(a)
                if isinstance(v, list):
                    return [x.decode() if isinstance(x, bytes) else x for x in v]
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
        return self.sym_named(self.node.input[i])

    def sym_named(self, name: str):
        """The Symbol of a tensor by name (a constant becomes a parameter named after it)."""
        from hybridgraph import symbol
        if name in self.failed:
            raise self.failed[name]
        if name not in self.syms:
            if name not in self.consts:
                raise self.fail(f"input {name!r} is not produced by any node")
            self.params[name] = self.consts[name]
            self.syms[name] = symbol.var(name, shape=self.consts[name].shape, dtype=self.consts[name].dtype)
        return self.syms[name]

    def shape(self, i: int) -> tuple | None:
        """Input i's shape: a constant's, or onnx shape inference's (a symbolic dim is a str or None)."""
        name = self.node.input[i]
        if name in self.consts:
            return tuple(self.consts[name].shape)
        return self.shapes.get(name)

    def static_shape(self, i: int, what: str) -> tuple:
        """Input i's shape, which must be fully known (a weight's, for instance)."""
        shape = self.shape(i)
        if shape is None or not all(isinstance(d, int) for d in shape):
            raise self.fail(f"the shape of its {what} (input {i}) must be static, got {shape}")
        return shape

    def shape_value(self, i: int) -> list | None:
        """Input i's value when it is a shape vector: ints, and str (dim_param) entries for symbolic
        dims of graph tensors; None when it is not computed from shapes and constants."""
        return _shape_value(self, self.node.input[i], 0) if self.has(i) else None

    def dim_source(self, dim: str) -> tuple:
        """(Symbol, axis) of a tensor imported so far that has the symbolic dim `dim` (graph inputs first)."""
        for name, sym in self.syms.items():
            shape = self.shapes.get(name) or ()
            if dim in shape:
                return sym, list(shape).index(dim)
        raise self.fail(f"no tensor imported so far has the dim {dim!r}")

    def has(self, i: int) -> bool:
        return i < len(self.node.input) and bool(self.node.input[i])

    def name(self, suffix: str = "") -> str:
        base = self.node.name or self.node.output[0]
        return base + suffix

    def fail(self, what: str) -> ImportError_:
        return ImportError_(f"cannot import ONNX node {self.node.name or self.node.output[0]!r} "
                            f"(op {self.node.op_type}): {what}")


_RANDOM = ("RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial")


def _infer_shapes(model) -> dict[str, tuple]:
    """Every tensor's shape by onnx shape inference: ints, a dim_param string, or None when unknown."""
    import onnx

    named = onnx.ModelProto()
    named.CopyFrom(model)
    for vi in named.graph.input:  # an anonymous symbolic dim gets a name, so that its uses can be matched
        for axis, d in enumerate(vi.type.tensor_type.shape.dim):
            if not d.HasField("dim_value") and not d.dim_param:
                d.dim_param = f"{vi.name}:{axis}"
    try:
        inferred = onnx.shape_inference.infer_shapes(named, data_prop=True)
    except Exception:  # noqa: BLE001 - a model inference rejects still imports, with fewer known shapes
        inferred = named
    out = {}
    g = inferred.graph
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        t = vi.type.tensor_type
        if not t.HasField("shape"):
            continue
        out[vi.name] = tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim)
    return out


def _static_shape_node(node, shapes: dict) -> np.ndarray | None:
    """Shape/Size of a tensor whose inferred shape is fully static, else None."""
    shape = shapes.get(node.input[0]) if node.input else None
    if shape is None or not all(isinstance(d, int) for d in shape):
        return None
    if node.op_type == "Size":
        return np.asarray(int(np.prod(shape)), dtype=np.int64)
    start = end = None
    for a in node.attribute:
        if a.name in ("start", "end"):
            start, end = (a.i, end) if a.name == "start" else (start, a.i)
    return np.asarray(shape[start:end], dtype=np.int64)


def _shape_value(r, name: str, depth: int) -> list | None:
    """A shape vector's entries through Shape/Concat/Slice/Gather/Cast/ScatterElements/Unsqueeze:
    ints, or dim_param strings for the symbolic dims of the graph's tensors."""
    if name in r.consts:
        v = r.consts[name]
        return [int(x) for x in v.reshape(-1)] if v.dtype.kind in "iu" and v.ndim <= 1 else None
    node = r.producers.get(name)
    if node is None or depth > 16:
        return None
    t = node.op_type
    if t == "Shape":
        shape = r.shapes.get(node.input[0])
        if shape is None:
            return None
        attrs = {a.name: a.i for a in node.attribute}
        shape = list(shape)[attrs.get("start", 0):attrs.get("end", len(shape))]
        return [d if isinstance(d, int) else (d or None) for d in shape]
    parts = [_shape_value(r, i, depth + 1) if i else None for i in node.input]
    if t in ("Cast", "Identity", "Squeeze", "Unsqueeze", "Reshape") and parts and parts[0] is not None:
        return parts[0]
    if t == "Concat" and all(p is not None for p in parts):
        return [d for p in parts for d in p]
    if t in ("Slice", "Gather") and parts[0] is not None and all(
            p is not None for p in parts[1:]):
        if t == "Gather":
            return [parts[0][i] for i in parts[1]]
        starts, ends = parts[1], parts[2]
        steps = parts[4] if len(parts) > 4 else [1]
        return parts[0][slice(starts[0], ends[0], steps[0])]
    if t == "ReduceProd" and parts[0] is not None:  # a merged dim: unknown (None) unless all known
        known = [d for d in parts[0] if not (isinstance(d, int) and d == 1)]
        if all(isinstance(d, int) for d in known):
            return [int(np.prod(known, dtype=np.int64))]
        return [known[0] if len(known) == 1 else None]
    if t in ("Mul", "Div") and len(parts) == 2 and all(p is not None for p in parts):
        a, b = parts
        if len(b) == 1:
            b = b * len(a)
        if all(isinstance(d, int) for d in a + b):
            return [x * y if t == "Mul" else x // y for x, y in zip(a, b)]
        return [x if isinstance(y, int) and y == 1 else None for x, y in zip(a, b)]
    if t == "ScatterElements" and all(p is not None for p in parts):
        out = list(parts[0])
        for i, v in zip(parts[1], parts[2]):
            out[i] = v
        return out
    return None


def _fold(model, consts: dict[str, np.ndarray], shapes: dict[str, tuple]) -> None:
    """Evaluate every node whose inputs are all constants (in graph order), and Shape/Size of
    tensors whose shape is static."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    for node in model.graph.node:
        if node.op_type in _RANDOM:
            continue
        if node.op_type in ("Shape", "Size"):
            v = _static_shape_node(node, shapes)
            if v is not None:
                consts[node.output[0]] = v
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
    from hybridgraph.onnx import import_tensor  # noqa: F401 - registers the shape/index/tensor rules
    from hybridgraph.onnx.import_rules import RULES

    model = model_file if isinstance(model_file, onnx.ModelProto) else onnx.load(os.fspath(model_file))
    consts = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    shapes = _infer_shapes(model)
    _fold(model, consts, shapes)
    params: dict[str, np.ndarray] = {}
    producers = {o: n for n in model.graph.node for o in n.output if o}
    r = Reader(consts, params, shapes, producers)
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
        try:
            outs = rule(r)
        except ImportError_ as exc:  # fatal only if a rule reads the output as a tensor (not as a shape)
            r.failed.update({o: exc for o in node.output if o})
            continue
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        for o, s in zip(node.output, outs):
            if o:
                r.syms[o] = s
    heads = []
    for o in model.graph.output:
        if o.name in r.failed:
            raise r.failed[o.name]
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
