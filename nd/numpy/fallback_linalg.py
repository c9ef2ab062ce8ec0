"""`mx.np.fallback_linalg`: the `numpy.linalg` functions MXNet 1.9.1's `mx.np.linalg` runs with NumPy
itself (see fallback.py: mx.np arrays go through `__array_function__`)."""
from __future__ import annotations

import numpy as onp

__all__ = ["cond", "lstsq", "matrix_power", "matrix_rank", "multi_dot", "qr"]

cond, lstsq, matrix_power = onp.linalg.cond, onp.linalg.lstsq, onp.linalg.matrix_power
matrix_rank, multi_dot, qr = onp.linalg.matrix_rank, onp.linalg.multi_dot, onp.linalg.qr
