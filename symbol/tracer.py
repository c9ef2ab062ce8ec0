"""Tracers: Symbols that carry an abstract value (shape, dtype) while a
HybridBlock is being traced, and behave like NDArrays.

Every operator applied inside an active trace runs its registry shape and
type rules on the inputs' abstract values (JAX's abstract evaluation), so
user code can read `x.shape`, slice, and mix shapes with broadcasting, exactly
as it does eagerly. Turning a traced value into Python data (`bool`, `float`,
`asnumpy`) raises `TraceError`, naming the user's file and line.
"""
from __future__ import annotations

import contextvars
import os
import sys
import traceback
from typing import Any

import numpy as np

from hybridgraph.nd.arith import OPERATOR_RULES
from hybridgraph.nd.errors import DTypeError, MXNetError, NotImplementedForSymbol
from hybridgraph.nd.kernel import rule_error
from hybridgraph.nd.registry import merge_shape, shape_known

from .symbol import Symbol

_PACKAGE_DIRS = tuple(os.path.dirname(os.path.dirname(os.path.abspath(m.__file__))) + os.sep + d + os.sep
                      for m in (sys.modules[__name__],) for d in ("nd", "symbol", "hybrid", "hybridgraph"))


class TraceState:
    """What one trace knows: abstract values by entry, and what the user read."""

    def __init__(self, block_path: str = ""):
        self.avals: dict[tuple[int, int], tuple] = {}   # (id(node), idx) -> (shape | None, dtype | None)
        self.shape_read = False
        self.block_path = [block_path] if block_path else []
        self.block_paths: dict[int, list[str]] = {}    # id(block) -> structural path (`net.features.3`)
        self.nodes: list = []      # keeps nodes alive while their ids are table keys
        self.concrete_inputs: set[int] = set()   # id(node) of inputs whose shapes are real (0 = empty dim)

    def enter_block(self, block: Any) -> list[str]:
        """Make `block` the current one for error messages; returns the path to restore."""
        saved = self.block_path
        self.block_path = self.block_paths.get(id(block), saved)
        return saved

    def aval(self, entry) -> tuple:
        return self.avals.get((id(entry[0]), entry[1]), (None, None))

    def set_aval(self, entry, shape, dtype) -> None:
        self.nodes.append(entry[0])
        old_shape, old_dtype = self.aval(entry)
        self.avals[(id(entry[0]), entry[1])] = (merge_shape(old_shape, shape) if shape is not None else old_shape,
                                                 np.dtype(dtype) if dtype is not None else old_dtype)


_STATE: contextvars.ContextVar[TraceState | None] = contextvars.ContextVar("hybridgraph_trace", default=None)


def current_trace() -> TraceState | None:
    return _STATE.get()


class trace_scope:  # noqa: N801 - used like a function: `with trace_scope(state):`
    def __init__(self, state: TraceState):
        self.state = state
        self._token = None

    def __enter__(self) -> TraceState:
        self._token = _STATE.set(self.state)
        return self.state

    def __exit__(self, *exc) -> None:
        _STATE.reset(self._token)


def user_frame() -> str:
    """`file:line` of the innermost stack frame outside hybridgraph's own packages."""
    for frame in reversed(traceback.extract_stack()):
        path = os.path.abspath(frame.filename)
        if not path.startswith(_PACKAGE_DIRS) and "/contextlib.py" not in path:
            return f"{frame.filename}:{frame.lineno}"
    return "<unknown>"


class TraceError(NotImplementedForSymbol):
    """Python control flow or data access on a traced value inside a hybridized block."""

    def __init__(self, what: str, tracer: "Tracer | None" = None):
        state = current_trace()
        where = user_frame()
        block = ".".join(state.block_path) if state and state.block_path else "a hybridized block"
        origin = f" The value comes from {tracer._origin()}." if tracer is not None else ""
        self.message = (
            f"{where}: {what} needs the concrete value of a traced array inside {block}, but "
            f"hybridize() traces the code once with abstract values (shape and dtype only).{origin} "
            "Fix: express the choice with F.where(cond, x, y) (cond shaped like x) or "
            "F.contrib.cond(pred, lambda: x, lambda: y) (pred of size 1), compute it "
            "outside the hybridized block, or call hybridize(False) on this block.")
        Exception.__init__(self, self.message)
        self.function, self.alias, self.args_ = what, None, []

    def __str__(self) -> str:
        return self.message


