"""`nd.contrib.isnan / isinf / isfinite`: MXNet 1.9.1's Python helpers, composed of registry ops.

Each returns 1/0 in the input's dtype, as MXNet's do (they are comparisons,
which give the input dtype in MXNet 1.x).
"""
from __future__ import annotations

from typing import Any

import numpy as np


def isinf(data: Any) -> Any:
    """1 where `data` is +inf or -inf."""
    return data.abs() == np.inf


def isfinite(data: Any) -> Any:
    """1 where `data` is neither inf nor nan."""
    from hybridgraph import nd  # noqa: PLC0415 - the generated op functions
    return nd.logical_and(data == data, data.abs() != np.inf)  # noqa: PLR0124 - nan test


def isnan(data: Any) -> Any:
    """1 where `data` is nan."""
    return data != data  # noqa: PLR0124 - only nan differs from itself


def install(module: Any) -> None:
    """Put the checks into a namespace module (`nd.contrib`)."""
    for fn in (isinf, isfinite, isnan):
        setattr(module, fn.__name__, fn)
