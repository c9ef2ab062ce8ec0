"""`gluon.contrib.rnn`: convolutional RNN cells (more contrib cells may join here)."""
from __future__ import annotations

from .conv_rnn_cell import *  # noqa: F403
from .conv_rnn_cell import __all__ as _conv_all

__all__ = list(_conv_all)
