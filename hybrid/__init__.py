"""hybridgraph.hybrid: the Gluon API (`mx.gluon`)."""
from __future__ import annotations

from . import initializer, nn  # noqa: F401
from .block import Block
from .hybrid_block import HybridBlock
from .parameter import Constant, DeferredInitializationError, Parameter, ParameterDict
from .symbol_block import SymbolBlock

__all__ = ["Block", "HybridBlock", "Parameter", "ParameterDict", "Constant", "DeferredInitializationError",
           "nn", "initializer", "SymbolBlock"]
