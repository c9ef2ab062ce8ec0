"""MXNet 1.9.1 modules hybridgraph does not provide, and the error that says so.

`mx.engine`, `import mxnet.rtc`, ... must not end in a bare AttributeError or
ModuleNotFoundError: the user gets a NotImplementedError that names the MXNet
feature and what to use instead. A module hybridgraph ships itself (another
part of the project may add one of these names) always wins over this list. The error classes also derive from
AttributeError / ModuleNotFoundError so that `hasattr(mx, 'engine')` and
`try: import ... except ImportError` keep working.
"""
from __future__ import annotations

from hybridgraph.nd.errors import MXNetError, OperatorNotFound

# MXNet module (attribute of `mxnet`) -> what to use instead
MISSING_MODULES: dict[str, str] = {
    "engine": "nothing: hybridgraph runs operators synchronously, there is no engine to configure "
              "(mx.waitall() and NDArray.wait_to_read() are no-ops)",
    "library": "register operators in Python with mx.operator.CustomOp / mx.operator.register; "
               "C++ extension libraries (mx.library.load) cannot be loaded",
    "rtc": "write the kernel with cupy (cupy.RawKernel) or as an mx.operator.CustomOp",
    "torch": "convert arrays with NDArray.asnumpy() / mx.nd.array()",
    "th": "convert arrays with NDArray.asnumpy() / mx.nd.array()",
    "tvmop": "the regular operators (TVM-generated kernels are not part of hybridgraph)",
    "executor_manager": "mx.mod.Module (the executor manager of the old FeedForward API is not provided)",
    "notebook": "print metrics from a callback or Estimator event handler",
    "libinfo": "mx.runtime.Features() for what this installation supports",
    "api": "the Python API (MXNet's FFI api module is internal)",
    "numpy_op_fallback": "mx.np functions",
    "numpy_dispatch_protocol": "mx.np functions",
    "numpy_op_signature": "mx.np functions",
    "ndarray_doc": "help(mx.nd.<op>)",
    "symbol_doc": "help(mx.sym.<op>)",
    "log": "Python's logging module",
    "error": "mx.base.MXNetError (hybridgraph.nd.errors)",
    "contrib.amp": "float32 training (automatic mixed precision is not part of hybridgraph)",
    "contrib.quantization": "float32 models (INT8 quantization is not part of hybridgraph)",
    "contrib.tensorboard": "a metrics callback writing with tensorboardX or torch.utils.tensorboard",
    "contrib.onnx.onnx2mx": "mx.onnx.import_model",
}


def _message(feature: str, alternative: str) -> str:
    return f"MXNet's {feature} is not supported by hybridgraph. Instead: {alternative}."


class UnsupportedAttribute(MXNetError, NotImplementedError, AttributeError):
    """`mx.<name>` for an MXNet module hybridgraph does not have."""


class UnsupportedOperator(UnsupportedAttribute, OperatorNotFound):
    """A -symbol.json (or graph) using MXNet 1.9.1 operators hybridgraph does not provide; also an
    OperatorNotFound (KeyError), the error for operators the registry lacks. `missing`: op -> nodes."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class UnsupportedModule(MXNetError, NotImplementedError, ModuleNotFoundError):
    """`import hybridgraph.<name>` for an MXNet module hybridgraph does not have."""


def missing_prefix(parts: list[str]) -> str | None:
    """The longest dotted prefix of `parts` (a module path below the package) that is listed
    in MISSING_MODULES, or None."""
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        if name in MISSING_MODULES:
            return name
    return None


def missing_attribute(package: str, name: str) -> UnsupportedAttribute:
    """The error for `package.name` (an MXNet module in MISSING_MODULES)."""
    return UnsupportedAttribute(_message(f"mx.{name}", MISSING_MODULES[name]))


def missing_module(fullname: str, name: str) -> UnsupportedModule:
    """The error for importing `fullname` (whose first level below the package is `name`)."""
    err = UnsupportedModule(_message(f"mxnet.{name}", MISSING_MODULES[name]))
    err.name = fullname
    return err
