"""Calling operators: argument binding, the eager path, and the symbolic seam.

`invoke` is the single entry for every operator call from the `nd` front end
and NDArray methods. Inputs that are symbolic (Symbols, tracers) are routed to
the handler the symbol package installs (`set_symbolic_invoke`), so `nd` never
imports `symbol`. Front-end functions are generated from the registry with the
attribute schema as their signature and docstring.
"""
from __future__ import annotations

import functools
import inspect
import math
import time
from itertools import repeat
from operator import attrgetter, is_, is_not
from typing import Any
from collections.abc import Callable

import numpy as np

from . import autograd, profiling
from .attrs import Attrs
from .backend import Context, current_context
from .errors import AttrError, AutogradError, MXNetError
from .registry import ZERO_GRAD, OpDef, all_names, call_gradient, get_op
from .kernel import input_context, run_kernel

_symbolic_invoke: Callable | None = None

# per-array attribute reads and tests as C functions (the eager hot path maps them over inputs)
_AUTOGRAD_ENTRY = autograd.live_entry  # None once a backward freed the graph (a constant then)
_BACKEND_ARRAY = attrgetter("_data")
_CONTEXT = attrgetter("_ctx")
_IS_SYMBOLIC = attrgetter("_is_symbolic")
_IS_NONE = functools.partial(is_, None)   # not `x == None`: NDArray compares elementwise
_IS_NOT_NONE = functools.partial(is_not, None)


def set_symbolic_invoke(fn: Callable) -> None:
    """Install the handler that turns an op call on symbolic inputs into a graph node.

    Called with `(op, inputs, given_attrs, name, extra_kwargs)`.
    """
    global _symbolic_invoke
    _symbolic_invoke = fn


def is_symbolic(x: Any) -> bool:
    return getattr(x, "_is_symbolic", False)


def is_array_like(x: Any) -> bool:
    """NDArrays, Symbols and tracers: things that fill an operator's input slot."""
    return hasattr(x, "_is_symbolic")


# -- argument binding -------------------------------------------------------

def bind_call(op: OpDef, args: tuple, kwargs: dict) -> tuple[list, dict]:
    """Split a front-end call into (inputs, given attributes).

    Positional arguments fill the input slots first (while they are arrays),
    then the attributes in schema order, as MXNet's generated functions do.
    Missing inputs are None.
    """
    schema_attrs = op.schema.attrs
    names = op.static_inputs
    if (names is not None and not op.key_var_num_args and len(args) <= len(names)
            and all(map(hasattr, args, repeat("_is_symbolic")))):   # is_array_like, in C
        for k in kwargs:
            if k not in schema_attrs:
                break
        else:   # the common call: arrays, then attributes by keyword
            return list(args) + [None] * (len(names) - len(args)), kwargs
    given: dict = {}
    in_kw: dict = {}
    for k, v in kwargs.items():
        if k in schema_attrs:
            given[k] = v
        elif v is None or is_array_like(v) or (isinstance(v, (list, tuple)) and v
                                               and all(is_array_like(e) for e in v)):
            in_kw[k] = v
        else:
            given[k] = v
    if op.key_var_num_args:
        data = list(args)
        for k in list(in_kw):
            v = in_kw.pop(k)
            data.extend(v if isinstance(v, (list, tuple)) else [v])
        given.setdefault(op.key_var_num_args, len(data))
        for k, v in in_kw.items():
            given[k] = v
        return data, given
    if names is None:
        names = op.input_names(op.schema.parse_lenient(given))
    n_given = len(given)
    bound = dict(in_kw)
    slot = 0
    attr_order = [k for k in op.schema.attrs if k not in given]
    slots = op.arguments or names   # positional arguments fill MXNet's declared order
    for a in args:
        while slot < len(slots) and slots[slot] in bound:
            slot += 1
        if a is None:  # MXNet drops positional None inputs (`FullyConnected(x, w, None, no_bias=True)`)
            slot += 1
            continue
        if slot < len(slots) and is_array_like(a):
            bound[slots[slot]] = a
            slot += 1
        elif slot < len(slots) and isinstance(a, (list, tuple)) and any(map(is_array_like, a)):
            raise AttrError(f"operator {op.name}: input {slots[slot]!r} got a {type(a).__name__} of {len(a)} "
                            "items; expected one array. Pass the items as separate inputs, or join them "
                            "into one array first (stack / concat)")
        else:
            if not attr_order:
                raise AttrError(f"operator {op.name}: too many positional arguments ({len(args)})")
            given[attr_order.pop(0)] = a
    if len(given) != n_given and op.static_inputs is None:  # positional attributes may change the inputs
        names = op.input_names(op.schema.parse_lenient(given))
    if op.arguments and not set(bound) - set(op.arguments):
        # MXNet's generated functions pass the given arrays in declared order, Nones dropped,
        # to the inputs the attributes ask for (CTCLoss(data, label, None, label_lengths))
        arrays = [bound[n] for n in op.arguments if bound.get(n) is not None]
        if len(arrays) <= len(names):
            return arrays + [None] * (len(names) - len(arrays)), given
    extra = {k for k, v in bound.items() if v is not None} - set(names)   # MXNet skips None inputs
    if extra:
        raise AttrError(f"operator {op.name}: unexpected input(s) {sorted(extra)}; "
                        f"its inputs are {list(names)}")
    return [bound.get(n) for n in names], given


