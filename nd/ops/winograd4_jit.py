"""Compiled tile transforms of Winograd F(4x4, 3x3) (winograd4.py), used with the optional
`[jit]` extra (jit.py).

In numpy, the input transform B^T d B and the output transform A^T m A run as a strided
gather of every 6x6 tile, a dense (36x36) GEMM, a (16x36) GEMM and a strided scatter: about
three times the time of the 36 GEMMs they serve (ResNet-18's 64-channel layers at batch 8:
11 ms of transforms around 4 ms of GEMMs). Compiled, each transform is one pass over its
data: the adds and subtracts of B^T and A^T over contiguous channel vectors of each tile,
the rows of a row of tiles transformed once for every tile that shares them, and the
output's bias, residual add and ReLU applied while its 4x4 tiles are written to the
channel-first image.

Without numba, or with HYBRIDGRAPH_JIT=0, `kernels()` is None and winograd4.py keeps its
numpy path, the reference (tests/nd/test_winograd4_jit.py compares the two).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from . import jit

_F0, _F2, _F4, _F5, _F8 = np.float32(0), np.float32(2), np.float32(4), np.float32(5), np.float32(8)


class Kernels(NamedTuple):
    """The compiled transforms: input(xpad, q, th, tw, v),
    output(m, bias, residual, relu, q, th, tw, out) and grad(gpad, q, th, tw, dm)."""

    input: Callable
    output: Callable
    grad: Callable


def kernels() -> Kernels | None:
    """The compiled transforms, or None without numba or with the switch off."""
    return jit.kernels("winograd4", _compile)


def _compile() -> Kernels:
    def input_tiles(xpad, q, th, tw, v):
        """v[a*6+b, p, :] = (B^T d B)[a, b] of tile p = (image, row, column) of the padded
        channel-last images xpad (q, 4*th+2, 4*tw+2, C)."""
        c = xpad.shape[3]
        width = xpad.shape[2] * c
        for r in range(q * th):
            n, i = r // th, r % th
            # B^T down the six rows of this row of tiles, over every column and channel
            t = np.empty((6, width), np.float32)
            x0, x1 = xpad[n, 4 * i].reshape(width), xpad[n, 4 * i + 1].reshape(width)
            x2, x3 = xpad[n, 4 * i + 2].reshape(width), xpad[n, 4 * i + 3].reshape(width)
            x4, x5 = xpad[n, 4 * i + 4].reshape(width), xpad[n, 4 * i + 5].reshape(width)
            for e in range(width):
                d0, d1, d2, d3, d4, d5 = x0[e], x1[e], x2[e], x3[e], x4[e], x5[e]
                t[0, e] = _F4 * d0 - _F5 * d2 + d4
                t[1, e] = d3 + d4 - _F4 * (d1 + d2)
                t[2, e] = _F4 * (d1 - d2) + d4 - d3
                t[3, e] = _F2 * (d3 - d1) + d4 - d2
                t[4, e] = _F2 * (d1 - d3) + d4 - d2
                t[5, e] = _F4 * d1 - _F5 * d3 + d5
            # B^T across each tile's six columns
            for j in range(tw):
                p = r * tw + j
                for a in range(6):
                    ta = t[a, 4 * j * c:(4 * j + 6) * c]
                    for ch in range(c):
                        e0, e1, e2 = ta[ch], ta[c + ch], ta[2 * c + ch]
                        e3, e4, e5 = ta[3 * c + ch], ta[4 * c + ch], ta[5 * c + ch]
                        v[6 * a, p, ch] = _F4 * e0 - _F5 * e2 + e4
                        v[6 * a + 1, p, ch] = e3 + e4 - _F4 * (e1 + e2)
                        v[6 * a + 2, p, ch] = _F4 * (e1 - e2) + e4 - e3
                        v[6 * a + 3, p, ch] = _F2 * (e3 - e1) + e4 - e2
                        v[6 * a + 4, p, ch] = _F2 * (e1 - e3) + e4 - e2
                        v[6 * a + 5, p, ch] = _F4 * e1 - _F5 * e3 + e5

    def output_tiles(m, bias, residual, relu, q, th, tw, out):
        """out (q, O, OH, OW) = A^T m A + bias of every tile p of m (36, tiles, O), the 4x4
        outputs clipped to OH x OW; then, as conv_kernels.epilogue: + residual (q, O, OH, OW)
        unless it is empty, and ReLU if `relu`."""
        o = m.shape[2]
        oh, ow = out.shape[2], out.shape[3]
        for r in range(q * th):
            n, i = r // th, r % th
            s = np.empty((4, 6, o), np.float32)
            y = np.empty((4, 4 * tw, o), np.float32)     # this row of tiles, channel-last
            for j in range(tw):
                p = r * tw + j
                # A^T down each of the tile's six columns
                for b in range(6):
                    m0, m1, m2 = m[b, p], m[6 + b, p], m[12 + b, p]
                    m3, m4, m5 = m[18 + b, p], m[24 + b, p], m[30 + b, p]
                    for ch in range(o):
                        s[0, b, ch] = m0[ch] + m1[ch] + m2[ch] + m3[ch] + m4[ch]
                        s[1, b, ch] = m1[ch] - m2[ch] + _F2 * (m3[ch] - m4[ch])
                        s[2, b, ch] = m1[ch] + m2[ch] + _F4 * (m3[ch] + m4[ch])
                        s[3, b, ch] = m1[ch] - m2[ch] + _F8 * (m3[ch] - m4[ch]) + m5[ch]
                # A^T across its rows, plus the bias
                for a in range(4):
                    for ch in range(o):
                        e0, e1, e2 = s[a, 0, ch], s[a, 1, ch], s[a, 2, ch]
                        e3, e4, e5 = s[a, 3, ch], s[a, 4, ch], s[a, 5, ch]
                        bb = bias[ch]
                        y[a, 4 * j, ch] = e0 + e1 + e2 + e3 + e4 + bb
                        y[a, 4 * j + 1, ch] = e1 - e2 + _F2 * (e3 - e4) + bb
                        y[a, 4 * j + 2, ch] = e1 + e2 + _F4 * (e3 + e4) + bb
                        y[a, 4 * j + 3, ch] = e1 - e2 + _F8 * (e3 - e4) + e5 + bb
            # channel-last row of tiles -> the channel-first output rows
            add = residual.shape[0] > 0
            for ch in range(o):
                for a in range(min(4, oh - 4 * i)):
                    dst = out[n, ch, 4 * i + a]
                    res = residual[n, ch, 4 * i + a] if add else dst
                    for col in range(ow):
                        val = y[a, col, ch]
                        if add:
                            val += res[col]
                        if relu and val < _F0:     # NaN stays NaN, as numpy's maximum
                            val = _F0
                        dst[col] = val

    def grad_tiles(gpad, q, th, tw, dm):
        """dm[a*6+b, p, :] = (A dY A^T)[a, b] of the 4x4 tile dY of tile p = (image, row,
        column) of the output gradient, channel-last and zero-padded to whole tiles in gpad
        (q, 4*th, 4*tw, O): the adjoint of the output transform."""
        o = gpad.shape[3]
        width = gpad.shape[2] * o
        t = np.empty((6, width), np.float32)
        for r in range(q * th):
            n, i = r // th, r % th
            # A down the four rows of this row of tiles, over every column and channel
            x0, x1 = gpad[n, 4 * i].reshape(width), gpad[n, 4 * i + 1].reshape(width)
            x2, x3 = gpad[n, 4 * i + 2].reshape(width), gpad[n, 4 * i + 3].reshape(width)
            for e in range(width):
                z0, z1, z2, z3 = x0[e], x1[e], x2[e], x3[e]
                t[0, e] = z0
                t[1, e] = z0 + z1 + z2 + z3
                t[2, e] = z0 - z1 + z2 - z3
                t[3, e] = z0 + _F2 * z1 + _F4 * z2 + _F8 * z3
                t[4, e] = z0 - _F2 * z1 + _F4 * z2 - _F8 * z3
                t[5, e] = z3
            # A across each tile's four columns
            for j in range(tw):
                p = r * tw + j
                for a in range(6):
                    ta = t[a, 4 * j * o:(4 * j + 4) * o]
                    for ch in range(o):
                        e0, e1, e2, e3 = ta[ch], ta[o + ch], ta[2 * o + ch], ta[3 * o + ch]
                        dm[6 * a, p, ch] = e0
                        dm[6 * a + 1, p, ch] = e0 + e1 + e2 + e3
                        dm[6 * a + 2, p, ch] = e0 - e1 + e2 - e3
                        dm[6 * a + 3, p, ch] = e0 + _F2 * e1 + _F4 * e2 + _F8 * e3
                        dm[6 * a + 4, p, ch] = e0 - _F2 * e1 + _F4 * e2 - _F8 * e3
                        dm[6 * a + 5, p, ch] = e3

    return Kernels(jit.njit(input_tiles), jit.njit(output_tiles), jit.njit(grad_tiles))
