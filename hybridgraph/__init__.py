"""`import hybridgraph as mx`: MXNet 1.x's top-level namespace on hybridgraph.

The real packages are `nd`, `symbol` and `hybrid` (top level); this module
only gathers them under MXNet's names so scripts run after changing their
import line.
"""
from __future__ import annotations

import nd
from nd import autograd  # noqa: F401
from nd.backend import Context, cpu, cpu_pinned, current_context, gpu, num_gpus  # noqa: F401
from nd.errors import MXNetError  # noqa: F401

from . import context  # noqa: F401

ndarray = nd
__version__ = "1.9.1"
