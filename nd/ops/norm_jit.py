"""Compiled BatchNorm passes, used with the optional `[jit]` extra (jit.py).

numpy runs BatchNorm's training forward as about seven passes over the data (the mean, the
centred copy, its square, the variance, the scale, the shift) and its backward as about eight;
a ResNet-18 training step at batch 8 spends ~80 ms there, 37 of them on the stem's 26 MB
activation. Compiled, each direction is two passes: the per-channel sums (float64
accumulators), then one elementwise pass.

The elementwise pass does numpy's float32 arithmetic in numpy's order (no fused
multiply-add), so with the same statistics it gives numpy's bits; the statistics themselves
are summed in float64 (numpy sums float32 pairwise), so they differ in the last bits, within
float32 rounding of the exact value (tests/nd/test_norm_jit.py). The variance is the mean of
squares about the channel's first element, which keeps the one-pass sum exact enough when the
mean is large next to the spread.

Without numba, or with HYBRIDGRAPH_JIT=0, `kernels()` is None and norm.py keeps its numpy
path, the reference.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from . import jit

#: fewest elements per channel and image (the contiguous run) worth the compiled passes
MIN_RUN = 16


class Kernels(NamedTuple):
    """On (N, C, S) float arrays: stats(x, mean, var) -> per-channel batch mean and biased
    variance; apply(x, mean, scale, shift, out): out = (x - mean) * scale + shift;
    grad_sums(g, x, mean, sum_g, dot): sum(g) and sum((x - mean) * g) per channel;
    grad_apply(g, x, mean, gmean, k, s, dx): dx = ((g - gmean) - (x - mean) * k) * s."""

    stats: Callable
    apply: Callable
    grad_sums: Callable
    grad_apply: Callable


def kernels() -> Kernels | None:
    """The compiled kernels, or None without numba or with the switch off."""
    return jit.kernels("norm", _compile)


def applies(x, *others) -> bool:
    """Whether the compiled passes take numpy arrays `x` (and `others` of its shape): float32
    or float64, C-contiguous, at least 2-D with runs of MIN_RUN elements per channel."""
    return (isinstance(x, np.ndarray) and x.ndim >= 2 and x.dtype in (np.float32, np.float64)
            and x.flags.c_contiguous and x.size // max(1, x.shape[0] * x.shape[1]) >= MIN_RUN
            and all(isinstance(o, np.ndarray) and o.shape == x.shape and o.dtype == x.dtype
                    and o.flags.c_contiguous for o in others))


def as_ncs(a):
    """(N, C, S) view of a C-contiguous channel-first array."""
    return a.reshape(a.shape[0], a.shape[1], -1)


def _compile() -> Kernels:
    def stats(x, mean, var):
        """mean[c], var[c]: batch mean and biased variance of channel c (float64 sums about
        the channel's first element), rounded to mean's dtype."""
        n, c, s = x.shape
        for ch in range(c):
            k = np.float64(x[0, ch, 0])
            t, t2 = 0.0, 0.0
            for i in range(n):
                row = x[i, ch]
                for j in range(s):
                    d = np.float64(row[j]) - k
                    t += d
                    t2 += d * d
            m = t / (n * s)
            mean[ch] = k + m
            var[ch] = max(t2 / (n * s) - m * m, 0.0)

    def apply(x, mean, scale, shift, out):
        """out = (x - mean) * scale + shift per channel, one rounding per operation."""
        n, c, s = x.shape
        for i in range(n):
            for ch in range(c):
                m, sc, sh = mean[ch], scale[ch], shift[ch]
                src, dst = x[i, ch], out[i, ch]
                for j in range(s):
                    dst[j] = (src[j] - m) * sc + sh

    def grad_sums(g, x, mean, sum_g, dot):
        """sum_g[c] = sum of g, dot[c] = sum of (x - mean) * g (each product rounded as
        numpy's), over channel c, in float64."""
        n, c, s = x.shape
        for ch in range(c):
            m = mean[ch]
            t, tp = 0.0, 0.0
            for i in range(n):
                gr, xr = g[i, ch], x[i, ch]
                for j in range(s):
                    gv = gr[j]
                    t += gv
                    tp += (xr[j] - m) * gv
            sum_g[ch] = t
            dot[ch] = tp

    def grad_apply(g, x, mean, gmean, k, sc, dx):
        """dx = ((g - gmean) - (x - mean) * k) * sc per channel, one rounding per operation."""
        n, c, s = x.shape
        for i in range(n):
            for ch in range(c):
                m, gm, kk, ss = mean[ch], gmean[ch], k[ch], sc[ch]
                gr, xr, dr = g[i, ch], x[i, ch], dx[i, ch]
                for j in range(s):
                    dr[j] = ((gr[j] - gm) - (xr[j] - m) * kk) * ss

    return Kernels(jit.njit(stats, reassociate=True), jit.njit(apply), jit.njit(grad_sums, reassociate=True),
                   jit.njit(grad_apply))
