"""Depthwise 2-D convolution (one input channel and one filter per group: MobileNet's 3x3
convolutions) forward and backward, as multiply-adds over whole planes.

Every (image, channel) pair is an independent plane. A plane is laid out, zero-padded, on
`stride[0] * stride[1]` *phase grids* of width `wq = ceil(padded width / stride[1])`:
phase (rh, rw) holds the padded elements (rh + sh*i, rw + sw*j) at flat index
`i * wq + j`. Kernel tap (a, b) of output (y, x) then reads flat index
`(y * wq + x) + (a' * wq + b')` of one phase (a' = a*dilation // stride, likewise b'), so
for the output laid out on the same width -- an (Ho, wq) *output grid*, whose columns past
Ho's width are computed and dropped -- every tap is ONE contiguous shifted slice of the
phase grid: `acc += w[:, t] * phase[:, off_t:off_t + Ho*wq]`, a plane-long inner loop
(numpy's ufunc loops are slow on the short rows of a late MobileNet layer, and on the
every-other-element rows of a strided one). The data gradient is the adjoint (each tap
scatter-adds `g * w[:, t]` into the phase grid), the weight gradient a dot product per
tap and plane.

Work is chunked over planes so that a chunk's phase grid and accumulators stay in the CPU's
L2 cache (numpy; cupy takes every plane at once). Buffers are allocated once per call:
the phase grid's padding is zeroed once and never written, and chunks overwrite the same
interior positions.
"""
from __future__ import annotations

import numpy as np

#: bytes of one chunk's largest buffer (phase grid or accumulator): three such buffers stay
#: in a 1-2 MiB L2 cache
DW_CHUNK_BYTES = 512 << 10


