"""Compiled gradient of 2-D max pooling (pool.py), used with the optional `[jit]` extra (jit.py).

numpy finds each window's first maximum tap by tap: an equality test, two boolean ops, a
multiply and a scatter-add over every output per kernel offset (ResNet-18's 3x3 stride-2
pooling at batch 8: 73 ms). Compiled, each window inside the image is scanned once by selects
(no branch the data decides; 3x3 windows unrolled: 25 -> 13 ms), and its first maximum's
position receives the output's gradient, as MXNet's CPU kernel does. Windows that tile the
input 2x2 / 2 (LeNet's, VGG's) take a pass of their own that writes every input once with
pool._tiled_max_backward's arithmetic (LeNet's first pool at batch 64: 1.6 -> 1.0 ms).

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
    """max_pool_grad(x, y, g, kernel, stride, pad_lo, dx): 2-D, channel-first;
    tiled_max_grad_2x2(x, y, g, dx) and tiled_max_2x2(x, y), the forward: 2x2 windows,
    stride 2, tiling x exactly."""

    max_pool_grad: Callable
    tiled_max_grad_2x2: Callable
    tiled_max_2x2: Callable


def kernels() -> Kernels | None:
    """The compiled kernel, or None without numba or with the switch off."""
    return jit.kernels("pool", _compile)


def _window(src, dst, top, gv, iy0, ix0, kernel, h, w):  # noqa: PLR0917 - one window's state
    """One window that crosses the border or has a non-finite gradient: its first
    maximum inside the image gets gv; a non-finite gv puts gv * 0 on the others."""
    finite = np.isfinite(gv)
    hit = False
    for ky in range(kernel[0]):
        iy = iy0 + ky
        if iy < 0 or iy >= h:
            continue
        for kx in range(kernel[1]):
            ix = ix0 + kx
            if ix < 0 or ix >= w:
                continue
            if not hit and src[U(iy), U(ix)] == top:
                dst[U(iy), U(ix)] += gv
                hit = True
                if finite:
                    return
            elif not finite:
                dst[U(iy), U(ix)] += gv * 0


def _first_max(src, top, iy0, ix0, w, kh, kw):  # noqa: PLR0917 - one window's state
    """Flat offset in the plane src of the first tap (row-major) of the kh x kw window at
    (iy0, ix0) that equals top, or -1: by selects, not branches, which the data would decide
    (mispredicted about every window); inlined, so constant kh, kw unroll the loops."""
    sel = -1
    for ky in range(kh - 1, -1, -1):
        srow = src[U(iy0 + ky)]
        base = (iy0 + ky) * w + ix0
        for kx in range(kw - 1, -1, -1):
            sel = base + kx if srow[U(ix0 + kx)] == top else sel
    return sel


def _maximum(p, q):
    """np.maximum of two scalars: p unless q is larger, NaN if p is (q's NaN is caught by the
    comparison failing: p >= NaN is false)."""
    return p if (p >= q or np.isnan(p)) else q


#: _window, _first_max and _maximum compiled (by _compile): the kernels call them as globals,
#: not closure variables, so that numba's disk cache recognises the kernels in the next process
window = first_max = maximum = None


def _compile() -> Kernels:
    global window, first_max, maximum
    window = jit.njit(_window)
    first_max = jit.njit(_first_max, inline=True)
    maximum = jit.njit(_maximum, inline=True)

    def max_pool_grad(x, y, g, kernel, stride, pad_lo, dx):
        n, c, h, w = x.shape
        oh, ow = y.shape[2], y.shape[3]
        for i in range(n):
            for ch in range(c):
                src, dst = x[U(i), U(ch)], dx[U(i), U(ch)]
                flat = dst.reshape(h * w)
                for e in range(h * w):
                    flat[U(e)] = 0
                for oy in range(oh):
                    iy0 = oy * stride[0] - pad_lo[0]
                    rows_inside = iy0 >= 0 and iy0 + kernel[0] <= h
                    for ox in range(ow):
                        top, gv = y[U(i), U(ch), U(oy), U(ox)], g[U(i), U(ch), U(oy), U(ox)]
                        ix0 = ox * stride[1] - pad_lo[1]
                        if rows_inside and ix0 >= 0 and ix0 + kernel[1] <= w and np.isfinite(gv):
                            # inside the image, a finite gradient: to the first maximum
                            if kernel[0] == 3 and kernel[1] == 3:     # constant bounds: unrolled
                                sel = first_max(src, top, iy0, ix0, w, 3, 3)
                            else:
                                sel = first_max(src, top, iy0, ix0, w, kernel[0], kernel[1])
                            if sel >= 0:
                                flat[U(sel)] += gv
                            continue
                        window(src, dst, top, gv, iy0, ix0, kernel, h, w)

    def tiled_max_grad_2x2(x, y, g, dx):
        """pool._tiled_max_backward for 2x2 / 2 windows (LeNet's, VGG's), its arithmetic in
        one pass: each tap gets g * (1 if it is the window's first maximum else 0)."""
        n, c, oh, ow = y.shape
        one, zero = x.dtype.type(1), x.dtype.type(0)
        for i in range(n):
            for ch in range(c):
                for oy in range(oh):
                    r0, r1 = x[U(i), U(ch), U(2 * oy)], x[U(i), U(ch), U(2 * oy + 1)]
                    d0, d1 = dx[U(i), U(ch), U(2 * oy)], dx[U(i), U(ch), U(2 * oy + 1)]
                    yr, gr = y[U(i), U(ch), U(oy)], g[U(i), U(ch), U(oy)]
                    for ox in range(ow):
                        t, gv, j = yr[U(ox)], gr[U(ox)], U(2 * ox)
                        h0 = r0[j] == t
                        h1 = (r0[j + U(1)] == t) and not h0
                        h2 = (r1[j] == t) and not (h0 or h1)
                        h3 = (r1[j + U(1)] == t) and not (h0 or h1 or h2)
                        d0[j] = gv * (one if h0 else zero)
                        d0[j + U(1)] = gv * (one if h1 else zero)
                        d1[j] = gv * (one if h2 else zero)
                        d1[j + U(1)] = gv * (one if h3 else zero)

    def tiled_max_2x2(x, y):
        """y = the max of each 2x2 / 2 window of x, as pool._reduce_dim's np.maximum passes
        take it (rows, then columns: the same order, so NaN and signed zeros come out alike)."""
        n, c, oh, ow = y.shape
        for i in range(n):
            for ch in range(c):
                for oy in range(oh):
                    r0, r1 = x[U(i), U(ch), U(2 * oy)], x[U(i), U(ch), U(2 * oy + 1)]
                    yr = y[U(i), U(ch), U(oy)]
                    for ox in range(ow):
                        j = U(2 * ox)
                        yr[U(ox)] = maximum(maximum(r0[j], r1[j]), maximum(r0[j + U(1)], r1[j + U(1)]))

    return Kernels(jit.njit(max_pool_grad), jit.njit(tiled_max_grad_2x2), jit.njit(tiled_max_2x2))
