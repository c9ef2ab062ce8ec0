"""Shape and dtype inference: one fixed point over the graph (NNVM's InferAttr).

`infer_attr` runs the operators' rules forward and backward over an
`IndexedGraph`, with the values in a side table keyed by entry id, until no
entry changes. Shapes use None for "unknown" and 0 for an unknown dim
(`nd.registry.merge_shape` unifies them); dtypes are `np.dtype` or None.
`infer_shape` / `infer_type` (and their `_partial` forms) are MXNet's Symbol
methods on top of it, with MXNet's argument and return conventions.
"""
from __future__ import annotations

import warnings
from typing import Any
from collections.abc import Callable, Sequence

import numpy as np

from hybridgraph.nd.attrs import parse_shape
from hybridgraph.nd.backend import FLAG_TO_DTYPE, as_dtype
from hybridgraph.nd.errors import DTypeError, MXNetError, ShapeError
from hybridgraph.nd.kernel import rule_verdict
from hybridgraph.nd.registry import merge_shape, same_shape, same_type, shape_known

from .graph import IndexedGraph, Node

#: rule(node, input values, output values) -> (input values, output values) or None
Rule = Callable[[Node, list, list], "tuple[list, list] | None"]
#: merge(old, new) -> unified value; raises ShapeError / DTypeError on a conflict
Merge = Callable[[Any, Any], Any]


# -- the generic fixed point ---------------------------------------------------------

def node_slots(graph: IndexedGraph) -> list[tuple[Node, list[int], list[int]]]:
    """(node, input entry ids, output entry ids) for every operator node, in topological order."""
    slots = []
    for nid, node in enumerate(graph.nodes):
        if node.op is None:
            continue
        ins = [graph.entry_id(e) for e in node.inputs]
        slots.append((node, ins, list(range(graph.row_ptr[nid], graph.row_ptr[nid + 1]))))
    return slots


def infer_attr(graph: IndexedGraph, known: dict[int, Any], rule: Rule, merge: Merge,
               what: str = "shape") -> list:
    """Run `rule` over every node, forward then backward, until nothing changes.

    `known` seeds the table (entry id -> value). Returns the table (a list
    indexed by entry id; None where nothing is known).
    """
    values: list = [None] * graph.num_entries
    for eid, v in known.items():
        values[eid] = v
    slots = node_slots(graph)
    for _ in range(2 * len(slots) + 2):
        changed = False
        for order in (slots, reversed(slots)):
            for node, in_ids, out_ids in order:
                changed |= _apply(node, in_ids, out_ids, values, rule, merge, what)
        if not changed:
            break
    return values


def _apply(node: Node, in_ids: list, out_ids: list, values: list, rule: Rule, merge: Merge,
           what: str) -> bool:
    """Apply one node's rule and merge its answers into the table; True when something changed."""
    ins = [values[i] for i in in_ids]
    outs = [values[o] for o in out_ids]
    try:
        res = rule(node, ins, outs)
    except MXNetError as exc:
        raise _with_eager_words(node, ins, what, _node_error(node, ins, rule, exc, what)) from None
    except Exception as exc:  # noqa: BLE001 - a rule that cannot cope with unknowns yet
        if all(_is_known(v) for v in ins):
            raise _with_eager_words(node, ins, what, MXNetError(
                f"Error in operator {node.name} ({node.op.name}): its {what} rule "
                f"failed: {exc} (on {what}s {_describe(node, ins)})")) from exc
        return False
    if res is None:
        return False
    new_ins, new_outs = res
    changed = False
    for pos, (eid, v) in enumerate(zip(in_ids, new_ins)):
        changed |= _merge_into(values, eid, v, merge, node, pos, "input", ins, what)
    for pos, (eid, v) in enumerate(zip(out_ids, new_outs)):
        changed |= _merge_into(values, eid, v, merge, node, pos, "output", ins, what)
    return changed


