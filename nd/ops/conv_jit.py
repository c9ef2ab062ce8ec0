"""Compiled im2col and col2im of 2-D convolutions (conv_kernels.py), used with the optional
`[jit]` extra (jit.py).

In numpy, im2col is one strided copy per kernel tap whose runs are a row of the output
(8 elements for LeNet's second layer), and col2im is one strided add per tap into the
padded image: both cost several times their memory traffic (LeNet's 20->50 5x5 layer at
batch 64: 1.75 ms for 8 MB of columns, and 5.6 ms of col2im beside a 1.7 ms GEMM). Compiled,
each is one pass: im2col writes every column row once, zeros for the padding included,
and col2im adds every tap of an image's channel while that plane is in cache.

Layout as conv_kernels._im2col: columns (C, KH, KW, N, OH, OW) of a channel-first input.
Without numba, or with HYBRIDGRAPH_JIT=0, `kernels()` is None and conv_kernels keeps its
numpy path, the reference (tests/nd/test_conv_jit.py compares the two).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from . import jit


class Kernels(NamedTuple):
    """im2col(x, stride, dilate, pad, cols) and col2im(cols, stride, dilate, pad, out), both
    2-D with (row, column) tuples."""

    im2col: Callable
    col2im: Callable


def kernels() -> Kernels | None:
    """The compiled kernels, or None without numba or with the switch off."""
    return jit.kernels("conv", _compile)


def _span(n_out, size, stride, offset):
    """[lo, hi): the outputs o whose input index o * stride + offset is inside [0, size)."""
    lo = 0 if offset >= 0 else (-offset + stride - 1) // stride
    hi = 0 if size - offset <= 0 else min(n_out, (size - offset + stride - 1) // stride)
    return lo, max(lo, hi)


U = np.uint64

#: _span compiled (by _compile): the kernels call it as a global, not a closure variable,
#: so that numba's disk cache recognises them in the next process
span = None


def _compile() -> Kernels:
    global span
    span = jit.njit(_span)

    # every index is cast to unsigned (U): numba checks signed indices for wrapping around
    # from the end, which keeps LLVM from vectorising the loops (measured: 5x slower)
    def im2col(x, stride, dilate, pad, cols):
        """cols[c, ky, kx, n, oy, ox] = x[n, c, oy*sy + ky*dy - py, ox*sx + kx*dx - px], 0 outside."""
        n, c, h, w = x.shape
        kh, kw, oh, ow = cols.shape[1], cols.shape[2], cols.shape[4], cols.shape[5]
        sy, sx = stride
        for ch in range(c):
            for ky in range(kh):
                offy = ky * dilate[0] - pad[0]
                ylo, yhi = span(oh, h, sy, offy)
                for kx in range(kw):
                    offx = kx * dilate[1] - pad[1]
                    xlo, xhi = span(ow, w, sx, offx)
                    for i in range(n):
                        dst = cols[U(ch), U(ky), U(kx), U(i)]
                        for oy in range(oh):
                            if oy < ylo or oy >= yhi:
                                for ox in range(ow):
                                    dst[U(oy), U(ox)] = 0
                                continue
                            iy = U(oy * sy + offy)
                            for ox in range(xlo):
                                dst[U(oy), U(ox)] = 0
                            for ox in range(xlo, xhi):
                                dst[U(oy), U(ox)] = x[U(i), U(ch), iy, U(ox * sx + offx)]
                            for ox in range(xhi, ow):
                                dst[U(oy), U(ox)] = 0

    def col2im(cols, stride, dilate, pad, out):
        """out[n, c] = the sum of every column entry's value at its input position (im2col's
        adjoint); positions in the padding are dropped."""
        n, c, h, w = out.shape
        kh, kw, oh, ow = cols.shape[1], cols.shape[2], cols.shape[4], cols.shape[5]
        sy, sx = stride
        for i in range(n):
            for ch in range(c):
                plane = out[U(i), U(ch)]
                for y in range(h):
                    for x in range(w):
                        plane[U(y), U(x)] = 0
                for ky in range(kh):
                    offy = ky * dilate[0] - pad[0]
                    ylo, yhi = span(oh, h, sy, offy)
                    for kx in range(kw):
                        offx = kx * dilate[1] - pad[1]
                        xlo, xhi = span(ow, w, sx, offx)
                        for oy in range(ylo, yhi):
                            iy = U(oy * sy + offy)
                            for ox in range(xlo, xhi):
                                plane[iy, U(ox * sx + offx)] += cols[U(ch), U(ky), U(kx), U(i), U(oy), U(ox)]

    return Kernels(jit.njit(im2col), jit.njit(col2im))
