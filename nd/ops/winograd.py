"""Winograd F(2x2, 3x3) convolution: 3x3, stride-1, undilated, ungrouped 2-D convolutions
with 2.25x fewer multiplies than im2col (16 GEMMs over 2x2 output tiles instead of one over
every output position).

For every 4x4 input tile d (stride 2) and filter g: Y = A^T [(G g G^T) * (B^T d B)] A, the
elementwise product summed over input channels being 16 GEMMs (one per tile entry) of
V (16, tiles, C) by U (16, C, O). The transforms are adds and subtracts over contiguous
channel vectors (channel-last buffers): B^T d B for the input, A^T m A for the output,
G g G^T for the weight -- one small GEMM that yields U as (16, O, C), used transposed so
that no copy reorders it (BLAS reads the transposed operand in place). The bias is added
to the one tile entry that reaches every output (m[1, 1]), a sixteenth of the output's
size. Work is chunked over images so that a chunk's transformed input stays in cache when
the BLAS is single-threaded (blas.py).
"""
from __future__ import annotations

import numpy as np

from . import scratch
from .blas import THREADED_BLAS

#: Winograd's weight transform G (4x3); its input transform B^T and output transform A^T are
#: written out as the adds and subtracts in _bt / _at
WINO_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])

#: a chunk of images holds at least this many tiles (smaller GEMMs run poorly; a threaded
#: BLAS takes the whole batch at once) ...
WINO_MIN_CHUNK_TILES = 2048 if THREADED_BLAS else 768
#: ... or as many images as fit this many bytes of transformed input (16 x C x tiles)
WINO_CHUNK_BYTES = 4 << 20
#: smallest channel count worth the transforms (a threaded BLAS runs the (tiles, C) x (C, O)
#: GEMMs of few channels poorly)
WINO_MIN_CHANNELS = 128 if THREADED_BLAS else 16
#: fewest 2x2 output tiles per channel (max(C, O)) worth the weight transform: it reads the
#: O x C x 9 weight and writes O x C x 16, against the GEMMs' tiles x O x C x 16 multiplies
#: (at 0.25 -- ResNet-18's 512@7 layers at batch 8 -- im2col was faster: forward 13.9 against
#: 18.3 ms, data gradient 17.5 against 21.0)
WINO_MIN_TILES_PER_CHANNEL = 0.3