# -- the eager path ----------------------------------------------------------

def _op_gradient(op: OpDef, attrs: Attrs, wanted: tuple, inputs, outputs, ograds):
    """Run a registry gradient rule eagerly (the tape's grad_fn for registry ops)."""
    ops_namespace = autograd._late().F
    if op.gradient is None:
        raise AutogradError(f"operator {op.name} is not differentiable: it has no gradient "
                            "rule. Compute it outside autograd.record() or use BlockGrad.")
    if op.gradient == ZERO_GRAD:
        return [ops_namespace.zeros_like(x) for x in inputs]
    return call_gradient(op, ops_namespace, attrs, inputs, outputs, ograds, wanted)


def invoke(op: OpDef, inputs: list, given: dict | Attrs, out: Any = None, name: str | None = None,
           extra: dict | None = None):
    """Call an operator on NDArrays (or route symbolic inputs to the graph builder)."""
    missing = any(map(_IS_NONE, inputs))      # allowed when symbolic: the graph makes variables
    present = filter(_IS_NOT_NONE, inputs) if missing else inputs
    if any(map(_IS_SYMBOLIC, present)):
        if _symbolic_invoke is None:
            raise MXNetError("symbolic inputs need the symbol package (import symbol)")
        return _symbolic_invoke(op, inputs, given, name, extra or {})
    attrs = given if isinstance(given, Attrs) else parse_cached(op, given)
    if missing:
        i = [x is None for x in inputs].index(True)
        raise AttrError(f"operator {op.name}: input {op.input_names(attrs)[i]!r} is missing; "
                        f"expected inputs {list(op.input_names(attrs))}")
    return run_eager(op, attrs, inputs, out)


_NDARRAY = None


def _ndarray_class():
    """NDArray, imported on first use (a function-level import costs ~1 us per eager call)."""
    global _NDARRAY
    from .ndarray import NDArray  # noqa: PLC0415 - cycle
    _NDARRAY = NDArray
    return NDArray


