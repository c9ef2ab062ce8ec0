"""FlatGrid: the layout that runs a stride-1 convolution (conv_kernels.py) as one copy and
one GEMM per chunk, without per-pixel gathers."""
from __future__ import annotations

from math import prod
from typing import TYPE_CHECKING

import numpy as np

from .blas import CHUNK_BYTES, chunk_limit

if TYPE_CHECKING:
    from .conv_kernels import Geometry


class FlatGrid:
    """Stride-1 convolution as ONE copy and ONE GEMM per chunk, without per-pixel gathers.

    The input is laid out channel-major on a grid (C, N, *rows) whose rows are wider than
    the image by the padding (`rows[d] = max(in[d] + pad[d], out[d])`), zero outside the
    image, flattened, with `front` zeros before it. Output grid position q (same grid)
    reads input flat index q + sum((t[d] * dilate[d] - pad[d]) * S[d]) for kernel tap t:
    taps outside the image land in the zero margins (a negative offset wraps into the
    previous row's tail, which is zero since rows[d] - pad[d] >= in[d]). So the column
    matrix of grid positions [q0, q0 + m) is a strided view of the flat input whose
    innermost runs are contiguous and m long: one fast copy. Grid positions outside the
    output (the row tails) are computed and dropped.
    """

    def __init__(self, geo: Geometry, in_sp: tuple, out_sp: tuple):
        self.geo, self.in_sp, self.out_sp = geo, tuple(in_sp), tuple(out_sp)
        self.rows = tuple(max(i + p, o) for i, p, o in zip(in_sp, geo.pad, out_sp))
        strides = [1]
        for r in reversed(self.rows[1:]):
            strides.insert(0, strides[0] * r)
        self.steps = tuple(strides)                     # element stride of each spatial dim
        self.image = prod(self.rows)
        self.front = sum(p * s for p, s in zip(geo.pad, self.steps))
        reach = sum((e - 1) * s for e, s in zip(geo.extent(), self.steps))
        self.back = max(0, reach - self.front)

    def waste(self) -> float:
        """Grid positions computed per output position."""
        return self.image / max(1, prod(self.out_sp))

    def flat_shape(self, x_shape: tuple) -> tuple:
        return (x_shape[1], self.front + x_shape[0] * self.image + self.back)

    def flatten(self, xp, x, flat=None):
        """(C, front + N * image + back) zero-margined copy of x (N, C, *in), into `flat` (of
        that shape, any content: every element is written) when given."""
        n, c = x.shape[:2]
        if flat is None:
            flat = xp.empty(self.flat_shape(x.shape), dtype=x.dtype)
        flat[:, :self.front] = 0
        flat[:, self.front + n * self.image:] = 0
        grid = flat[:, self.front:self.front + n * self.image].reshape((c, n) + self.rows)
        nsp = len(self.rows)
        for d in range(nsp):
            if self.rows[d] > self.in_sp[d]:
                grid[(slice(None),) * (2 + d) + (slice(self.in_sp[d], None),)] = 0
        inside = (slice(None), slice(None)) + tuple(slice(0, s) for s in self.in_sp)
        grid[inside] = x.swapaxes(0, 1)
        return flat

    def columns(self, xp, flat, q0: int, m: int, buf):
        """Column matrix (C * K, m) of grid positions [q0, q0 + m), copied into `buf`."""
        geo = self.geo
        isz = flat.itemsize
        shape = (flat.shape[0], *geo.kernel, m)
        strides = (flat.strides[0], *(d * s * isz for d, s in zip(geo.dilate, self.steps)), isz)
        view = xp.lib.stride_tricks.as_strided(flat[:, q0:], shape=shape, strides=strides)
        cols = buf[:prod(shape)].reshape(shape)
        cols[...] = view
        return cols.reshape(-1, m)

    def chunks(self, xp, n: int, bytes_per_pos: int):
        """(image, row0, row1, q0, m) chunks: whole images (row0 = None) when an image fits a
        chunk, else blocks of valid outer rows of one image."""
        row = self.steps[0]
        if xp is not np or self.image * bytes_per_pos <= CHUNK_BYTES:
            per = chunk_limit(xp, self.image * bytes_per_pos)
            for n0 in range(0, n, per):
                n1 = min(n, n0 + per)
                yield (n0, n1), None, n0 * self.image, (n1 - n0) * self.image
            return
        per = chunk_limit(xp, row * bytes_per_pos)
        for i in range(n):
            for y0 in range(0, self.out_sp[0], per):
                y1 = min(self.out_sp[0], y0 + per)
                yield (i, i + 1), (y0, y1), i * self.image + y0 * row, (y1 - y0) * row

    def valid(self, res, ims: tuple, rows):
        """The output positions of a chunk's (O, m) result, as (N', O, *out) or (O, rows, *out[1:])."""
        o = res.shape[0]
        if rows is None:
            grid = res.reshape((o, ims[1] - ims[0]) + self.rows)
            return grid[(slice(None), slice(None)) + tuple(slice(0, s) for s in self.out_sp)].swapaxes(0, 1)
        grid = res.reshape((o, rows[1] - rows[0]) + self.rows[1:])
        return grid[(slice(None), slice(None)) + tuple(slice(0, s) for s in self.out_sp[1:])]
