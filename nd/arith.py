"""MXNet's Python-level arithmetic helpers (`nd.maximum`, `sym.pow`, ...).

They pick the tensor or the scalar form of an operator depending on the
operand types; the `nd` front end uses broadcasting tensor ops and the
symbol front end the same-shape ones, as MXNet does.
"""
from __future__ import annotations

import numbers
import operator
from typing import Any
from collections.abc import Callable

import numpy as np

_SCALARS = (numbers.Number, np.number, np.bool_)

# helper -> (nd tensor op, symbol tensor op, scalar op, reversed scalar op, plain python fallback)
BINARY_HELPERS: dict[str, tuple] = {
    "add": ("broadcast_add", "elemwise_add", "_plus_scalar", "_plus_scalar", operator.add),
    "subtract": ("broadcast_sub", "elemwise_sub", "_minus_scalar", "_rminus_scalar", operator.sub),
    "multiply": ("broadcast_mul", "elemwise_mul", "_mul_scalar", "_mul_scalar", operator.mul),
    "divide": ("broadcast_div", "elemwise_div", "_div_scalar", "_rdiv_scalar", operator.truediv),
    "true_divide": ("broadcast_div", "elemwise_div", "_div_scalar", "_rdiv_scalar", operator.truediv),
    "modulo": ("broadcast_mod", "_mod", "_mod_scalar", "_rmod_scalar", operator.mod),
    "power": ("broadcast_power", "_power", "_power_scalar", "_rpower_scalar", operator.pow),
    "pow": ("broadcast_power", "_power", "_power_scalar", "_rpower_scalar", operator.pow),
    "maximum": ("broadcast_maximum", "_maximum", "_maximum_scalar", "_maximum_scalar", max),
    "minimum": ("broadcast_minimum", "_minimum", "_minimum_scalar", "_minimum_scalar", min),
    "hypot": ("broadcast_hypot", "_hypot", "_hypot_scalar", "_hypot_scalar", np.hypot),
    "equal": ("broadcast_equal", "_equal", "_equal_scalar", "_equal_scalar", lambda a, b: float(a == b)),
    "not_equal": ("broadcast_not_equal", "_not_equal", "_not_equal_scalar", "_not_equal_scalar",
                  lambda a, b: float(a != b)),
    "greater": ("broadcast_greater", "_greater", "_greater_scalar", "_lesser_scalar", lambda a, b: float(a > b)),
    "greater_equal": ("broadcast_greater_equal", "_greater_equal", "_greater_equal_scalar",
                      "_lesser_equal_scalar", lambda a, b: float(a >= b)),
    "lesser": ("broadcast_lesser", "_lesser", "_lesser_scalar", "_greater_scalar", lambda a, b: float(a < b)),
    "lesser_equal": ("broadcast_lesser_equal", "_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar",
                     lambda a, b: float(a <= b)),
    "logical_and": ("broadcast_logical_and", "_logical_and", "_logical_and_scalar", "_logical_and_scalar",
                    lambda a, b: float(bool(a) and bool(b))),
    "logical_or": ("broadcast_logical_or", "_logical_or", "_logical_or_scalar", "_logical_or_scalar",
                   lambda a, b: float(bool(a) or bool(b))),
    "logical_xor": ("broadcast_logical_xor", "_logical_xor", "_logical_xor_scalar", "_logical_xor_scalar",
                    lambda a, b: float(bool(a) != bool(b))),
}

# which helpers each front end exposes (MXNet's symbol module has only these)
SYMBOL_HELPERS = ("pow", "power", "maximum", "minimum", "hypot")


def make_binary_helper(name: str, ns: Any, symbolic: bool) -> Callable:
    """Build `name(lhs, rhs)` over the op namespace `ns`."""
    nd_op, sym_op, scalar_op, rscalar_op, fallback = BINARY_HELPERS[name]
    tensor_op = sym_op if symbolic else nd_op

    def helper(lhs, rhs, out=None, name=None):  # noqa: A002 - MXNet's parameter names
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
        elif isinstance(indices_or_sections, tuple):
            indices = [0, *indices_or_sections]
        else:
            raise ValueError("indices_or_sections must either int or tuple of ints")
        return ns._split_v2(ary, indices=indices, axis=axis, squeeze_axis=squeeze_axis,
                                        sections=sections)
    return split_v2


def install_helpers(namespace: dict, ns: Any, symbolic: bool) -> None:
    names = SYMBOL_HELPERS if symbolic else tuple(BINARY_HELPERS)
    for n in names:
        namespace[n] = make_binary_helper(n, ns, symbolic)
    namespace["split_v2"] = make_split_v2(ns)