def run_eager(op: OpDef, attrs: Attrs, inputs: list, out: Any = None):
    """Execute the kernel on concrete NDArrays (nd.kernel.run_kernel) and record it when needed."""
    NDArray = _NDARRAY or _ndarray_class()  # noqa: N806 - the class, imported late (cycle)
    if inputs:
        ctx = inputs[0]._ctx   # input_context, its common case spelled out (a call costs ~0.1 us)
        if len(inputs) > 1 and not all(map(is_, map(_CONTEXT, inputs), repeat(ctx))):
            ctx = input_context(op, inputs)
    else:
        ctx = attrs.get("ctx") or current_context()
        if not isinstance(ctx, Context):
            ctx = Context(ctx)
    rec, train = autograd._STATE.get()
    if out is not None:
        for t in out if isinstance(out, (list, tuple)) else (out,):
            if t._ag is not None or t._ver is not None:
                autograd.check_inplace(t, f"out= of {op.name}")
            if rec and any(x is t for x in inputs) and any(map(_AUTOGRAD_ENTRY, inputs)):
                # MXNet 1.9.1's RecordOp makes every input a graph entry, then refuses an
                # output that is one (x += y, op(x, y, out=x) with y in the graph)
                raise autograd.AutogradError(
                    "Inplace operations (+=, -=, x[:]=, etc) are not supported when recording "
                    f"with autograd: {op.name} writes (out=) into its own input of shape {t.shape} "
                    "while another input is in the graph. Write into a new array instead "
                    "(x = x + y), or outside autograd.record().")
    arrays = list(map(_BACKEND_ARRAY, inputs))
    t0 = profiling.ACTIVE and time.perf_counter_ns()
    if out is None:
        res = run_kernel(op, attrs, arrays, ctx.xp, train)
    else:
        targets = out if isinstance(out, (list, tuple)) else [out]
        res = run_kernel(op, attrs, arrays, ctx.xp, train, out=list(map(_BACKEND_ARRAY, targets)),
                         direct=not rec and _inplace_out(op, attrs, inputs, out))
    if t0:
        profiling.record(op.name, "imperative", t0, time.perf_counter_ns())
    nvis = op.static_visible
    if nvis is None:
        nvis = op.num_visible_outputs(attrs)
    # results have the class of the first input: np arrays in, np arrays out (mx.np front end)
    wrap = type(inputs[0])._wrap if inputs else NDArray._wrap
    outs = [wrap(r, ctx) for r in res[:nvis]]
    if rec and any(map(_AUTOGRAD_ENTRY, inputs)):   # an entry (Leaf or tape position) is never false
        wanted = tuple(i for i, x in enumerate(inputs) if x._ag is not None)
        node = autograd.TapeNode(functools.partial(_op_gradient, op, attrs, wanted), inputs, res,
                                 op.name, loss=op.loss)
        for i, o in enumerate(outs):
            o._ag = (node, i)
    if out is not None:
        for t, o in zip(targets, outs):
            if o._ag is not None:  # an unrecorded write keeps `t` a variable (MXNet)
                t._ag = o._ag
        return out
    return outs[0] if nvis == 1 else outs


def _inplace_out(op: OpDef, attrs: Attrs, inputs: list, out: Any) -> bool:
    """Whether a `writes_out` kernel may fill `out` directly: `out` is the input its single
    output may overwrite (an `inplace` pair), so shape and dtype are the input's."""
    if not op.writes_out or not op.inplace or isinstance(out, (list, tuple)):
        return False
    for i, o in op.inplace:
        if o == 0 and i < len(inputs) and inputs[i] is out and op.num_outputs(attrs) == 1:
            return True
    return False


_ATTR_CACHE: dict = {}
_FLOAT_TYPES = (float, np.floating)
# attribute value types whose (value, type) pair is a faithful cache key (a float zero aside)
_PLAIN = frozenset({int, bool, str, float, type(None)})
# element types whose (value, type) pairs are faithful with no sign of zero to keep
_EXACT = frozenset({int, bool, str, type(None)})
# element types of tuples whose (value, type, sign) triples are faithful, in C passes
_FLOATS = frozenset({float})


def typed_key(v: Any) -> Any:
    """A cache key for an attribute value that keeps what `==` forgets: the type (`1`,
    `1.0`, `True` and `np.float32(1)` are equal, yet may parse differently) and the sign of
    zero (`-0.0 == 0.0`, but `a * -0.0` differs from `a * 0.0`), also inside tuples."""
    t = type(v)
    if t is tuple or t is list:
        types = tuple(map(type, v))
        if _EXACT.issuperset(types):   # a shape: ints (no float zero to tell apart), one C pass
            return t, tuple(v), types
        if _FLOATS.issuperset(types):   # python floats (an optimizer's lrs, wds): the signs keep
            return t, tuple(v), types, tuple(map(math.copysign, repeat(1.0, len(v)), v))  # -0.0 apart
        return t, tuple(map(typed_key, v))
    if isinstance(v, _FLOAT_TYPES) and v == 0:
        return t, v, math.copysign(1.0, v)
    return t, v


def parse_cached(op: OpDef, given: dict) -> Attrs:
    """Parse attributes, memoised for hashable argument sets (the eager hot path)."""
    if not given:
        return op.schema.parse(given)
    try:
        vals = given.values()
        types = tuple(map(type, vals))
        if _PLAIN.issuperset(types) and (float not in types or 0.0 not in vals):
            key = (op.name, tuple(given.items()), types)     # the common case, cheap
        else:   # containers, numpy scalars, a float zero: see typed_key
            key = (op.name, tuple([(k, typed_key(v)) for k, v in given.items()]))
        hit = _ATTR_CACHE.get(key)
    except TypeError:
        return op.schema.parse(given)
    if hit is None:
        hit = op.schema.parse(given)
        if len(_ATTR_CACHE) > 4096:
            _ATTR_CACHE.clear()
        _ATTR_CACHE[key] = hit
    return hit


