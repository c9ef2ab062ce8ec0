"""Gluon neural network layers (`mx.gluon.nn`)."""
from __future__ import annotations

import importlib
import pkgutil

from ..block import Block
from ..hybrid_block import HybridBlock
from .containers import HybridLambda, HybridSequential, Identity, Lambda, Sequential

__all__ = ["Block", "HybridBlock", "Sequential", "HybridSequential", "Lambda", "HybridLambda", "Identity"]

# every layer module in this package contributes its public names (to `from gluon.nn import *` too)
for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name != "containers":
        _mod = importlib.import_module(f"{__name__}.{_info.name}")
        globals().update({k: getattr(_mod, k) for k in getattr(_mod, "__all__", ())})
        __all__ += [k for k in getattr(_mod, "__all__", ()) if k not in __all__]
