"""Compiled elementwise backward kernels, used with the optional `[jit]` extra (jit.py).

numpy runs an expression as one pass per operator, each writing a full-size temporary:
relu's backward, `ograd * max(sign(out), 0)`, is three passes over arrays that do not fit in
cache (ResNet-18 at batch 8: 17 calls, ~28 ms of a training step). Compiled, it is one pass
with the same arithmetic, so the same bits: the step is 1, +0 or NaN, then one multiply.

Without numba, or with HYBRIDGRAPH_JIT=0, `kernels()` is None and elemwise.py keeps its
numpy path, the reference (tests/nd/test_elemwise_jit.py compares the two).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from . import jit

#: fewest elements for which the compiled pass beats numpy's (below, the call costs more)
MIN_SIZE = 1 << 12


class Kernels(NamedTuple):
    """relu_grad(ograd, out, result): 1-D arrays of one length."""

    relu_grad: Callable


def kernels() -> Kernels | None:
    """The compiled kernels, or None without numba or with the switch off."""
    return jit.kernels("elemwise", _compile)


def applies(*arrays) -> bool:
    """Whether the compiled kernels take these numpy arrays: one shape, one float dtype
    (float32 or float64), C-contiguous, at least MIN_SIZE elements."""
    a0 = arrays[0]
    return (isinstance(a0, np.ndarray) and a0.size >= MIN_SIZE and a0.dtype in (np.float32, np.float64)
            and all(isinstance(a, np.ndarray) and a.shape == a0.shape and a.dtype == a0.dtype
                    and a.flags.c_contiguous for a in arrays))


def _compile() -> Kernels:
    def relu_grad(g, y, res):
        """res = g * step(y): step 1 above zero, NaN for NaN, +0 otherwise (numpy's
        max(sign(y), 0))."""
        one, zero = y.dtype.type(1), y.dtype.type(0)
        for i in range(y.shape[0]):
            v = y[i]
            step = one if v > zero else (v if np.isnan(v) else zero)
            res[i] = g[i] * step

    return Kernels(jit.njit(relu_grad))
