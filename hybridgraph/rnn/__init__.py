"""`mx.rnn`: MXNet 1.x's legacy symbolic RNN API — cells that build Symbol graphs, bucketing data
iterators and RNN checkpoints (use with mx.mod.BucketingModule)."""
from __future__ import annotations

from . import cells, checkpoint, conv_cells, io
from .cells import *  # noqa: F403
from .checkpoint import *  # noqa: F403
from .conv_cells import *  # noqa: F403
from .io import *  # noqa: F403

__all__ = cells.__all__ + conv_cells.__all__ + io.__all__ + checkpoint.__all__  # noqa: PLE0605
