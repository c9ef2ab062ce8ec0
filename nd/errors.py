"""The project's exception hierarchy.

One base (`MXNetError`, as `mxnet.base.MXNetError`) with subclasses that also
derive from the matching builtin, so both MXNet-style and plain Python
handlers catch them.
"""
from __future__ import annotations


class MXNetError(RuntimeError):
    """Base of every error hybridgraph raises on purpose."""


class ShapeError(MXNetError, ValueError):
    """Shapes that do not fit an operator (inference or execution)."""


class OutOfRangeError(ShapeError, IndexError):
    """An index outside an array's shape (a kernel's IndexError, named with the operator)."""


class DTypeError(MXNetError, TypeError):
    """Dtypes that do not fit an operator."""


class AttrError(MXNetError, ValueError):
    """An operator attribute that is missing, unknown or unparsable."""


class OperatorNotFound(MXNetError, KeyError):
    """An operator name that the registry does not know."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class FormatError(MXNetError, ValueError):
    """A malformed .params or -symbol.json file."""


class AutogradError(MXNetError):
    """Misuse of autograd: backward twice, non-differentiable op, unmarked variable."""


class NotImplementedForSymbol(MXNetError, NotImplementedError):
    """An NDArray-only operation applied to a Symbol (MXNet's class of this name)."""

    def __init__(self, function, alias=None, *args):
        self.function = getattr(function, "__name__", str(function))
        self.alias = alias
        self.args_ = [str(type(a)) for a in args]
        super().__init__(self._message())

    def _message(self) -> str:
        msg = f"Function {self.function}"
        if self.alias:
            msg += f" (namely operator \"{self.alias}\")"
        if self.args_:
            msg += " with arguments (" + ", ".join(self.args_) + ")"
        return msg + " is not implemented for Symbol and only available in NDArray."


def kernel_error_class(exc: BaseException) -> type:
    """The MXNetError class for a kernel's own (numpy's) error: OutOfRangeError for an
    IndexError, ShapeError for a ValueError, DTypeError for a TypeError, else MXNetError.
    Each also derives from the builtin, so handlers of the builtin still catch it."""
    if isinstance(exc, IndexError):
        return OutOfRangeError
    if isinstance(exc, ValueError):
        return ShapeError
    return DTypeError if isinstance(exc, TypeError) else MXNetError


_COMBINED: dict[tuple[type, type], type] = {}


def also_like(cls: type, exc: BaseException) -> type:
    """`cls` (a wrapper such as the plan's ExecutionError), made also a subclass of the error
    class `exc` is or stands for: its own MXNetError class, or `kernel_error_class(exc)`.
    Handlers written for the direct call keep working when the same failure comes wrapped."""
    base = type(exc) if isinstance(exc, MXNetError) else kernel_error_class(exc)
    if base is MXNetError or issubclass(base, cls):
        return cls
    key = (cls, base)
    if key not in _COMBINED:
        try:
            _COMBINED[key] = type(cls.__name__, (cls, base), {"__module__": cls.__module__})
        except TypeError:   # classes that cannot be combined (layout conflict)
            _COMBINED[key] = cls
    return _COMBINED[key]
