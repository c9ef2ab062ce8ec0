"""`mx.contrib`: MXNet's contributed Python modules that hybridgraph provides."""
from __future__ import annotations

from . import io  # noqa: F401
