"""Compiled gradient of 2-D max pooling (pool.py), used with the optional `[jit]` extra (jit.py).

numpy finds each window's first maximum tap by tap: an equality test, two boolean ops, a
multiply and a scatter-add over every output per kernel offset (ResNet-18's 3x3 stride-2
pooling at batch 8: 23 ms). Compiled, each window is scanned once and stops at its first
maximum, whose position receives the output's gradient, as MXNet's CPU kernel does.

Ties go to the first maximum in row-major order and a NaN window (no tap equals its output)
passes nothing, as pool.pool_backward's numpy path; so does an output gradient that is not
finite, which also puts its product with 0 (NaN) on the window's other taps there. Without
numba, or with HYBRIDGRAPH_JIT=0, `kernels()` is None and pool.py keeps its numpy path, the
reference (tests/nd/test_pool_jit.py compares the two).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from . import jit

#: indices cast to unsigned: numba checks signed ones for wrapping around from the end
U = np.uint64


class Kernels(NamedTuple):
    """max_pool_grad(x, y, g, kernel, stride, pad_lo, dx): 2-D, channel-first."""

    max_pool_grad: Callable


def kernels() -> Kernels | None:
    """The compiled kernel, or None without numba or with the switch off."""
    return jit.kernels("pool", _compile)


def _compile() -> Kernels:
    def max_pool_grad(x, y, g, kernel, stride, pad_lo, dx):
        n, c, h, w = x.shape
        oh, ow = y.shape[2], y.shape[3]
        for i in range(n):
            for ch in range(c):
                src, dst = x[U(i), U(ch)], dx[U(i), U(ch)]
                for row in range(h):
                    for col in range(w):
                        dst[U(row), U(col)] = 0
                for oy in range(oh):
                    for ox in range(ow):
                        top, gv = y[U(i), U(ch), U(oy), U(ox)], g[U(i), U(ch), U(oy), U(ox)]
                        finite = np.isfinite(gv)
                        hit = False
                        for ky in range(kernel[0]):
                            iy = oy * stride[0] - pad_lo[0] + ky
                            if iy < 0 or iy >= h:
                                continue
                            for kx in range(kernel[1]):
                                ix = ox * stride[1] - pad_lo[1] + kx
                                if ix < 0 or ix >= w:
                                    continue
                                if not hit and src[U(iy), U(ix)] == top:
                                    dst[U(iy), U(ix)] += gv
                                    hit = True
                                    if finite:
                                        break
                                elif not finite:
                                    dst[U(iy), U(ix)] += gv * 0
                            if hit and finite:
                                break

    return Kernels(jit.njit(max_pool_grad))