def _raise(what: str):
    def method(self, *args, **kwargs):
        raise TraceError(what, self)
    method.__name__ = what
    return method


class Tracer(Symbol):
    """A Symbol with an abstract value, standing in for an NDArray during tracing."""

    __slots__ = ()

    # -- abstract value ----------------------------------------------------------
    def _aval(self) -> tuple:
        state = current_trace()
        if state is None or len(self._outputs) != 1:
            return (None, None)
        return state.aval(self._outputs[0])

    @property
    def shape(self) -> tuple:
        state = current_trace()
        if state is not None:
            state.shape_read = True
        shape = self._aval()[0]
        if shape is None or (0 in shape and id(self._outputs[0][0]) not in state.concrete_inputs):
            raise TraceError(f"reading .shape of {self.name!r} whose shape is not known at trace time "
                             f"({'unknown' if shape is None else tuple(shape)}; 0 = unknown dimension)", self)
        return tuple(shape)

    @property
    def dtype(self) -> type:
        """The numpy scalar type, as `NDArray.dtype` gives it (eager and traced code agree)."""
        return np.dtype(self._aval()[1] or np.float32).type

    @property
    def ndim(self) -> int:
        shape = self._aval()[0]
        if shape is None:
            raise TraceError(f"reading .ndim of {self.name!r} whose shape is not known yet", self)
        return len(shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def context(self):
        from hybridgraph.nd.backend import current_context
        return current_context()

    ctx = context

    @property
    def T(self) -> "Tracer":  # noqa: N802
        return self.transpose()

    def _origin(self) -> str:
        node = self._outputs[0][0] if self._outputs else None
        if node is None:
            return "an unknown operation"
        if node.op is None:
            return f"input {node.name!r}"
        return f"operator {node.op.name} ({node.name})"

    def __repr__(self) -> str:
        shape, dtype = self._aval()
        return f"<Tracer {self.name} shape={shape} dtype={dtype}>"

    # -- NDArray-like behaviour ------------------------------------------------------
    def __len__(self) -> int:
        if len(self._outputs) > 1:
            return len(self._outputs)
        return self.shape[0]

    def __iter__(self):
        if len(self._outputs) > 1:
            return (Tracer([e]) for e in self._outputs)
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, key):
        if len(self._outputs) > 1 or isinstance(key, str):
            return Symbol.__getitem__(self, key)
        from hybridgraph.nd.indexing import getitem
        return getitem(self, key)

    def __setitem__(self, key, value):
        raise TraceError("assigning into a traced array (x[...] = v)", self)

    # NDArray's `inplace=` (a view of the same memory) means nothing in a graph: the same op
    def squeeze(self, axis: Any = None, inplace: bool = False, **kwargs: Any) -> "Tracer":
        return Symbol.squeeze(self, axis=axis, **kwargs)

    def expand_dims(self, axis: int, inplace: bool = False, **kwargs: Any) -> "Tracer":
        return Symbol.expand_dims(self, axis=axis, **kwargs)

    def astype(self, dtype: Any, copy: bool = True) -> "Tracer":
        return Symbol.astype(self, dtype)

    def copy(self) -> "Tracer":
        from hybridgraph.nd.registry import get_op
        from .symbol import create
        return create(get_op("_copy"), [self], {})

    def detach(self) -> "Tracer":
        from hybridgraph.nd.registry import get_op
        from .symbol import create
        return create(get_op("BlockGrad"), [self], {})

    def as_in_context(self, ctx) -> "Tracer":
        return self

    as_in_ctx = as_in_context

    def wait_to_read(self) -> None:
        return None

    __bool__ = _raise("bool() / an if-statement")
    __float__ = _raise("float()")
    __int__ = _raise("int()")
    __index__ = _raise("using a traced value as an index")
    asnumpy = _raise("asnumpy()")
    asscalar = _raise("asscalar()")
    item = _raise("item()")
    tolist = _raise("tolist()")
    __array__ = _raise("numpy conversion (np.asarray)")
    attach_grad = _raise("attach_grad()")
    # in-place operators (`+=` ... `%=`, `**=`): generated below the class from nd/arith.py's
    # rules; all raise, since eager NDArrays mutate and a trace cannot

    # NDArray arithmetic: same shapes -> MXNet's elementwise op, else broadcast op
    def _binary(self, other: Any, tensor_op: str, scalar_op: str | None, reverse: bool = False):
        from hybridgraph.util import is_np_array
        if is_np_array():   # numpy mode: `x + y` traces MXNet's np ops (`_npi_add`, ...)
            from hybridgraph.nd.numpy.multiarray import traced_binary
            return traced_binary(self, other, tensor_op, reverse)
        return _legacy_binary(self, other, tensor_op, scalar_op, reverse)


