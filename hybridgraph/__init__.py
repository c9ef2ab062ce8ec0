"""`import hybridgraph as mx`: MXNet 1.x's top-level namespace on hybridgraph.

The real packages are `nd`, `symbol` and `hybrid` (top level); this module
gathers them under MXNet's names, as attributes (`mx.gluon.nn.Dense`) and as
importable submodules (`from hybridgraph.gluon import nn`), so MXNet scripts
run after changing their import line.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

# MXNet module name -> the hybridgraph module that provides it
ALIASES = {
    "nd": "nd", "ndarray": "nd", "autograd": "nd.autograd", "random": "nd.random",
    "sym": "symbol", "symbol": "symbol", "context": "hybridgraph.context",
    "gluon": "hybrid", "init": "hybrid.initializer", "initializer": "hybrid.initializer",
    "optimizer": "hybrid.optimizer", "lr_scheduler": "hybrid.lr_scheduler", "metric": "hybrid.metric",
    "base": "hybridgraph.base", "test_utils": "hybridgraph.test_utils", "model": "hybridgraph.model",
    "io": "hybridgraph.io", "callback": "hybridgraph.callback", "module": "hybridgraph.module",
    "mod": "hybridgraph.module", "viz": "symbol.viz", "visualization": "symbol.viz",
    "kvstore": "hybridgraph.kvstore", "name": "symbol.naming", "attribute": "symbol.naming",
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


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Makes `hybridgraph.gluon.nn` import `hybrid.nn`, and so on for every alias."""

    def find_spec(self, fullname, path, target=None):
        real = _target(fullname)
        if real is None or importlib.util.find_spec(real) is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(real))


sys.meta_path.insert(0, _AliasFinder())

import nd  # noqa: E402
from nd import autograd  # noqa: E402, F401
from nd.backend import Context, cpu, cpu_pinned, current_context, gpu, num_gpus  # noqa: E402, F401
from nd.errors import MXNetError  # noqa: E402, F401

from . import context  # noqa: E402, F401

ndarray = nd
__version__ = "1.9.1"


def __getattr__(name: str):
    """`mx.gluon`, `mx.sym`, ... are imported on first use."""
    if name in ALIASES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'hybridgraph' has no attribute {name!r}")


def waitall() -> None:
    """Wait for all pending computation (a no-op: numpy runs synchronously)."""
