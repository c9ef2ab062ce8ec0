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


def _taps(k, n_out, size, stride, dilate, pad):
    """(offset, first output, end output) of each of the k kernel taps along one dim: tap t
    reads input o * stride + offset for output o, inside [0, size) for o in [first, end)."""
    res = np.empty((k, 3), np.int64)
    for t in range(k):
        off = t * dilate - pad
        lo = 0 if off >= 0 else (-off + stride - 1) // stride
        hi = 0 if size - off <= 0 else min(n_out, (size - off + stride - 1) // stride)
        res[t, 0], res[t, 1], res[t, 2] = off, lo, max(lo, hi)
    return res


U = np.uint64

def _plane_taps(in_hw, cols_shape, stride, dilate, pad):
    """_taps of both dims (rows, columns) of a convolution of planes `in_hw` (H, W) whose
    columns have shape (C, KH, KW, N, OH, OW)."""
    kh, kw, oh, ow = cols_shape[1], cols_shape[2], cols_shape[4], cols_shape[5]
    return (taps(kh, oh, in_hw[0], stride[0], dilate[0], pad[0]),
            taps(kw, ow, in_hw[1], stride[1], dilate[1], pad[1]))


#: _taps and _plane_taps compiled (by _compile): the kernels call them as globals, not
#: closure variables, so that numba's disk cache recognises them in the next process
taps = plane_taps = None


def _compile() -> Kernels:
    global taps, plane_taps
    taps = jit.njit(_taps)
    plane_taps = jit.njit(_plane_taps)

    # every index is cast to unsigned (U): numba checks signed indices for wrapping around
    # from the end, which keeps LLVM from vectorising the loops (measured: 5x slower)
    def im2col(x, stride, dilate, pad, cols):
        """cols[c, ky, kx, n, oy, ox] = x[n, c, oy*sy + ky*dy - py, ox*sx + kx*dx - px], 0 outside."""
        n, c = x.shape[0], x.shape[1]
        kh, kw, oh, ow = cols.shape[1], cols.shape[2], cols.shape[4], cols.shape[5]
        sy, sx = stride
        ty, tx = plane_taps((x.shape[2], x.shape[3]), cols.shape, stride, dilate, pad)
        for ch in range(c):
            for ky in range(kh):
                offy, ylo, yhi = ty[ky, 0], ty[ky, 1], ty[ky, 2]
                for kx in range(kw):
                    offx, xlo, xhi = tx[kx, 0], tx[kx, 1], tx[kx, 2]
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
        kh, kw = cols.shape[1], cols.shape[2]
        sy, sx = stride
        ty, tx = plane_taps((h, w), cols.shape, stride, dilate, pad)
        for i in range(n):
            for ch in range(c):
                plane = out[U(i), U(ch)]
                for y in range(h):
                    for x in range(w):
                        plane[U(y), U(x)] = 0
                for ky in range(kh):
                    offy, ylo, yhi = ty[ky, 0], ty[ky, 1], ty[ky, 2]
                    for kx in range(kw):
                        offx, xlo, xhi = tx[kx, 0], tx[kx, 1], tx[kx, 2]
                        for oy in range(ylo, yhi):
                            iy = U(oy * sy + offy)
                            for ox in range(xlo, xhi):
                                plane[iy, U(ox * sx + offx)] += cols[U(ch), U(ky), U(kx), U(i), U(oy), U(ox)]

    return Kernels(jit.njit(im2col), jit.njit(col2im))
