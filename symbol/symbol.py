"""Symbol: a list of output entries into the graph, with MXNet's Symbol API.

Operator calls on Symbols go through the registry (the symbolic side of
`nd.dispatch.invoke`); this file holds naming, composition and inspection.
JSON, inference, binding and gradients live in their own modules and are
reached through thin methods here.
"""
from __future__ import annotations

import copy as _copy
import numbers
from typing import Any
from collections.abc import Sequence

import numpy as np

from hybridgraph.nd.arith import OPERATOR_RULES, Rule
from hybridgraph.nd.attrs import format_value
from hybridgraph.nd.backend import DTYPE_TO_FLAG, as_dtype
from hybridgraph.nd.errors import AttrError, MXNetError, NotImplementedForSymbol
from hybridgraph.nd.registry import OpDef, get_op

from .graph import IndexedGraph, Node, topo_sort
from .naming import HIDDEN_KEYS, AttrScope, NameManager

_SCALARS = (numbers.Number, np.number, np.bool_)
STYPE_FLAGS = {"default": 0, "row_sparse": 1, "csr": 2}


class Symbol:
    """A symbolic value: one or more outputs of a graph (MXNet's `mx.sym.Symbol`)."""

    __slots__ = ("_outputs", "__weakref__")
    _is_symbolic = True
    # `np.float64(3) - sym` defers to Symbol.__rsub__ (a Symbol, as MXNet gives), not a numpy array
    __array_ufunc__ = None

    def __init__(self, outputs: Sequence[tuple[Node, int]]):
        self._outputs = list(outputs)

    # pickling goes through MXNet's JSON, as MXNet's Symbol does ({"handle": json})
    def __getstate__(self) -> dict:
        return {"handle": self.tojson()}

    def __setstate__(self, state: dict) -> None:
        from .json_read import load_json  # noqa: PLC0415 - json_read imports this module
        self._outputs = load_json(state["handle"])._outputs

    # -- identity and inspection -------------------------------------------
    @property
    def name(self) -> str | None:
        """The node's name when every output comes from one node (a multi-output op's Symbol has
        its node's name, as in MXNet); None for a group of several nodes."""
        if not self._outputs:
            return None
        node = self._outputs[0][0]
        if any(n is not node for n, _ in self._outputs):
            return None
        return node.name

    def __repr__(self) -> str:
        if self.name is not None:
            return f"<Symbol {self.name}>"
        return "<Symbol group [" + ", ".join(n.name for n, _ in self._outputs) + "]>"

    __str__ = __repr__

    def __hash__(self) -> int:
        return id(self)

    def __len__(self) -> int:
        return len(self._outputs)

    def __iter__(self):
        return (Symbol([e]) for e in self._outputs)

    def __bool__(self):
        raise NotImplementedForSymbol(self.__bool__, "bool")

    def __getitem__(self, index: int | str | slice) -> "Symbol":
        if isinstance(index, str):
            names = self.list_outputs()
            matches = [i for i, n in enumerate(names) if n == index]
            if not matches:
                raise ValueError(f"Cannot find output that matches name {index!r}; outputs are {names}")
            if len(matches) > 1:
                raise ValueError(f"There are multiple outputs with name {index!r}")
            index = matches[0]
        if isinstance(index, slice):
            return Symbol(self._outputs[index])
        if not isinstance(index, int):
            raise TypeError(f"Symbol only supports integer or string indexing, got {type(index).__name__}")
        if not -len(self._outputs) <= index < len(self._outputs):
            raise IndexError(f"output index {index} out of range for {len(self._outputs)} outputs")
        return Symbol([self._outputs[index]])

    def _graph(self) -> IndexedGraph:
        return IndexedGraph(self._outputs)

    def list_arguments(self) -> list[str]:
        return [n.name for n in self._graph().arguments()]

    def list_auxiliary_states(self) -> list[str]:
        return [n.name for n in self._graph().auxiliary_states()]

    def list_inputs(self) -> list[str]:
        return [n.name for n in self._graph().input_nodes()]

    def list_outputs(self) -> list[str]:
        return [node.output_names()[idx] for node, idx in self._outputs]

    def get_internals(self) -> "Symbol":
        """Every output of every node, in topological order."""
        return Symbol([(n, i) for n in topo_sort(self._outputs) for i in range(n.num_outputs())])

    def get_children(self) -> "Symbol | None":
        # the inputs of each distinct output node once (outputs of one node share them), as nnvm does
        nodes = list({id(node): node for node, _ in self._outputs}.values())
        entries = [e for node in nodes for e in node.inputs]
        return Symbol(entries) if entries else None

    # -- attributes ------------------------------------------------------------
    def attr(self, key: str) -> str | None:
        if len(self._outputs) != 1:
            raise MXNetError("attr() is only defined for a single-output symbol")
        attrs = self._outputs[0][0].attr_strings()
        if key in attrs:
            return attrs[key]
        hidden = f"__{key}__"
        return attrs.get(hidden)

    def list_attr(self, recursive: bool = False) -> dict:
        if recursive:
            raise DeprecationWarning("Symbol.list_attr with recursive=True has been deprecated. "
                                     "Please use attr_dict instead.")
        return _with_plain_hidden(self._outputs[0][0].attr_strings()) if len(self._outputs) == 1 else {}

    def attr_dict(self) -> dict:
        out = {}
        for n in topo_sort(self._outputs):
            attrs = n.attr_strings()
            if attrs:
                out[n.name] = _with_plain_hidden(attrs)
        return out

    def _set_attr(self, **kwargs: str) -> None:
        for node, _ in self._outputs:
            for k, v in kwargs.items():
                if not isinstance(v, str):
                    raise ValueError("Set Attr only accepts string values")
                node.var_attrs[k] = v

    # -- copying and composition -------------------------------------------------
    def __copy__(self) -> "Symbol":
        return self.__deepcopy__(None)

    def __deepcopy__(self, memo) -> "Symbol":
        mapping: dict[int, Node] = {}
        for n in topo_sort(self._outputs):
            new = Node(n.op, n.name, n.attrs, [(mapping[id(s)], i) for s, i in n.inputs], dict(n.var_attrs))
            mapping[id(n)] = new
        return Symbol([(mapping[id(n)], i) for n, i in self._outputs])

    def __call__(self, *args: "Symbol", **kwargs: "Symbol") -> "Symbol":
        out = _copy.deepcopy(self)
        out._compose(*args, **kwargs)
        return out

    def _compose(self, *args: "Symbol", name: str | None = None, **kwargs: "Symbol") -> None:
        """Replace free variables by the given symbols (positionally or by name), in place."""
        args_nodes = self._graph().input_nodes()
        subst: dict[int, tuple] = {}
        if args:
            if kwargs:
                raise TypeError("compose only accepts input Symbols either as positional or keyword "
                                "arguments, not both")
            for node, s in zip(args_nodes, args):
                subst[id(node)] = _single_entry(s, node.name)
        for key, s in kwargs.items():
            hits = [n for n in args_nodes if n.name == key]
            if not hits:
                raise MXNetError(f"compose: no input named {key!r}; inputs are {[n.name for n in args_nodes]}")
            subst[id(hits[0])] = _single_entry(s, key)
        mapping: dict[int, Node] = {}

        def remap(entry):
            src, idx = entry
            return subst[id(src)] if id(src) in subst else (mapping[id(src)], idx)

        for n in topo_sort(self._outputs):
            if id(n) not in subst:
                mapping[id(n)] = n if n.op is None else Node(n.op, n.name, n.attrs,
                                                             [remap(e) for e in n.inputs], n.var_attrs)
        self._outputs = [remap(e) for e in self._outputs]
        if name and len(self._outputs) == 1 and self._outputs[0][0].op is not None:
            self._outputs[0][0].name = name

    # -- arithmetic (MXNet: Symbol op Symbol is elementwise, op number is the scalar form) --
    def _binary(self, other: Any, tensor_op: str, scalar_op: str | None, reverse: bool = False):
        """MXNet's overloads: Symbol (op) Symbol is elementwise, Symbol (op) number the
        scalar form; nodes are named after the name MXNet calls (`_PlusScalar` -> `_plusscalar0`)."""
        if isinstance(other, Symbol):
            lhs, rhs = (other, self) if reverse else (self, other)
            return create(get_op(tensor_op), [lhs, rhs], {}, hint=tensor_op.lower())
        if isinstance(other, _SCALARS) and scalar_op:
            return create(get_op(scalar_op), [self], {"scalar": other}, hint=scalar_op.lower())
        if getattr(other, "_is_symbolic", None) is False:
            raise TypeError("an NDArray holding data cannot be combined with a symbolic value (a hybridized "
                            "block is being traced): create constants with F.zeros_like / F.ones_like / "
                            "F.full, or pass the array as an input of the block")
        raise TypeError(f"type {type(other).__name__} not supported")

    # `+`, `-`, ..., `==`, `<`: generated from nd/arith.py's rules below the class

    def __neg__(self):
        return self.__mul__(-1.0)

    def __abs__(self):
        return create(get_op("abs"), [self], {})

    def __iadd__(self, o): raise NotImplementedForSymbol(self.__iadd__, "+=")
    def __isub__(self, o): raise NotImplementedForSymbol(self.__isub__, "-=")
    def __imul__(self, o): raise NotImplementedForSymbol(self.__imul__, "*=")
    def __itruediv__(self, o): raise NotImplementedForSymbol(self.__itruediv__, "/=")

    def reshape(self, *shape, **kwargs) -> "Symbol":
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = tuple(shape[0])
        if "shape" in kwargs:
            shape = kwargs.pop("shape")
        return create(get_op("Reshape"), [self], dict(shape=tuple(shape), **kwargs))

    def astype(self, dtype: Any) -> "Symbol":
        return create(get_op("Cast"), [self], {"dtype": as_dtype(dtype).name})

    def asnumpy(self):
        raise NotImplementedForSymbol(self.asnumpy, None)

    def asscalar(self):
        raise NotImplementedForSymbol(self.asscalar, None)

    # -- the parts that live in other modules --------------------------------------
    def tojson(self, remove_amp_cast: bool = True) -> str:
        from .json_io import tojson
        return tojson(self, remove_amp_cast)

    def save(self, fname: str, remove_amp_cast: bool = True) -> None:
        from .json_io import save
        save(self, fname, remove_amp_cast)

    def infer_shape(self, *args, **kwargs):
        from .infer import infer_shape
        return infer_shape(self, *args, **kwargs)

    def infer_shape_partial(self, *args, **kwargs):
        from .infer import infer_shape_partial
        return infer_shape_partial(self, *args, **kwargs)

    def infer_type(self, *args, **kwargs):
        from .infer import infer_type
        return infer_type(self, *args, **kwargs)

    def infer_type_partial(self, *args, **kwargs):
        from .infer import infer_type_partial
        return infer_type_partial(self, *args, **kwargs)

    def bind(self, ctx, args, args_grad=None, grad_req="write", aux_states=None, group2ctx=None,
             shared_exec=None):
        from .executor import bind
        return bind(self, ctx, args, args_grad, grad_req, aux_states, group2ctx, shared_exec)

    def simple_bind(self, ctx, grad_req="write", type_dict=None, stype_dict=None, group2ctx=None,
                    shared_arg_names=None, shared_exec=None, shared_buffer=None, **kwargs):
        from .executor import simple_bind
        return simple_bind(self, ctx, grad_req, type_dict, stype_dict, group2ctx, shared_arg_names,
                           shared_exec, shared_buffer, **kwargs)

    def eval(self, ctx=None, **kwargs):
        from .executor import eval_symbol
        return eval_symbol(self, ctx, **kwargs)

    def gradient(self, wrt: Sequence[str]) -> "Symbol":
        from .gradient import gradient
        return gradient(self, wrt)

    def debug_str(self) -> str:
        from .json_io import debug_str
        return debug_str(self)


