"""`import hybridgraph as mx`: MXNet 1.x's top-level namespace on hybridgraph.

The three layers are real subpackages, `hybridgraph.nd`, `hybridgraph.symbol`
and `hybridgraph.gluon` (the repository's `nd/`, `symbol/` and `hybrid/`
folders); nothing else is installed at the top level. MXNet's other module names
(`mx.ndarray`, `mx.sym`, `mx.init`, ...) are aliases of modules in them, as
attributes (`mx.init.Xavier`) and as importable submodules
(`from hybridgraph.init import Xavier`), so MXNet scripts run after changing
their import line.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys

from . import unsupported as _unsupported  # noqa: E402 - before the finder below, which consults it

# MXNet module name -> the hybridgraph module that provides it
ALIASES = {
    "nd": "hybridgraph.nd", "ndarray": "hybridgraph.nd", "autograd": "hybridgraph.nd.autograd",
    "random": "hybridgraph.nd.random", "sym": "hybridgraph.symbol", "symbol": "hybridgraph.symbol",
    "context": "hybridgraph.context", "gluon": "hybridgraph.gluon",
    "init": "hybridgraph.gluon.initializer", "initializer": "hybridgraph.gluon.initializer",
    "optimizer": "hybridgraph.gluon.optimizer", "lr_scheduler": "hybridgraph.gluon.lr_scheduler",
    "metric": "hybridgraph.gluon.metric", "base": "hybridgraph.base", "test_utils": "hybridgraph.test_utils",
    "model": "hybridgraph.model", "io": "hybridgraph.io", "callback": "hybridgraph.callback",
    "module": "hybridgraph.module", "mod": "hybridgraph.module", "viz": "hybridgraph.symbol.viz",
    "visualization": "hybridgraph.symbol.viz", "kvstore": "hybridgraph.kvstore", "kv": "hybridgraph.kvstore",
    "name": "hybridgraph.symbol.naming", "attribute": "hybridgraph.symbol.naming", "onnx": "hybridgraph.onnx",
    "image": "hybridgraph.image", "img": "hybridgraph.image", "recordio": "hybridgraph.recordio",
    "util": "hybridgraph.util", "runtime": "hybridgraph.runtime", "operator": "hybridgraph.operator",
    "profiler": "hybridgraph.profiler", "rnn": "hybridgraph.rnn", "contrib": "hybridgraph.contrib",
    "monitor": "hybridgraph.monitor", "mon": "hybridgraph.monitor",
    "np": "hybridgraph.nd.numpy", "numpy": "hybridgraph.nd.numpy",
    "npx": "hybridgraph.nd.numpy_extension", "numpy_extension": "hybridgraph.nd.numpy_extension",
}


def _target(fullname: str) -> str | None:
    parts = fullname.split(".")
    if parts[0] != __name__ or len(parts) < 2 or parts[1] not in ALIASES:
        return None
    base = ALIASES[parts[1]]
    if base == f"{__name__}.{parts[1]}":
        return None  # a real subpackage (hybridgraph.module, ...): the normal import finds it and its children
    return ".".join([base, *parts[2:]])


class _AliasLoader(importlib.abc.Loader):
    """Hands out the real module under the alias name, leaving the module itself untouched."""

    def __init__(self, target: str):
        self.target = target
        self._saved: tuple = ()

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        self._saved = (module.__spec__, getattr(module, "__loader__", None))
        return module

    def exec_module(self, module):
        # the import system stamped the alias spec on the module; put the real one back
        module.__spec__, module.__loader__ = self._saved


class _UnsupportedLoader(importlib.abc.Loader):
    """Importing an MXNet module hybridgraph lacks raises NotImplementedError naming the alternative."""

    def __init__(self, fullname: str, name: str):
        self.fullname, self.name = fullname, name

    def create_module(self, spec):
        raise _unsupported.missing_module(self.fullname, self.name)

    def exec_module(self, module):  # never reached: create_module raises
        raise AssertionError(self.fullname)


def _really_there(name: str) -> bool:
    """Whether hybridgraph ships a module `name` (dotted below the package) itself; it then
    wins over the unsupported list."""
    parent, _, leaf = f"{__name__}.{name}".rpartition(".")
    path = getattr(sys.modules.get(parent), "__path__", None)
    return path is not None and importlib.machinery.PathFinder.find_spec(f"{parent}.{leaf}", path) is not None


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Makes `hybridgraph.init` import `hybridgraph.gluon.initializer`, and so on for every alias."""

    def find_spec(self, fullname, path, target=None):
        parts = fullname.split(".")
        if len(parts) >= 2 and parts[0] == __name__:
            missing = _unsupported.missing_prefix(parts[1:])
            if missing is not None and missing not in ALIASES and not _really_there(missing):
                return importlib.util.spec_from_loader(fullname, _UnsupportedLoader(fullname, missing))
        real = _target(fullname)
        if real is None or importlib.util.find_spec(real) is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(real))


sys.meta_path.insert(0, _AliasFinder())

from hybridgraph import nd  # noqa: E402
from hybridgraph.nd import autograd  # noqa: E402, F401
from hybridgraph.nd.backend import Context, cpu, cpu_pinned, current_context, gpu, num_gpus  # noqa: E402, F401
from hybridgraph.nd.errors import MXNetError  # noqa: E402, F401

from . import context  # noqa: E402, F401
from hybridgraph.symbol.naming import AttrScope  # noqa: E402, F401
from .util import (is_np_array, is_np_shape, np_array, np_shape, set_np_shape, use_np, use_np_array,  # noqa: E402, F401
                   use_np_shape)

ndarray = nd
__version__ = "1.9.1"


def __getattr__(name: str):
    """`mx.gluon`, `mx.sym`, ... are imported on first use."""
    if name in ALIASES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    if name in _unsupported.MISSING_MODULES:
        if _really_there(name):
            module = importlib.import_module(f"{__name__}.{name}")
            globals()[name] = module
            return module
        raise _unsupported.missing_attribute(__name__, name)
    raise AttributeError(f"module 'hybridgraph' has no attribute {name!r}")


def waitall() -> None:
    """Wait for all pending computation (a no-op: numpy runs synchronously)."""