# -- generated front-end functions ------------------------------------------

def op_signature(op: OpDef, extra: tuple[str, ...]) -> inspect.Signature:
    """The Python signature of a generated function: inputs, attributes, extras."""
    P = inspect.Parameter
    params = []
    if op.key_var_num_args:
        params.append(P("data", P.VAR_POSITIONAL))
    else:
        try:
            names = op.arguments or op.input_names(op.schema.parse_lenient({}))
        except Exception:  # noqa: BLE001 - input lists that need attrs still get a signature
            names = ()
        params += [P(n, P.POSITIONAL_OR_KEYWORD, default=None) for n in names]
    kind = P.KEYWORD_ONLY if op.key_var_num_args else P.POSITIONAL_OR_KEYWORD
    for k, decl in op.schema.attrs.items():
        default = P.empty if decl.required else decl.default
        params.append(P(k, kind if default is not P.empty or kind is P.KEYWORD_ONLY else P.KEYWORD_ONLY,
                        default=default))
    params = _fix_order(params)
    params += [P(e, P.KEYWORD_ONLY, default=None) for e in extra]
    params.append(P("kwargs", P.VAR_KEYWORD))
    return inspect.Signature(params)


def _fix_order(params):
    """Keep a valid signature: once a parameter is keyword-only, all after it are too."""
    P = inspect.Parameter
    out, kw_only = [], False
    for p in params:
        if p.kind is P.VAR_POSITIONAL:
            out.append(p)
            kw_only = True
            continue
        if kw_only or p.kind is P.KEYWORD_ONLY:
            kw_only = True
            p = p.replace(kind=P.KEYWORD_ONLY)
        out.append(p)
    return out


def op_docstring(op: OpDef) -> str:
    """A numpy-style docstring from the declaration."""
    lines = [(op.doc or f"The {op.name} operator.").strip(), "", "Parameters", "----------"]
    try:
        names = op.input_names(op.schema.parse_lenient({}))
    except Exception:  # noqa: BLE001
        names = ()
    for n in names:
        lines.append(f"{n} : NDArray or Symbol")
        lines.append("    Input" + (" (auxiliary state)" if n in op.aux else "") + ".")
    for k, decl in op.schema.attrs.items():
        req = "required" if decl.required else f"optional, default={decl.default!r}"
        choices = f" {{{', '.join(map(repr, decl.choices))}}}" if decl.choices else ""
        lines.append(f"{k} : {decl.type_name}{choices}, {req}")
        if decl.doc:
            lines.append(f"    {decl.doc}")
    if op.aliases:
        lines += ["", "Also registered as: " + ", ".join(op.aliases) + "."]
    return "\n".join(lines)


def make_nd_function(op: OpDef, fname: str | None = None) -> Callable:
    """The eager front-end function of an operator (`nd.FullyConnected`)."""

    def fn(*args, out=None, name=None, **kwargs):
        inputs, given = bind_call(op, args, kwargs)
        return invoke(op, inputs, given, out=out, name=name)

    fn.__name__ = fname or op.name
    fn.__qualname__ = fn.__name__
    fn.__doc__ = op_docstring(op)
    fn.__signature__ = op_signature(op, ("out", "name"))
    fn.op = op
    return fn


class OpNamespace:
    """Attribute access to every registered operator through one function factory.

    Gradient rules receive one of these as `F`: `F.broadcast_mul(a, b)` runs
    eagerly for the `nd` namespace and builds graph nodes for the symbol one.
    """

    def __init__(self, factory: Callable[[OpDef, str], Callable]):
        self._factory = factory
        self._cache: dict[str, Callable] = {}

    def __getattr__(self, name: str) -> Callable:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self._cache[name]
        except KeyError:
            pass
        names = all_names()
        if name not in names:
            from .unsupported_ops import unsupported_error  # noqa: PLC0415
            raise unsupported_error("", name) or AttributeError(f"no operator named {name!r}")
        fn = self._factory(names[name], name)
        self._cache[name] = fn
        return fn

    def __dir__(self):
        return sorted(all_names())


def get_function(name: str) -> Callable:
    return make_nd_function(get_op(name), name)