def _legacy_binary(self: Tracer, other: Any, tensor_op: str, scalar_op: str | None, reverse: bool):
    """NDArray arithmetic traced: same shapes -> MXNet's elementwise op, else the broadcast op."""
    if isinstance(other, Symbol) and tensor_op in _BROADCAST_OF:
        lhs, rhs = (other, self) if reverse else (self, other)
        ls, rs = _shape_of(lhs), _shape_of(rhs)
        if ls is None or rs is None or tuple(ls) != tuple(rs):
            tensor_op = _BROADCAST_OF[tensor_op]
    return Symbol._binary(self, other, tensor_op, scalar_op, reverse)


class LegacyTracer(Tracer):
    """A traced value seen as a classic NDArray in numpy mode (`x.as_nd_ndarray()`, MXNet's classic
    Symbol): its arithmetic and methods trace the legacy operators, values computed from it stay
    classic, and a numpy-mode block may not return it (MXNet's TypeError, tracing.py)."""

    __slots__ = ()

    def _binary(self, other: Any, tensor_op: str, scalar_op: str | None, reverse: bool = False):
        return _legacy_binary(self, other, tensor_op, scalar_op, reverse)

    def as_np_ndarray(self) -> Tracer:
        return Tracer(self._outputs)

    def as_nd_ndarray(self) -> "LegacyTracer":
        return self


def _shape_of(s: Symbol):
    state = current_trace()
    if state is None or len(s._outputs) != 1:
        return None
    return state.aval(s._outputs[0])[0]


# Symbol operator op -> the broadcasting op an NDArray uses (shapes differ), from the one table
_BROADCAST_OF = {r.sym_tensor: r.broadcast for r in OPERATOR_RULES}

for _rule in OPERATOR_RULES:
    if _rule.augmented:
        setattr(Tracer, f"__i{_rule.dunder}__", _raise(f"in-place {_rule.augmented} on a traced array"))
Tracer.__idiv__ = Tracer.__itruediv__


def _dtype_message(op, attrs, entries: list, out_entries: list, dtypes: list, exc: Exception) -> str:
    """A dtype error of a traced op, naming the node, each input (its slot and the
    parameter or input variable feeding it) and the fix."""
    node = out_entries[0][0].name if out_entries else op.name
    try:
        slots = list(op.input_names(attrs))
    except (MXNetError, ValueError, TypeError, KeyError, IndexError):
        slots = []
    listed = ", ".join(f"{slots[i] if i < len(slots) else i} from {e[0].name!r}: {d}"
                       for i, (e, d) in enumerate(zip(entries, dtypes)) if d is not None)
    return (f"{exc}\n  in node {node!r} (operator {op.name}) at {user_frame()}; its inputs are {listed}. "
            "A block's inputs and parameters must share one dtype: cast the input "
            "(x.astype(...)) or the block's parameters (block.cast(dtype))")


