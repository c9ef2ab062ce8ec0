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
