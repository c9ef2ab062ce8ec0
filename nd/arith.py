"""The one table of Python-operator rules, and MXNet's arithmetic helpers (`nd.maximum`,
`sym.pow`, ...) built from it.

Each `Rule` says, for one arithmetic or comparison: which registry operator an NDArray
uses (the broadcasting one), which a Symbol operator uses (MXNet's same-shape one, whose
name also names the node: `a + b` is `_plus0`), the scalar forms, the plain-Python result
of two numbers, and the in-place form. NDArray's operators (nd/ndarray.py), Symbol's
(symbol/symbol.py), the tracer's (symbol/tracer.py: the broadcasting op when shapes
differ, an error for every in-place form, since eager NDArrays mutate) and the helpers
below are all generated from `RULES`.
"""
from __future__ import annotations

import dataclasses
import numbers
import operator
from typing import Any
from collections.abc import Callable

import numpy as np

_SCALARS = (numbers.Number, np.number, np.bool_)


@dataclasses.dataclass(frozen=True)
class Rule:
    """How one arithmetic or comparison maps onto registry operators."""

    broadcast: str                 # NDArray op NDArray (and a traced op when shapes differ)
    elemwise: str                  # the symbol helper on two Symbols (`sym.maximum(a, b)`)
    scalar: str                    # array op number
    rscalar: str                   # number op array
    fallback: Callable             # number op number (helpers only)
    dunder: str | None = None      # Python operator: "add" -> __add__ (and __radd__, __iadd__)
    sym_tensor: str | None = None  # Symbol op Symbol, MXNet's name (hint of the node name)
    sym_scalar: str | None = None  # Symbol op number
    sym_rscalar: str | None = None  # number op Symbol
    augmented: str | None = None   # "+=": arithmetic with reflected and in-place forms
    np_stem: str | None = None     # mx.np's operator: `_npi_<stem>`, `_npi_<stem>_scalar`, `_npi_r<stem>_scalar`

    @property
    def np_ops(self) -> tuple[str, str, str]:
        """mx.np.ndarray's (tensor, scalar, reflected scalar) operators; a commutative rule
        (same legacy scalar op both ways) has no reflected form."""
        stem = self.np_stem
        rs = f"_npi_{stem}_scalar" if self.rscalar == self.scalar else f"_npi_r{stem}_scalar"
        return f"_npi_{stem}", f"_npi_{stem}_scalar", rs


def _flt(fn: Callable) -> Callable:
    return lambda a, b: float(fn(a, b))


RULES: dict[str, Rule] = {
    "add": Rule("broadcast_add", "elemwise_add", "_plus_scalar", "_plus_scalar", operator.add,
                "add", "_Plus", "_PlusScalar", "_PlusScalar", "+=", "add"),
    "subtract": Rule("broadcast_sub", "elemwise_sub", "_minus_scalar", "_rminus_scalar", operator.sub,
                     "sub", "_Minus", "_MinusScalar", "_RMinusScalar", "-=", "subtract"),
    "multiply": Rule("broadcast_mul", "elemwise_mul", "_mul_scalar", "_mul_scalar", operator.mul,
                     "mul", "_Mul", "_MulScalar", "_MulScalar", "*=", "multiply"),
    "divide": Rule("broadcast_div", "elemwise_div", "_div_scalar", "_rdiv_scalar", operator.truediv,
                   "truediv", "_Div", "_DivScalar", "_RDivScalar", "/=", "true_divide"),
    "true_divide": Rule("broadcast_div", "elemwise_div", "_div_scalar", "_rdiv_scalar", operator.truediv),
    "modulo": Rule("broadcast_mod", "_mod", "_mod_scalar", "_rmod_scalar", operator.mod,
                   "mod", "_Mod", "_ModScalar", "_RModScalar", "%=", "mod"),
    "power": Rule("broadcast_power", "_power", "_power_scalar", "_rpower_scalar", operator.pow,
                  "pow", "_Power", "_PowerScalar", "_rpower_scalar", "**=", "power"),   # MXNet's own spelling
    "pow": Rule("broadcast_power", "_power", "_power_scalar", "_rpower_scalar", operator.pow),
    "maximum": Rule("broadcast_maximum", "_maximum", "_maximum_scalar", "_maximum_scalar", max),
    "minimum": Rule("broadcast_minimum", "_minimum", "_minimum_scalar", "_minimum_scalar", min),
    "hypot": Rule("broadcast_hypot", "_hypot", "_hypot_scalar", "_hypot_scalar", np.hypot),
    "equal": Rule("broadcast_equal", "_equal", "_equal_scalar", "_equal_scalar", _flt(operator.eq),
                  "eq", "_equal", "_equal_scalar", np_stem="equal"),
    "not_equal": Rule("broadcast_not_equal", "_not_equal", "_not_equal_scalar", "_not_equal_scalar",
                      _flt(operator.ne), "ne", "_not_equal", "_not_equal_scalar", np_stem="not_equal"),
    "greater": Rule("broadcast_greater", "_greater", "_greater_scalar", "_lesser_scalar", _flt(operator.gt),
                    "gt", "_greater", "_greater_scalar", np_stem="greater"),
    "greater_equal": Rule("broadcast_greater_equal", "_greater_equal", "_greater_equal_scalar",
                          "_lesser_equal_scalar", _flt(operator.ge), "ge", "_greater_equal", "_greater_equal_scalar",
                          np_stem="greater_equal"),
    "lesser": Rule("broadcast_lesser", "_lesser", "_lesser_scalar", "_greater_scalar", _flt(operator.lt),
                   "lt", "_lesser", "_lesser_scalar", np_stem="less"),
    "lesser_equal": Rule("broadcast_lesser_equal", "_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar",
                         _flt(operator.le), "le", "_lesser_equal", "_lesser_equal_scalar", np_stem="less_equal"),
    "logical_and": Rule("broadcast_logical_and", "_logical_and", "_logical_and_scalar", "_logical_and_scalar",
                        lambda a, b: float(bool(a) and bool(b))),
    "logical_or": Rule("broadcast_logical_or", "_logical_or", "_logical_or_scalar", "_logical_or_scalar",
                       lambda a, b: float(bool(a) or bool(b))),
    "logical_xor": Rule("broadcast_logical_xor", "_logical_xor", "_logical_xor_scalar", "_logical_xor_scalar",
                        lambda a, b: float(bool(a) != bool(b))),
}