def _merge_into(values: list, eid: int, v: Any, merge: Merge, node: Node, pos: int, kind: str,
                ins: list, what: str) -> bool:
    if v is None:
        return False
    old = values[eid]
    try:
        new = merge(old, v)
    except MXNetError:
        names = node.input_names() if kind == "input" else node.output_names()
        slot = names[pos] if pos < len(names) else f"#{pos}"
        raise _with_eager_words(node, ins, what, type_of_error(what)(
            f"Error in operator {node.name} ({node.op.name}): {what} of {kind} {slot!r}: "
            f"expected {_fmt(v)}, got {_fmt(old)}. Inputs of the node: {_describe(node, ins)}")) from None
    if old is None or new != old:   # (np.dtype(x) == None compares with float64: test None first)
        values[eid] = new
        return True
    return False


def _with_eager_words(node: Node, ins: list, what: str, graph_error: MXNetError) -> MXNetError:
    """`graph_error`, led by the words of the eager call when every input of the node is known
    and its rule refuses them: the eager error's class and message (nd.kernel.rule_verdict)
    as the first line, the graph's diagnosis (node, culprit input, sources) on the next, so
    eager, Executor and hybridized calls read the same first line. `graph_error` as it is
    for a conflict only the graph shows (an output fixed elsewhere, an unknown input)."""
    if node.op is None or node.attrs is None or not ins or not all(_is_known(v) for v in ins):
        return graph_error
    try:
        verdict = rule_verdict(node.op, node.attrs, what, ins)
    except Exception:  # noqa: BLE001 - the eager words are a nicety: keep the graph's
        return graph_error
    if verdict is None:
        return graph_error
    return verdict[0](f"{verdict[1]}\n  {graph_error}")


def _node_error(node: Node, ins: list, rule: Rule, exc: Exception, what: str) -> MXNetError:
    """Re-raise a rule's error naming the node, the operator and the first input that conflicts."""
    names = node.input_names()
    culprit = None
    for k in range(len(ins)):
        try:
            rule(node, ins[:k + 1] + [None] * (len(ins) - k - 1), [None] * node.num_outputs())
        except Exception:  # noqa: BLE001 - looking for the first input that breaks the rule
            culprit = k
            break
    detail = ""
    if culprit is not None and culprit > 0:
        expected = None
        try:
            res = rule(node, ins[:culprit] + [None] * (len(ins) - culprit), [None] * node.num_outputs())
            expected = res[0][culprit] if res is not None else None
        except Exception:  # noqa: BLE001 - the diagnosis is best effort
            expected = None
        if expected is not None:
            slot = names[culprit] if culprit < len(names) else f"#{culprit}"
            detail = f"input {slot!r}: expected {_fmt(expected)}, got {_fmt(ins[culprit])}. "
    # the rule's own error class (AttrError, DTypeError from a shape rule, ...) stays, as eagerly
    cls = type(exc) if type(exc) is not MXNetError else type_of_error(what)
    return cls(f"Error in operator {node.name} ({node.op.name}): {detail}{exc}. "
               f"Inputs of the node: {_describe(node, ins)}")


def type_of_error(what: str) -> type:
    return ShapeError if what == "shape" else DTypeError


def _is_known(v: Any) -> bool:
    if v is None:
        return False
    return shape_known(v) if isinstance(v, tuple) else True


def _fmt(v: Any) -> str:
    if v is None:
        return "unknown"
    return str(np.dtype(v).name) if not isinstance(v, tuple) else str(tuple(v))


def _describe(node: Node, values: Sequence) -> str:
    """`lhs=(2, 3) from 'a', rhs=unknown from 'b'` for a node's inputs."""
    names = node.input_names()
    parts = []
    for i, v in enumerate(values):
        slot = names[i] if i < len(names) else f"#{i}"
        src = ""
        if i < len(node.inputs):
            s, j = node.inputs[i]
            src = f" from {s.output_names()[j]!r}"
        parts.append(f"{slot}={_fmt(v)}{src}")
    return ", ".join(parts) if parts else "(none)"


# -- the two rules -----------------------------------------------------------------------

def shape_rule(node: Node, ins: list, outs: list):
    """The op's infer_shape; the shared elementwise rule also unifies the outputs (both ways)."""
    fn = node.op.infer_shape
    if fn is None:
        return None
    if fn is same_shape:
        res = same_shape(node.attrs, *ins, *outs)
        return res[0][:len(ins)], res[0][len(ins):]
    if node.op.batch_from_output and ins and outs:
        ins = _batch_from_output(ins, outs[0])
    back = node.op.shape_from_outputs
    if back is not None and any(o is not None for o in outs):
        implied = back(node.attrs, list(ins), list(outs))
        if implied is not None:
            ins = [merge_shape(s, _as_shape(t)) for s, t in zip(ins, implied)]
    res = fn(node.attrs, *ins)
    if res is None:
        return (ins, [None] * len(outs)) if back is not None else None
    new_ins, new_outs = res
    return [_as_shape(s) for s in new_ins], [_as_shape(s) for s in new_outs]


