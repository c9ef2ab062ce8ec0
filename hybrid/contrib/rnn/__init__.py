"""`gluon.contrib.rnn`: convolutional RNN cells, VariationalDropoutCell, LSTMPCell, dynamic_unroll."""
from __future__ import annotations

from . import conv_rnn_cell, rnn_cell
from .conv_rnn_cell import *  # noqa: F403
from .rnn_cell import *  # noqa: F403

__all__ = conv_rnn_cell.__all__ + rnn_cell.__all__  # noqa: PLE0605