def _operator(rule: Rule, reverse: bool):
    tensor, scalar = rule.sym_tensor, rule.sym_rscalar if reverse else rule.sym_scalar

    def method(self, o):
        return self._binary(o, tensor, scalar, reverse)
    method.__name__ = f"__{'r' if reverse else ''}{rule.dunder}__"
    return method


for _rule in OPERATOR_RULES:   # the one table of Python-operator rules (nd/arith.py)
    setattr(Symbol, f"__{_rule.dunder}__", _operator(_rule, False))
    if _rule.augmented:
        setattr(Symbol, f"__r{_rule.dunder}__", _operator(_rule, True))
Symbol.__div__ = Symbol.__truediv__
Symbol.__rdiv__ = Symbol.__rtruediv__


def _with_plain_hidden(attrs: dict) -> dict:
    """MXNet shows `__ctx_group__` also as `ctx_group` (the hidden keys only)."""
    out = dict(attrs)
    for k in HIDDEN_KEYS:
        if f"__{k}__" in attrs:
            out[k] = attrs[f"__{k}__"]
    return out


def _single_entry(s: Any, where: str) -> tuple:
    if not isinstance(s, Symbol):
        raise TypeError(f"compose expects Symbols, got {type(s).__name__} for {where!r}")
    if len(s._outputs) != 1:
        raise MXNetError(f"compose: argument {where!r} must be a single-output symbol")
    return s._outputs[0]


