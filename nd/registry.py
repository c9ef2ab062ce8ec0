"""The operator registry: every operator declared once, read by every layer.

An `OpDef` is data: names, argument/aux/output names, an attribute schema,
shape and type rules, the kernel and the gradient rule, and the properties the
graph passes read. The eager front end (`nd.X`), the symbolic front end
(`symbol.X`), the JSON loader, the executor and autodiff all look operators up
here; nothing else defines an operator.
"""
from __future__ import annotations

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


class OpDef:
    """One operator. See DESIGN.md, "The operator registry", for each field."""

    #: shape inference may copy output 0's first (batch) dim into input 0's unknown one, as
    #: MXNet's FullyConnected does (it sizes `_zeros(shape=(0, H))` begin states of mx.rnn cells)
    batch_from_output = False

    def __init__(self, name: str, *, aliases: Sequence[str] = (),
                 inputs: Sequence[str] | Callable[[Attrs], Sequence[str]] = ("data",),
                 aux: Sequence[str] = (),
                 outputs: Sequence[str] | Callable[[Attrs], Sequence[str]] = ("output",),
                 num_visible_outputs: int | Callable[[Attrs], int] | None = None,
                 attrs: dict[str, Attr] | None = None, ignored_attrs: Iterable[str] = (),
                 forward: Callable | None = None, infer_shape: Callable | None = None,
                 infer_type: Callable | None = None, gradient: Callable | str | None = None,
                 elementwise: bool = False, inplace: Sequence[tuple[int, int]] = (),
                 is_random: bool = False, loss: bool = False, train_aware: bool = False,
                 mutate_inputs: Sequence[int] | Callable = (), key_var_num_args: str | None = None,
                 hint: str | None = None, doc: str = "", differentiable: bool | None = None,
                 fluent: bool = True, public: bool | None = None, learnable: Sequence[str] = (),
                 writes_out: bool = False, cexpr: str | None = None, var_init: dict | None = None,
                 ufunc: Any = None,
                 identity_when: Callable | None = None, self_compose: Callable | None = None,
                 affine_channel: Callable | None = None, inference_scale_shift: Callable | None = None):
        self.name = name
        self.aliases = tuple(aliases)
        self._inputs = inputs if callable(inputs) else _const(tuple(inputs))
        #: the input names when they do not depend on the attributes (the common case)
        self.static_inputs: tuple | None = None if callable(inputs) else tuple(inputs)
        self.aux = tuple(aux)
        self._outputs = outputs if callable(outputs) else _const(tuple(outputs))
        if num_visible_outputs is None:
            self._num_visible = lambda a: len(self._outputs(a))
        else:
            self._num_visible = num_visible_outputs if callable(num_visible_outputs) else _const(num_visible_outputs)
        #: the number of visible outputs when it does not depend on the attributes (else None)
        self.static_visible: int | None = (
            num_visible_outputs if isinstance(num_visible_outputs, int)
            else len(tuple(outputs)) if num_visible_outputs is None and not callable(outputs) else None)
        # MXNet ops without a parameter struct accept (and keep) any attribute
        self.schema = AttrSchema(name, dict(attrs or {}), ignored=ignored_attrs, allow_extra=not attrs)
        self.forward = forward
        self.infer_shape = infer_shape
        self.infer_type = infer_type or same_type
        self.gradient = gradient
        self.elementwise = elementwise
        self.inplace = tuple(inplace)
        self.is_random = is_random
        self.loss = loss
        self.train_aware = train_aware
        # positions of inputs the kernel writes in place: a tuple, or attrs -> tuple when they
        # depend on the attributes (multi_sgd_mom_update's momenta); read through `mutated`
        self.mutate_inputs = mutate_inputs if callable(mutate_inputs) else tuple(mutate_inputs)
        self.key_var_num_args = key_var_num_args
        self.hint = hint or name.lower()
        self.doc = doc
        self._differentiable = differentiable
        self.fluent = fluent
        self.public = (not name.startswith("_")) if public is None else public
        # inputs a Symbol-API call creates variables for when they are not given
        self.learnable = tuple(learnable)
        # the kernel accepts `out=(buffers,)` and writes its results there (memory planner)
        self.writes_out = writes_out
        # C expression of an elementwise op for generated GPU kernels: inputs are
        # x0, x1, ...; scalar attributes are named as in the schema
        self.cexpr = cexpr
        # `__init__` MXNet gives a variable feeding input i on compose (FSetInputVarAttrOnCompose)
        self.var_init = dict(var_init or {})
        # a numpy ufunc computing this op exactly on two numpy arrays of one dtype (the
        # eager NDArray operator fast path skips the generic kernel wrapper with it)
        self.ufunc = ufunc
        # properties the graph passes (symbol/passes/) read:
        # identity_when(attrs, is_train, input-0 shape or None) -> True when output 0 equals
        # input 0 in value and gradient (`is_train`: the graph runs in training and is differentiated)
        self.identity_when = identity_when
        # self_compose(inner attrs, outer attrs, inner input shape or None) -> attribute dict of ONE
        # application equal to op(op(x, inner), outer), "identity" when they cancel, or None
        self.self_compose = self_compose
        # affine_channel(attrs) -> (output channel axis, weight channel axis) when output channel c
        # is linear in weight[c] plus bias[c] (inputs "weight", optional "bias", attribute no_bias)
        self.affine_channel = affine_channel
        # inference_scale_shift(attrs, *numpy inputs after data) -> (channel axis, scale, shift): at
        # inference output 0 = data * scale + shift along that axis (BatchNorm's moving statistics)
        self.inference_scale_shift = inference_scale_shift

    # -- structure ---------------------------------------------------------
    def input_names(self, a: Attrs) -> tuple:
        """Every input slot (arguments then aux states), MXNet's order."""
        return tuple(self._inputs(a))

    def output_names(self, a: Attrs) -> tuple:
        return tuple(self._outputs(a))

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

    def num_visible_outputs(self, a: Attrs) -> int:
        return self._num_visible(a)

    def aux_indices(self, a: Attrs) -> tuple:
        names = self.input_names(a)
        return tuple(i for i, n in enumerate(names) if n in self.aux)

    def random_for(self, a: Attrs) -> bool:
        """Whether this call draws random numbers (`is_random` may depend on attributes)."""
        return self.is_random(a) if callable(self.is_random) else bool(self.is_random)

    @property
    def differentiable(self) -> bool:
        if self._differentiable is not None:
            return self._differentiable
        return self.gradient is not None

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
        return fn

    def def_shape(self, fn: Callable) -> Callable:
        self.infer_shape = fn
        return fn

    def def_type(self, fn: Callable) -> Callable:
        self.infer_type = fn
        return fn

    def __repr__(self) -> str:
        return f"<OpDef {self.name}>"


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
    """numpy broadcasting of two shapes; None when either is unknown."""
    if lhs is None or rhs is None:
        return None
    if not (shape_known(lhs) and shape_known(rhs)):
        return None
    n = max(len(lhs), len(rhs))
    l2 = (1,) * (n - len(lhs)) + tuple(lhs)
    r2 = (1,) * (n - len(rhs)) + tuple(rhs)
    out = []
    for x, y in zip(l2, r2):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ShapeError(f"operands could not be broadcast together: lhs {tuple(lhs)} rhs {tuple(rhs)}")
    return [lhs, rhs], [tuple(out)]


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
