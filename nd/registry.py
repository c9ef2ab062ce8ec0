"""The operator registry: every operator declared once, read by every layer.

An `OpDef` is data: names, argument/aux/output names, an attribute schema,
shape and type rules, the kernel and the gradient rule, and the properties the
graph passes read. The eager front end (`nd.X`), the symbolic front end
(`symbol.X`), the JSON loader, the executor and autodiff all look operators up
here; nothing else defines an operator.
"""
from __future__ import annotations

import dataclasses
import inspect
from typing import Any
from collections.abc import Callable, Iterable, Sequence

from .attrs import Attr, Attrs, AttrSchema
from .errors import DTypeError, OperatorNotFound, ShapeError

Shape = tuple
_REGISTRY: dict[str, "OpDef"] = {}
_CANONICAL: dict[str, "OpDef"] = {}

#: marker returned by ops whose gradient is identically zero (comparisons, rounding)
ZERO_GRAD = "zero"


def _const(value):
    return lambda a: value


Rule = Callable[..., Any]


@dataclasses.dataclass(eq=False, repr=False)
class OpDef:
    """One operator: its names, slots, attribute schema, rules, kernel and gradient, plus the
    properties the graph passes read (DESIGN.md, "The operator registry").

    Constructed with the operator's name and keywords only. `inputs`, `outputs`, `attrs`,
    `ignored_attrs` are read at construction (into `input_names()`, `output_names()` and
    `schema`); the other fields stay readable under their names, normalised:
    `num_visible_outputs` becomes a function of the attributes, `infer_type` defaults to
    `same_type`, `differentiable` and `public` are decided when not given. Identity is the
    object: operators are compared and hashed by `is` (they key caches).
    """

    name: str
    _: dataclasses.KW_ONLY
    #: other registered names (`_plus`, `_Plus` for elemwise_add), all resolving to this op
    aliases: Sequence[str] = ()
    #: input slot names (arguments then aux states), or attrs -> names when they vary
    inputs: dataclasses.InitVar[Sequence[str] | Callable[[Attrs], Sequence[str]]] = ("data",)
    #: every input slot in MXNet's declared order, when `inputs` drops some by attribute: the
    #: order positional arguments of `nd.X` / `sym.X` fill (CTCLoss's data_lengths, label_lengths)
    arguments: Sequence[str] = ()
    #: the input names that are auxiliary states (BatchNorm's moving_mean, moving_var)
    aux: Sequence[str] = ()
    #: output names, or attrs -> names
    outputs: dataclasses.InitVar[Sequence[str] | Callable[[Attrs], Sequence[str]]] = ("output",)
    #: how many outputs a call returns (the rest are hidden, like Dropout's mask): a number,
    #: attrs -> number, or None for all; after construction always attrs -> number
    num_visible_outputs: int | Callable[[Attrs], int] | None = None
    #: the attribute declarations; None: MXNet's ops without a parameter struct (any attribute kept)
    attrs: dataclasses.InitVar[dict[str, Attr] | None] = None
    #: attribute names accepted and dropped (MXNet's legacy ones)
    ignored_attrs: dataclasses.InitVar[Iterable[str]] = ()
    #: the kernel: forward(xp, attrs, *arrays[, out=buffers][, is_train=]) -> tuple of outputs
    forward: Rule | None = None
    #: infer_shape(attrs, *input shapes) -> (input shapes, output shapes) or None (unknown)
    infer_shape: Rule | None = None
    #: infer_type(attrs, *input dtypes) -> (input dtypes, output dtypes) or None; same_type when None
    infer_type: Rule | None = None
    #: gradient(F, attrs, inputs, outputs, ograds[, wanted=]) -> one gradient (or None) per input,
    #: or ZERO_GRAD; run through `call_gradient`
    gradient: Rule | str | None = None
    #: one output computed elementwise from same-shape inputs (fusable)
    elementwise: bool = False
    #: (input, output) pairs whose storage the output may share
    inplace: Sequence[tuple[int, int]] = ()
    #: draws random numbers (or attrs -> bool); read through `random_for`
    is_random: bool | Callable[[Attrs], bool] = False
    #: loss-style: the gradient ignores the head gradient (SoftmaxOutput)
    loss: bool = False
    #: the kernel takes `is_train` (Dropout, BatchNorm)
    train_aware: bool = False
    #: positions of inputs the kernel writes in place, or attrs -> positions; read through `mutated`
    mutate_inputs: Sequence[int] | Callable[[Attrs], Sequence[int]] = ()
    #: the attribute counting a variable number of inputs (concat's num_args)
    key_var_num_args: str | None = None
    #: the stem of automatic node names (fullyconnected0); the lower-cased name when None
    hint: str | None = None
    doc: str = ""
    #: whether gradients flow through; None: whether there is a gradient rule
    differentiable: bool | None = None
    #: whether NDArray / Symbol get a method of this name (x.relu())
    fluent: bool = True
    #: exposed in nd / symbol (not only _internal); None: the name does not start with "_"
    public: bool | None = None
    #: inputs a Symbol-API call creates variables for when they are not given (FullyConnected's weight)
    learnable: Sequence[str] = ()
    #: the kernel accepts `out=(buffers,)` and writes its results there (memory planner)
    writes_out: bool = False
    #: the kernel accepts `scratch=` (a uint8 buffer, or None) for its temporaries: a compiled
    #: plan lends it memory dead at that step (nd/ops/scratch.py, symbol/plan/memory.py)
    scratch: bool = False
    #: C expression of an elementwise op for generated GPU kernels: inputs x0, x1, ...;
    #: scalar attributes named as in the schema
    cexpr: str | None = None
    #: the `__init__` MXNet gives a variable feeding input i on compose (FSetInputVarAttrOnCompose)
    var_init: dict | None = None
    #: a numpy ufunc computing this op exactly on two numpy arrays of one dtype (nd.kernel uses it)
    ufunc: Any = None
    #: identity_when(attrs, is_train, input-0 shape or None) -> True when output 0 equals input 0 in
    #: value and gradient (`is_train`: the graph runs in training and is differentiated)
    identity_when: Rule | None = None
    #: self_compose(inner attrs, outer attrs, inner input shape or None) -> attribute dict of ONE
    #: application equal to op(op(x, inner), outer), "identity" when they cancel, or None
    self_compose: Rule | None = None
    #: affine_channel(attrs) -> (output channel axis, weight channel axis) when output channel c is
    #: linear in weight[c] plus bias[c] (inputs "weight", optional "bias", attribute no_bias)
    affine_channel: Rule | None = None
    #: inference_scale_shift(attrs, *numpy inputs after data) -> (channel axis, scale, shift): at
    #: inference output 0 = data * scale + shift along that axis (BatchNorm's moving statistics)
    inference_scale_shift: Rule | None = None
    #: shape inference may copy output 0's first (batch) dim into input 0's unknown one, as
    #: MXNet's FullyConnected does (it sizes `_zeros(shape=(0, H))` begin states of mx.rnn cells)
    batch_from_output: bool = False
    #: shape_from_outputs(attrs, input shapes, output shapes) -> input shapes (None where nothing
    #: follows) that the outputs imply: MXNet's back-inference (SliceChannel, Concat, Convolution)
    shape_from_outputs: Rule | None = None
    #: open_shape = (is_open(attrs) -> bool, resolve(attrs, shape) -> attrs) for an input-less op
    #: whose attributes may leave its output shape to the rest of the graph (arange's
    #: infer_range); ops with a `shape` attribute are open when it has an unknown (0) dim
    open_shape: tuple | None = None
    #: the names MXNet's executor monitor (`set_monitor_callback(..., monitor_all=True)`) gives
    #: the inputs, reported as `<node>_<name>`; MXNet takes them from the op's FListInputNames,
    #: not from its documented arguments. None: `input_names()`; a string: that prefix numbered
    #: ("input" -> input0, input1: ops without FListInputNames; "arg" -> arg0: variadic ones);
    #: a sequence of names, or attrs -> names
    monitor_inputs: str | Sequence[str] | Callable[[Attrs], Sequence[str]] | None = None

    def __post_init__(self, inputs, outputs, attrs, ignored_attrs) -> None:
        name = self.name
        self.aliases = tuple(self.aliases)
        self._inputs = inputs if callable(inputs) else _const(tuple(inputs))
        #: the input names when they do not depend on the attributes (the common case)
        self.static_inputs: tuple | None = None if callable(inputs) else tuple(inputs)
        self.aux = tuple(self.aux)
        self.arguments = tuple(self.arguments)
        self._outputs = outputs if callable(outputs) else _const(tuple(outputs))
        nvis = self.num_visible_outputs
        #: the number of visible outputs when it does not depend on the attributes (else None)
        self.static_visible: int | None = (
            nvis if isinstance(nvis, int)
            else len(tuple(outputs)) if nvis is None and not callable(outputs) else None)
        if nvis is None:
            self.num_visible_outputs = lambda a: len(self._outputs(a))
        elif not callable(nvis):
            self.num_visible_outputs = _const(nvis)
        self.schema = AttrSchema(name, dict(attrs or {}), ignored=ignored_attrs, allow_extra=not attrs)
        self.infer_type = self.infer_type or same_type
        self.inplace = tuple(self.inplace)
        if not callable(self.mutate_inputs):
            self.mutate_inputs = tuple(self.mutate_inputs)
        self.hint = self.hint or name.lower()
        self._differentiable_given = self.differentiable is not None
        if not self._differentiable_given:
            self.differentiable = self.gradient is not None
        if self.public is None:
            self.public = not name.startswith("_")
        self.learnable = tuple(self.learnable)
        self.var_init = dict(self.var_init or {})

    # -- structure ---------------------------------------------------------
    def input_names(self, a: Attrs) -> tuple:
        """Every input slot (arguments then aux states), MXNet's order."""
        return tuple(self._inputs(a))

    def output_names(self, a: Attrs) -> tuple:
        return tuple(self._outputs(a))

    def monitor_input_names(self, a: Attrs) -> tuple:
        """The input names MXNet's executor monitor reports (see `monitor_inputs`)."""
        m = self.monitor_inputs
        if m is None:
            return self.input_names(a)
        if isinstance(m, str):
            return tuple(f"{m}{i}" for i in range(len(self.input_names(a))))
        return tuple(m(a)) if callable(m) else tuple(m)

    def num_outputs(self, a: Attrs) -> int:
        return len(self._outputs(a))

    @property
    def mutates(self) -> bool:
        """Whether the kernel may write some input in place."""
        return bool(self.mutate_inputs)

    def mutated(self, a: Attrs) -> tuple:
        """The input positions this call writes in place."""
        m = self.mutate_inputs
        return tuple(m(a)) if callable(m) else m

    def aux_indices(self, a: Attrs) -> tuple:
        names = self.input_names(a)
        return tuple(i for i, n in enumerate(names) if n in self.aux)

    def random_for(self, a: Attrs) -> bool:
        """Whether this call draws random numbers (`is_random` may depend on attributes)."""
        return self.is_random(a) if callable(self.is_random) else bool(self.is_random)

    def parse_attrs(self, given: dict) -> Attrs:
        return self.schema.parse(given)

    # -- running -----------------------------------------------------------
    def compute(self, xp, a: Attrs, arrays: Sequence[Any], is_train: bool = False) -> tuple:
        """Run the kernel; returns every output (hidden ones included)."""
        if self.train_aware:
            return self.forward(xp, a, *arrays, is_train=is_train)
        return self.forward(xp, a, *arrays)

    # -- decorators for the function form -----------------------------------
    def def_gradient(self, fn: Callable) -> Callable:
        self.gradient = fn
        if not self._differentiable_given:
            self.differentiable = True
        return fn

    def def_shape(self, fn: Callable) -> Callable:
        self.infer_shape = fn
        return fn

    def def_type(self, fn: Callable) -> Callable:
        self.infer_type = fn
        return fn

    def __repr__(self) -> str:
        return f"<OpDef {self.name}>"


