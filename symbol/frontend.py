"""Generate `symbol.X` functions and Symbol fluent methods from the registry,
and install the handler that turns op calls on symbolic inputs into nodes."""
from __future__ import annotations

import types
from collections.abc import Callable

from hybridgraph.nd import dispatch
from hybridgraph.nd.dispatch import bind_call, op_docstring, op_signature
from hybridgraph.nd.frontend import install as install_functions
from hybridgraph.nd.registry import OpDef

from .symbol import Symbol, create


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
    """Symbol functions and fluent methods from the registry (the same installer as nd's)."""
    dispatch.set_symbolic_invoke(_symbolic_invoke)
    install_functions(namespace, internal, Symbol, make_sym_function)


__all__ = ["make_sym_function", "install"]
