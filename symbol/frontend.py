"""Generate `symbol.X` functions and Symbol fluent methods from the registry,
and install the handler that turns op calls on symbolic inputs into nodes."""
from __future__ import annotations

import types
from collections.abc import Callable

from nd import dispatch
from nd.dispatch import bind_call, make_nd_function, op_docstring, op_signature
from nd.registry import OpDef, all_names

from .symbol import Symbol, create

_NOT_FLUENT = {"zeros", "ones", "full", "empty", "arange", "linspace", "eye", "identity"}


def make_sym_function(op: OpDef, fname: str | None = None) -> Callable:
    """The symbolic front-end function of an operator (`sym.FullyConnected`)."""

    def fn(*args, name=None, attr=None, out=None, **kwargs):
        inputs, given = bind_call(op, args, kwargs)
        return create(op, inputs, given, name=name, attr=attr, hint=fn.__name__.lower())

    fn.__name__ = fname or op.name
    fn.__qualname__ = fn.__name__
    fn.__doc__ = op_docstring(op)
    fn.__signature__ = op_signature(op, ("name", "attr"))
    fn.op = op
    return fn


def _symbolic_invoke(op, inputs, given, name, extra):
    """dispatch.invoke's route for symbolic inputs (gradient rules with F=sym, tracers)."""
    attrs = given.given if hasattr(given, "given") else given
    return create(op, list(inputs), dict(attrs), name=name)


def install(namespace: dict, internal: types.ModuleType) -> None:
    dispatch.set_symbolic_invoke(_symbolic_invoke)
    for name, op in all_names().items():
        fn = make_sym_function(op, name)
        setattr(internal, name, fn)
        if name.startswith("_"):
            continue
        namespace.setdefault(name, fn)
        if op.fluent and name.islower() and name not in _NOT_FLUENT and not hasattr(Symbol, name):
            setattr(Symbol, name, _method(fn))


def _method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


__all__ = ["make_sym_function", "install", "make_nd_function"]