for _initvar in ("inputs", "outputs", "attrs", "ignored_attrs"):   # read at construction only
    delattr(OpDef, _initvar)


_TAKES_WANTED: dict = {}


def call_gradient(op: "OpDef", F: Any, a: Attrs, inputs: Sequence, outputs: Sequence,  # noqa: N803
                  ograds: Sequence, wanted: tuple | None = None) -> list:
    """Run `op`'s gradient rule: `rule(F, attrs, inputs, outputs, ograds)`, plus `wanted=` (the
    positions of the inputs whose gradients are needed, Chainer's `indexes`; None = all) for
    rules that declare that keyword, so they can skip work (FullyConnected's data gradient).
    A rule may return None for an input outside `wanted`."""
    rule = op.gradient
    takes = _TAKES_WANTED.get(rule)
    if takes is None:
        try:
            takes = "wanted" in inspect.signature(rule).parameters
        except (TypeError, ValueError):
            takes = False
        _TAKES_WANTED[rule] = takes
    if takes:
        return list(rule(F, a, inputs, outputs, ograds, wanted=wanted))
    return list(rule(F, a, inputs, outputs, ograds))


def backward_op_grads(F: Any, name: str, ograds: Sequence, outputs: Sequence, args: Sequence,  # noqa: N803
                      n: int, **attrs: Any) -> list:
    """A gradient rule's result when one backward operator `name` computes every input's
    gradient (subgraph and Custom operators): called on the head gradients, zeros where none
    arrived, followed by `args`; its `n` outputs as a list."""
    heads = [F.zeros_like(o) if g is None else g for g, o in zip(ograds, outputs)]
    res = getattr(F, name)(*heads, *args, **attrs)
    return [res] if n == 1 and not isinstance(res, (list, tuple)) else [res[i] for i in range(n)]