class PhaseGrid:
    """Phase-grid geometry of one 2-D depthwise convolution (see the module docstring)."""

    __slots__ = ("in_sp", "out_sp", "stride", "wq", "nph", "glen", "span", "taps", "phases")

    def __init__(self, kernel: tuple, stride: tuple, dilate: tuple, pad: tuple, in_sp: tuple,
                 out_sp: tuple):
        (kh, kw), (sh, sw), (dh, dw), (ph, pw) = kernel, stride, dilate, pad
        self.in_sp, self.out_sp, self.stride = tuple(in_sp), tuple(out_sp), (sh, sw)
        hq = -(-(in_sp[0] + 2 * ph) // sh)
        self.wq = -(-(in_sp[1] + 2 * pw) // sw)
        self.nph = sh * sw
        # one spare row: a tap's slice of the last output row runs up to wq - 1 elements past
        # the last phase row (into columns that are dropped)
        self.glen = (hq + 1) * self.wq
        self.span = out_sp[0] * self.wq
        self.taps = tuple(((i * dh % sh) * sw + j * dw % sw, (i * dh // sh) * self.wq + j * dw // sw)
                          for i in range(kh) for j in range(kw))
        self.phases = tuple(p for p in (self._phase(rh, rw, ph, pw) for rh in range(sh) for rw in range(sw))
                            if p is not None)

    def _phase(self, rh: int, rw: int, ph: int, pw: int):
        """(phase, row0, col0, input index) of the image's elements in phase (rh, rw), or None."""
        (sh, sw), (h, w) = self.stride, self.in_sp
        yq0, xq0 = max(0, -(-(ph - rh) // sh)), max(0, -(-(pw - rw) // sw))
        ys, xs = rh + sh * yq0 - ph, rw + sw * xq0 - pw
        if ys >= h or xs >= w:
            return None
        rows, cols = len(range(ys, h, sh)), len(range(xs, w, sw))
        return (rh * sw + rw, slice(yq0, yq0 + rows), slice(xq0, xq0 + cols),
                (slice(None), slice(ys, None, sh), slice(xs, None, sw)))

    def per_chunk(self, xp, planes: int, itemsize: int) -> int:
        """Planes per chunk: DW_CHUNK_BYTES of the largest buffer (numpy), or all (cupy)."""
        if xp is not np:
            return planes
        return max(1, min(planes, DW_CHUNK_BYTES // (itemsize * max(self.span, self.nph * self.glen))))

    def grid(self, xp, m: int, dtype):
        """A zeroed (m, phases, glen) phase-grid buffer."""
        return xp.zeros((m, self.nph, self.glen), dtype=dtype)

    def fill(self, grid, planes) -> None:
        """Copy (m, H, W) planes into the interiors of a phase-grid buffer's first m planes."""
        m = planes.shape[0]
        g4 = grid[:m].reshape(m, self.nph, self.glen // self.wq, self.wq)
        for k, rows, cols, src in self.phases:
            g4[:, k, rows, cols] = planes[src]

    def extract(self, grid, planes) -> None:
        """planes (m, H, W) = the interiors of a phase-grid buffer (adjoint of `fill`)."""
        m = planes.shape[0]
        g4 = grid[:m].reshape(m, self.nph, self.glen // self.wq, self.wq)
        for k, rows, cols, src in self.phases:
            planes[src] = g4[:, k, rows, cols]

    def valid(self, acc):
        """The (m, Ho, Wo) output positions of an (m, span) output-grid buffer."""
        return acc.reshape(acc.shape[0], self.out_sp[0], self.wq)[:, :, :self.out_sp[1]]


def supports(geo, x_shape: tuple, w_shape: tuple) -> bool:
    """Whether the phase-grid kernels run a convolution: 1-D or 2-D, one input channel and
    one filter per group (channel multiplier 1)."""
    return len(geo.kernel) in (1, 2) and geo.groups > 1 and x_shape[1] == geo.groups == w_shape[0]


def _as_2d(geo, *arrays):
    """A 1-D convolution's geometry and arrays as a 2-D one's (height 1, kernel height 1)."""
    if len(geo.kernel) == 2:
        return (geo, *arrays)
    geo2 = type(geo)((1, *geo.kernel), (1, *geo.stride), (1, *geo.dilate), (0, *geo.pad), geo.groups)
    return (geo2, *(a.reshape(a.shape[:2] + (1,) + a.shape[2:]) for a in arrays))


def _plan(geo, in_sp: tuple) -> PhaseGrid:
    return PhaseGrid(geo.kernel, geo.stride, geo.dilate, geo.pad, in_sp, geo.out_size(in_sp))


def _per_plane(xp, v, n: int):
    """A per-channel (C, ...) array repeated for each of n images: (n * C, ...) rows."""
    return xp.broadcast_to(v[None], (n,) + v.shape).reshape((n * v.shape[0],) + v.shape[1:])


def depthwise_forward(xp, x, w, b, geo, out) -> None:
    """out (N, C, *out) = depthwise convolution of x (N, C, *in) with w (C, 1, *k) (+ b)."""
    geo, x, w, out = _as_2d(geo, x, w, out)
    n, c, h, wd = x.shape
    pg = _plan(geo, (h, wd))
    planes = n * c
    per = pg.per_chunk(xp, planes, out.itemsize)
    grid = pg.grid(xp, per, x.dtype)
    acc = xp.empty((per, pg.span), dtype=out.dtype)
    tmp = xp.empty_like(acc)
    xpl, opl = x.reshape(planes, h, wd), out.reshape((planes,) + tuple(out.shape[2:]))
    wpl = _per_plane(xp, w.reshape(c, -1), n)
    bpl = None if b is None else _per_plane(xp, b.reshape(c, 1, 1).astype(out.dtype, copy=False), n)
    for p0 in range(0, planes, per):
        p1 = min(planes, p0 + per)
        pg.fill(grid, xpl[p0:p1])
        a = _accumulate_taps(xp, pg, grid[:p1 - p0], wpl[p0:p1], acc[:p1 - p0], tmp[:p1 - p0])
        if bpl is None:
            opl[p0:p1] = pg.valid(a)
        else:
            xp.add(pg.valid(a), bpl[p0:p1], out=opl[p0:p1])


def _accumulate_taps(xp, pg: PhaseGrid, grid, wpl, acc, tmp):
    """acc = sum over taps t of wpl[:, t] * (tap t's slice of the phase grid)."""
    for t, (k, off) in enumerate(pg.taps):
        view = grid[:, k, off:off + pg.span]
        if t == 0:
            xp.multiply(view, wpl[:, t:t + 1], out=acc)
        else:
            xp.multiply(view, wpl[:, t:t + 1], out=tmp)
            acc += tmp
    return acc


def _ograd_grid(xp, pg: PhaseGrid, per: int, dtype):
    """A zeroed (per, span) output-grid buffer: its dropped columns stay zero, so that they
    add nothing when the buffer holds an output gradient."""
    return xp.zeros((per, pg.span), dtype=dtype)


def depthwise_data_grad(xp, g, w, x_shape: tuple, geo):
    """Gradient of depthwise_forward with respect to its data: every tap scatter-adds
    g * w[:, t] into the phase grid, whose interiors are the gradient."""
    geo2, g2, w2 = _as_2d(geo, g, w)
    n, c = x_shape[:2]
    in_sp = tuple(x_shape[2:]) if len(x_shape) == 4 else (1, x_shape[2])
    pg = _plan(geo2, in_sp)
    planes = n * c
    per = pg.per_chunk(xp, planes, g.itemsize)
    dgrid = xp.empty((per, pg.nph, pg.glen), dtype=g.dtype)
    gg, tmp = _ograd_grid(xp, pg, per, g.dtype), xp.empty((per, pg.span), dtype=g.dtype)
    dx = xp.empty((planes,) + in_sp, dtype=g.dtype)
    gpl = g2.reshape((planes,) + tuple(g2.shape[2:]))
    wpl = _per_plane(xp, w2.reshape(c, -1).astype(g.dtype, copy=False), n)
    for p0 in range(0, planes, per):
        m = min(planes, p0 + per) - p0
        pg.valid(gg[:m])[...] = gpl[p0:p0 + m]
        dgrid[:m] = 0
        for t, (k, off) in enumerate(pg.taps):
            xp.multiply(gg[:m], wpl[p0:p0 + m, t:t + 1], out=tmp[:m])
            dgrid[:m, k, off:off + pg.span] += tmp[:m]
        pg.extract(dgrid, dx[p0:p0 + m])
    return dx.reshape(x_shape)


def depthwise_weight_grad(xp, g, x, w_shape: tuple, geo):
    """Gradient of depthwise_forward with respect to its weight: per tap and plane, the dot
    product of the output gradient with the tap's slice of the phase grid, summed over
    images."""
    geo2, g2, x2 = _as_2d(geo, g, x)
    n, c, h, wd = x2.shape
    pg = _plan(geo2, (h, wd))
    planes = n * c
    per = pg.per_chunk(xp, planes, x.itemsize)
    grid, gg = pg.grid(xp, per, x.dtype), _ograd_grid(xp, pg, per, g.dtype)
    xpl, gpl = x2.reshape(planes, h, wd), g2.reshape((planes,) + tuple(g2.shape[2:]))
    dwp = xp.empty((planes, len(pg.taps)), dtype=g.dtype)
    for p0 in range(0, planes, per):
        m = min(planes, p0 + per) - p0
        pg.fill(grid, xpl[p0:p0 + m])
        pg.valid(gg[:m])[...] = gpl[p0:p0 + m]
        for t, (k, off) in enumerate(pg.taps):
            dwp[p0:p0 + m, t] = xp.einsum("pl,pl->p", gg[:m], grid[:m, k, off:off + pg.span])
    return dwp.reshape(n, c, -1).sum(axis=0).reshape(w_shape)