#: the rules behind Python operators (`+`, `==`, ...), one per operator
OPERATOR_RULES: tuple[Rule, ...] = tuple(r for r in RULES.values() if r.dunder)

# which helpers each front end exposes (MXNet's symbol module has only these)
SYMBOL_HELPERS = ("pow", "power", "maximum", "minimum", "hypot")


# MXNet 1.9.1's parameter names where they are not (lhs, rhs): (function, symbolic) -> names
_PARAM_NAMES = {("power", False): ("base", "exp"), ("power", True): ("base", "exp"), ("pow", True): ("base", "exp"),
                ("maximum", True): ("left", "right"), ("minimum", True): ("left", "right"),
                ("hypot", True): ("left", "right")}


def make_binary_helper(name: str, ns: Any, symbolic: bool) -> Callable:
    """Build `name(lhs, rhs)` over the op namespace `ns`."""
    rule = RULES[name]
    tensor_op = rule.elemwise if symbolic else rule.broadcast
    scalar_op, rscalar_op, fallback = rule.scalar, rule.rscalar, rule.fallback

    first, second = _PARAM_NAMES.get((name, symbolic), ("lhs", "rhs"))
    fname = name

    def helper(*args, out=None, name=None, **kwargs):  # noqa: A002 - MXNet's parameter names
        vals = list(args)
        for p in (first, second)[len(vals):]:
            if p in kwargs:
                vals.append(kwargs.pop(p))
        if kwargs or len(vals) != 2:
            raise TypeError(f"{fname}() takes two arguments ({first}, {second}); got {len(args)} positional "
                            f"and keywords {sorted(kwargs)}")
        lhs, rhs = vals
        l_num, r_num = isinstance(lhs, _SCALARS), isinstance(rhs, _SCALARS)
        kw = {} if out is None else {"out": out}
        if name is not None:
            kw["name"] = name
        if l_num and r_num:
            return fallback(lhs, rhs)
        if r_num:
            return getattr(ns, scalar_op)(lhs, scalar=rhs, **kw)
        if l_num:
            return getattr(ns, rscalar_op)(rhs, scalar=lhs, **kw)
        return getattr(ns, tensor_op)(lhs, rhs, **kw)

    helper.__name__ = name
    helper.__doc__ = (f"Elementwise {name} of two arrays (broadcasting) or of an array and a scalar."
                      if not symbolic else f"Elementwise {name} of two symbols or of a symbol and a scalar.")
    return helper


def make_split_v2(ns: Any) -> Callable:
    """MXNet's `split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False)`."""

    def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
        indices, sections = [], 0
        if isinstance(indices_or_sections, int):
            sections = indices_or_sections
            shape = getattr(ary, "shape", None)   # a Symbol's is not known here (MXNet checks arrays only)
            size = shape[axis] if isinstance(shape, tuple) and -len(shape) <= axis < len(shape) else None
            if isinstance(size, int) and sections and size % sections:
                raise ValueError("array split does not result in an equal division")
        elif isinstance(indices_or_sections, tuple):
            indices = [0, *indices_or_sections]
        else:
            raise ValueError("indices_or_sections must either int or tuple of ints")
        return ns._split_v2(ary, indices=indices, axis=axis, squeeze_axis=squeeze_axis,
                                        sections=sections)
    return split_v2


def make_histogram(ns: Any, symbolic: bool) -> Callable:
    """MXNet's `histogram(a, bins=10, range=None)`: `_histogram` with bin edges (an array) or
    `bins` equal bins over `range`; eagerly without `range`, numpy's own bins over the data's
    span (float32 counts, as MXNet's wrapper returns); a Symbol needs `range`."""

    def histogram(a, bins=10, range=None, **kwargs):  # noqa: A002 - MXNet's argument name
        if isinstance(bins, (bool, np.bool_)) or not isinstance(bins, (numbers.Integral,)):
            if hasattr(bins, "shape") or getattr(bins, "_is_symbolic", False):
                return ns._histogram(data=a, bins=bins, **kwargs)
            raise ValueError("bins argument should be either an integer or an NDArray")
        if range is None:
            if symbolic:
                raise ValueError("null range is not supported in symbol mode")
            import warnings  # noqa: PLC0415
            from .creation import array  # noqa: PLC0415
            warnings.warn("range is not specified, using numpy's result to ensure consistency with numpy",
                          stacklevel=2)
            res, edges = np.histogram(a.asnumpy(), bins=int(bins))
            return array(res), array(edges)
        return ns._histogram(data=a, bin_cnt=int(bins), range=range, **kwargs)
    return histogram


def install_helpers(namespace: dict, ns: Any, symbolic: bool) -> None:
    names = SYMBOL_HELPERS if symbolic else tuple(RULES)
    for n in names:
        namespace[n] = make_binary_helper(n, ns, symbolic)
    namespace["split_v2"] = make_split_v2(ns)
    namespace["histogram"] = make_histogram(ns, symbolic)
