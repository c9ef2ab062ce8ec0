"""hybridgraph.hybrid: the Gluon API (`mx.gluon`)."""
from __future__ import annotations

from . import data, initializer, loss, lr_scheduler, metric, model_zoo, nn, optimizer, rnn, trainer, utils  # noqa: F401
from . import contrib  # noqa: F401
from .block import Block
from .hybrid_block import HybridBlock
from .parameter import Constant, DeferredInitializationError, Parameter, ParameterDict
from .symbol_block import SymbolBlock
from .trainer import Trainer

nn.SymbolBlock = SymbolBlock  # MXNet also exposes it as gluon.nn.SymbolBlock
nn.__all__.append("SymbolBlock")

__all__ = ["Block", "HybridBlock", "Parameter", "ParameterDict", "Constant", "DeferredInitializationError",
           "nn", "rnn", "initializer", "SymbolBlock", "Trainer", "data", "utils", "loss"]