def use_winograd(x, w, kernel: tuple, stride: tuple, dilate: tuple, groups: int, out_sp: tuple) -> bool:
    """Whether Winograd F(2x2, 3x3) runs a convolution: 3x3, stride 1, undilated, ungrouped,
    2-D, float32/float64 (float16 would lose accuracy in the transforms), with enough
    channels and enough output tiles per channel."""
    if kernel != (3, 3) or stride != (1, 1) or dilate != (1, 1) or groups != 1:
        return False
    if x.dtype not in (np.float32, np.float64) or w.dtype != x.dtype:
        return False
    c, o = x.shape[1], w.shape[0]
    tiles = x.shape[0] * ((out_sp[0] + 1) // 2) * ((out_sp[1] + 1) // 2)
    return min(c, o) >= WINO_MIN_CHANNELS and tiles >= WINO_MIN_TILES_PER_CHANNEL * max(c, o)


def winograd_weight(xp, w, out=None):
    """U (16, O, C) = G w G^T of every (output, input) channel pair: one (16, 9) x (9, O*C)
    GEMM whose right operand is the weight read transposed in place (no copy); into `out`
    (16, O, C) when given."""
    o, c = w.shape[:2]
    gg = xp.asarray(np.kron(WINO_G, WINO_G).astype(w.dtype))      # (16, 9)
    if out is None:
        return xp.matmul(gg, w.reshape(o * c, 9).T).reshape(16, o, c)
    xp.matmul(gg, w.reshape(o * c, 9).T, out=out.reshape(16, o * c))
    return out


def _bt(xp, d, out) -> None:
    """out[0..3] = B^T applied to d[0..3]: d0 - d2, d1 + d2, d2 - d1, d1 - d3."""
    xp.subtract(d[0], d[2], out=out[0])
    xp.add(d[1], d[2], out=out[1])
    xp.subtract(d[2], d[1], out=out[2])
    xp.subtract(d[1], d[3], out=out[3])


def _at(xp, m, out0, out1) -> None:
    """A^T applied to m[0..3]: out0 = m0 + m1 + m2, out1 = m1 - m2 - m3."""
    xp.add(m[0], m[1], out=out0)
    out0 += m[2]
    xp.subtract(m[1], m[2], out=out1)
    out1 -= m[3]


class _Buffers:
    """Buffers of one Winograd call, channel-last so that every transform step is an
    elementwise op over contiguous channel vectors."""

    def __init__(self, xp, n: int, c: int, o: int, th: int, tw: int, dtype, out_dtype, workspace=None):
        """Buffers for chunks of n images, and the transformed weight U (16, O, C), from
        `workspace` (scratch.take); the padded input's margins are left to the caller."""
        self.th, self.tw = th, tw
        (self.u, self.xpad, self.rows, self.v, self.m, self.s, self.y) = scratch.take(xp, workspace, [
            ((16, o, c), dtype), ((n, 2 * th + 2, 2 * tw + 2, c), dtype), ((4, n, th, 2 * tw + 2, c), dtype),
            ((4, 4, n, th, tw, c), dtype), ((16, n * th * tw, o), out_dtype), ((2, 4, n, th, tw, o), out_dtype),
            ((n, th, 2, tw, 2, o), out_dtype)])

    def input(self, xp, k: int):
        """V (16, k*th*tw, C) = B^T d B of every 4x4 tile d (stride 2) of the first k images."""
        th, tw = self.th, self.tw
        xpad, rows, v = self.xpad[:k], self.rows[:, :k], self.v[:, :, :k]
        _bt(xp, [xpad[:, i:i + 2 * th - 1:2] for i in range(4)], rows)
        for a in range(4):
            _bt(xp, [rows[a][:, :, j:j + 2 * tw - 1:2] for j in range(4)], v[a])
        return v.reshape(16, -1, v.shape[-1])

    def output(self, xp, m, b, k: int):
        """Y (k, 2th, 2tw, O) = A^T m A (+ bias) of m (16, k*th*tw, O)."""
        th, tw = self.th, self.tw
        o = m.shape[-1]
        m6 = m.reshape(4, 4, k, th, tw, o)
        if b is not None:
            m6[1, 1] += b      # A^T's column 1 reaches both outputs in each direction
        s, y = self.s[:, :, :k], self.y[:k]
        for j in range(4):
            _at(xp, m6[:, j], s[0, j], s[1, j])
        for p in range(2):
            _at(xp, s[p], y[:, :, p, :, 0], y[:, :, p, :, 1])
        return y.reshape(k, 2 * th, 2 * tw, o)


def _images_per_chunk(xp, n: int, c: int, o: int, tiles_per_image: int, itemsize: int) -> int:
    """Images per chunk: the whole batch for cupy, else enough for WINO_MIN_CHUNK_TILES tiles
    or WINO_CHUNK_BYTES of transformed input, whichever is more."""
    if xp is not np:
        return n
    by_tiles = -(-WINO_MIN_CHUNK_TILES // tiles_per_image)
    by_bytes = WINO_CHUNK_BYTES // (16 * max(c, o) * tiles_per_image * itemsize)
    return max(1, min(n, max(by_tiles, by_bytes)))


def winograd_forward(xp, x, w, b, pad: tuple, out, finish=None, workspace=None) -> None:
    """3x3 stride-1 convolution of x (N, C, H, W) with w (O, C, 3, 3) (+ bias b) and padding
    `pad` into `out` (N, O, OH, OW), by Winograd F(2x2, 3x3), chunked over images;
    `finish(dst, where)` (an epilogue: conv_kernels.conv_forward) runs on each chunk; the
    temporaries come from `workspace` (scratch.take)."""
    n, c, h, wd = x.shape
    o = w.shape[0]
    oh, ow = out.shape[2:]
    th, tw = (oh + 1) // 2, (ow + 1) // 2
    ph, pw = pad
    k = _images_per_chunk(xp, n, c, o, th * tw, x.itemsize)
    buf = _Buffers(xp, k, c, o, th, tw, x.dtype, out.dtype, workspace)
    scratch.zero_margins(buf.xpad, ph, pw, h, wd)
    u = winograd_weight(xp, w, out=buf.u).transpose(0, 2, 1)  # (16, C, O), read in place
    for n0 in range(0, n, k):
        n1 = min(n, n0 + k)
        buf.xpad[:n1 - n0, ph:ph + h, pw:pw + wd] = x[n0:n1].transpose(0, 2, 3, 1)
        v = buf.input(xp, n1 - n0)
        m = buf.m[:, :v.shape[1]]
        xp.matmul(v, u, out=m)
        y = buf.output(xp, m, b, n1 - n0)
        out[n0:n1] = y[:, :oh, :ow].transpose(0, 3, 1, 2)
        if finish is not None:
            finish(out[n0:n1], slice(n0, n1))