def abstract_eval(op, attrs, entries: list, out_entries: list) -> None:
    """Run the op's shape/type rules on the inputs' abstract values; record results
    (refined input shapes too: deferred-init parameters learn their shapes here)."""
    state = current_trace()
    if state is None:
        return
    in_avals = [state.aval(e) for e in entries]
    shapes = [a[0] for a in in_avals]
    dtypes = [a[1] for a in in_avals]
    if all(d is not None for d in dtypes) and all(map(shape_known, shapes)):
        verdict = rule_error(op, attrs, shapes, dtypes)   # what the eager call raises (nd.kernel)
        if verdict is not None:
            if issubclass(verdict[0], DTypeError):   # name the node, each input's source and the fix
                raise verdict[0](_dtype_message(op, attrs, entries, out_entries, dtypes, verdict[1]))
            raise verdict[0](f"{verdict[1]}\n  at {user_frame()} (tracing a hybridized block)")
    if op.infer_shape is not None:
        try:
            res = op.infer_shape(attrs, *shapes)
        except Exception as exc:  # noqa: BLE001 - re-raised with the user's location
            from hybridgraph.nd.errors import ShapeError
            raise ShapeError(f"{user_frame()}: {exc}") from exc
        if res is not None:
            ins, outs = res
            for e, s in zip(entries, ins):
                if s is not None:
                    state.set_aval(e, tuple(s), None)
            for e, s in zip(out_entries, outs):
                state.set_aval(e, None if s is None else tuple(s), None)
    try:
        tres = op.infer_type(attrs, *dtypes) if any(d is not None for d in dtypes) or not entries else None
    except DTypeError as exc:
        raise DTypeError(_dtype_message(op, attrs, entries, out_entries, dtypes, exc)) from exc
    if tres is not None:
        ins, outs = tres
        if len(outs) == 1 and len(out_entries) > 1:
            outs = list(outs) * len(out_entries)
        for e, t in zip(entries, ins):
            if t is not None:
                state.set_aval(e, None, np.dtype(t))
        for e, t in zip(out_entries, outs):
            if t is not None:
                state.set_aval(e, None, np.dtype(t))


def _np_mode_method(name: str, legacy):
    """A traced array's method that follows `mx.np.ndarray` in numpy mode (`x.dot(w)`,
    `x.sum()`, `x.reshape(...)` record `_np_dot`, `_np_sum`, `_np_reshape` as MXNet's np
    symbols do) and the legacy Symbol method otherwise."""
    def method(self, *args, **kwargs):
        from hybridgraph.util import is_np_array
        if is_np_array():
            from hybridgraph.nd.numpy.multiarray import ndarray
            return getattr(ndarray, name)(self, *args, **kwargs)
        if legacy is None:
            raise AttributeError(f"'Tracer' object has no attribute {name!r} outside numpy mode")
        return legacy(self, *args, **kwargs)
    method.__name__ = name
    return method


for _name in ("dot", "sum", "mean", "prod", "max", "min", "argmax", "argmin", "reshape", "transpose", "flatten",
              "squeeze", "expand_dims", "swapaxes", "astype", "clip", "repeat", "tile", "var", "std", "cumsum"):
    _legacy = getattr(Tracer, _name, None)
    setattr(Tracer, _name, _np_mode_method(_name, _legacy))
    if _legacy is not None:   # a classic value keeps the Symbol method in numpy mode too
        setattr(LegacyTracer, _name, _legacy)
Tracer.as_np_ndarray = lambda self: self   # one graph value either way; only its class differs


def _as_nd_ndarray(self: Tracer) -> Tracer:
    from hybridgraph.util import is_np_array
    return LegacyTracer(self._outputs) if is_np_array() else self


Tracer.as_nd_ndarray = _as_nd_ndarray