def register(name: str, **kwargs: Any) -> Callable:
    """Declare an operator. Decorates either its kernel function or a class
    holding `forward` / `infer_shape` / `infer_type` / `gradient` staticmethods."""

    def wrap(obj):
        if isinstance(obj, type):
            for field in ("forward", "infer_shape", "infer_type", "gradient"):
                if field in vars(obj) and field not in kwargs:
                    kwargs[field] = getattr(obj, field)
            kwargs.setdefault("doc", obj.__doc__ or "")
        else:
            kwargs.setdefault("forward", obj)
            kwargs.setdefault("doc", obj.__doc__ or "")
        op = OpDef(name, **kwargs)
        add_op(op)
        return op

    return wrap


def add_op(op: OpDef) -> OpDef:
    """Put a declared operator (and its aliases) into the registry."""
    for n in (op.name, *op.aliases):
        if n in _REGISTRY and _REGISTRY[n] is not op:
            raise ValueError(f"operator name {n!r} is declared twice "
                             f"({_REGISTRY[n].name} and {op.name})")
        _REGISTRY[n] = op
    _CANONICAL[op.name] = op
    return op


def get_op(name: str) -> OpDef:
    """The operator registered under a name or alias."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise OperatorNotFound(f"operator {name!r} is not registered in hybridgraph") from None


def has_op(name: str) -> bool:
    return name in _REGISTRY


def all_ops() -> dict[str, OpDef]:
    """Canonical name -> OpDef for every registered operator."""
    return dict(_CANONICAL)


def all_names() -> dict[str, OpDef]:
    """Every name and alias -> OpDef."""
    return dict(_REGISTRY)


# -- shared shape and type rules (used by many declarations) -----------------

def merge_shape(a: Shape | None, b: Shape | None, what: str = "") -> Shape | None:
    """Unify two partially known shapes (None = unknown, 0 = unknown dim)."""
    if a is None:
        return b
    if b is None:
        return a
    if len(a) != len(b):
        raise ShapeError(f"{what}shape mismatch: {a} vs {b}")
    out = []
    for x, y in zip(a, b):
        if x == 0:
            out.append(y)
        elif y == 0 or x == y:
            out.append(x)
        else:
            raise ShapeError(f"{what}shape mismatch: {a} vs {b}")
    return tuple(out)


def shape_known(s: Shape | None) -> bool:
    return s is not None and all(d != 0 for d in s)


def same_shape(a: Attrs, *shapes):
    """All inputs and the single output share one shape (elementwise ops)."""
    s = None
    for x in shapes:
        s = merge_shape(s, x)
    return [s] * len(shapes), [s]


def broadcast_shape(a: Attrs, lhs, rhs):
    """numpy broadcasting of two shapes; None when either is unknown. A dim unknown (0) in
    either input is unknown in the output, the known dims are checked and broadcast (MXNet's
    BinaryBroadcastShape: `(0, 1) + (2, 3)` gives `(0, 3)`; nothing flows back to the inputs)."""
    if lhs is None or rhs is None:
        return None
    if not (shape_known(lhs) and shape_known(rhs)):
        n = max(len(lhs), len(rhs))
        l2 = (1,) * (n - len(lhs)) + tuple(lhs)
        r2 = (1,) * (n - len(rhs)) + tuple(rhs)
        dims = broadcast_dims(tuple(d or 1 for d in l2), tuple(d or 1 for d in r2))
        return [lhs, rhs], [tuple(0 if x == 0 or y == 0 else d for x, y, d in zip(l2, r2, dims))]
    return [lhs, rhs], [broadcast_dims(lhs, rhs)]


def broadcast_dims(lhs: Shape, rhs: Shape, zero_is_size: bool = False) -> Shape:
    """The numpy broadcast of two shapes; ShapeError when they do not broadcast. With
    `zero_is_size` (mx.np's rule) a 0 is a real, empty size where it meets an equal or 1
    dimension, and a dimension not known yet (a deferred parameter's) against a size > 1;
    without it the shapes must be known (broadcast_shape checks)."""
    n = max(len(lhs), len(rhs))
    l2 = (1,) * (n - len(lhs)) + tuple(lhs)
    r2 = (1,) * (n - len(rhs)) + tuple(rhs)
    out = []
    for x, y in zip(l2, r2):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        elif zero_is_size and (x == 0 or y == 0):
            out.append(x or y)
        else:
            raise ShapeError(f"operands could not be broadcast together: lhs {tuple(lhs)} rhs {tuple(rhs)}")
    return tuple(out)


def same_type(a: Attrs, *dtypes):
    """Every input and output has one dtype (MXNet's ElemwiseType)."""
    t = None
    for i, d in enumerate(dtypes):
        if d is None:
            continue
        if t is None:
            t = d
        elif d != t:
            raise DTypeError(f"dtype mismatch at input {i}: expected {t}, got {d}")
    return None if t is None else ([t] * len(dtypes), [t])
