"""Recurrent neural network module (`mx.gluon.rnn`): fused layers and unrollable cells."""
from __future__ import annotations

from .rnn_cell import (BidirectionalCell, DropoutCell, GRUCell, HybridRecurrentCell,
                       HybridSequentialRNNCell, LSTMCell, ModifierCell, RecurrentCell, ResidualCell,
                       RNNCell, SequentialRNNCell, ZoneoutCell)
from .rnn_layer import GRU, LSTM, RNN

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell",
           "SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell", "BidirectionalCell", "RNN", "LSTM", "GRU"]
