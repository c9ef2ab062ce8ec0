"""`mx.contrib.amp`: MXNet 1.9.1's automatic mixed precision, which hybridgraph does not provide.

The module imports (MXNet scripts and MXNet's own tests import it at the top and use it
only when asked for mixed precision); every function of it (`amp.init`, `init_trainer`,
`scale_loss`, `convert_model`, ...) raises a NotImplementedError naming the alternative.
"""
from __future__ import annotations

from . import amp
from .amp import __getattr__  # noqa: F401 - `from mxnet.contrib.amp import init` fails the same way

__all__ = ["amp"]