def _batch_from_output(ins: list, out: Any) -> list:
    """Input 0 with its unknown first dim taken from the output's (MXNet's FullyConnected rule)."""
    data = ins[0]
    if data is None or out is None or len(data) == 0 or len(out) == 0 or data[0] != 0 or out[0] == 0:
        return ins
    return [(out[0], *tuple(data)[1:]), *ins[1:]]


def type_rule(node: Node, ins: list, outs: list):
    """The op's infer_type; a single output dtype is broadcast to every output."""
    fn = node.op.infer_type
    if fn is None:
        return None
    if fn is same_type:
        res = same_type(node.attrs, *ins, *outs)
        return None if res is None else (res[0][:len(ins)], res[0][len(ins):])
    res = fn(node.attrs, *ins)
    if res is None:
        return None
    new_ins, new_outs = res
    new_outs = list(new_outs)
    if len(new_outs) == 1 and len(outs) > 1:
        new_outs = new_outs * len(outs)
    return [None if t is None else np.dtype(t) for t in new_ins], \
           [None if t is None else np.dtype(t) for t in new_outs]


def merge_dtype(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None or a == b:
        return a
    raise DTypeError(f"dtype mismatch: {np.dtype(a).name} vs {np.dtype(b).name}")


#: the most dimensions and elements an inferred shape may have (numpy allows 64 and 2**63
#: bytes): a graph file asking for more is refused at inference, before any allocation
MAX_RANK = 64
MAX_ELEMENTS = 1 << 48


def _as_shape(s: Any) -> tuple | None:
    """A rule's shape as a tuple of ints; a negative dim (MXNet's -1, e.g. a creation op's
    `shape=(2, -1)`) is an unknown dim, written 0 in the table like every unknown dim."""
    if s is None:
        return None
    shape = tuple(max(int(d), 0) for d in s)
    if len(shape) > MAX_RANK:
        raise ShapeError(f"a shape of {len(shape)} dimensions; at most {MAX_RANK} are supported")
    size = 1
    for d in shape:
        size *= d
    if size > MAX_ELEMENTS:
        raise ShapeError(f"shape {shape} has {size} elements; at most 2**48 are supported")
    return shape


def graph_shapes(graph: IndexedGraph, known: dict[int, tuple]) -> list:
    """Every entry's shape (None when unknown) given some entries' shapes."""
    return infer_attr(graph, known, shape_rule, merge_shape, "shape")


def graph_types(graph: IndexedGraph, known: dict[int, np.dtype]) -> list:
    """Every entry's dtype (None when unknown) given some entries' dtypes (np.dtype, or what
    np.dtype accepts, such as NDArray.dtype's scalar type)."""
    known = {e: None if d is None else np.dtype(d) for e, d in known.items()}
    return infer_attr(graph, known, type_rule, merge_dtype, "type")


# -- MXNet's Symbol.infer_shape / infer_type ---------------------------------------------

def _parse_shape_attr(text: str) -> tuple | None:
    """A variable's `__shape__` string; `()` is MXNet 1.x's "unknown", a 0 or -1 dim
    (`var(shape=(-1, 20))`, in either shape mode) an unknown dim."""
    try:
        shape = tuple(0 if int(d) == -1 else int(d) for d in parse_shape(text))   # also Python 2's `8L`
    except (ValueError, TypeError):
        raise ShapeError(f"cannot parse the __shape__ attribute {text!r}; expected a tuple "
                         "such as '(2, 3)'") from None
    return shape or None


def _parse_dtype_attr(text: str) -> np.dtype:
    try:
        return FLAG_TO_DTYPE[int(text)]
    except (ValueError, KeyError):
        raise DTypeError(f"cannot parse the __dtype__ attribute {text!r}; expected one of the "
                         f"type flags {sorted(FLAG_TO_DTYPE)}") from None


def _seed_from_attrs(graph: IndexedGraph, key: str, parse: Callable) -> dict[int, Any]:
    known = {}
    for node in graph.input_nodes():
        text = node.var_attrs.get(key)
        if text is not None:
            v = parse(text)
            if v is not None:
                known[graph.entry_id((node, 0))] = v
    return known


def _seed_from_call(graph: IndexedGraph, args: tuple, kwargs: dict, convert: Callable,
                    what: str) -> dict[int, Any]:
    """Entry id -> value for the values a caller gave (positionally or by name)."""
    if args and kwargs:
        raise ValueError(f"Can only specify known argument {what}s either by positional or kwargs way.")
    known: dict[int, Any] = {}
    if args:
        arguments = graph.arguments()
        if len(args) > len(arguments):
            raise ValueError(f"infer_{what}: got {len(args)} positional {what}s but the symbol has "
                             f"only {len(arguments)} arguments {[n.name for n in arguments]}")
        for i, (node, v) in enumerate(zip(arguments, args)):
            if v is not None:
                known[graph.entry_id((node, 0))] = convert(v, f"argument {i}")
        return known
    inputs = graph.input_nodes()
    for name, v in kwargs.items():
        hits = [n for n in inputs if n.name == name]
        if not hits:
            cands = "\n".join(f"\t[{i}]{n.name}" for i, n in enumerate(inputs))
            raise MXNetError(f"infer_{what}: keyword argument name {name!r} not found.\n"
                             f"Candidate arguments:\n{cands}")
        if v is not None:
            for node in hits:
                known[graph.entry_id((node, 0))] = convert(v, repr(name))
    return known


def _np_shape() -> bool:
    from hybridgraph.util import is_np_shape  # noqa: PLC0415 - symbol sits above nd
    return is_np_shape()


def _user_shape(v: Any, where: str) -> tuple | None:
    """A caller's shape: 0 marks an unknown dim, `()` an unknown shape; under NumPy shape
    semantics (`mx.np_shape()`) -1 marks the unknown dim and `()` is a scalar's shape."""
    if not isinstance(v, (tuple, list)):
        raise TypeError(f"Arguments need to be shapes (tuple), but {where} is {type(v)}.")
    if _np_shape():
        return tuple(0 if int(d) == -1 else int(d) for d in v)
    return tuple(int(d) for d in v) or None


def _user_dtype(v: Any, where: str) -> np.dtype:
    try:
        return as_dtype(v)
    except MXNetError:
        raise TypeError(f"Arguments need to be dtypes, but {where} is {v!r}.") from None


def _solve(sym, args, kwargs, what: str) -> tuple[IndexedGraph, list]:
    graph = sym._graph()
    if what == "shape":
        known = _seed_from_attrs(graph, "__shape__", _parse_shape_attr)
        known.update(_seed_from_call(graph, args, kwargs, _user_shape, what))
        return graph, graph_shapes(graph, known)
    known = _seed_from_attrs(graph, "__dtype__", _parse_dtype_attr)
    known.update(_seed_from_call(graph, args, kwargs, _user_dtype, what))
    return graph, graph_types(graph, known)


def _collect(sym, graph: IndexedGraph, values: list) -> tuple[list, list, list]:
    def of(nodes):
        return [values[graph.entry_id((n, 0))] for n in nodes]
    outs = [values[graph.entry_id(e)] for e in sym._outputs]
    return of(graph.arguments()), outs, of(graph.auxiliary_states())


def _complete(triple: tuple[list, list, list], known: Callable[[Any], bool]) -> bool:
    return all(known(v) for part in triple for v in part)


def _warn_unknown(names: list[str], values: list, fmt: Callable, what: str) -> None:
    unknowns = []
    for name, v in zip(names, values):
        if not (v is not None and (what == "type" or shape_known(v))):
            if len(unknowns) >= 10:
                unknowns.append("...")
                break
            unknowns.append(f"{name}: {fmt(v)}")
    head = ("Cannot decide shape for the following arguments (0s in shape means unknown "
            "dimensions). " if what == "shape" else "Cannot decide type for the following arguments. ")
    warnings.warn(head + "Consider providing them as input:\n\t" + "\n\t".join(unknowns), stacklevel=3)


def _shape_out(v: tuple | None, np_shape: bool = False) -> tuple | None:
    """MXNet's form of an inferred shape: `()` unknown and 0 an unknown dim, or under NumPy
    shape semantics None and -1 (where a 0 dim is a real empty axis; inference here has one
    marker for both, so an empty axis reads back as -1 in that mode)."""
    if np_shape:
        return None if v is None else tuple(-1 if d == 0 else d for d in v)
    return () if v is None else tuple(v)


def _type_out(v: np.dtype | None):
    return None if v is None else np.dtype(v).type


def infer_shape_partial(sym, *args: Any, **kwargs: Any) -> tuple[list, list, list]:
    """Shapes of (arguments, outputs, aux states); unknown shapes are `()`, unknown dims 0
    (None and -1 under `mx.np_shape()`)."""
    graph, values = _solve(sym, args, kwargs, "shape")
    np_shape = _np_shape()
    return tuple([_shape_out(v, np_shape) for v in part] for part in _collect(sym, graph, values))


def infer_shape(sym, *args: Any, **kwargs: Any) -> tuple:
    """Shapes of (arguments, outputs, aux states) from some known shapes (MXNet's infer_shape).

    Positional shapes follow `list_arguments()` order; keywords name any input.
    Returns `(None, None, None)` with a warning when the shapes are not all decided.
    """
    graph, values = _solve(sym, args, kwargs, "shape")
    triple = _collect(sym, graph, values)
    if not _complete(triple, shape_known):
        _warn_unknown(sym.list_arguments(), triple[0], lambda v: str(_shape_out(v)), "shape")
        return None, None, None
    return tuple([tuple(v) for v in part] for part in triple)


def infer_type_partial(sym, *args: Any, **kwargs: Any) -> tuple[list, list, list]:
    """Dtypes (numpy type objects, None when unknown) of arguments, outputs and aux states."""
    graph, values = _solve(sym, args, kwargs, "type")
    return tuple([_type_out(v) for v in part] for part in _collect(sym, graph, values))


def infer_type(sym, *args: Any, **kwargs: Any) -> tuple:
    """Dtypes of (arguments, outputs, aux states) as numpy types (`numpy.float32`), MXNet's
    infer_type; `(None, None, None)` with a warning when some are undecided."""
    graph, values = _solve(sym, args, kwargs, "type")
    triple = _collect(sym, graph, values)
    if not _complete(triple, lambda v: v is not None):
        _warn_unknown(sym.list_arguments(), triple[0], lambda v: str(_type_out(v)), "type")
        return None, None, None
    return tuple([_type_out(v) for v in part] for part in triple)


# -- creation ops with unknown dims (Gluon RNN begin states `_zeros(shape=(L, 0, H))`) ------

def is_open_creation(node: Node) -> bool:
    """An input-less operator (`_zeros`, `_ones`, `_full`) whose `shape` attribute has a 0
    or -1 (unknown) dim that only shape inference over the graph can fill in, or one whose
    `OpDef.open_shape` says its attributes leave the shape open (`arange(infer_range=True)`)."""
    if node.op is None or node.inputs or node.attrs is None:
        return False
    if node.op.open_shape is not None:
        return node.op.open_shape[0](node.attrs)
    shape = node.attrs.get("shape")
    return isinstance(shape, tuple) and any(d <= 0 for d in shape)


def resolved_creation_attrs(node: Node, shape: tuple):
    """The attributes with which an open creation node produces the inferred `shape`."""
    if node.op.open_shape is not None:
        return node.op.open_shape[1](node.attrs, tuple(shape))
    return node.attrs.replace(node.op.schema, shape=tuple(shape))


def creation_shapes(graph: IndexedGraph, known: dict[int, tuple]) -> dict[int, tuple]:
    """id(node) -> inferred concrete shape for every open creation node of `graph` whose shape
    the rest of the graph decides (`known`: entry id -> shape of the inputs)."""
    nodes = [n for n in graph.nodes if is_open_creation(n)]
    if not nodes:
        return {}
    values = graph_shapes(graph, known)
    out = {}
    for n in nodes:
        shape = values[graph.entry_id((n, 0))]
        if shape is not None and shape_known(shape):
            out[id(n)] = tuple(shape)
    return out
