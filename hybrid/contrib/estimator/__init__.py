"""`mx.gluon.contrib.estimator`: MXNet 1.9.1's training-loop helper (Estimator) and its event handlers."""
from __future__ import annotations

from . import batch_processor, estimator, event_handler  # noqa: F401
from .batch_processor import *  # noqa: F403
from .estimator import *  # noqa: F403
from .event_handler import *  # noqa: F403

__all__ = estimator.__all__ + event_handler.__all__ + batch_processor.__all__
