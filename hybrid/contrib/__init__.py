"""`mx.gluon.contrib`: MXNet 1.9.1's contributed Gluon layers (see nn.py)."""
from __future__ import annotations

from . import cnn, data, estimator, nn, rnn  # noqa: F401

__all__ = ["nn", "rnn", "data", "estimator", "cnn"]