# -- creating nodes -------------------------------------------------------------

def var(name: str, attr: dict | None = None, shape: Any = None, lr_mult: float | None = None,
        wd_mult: float | None = None, dtype: Any = None, init: Any = None, stype: str | None = None,
        **kwargs: Any) -> Symbol:
    """A variable (a named input of the graph), MXNet's `mx.sym.var`."""
    if not isinstance(name, str):
        raise TypeError("Expect a string for variable `name`")
    # a hidden key given in `attr` ({'force_mirroring': 'True'}) is stored as __force_mirroring__, as MXNet's C API does
    attrs = {(f"__{k}__" if k in HIDDEN_KEYS else k): v for k, v in AttrScope.current.get(attr).items()}
    if shape is not None:
        attrs["__shape__"] = str(tuple(shape))
    if lr_mult is not None:
        attrs["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        attrs["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        attrs["__dtype__"] = str(DTYPE_TO_FLAG[as_dtype(dtype)])
    if init is not None:
        attrs["__init__"] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        attrs["__storage_type__"] = str(STYPE_FLAGS[stype])
    for k, v in kwargs.items():
        if k.startswith("__") and k.endswith("__"):
            attrs[k] = str(v)
        else:
            raise ValueError(f"Attribute name={k} is not supported. Additional attributes must start "
                             "and end with double underscores, e.g, __yourattr__")
    return Symbol([(Node(None, name, None, (), attrs), 0)])


Variable = var


def Group(symbols: Sequence[Symbol]) -> Symbol:  # noqa: N802 - MXNet's name
    """One symbol whose outputs are the outputs of all given symbols (a Symbol counts as its outputs)."""
    symbols = list(symbols)
    if not symbols or any(not isinstance(s, Symbol) for s in symbols):
        raise TypeError("Expected a list of symbols as input")
    return Symbol([e for s in symbols for e in s._outputs])


def create(op: OpDef, inputs: list, given: dict, name: str | None = None, attr: dict | None = None,
           hint: str | None = None) -> Symbol:
    """Apply an operator to Symbols: the symbolic side of every operator call."""
    scope_attrs = AttrScope.current.get(attr)
    hidden = {}
    for k, v in scope_attrs.items():
        key = f"__{k}__" if k in HIDDEN_KEYS else k
        hidden[key] = v if isinstance(v, str) else format_value(v)
    given = dict(given)
    for k in [k for k in given if k.startswith(HIDDEN_KEYS)]:   # mx.sym.FullyConnected(..., lr_mult=0):
        v = given.pop(k)                                         # an attribute, as MXNet's C API does
        hidden[f"__{k}__"] = v if isinstance(v, str) else format_value(v)
    try:
        attrs = op.parse_attrs(given)
    except AttrError as exc:
        raise AttrError(f"{exc} (while creating symbol {name or op.hint})") from None
    name = NameManager.current.get(name, hint or op.hint)
    names = op.input_names(attrs)
    if len(inputs) != len(names):
        raise AttrError(f"operator {op.name} ({name}): expected {len(names)} inputs {list(names)}, "
                        f"got {len(inputs)}")
    entries = []
    for pos, (in_name, x) in enumerate(zip(names, inputs)):
        if x is None:  # MXNet creates `<name>_<input>` variables copying the op's attributes
            x = Symbol([(Node(None, f"{name}_{in_name}", None, (), {**attrs.given, **hidden}), 0)])
        if not isinstance(x, Symbol) and getattr(x, "_is_symbolic", None) is False:
            raise TypeError(f"operator {op.name} ({name}): input {in_name!r} is an NDArray holding data, "
                            "but the other inputs are symbolic (a hybridized block is being traced). Create "
                            "constants from the traced inputs instead (F.zeros_like(x), F.ones_like(x), "
                            "F.full(...)), or pass the array as an input of the block.")
        if not isinstance(x, Symbol):
            raise TypeError(f"operator {op.name} ({name}): input {in_name!r} must be a Symbol, "
                            f"got {type(x).__name__}")
        if len(x._outputs) != 1:
            raise MXNetError(f"operator {op.name} ({name}): input {in_name!r} is a group of "
                             f"{len(x._outputs)} outputs; pass a single output")
        entries.append(x._outputs[0])
        src = x._outputs[0][0]
        if src.op is None and pos in op.var_init and "__init__" not in src.var_attrs:
            src.var_attrs["__init__"] = op.var_init[pos]
    node = Node(op, name, attrs, entries, hidden)
    outputs = [(node, i) for i in range(op.num_visible_outputs(attrs))]
    from .tracer import LegacyTracer, Tracer, abstract_eval, current_trace
    if current_trace() is not None:
        abstract_eval(op, attrs, entries, [(node, i) for i in range(node.num_outputs())])
        # computed from a classic value (x.as_nd_ndarray() in numpy mode): classic too, as in MXNet
        return (LegacyTracer if any(type(x) is LegacyTracer for x in inputs) else Tracer)(outputs)
    return Symbol(outputs)
