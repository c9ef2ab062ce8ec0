"""Winograd F(4x4, 3x3) convolution for inference plans: 3x3, stride-1, undilated, ungrouped
2-D float32 convolutions with 4x fewer multiplies than im2col in the main GEMMs (36 GEMMs
over 4x4 output tiles; F(2x2, 3x3) in winograd.py saves 2.25x).

Y = A^T [(G g G^T) * (B^T d B)] A per 6x6 input tile d (stride 4). Every step is a BLAS call
on channel-last buffers: the 6x6 tiles of a chunk of images are gathered by one strided
copy into D (36, tiles*C); V = (B^T (x) B^T) D is one (36x36) GEMM; M = V U is 36 GEMMs
(tiles, C) x (C, O); Y = (A^T (x) A^T) M is one (16x36) GEMM. Elementwise transforms (as
winograd.py does for F(2x2)) cost more than the GEMMs they save at this tile size in numpy.

The weight transform U = G g G^T (36, C, O) is made once, when an inference plan is built
(the fuse_conv_epilogue pass adds it as a constant): 4x the weight's size, so the plan only
uses it where a layer's output tiles amortise it (`use_winograd4`). The bias is added to the
tile entry m[1, 1], which A^T's column of ones spreads to every output.

Accuracy: `ERROR_BOUND` bounds |winograd - exact| / sum(|x| * |w|) over each output's window
(the rounding scale of any float32 summation of those products), measured against float64
by tests/nd/test_winograd4.py on ResNet-18's 3x3 layer shapes and adversarial data, for up to
`MAX_CHANNELS` input channels; the plan uses F(4x4) only within that range. Switch:
HYBRIDGRAPH_WINOGRAD4=0.
"""
from __future__ import annotations

import os

import numpy as np

from . import jit, scratch, winograd4_jit
from .blas import THREADED_BLAS
from .conv_epilogue import epilogue

#: F(4x4, 3x3) transforms (Lavin & Gray): B^T (6x6), G (6x3), A^T (4x6)
BT = np.array([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
               [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]], dtype=np.float64)
G = np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
              [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]], dtype=np.float64)
AT = np.array([[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]],
              dtype=np.float64)
_BB = np.kron(BT, BT).astype(np.float32)      # (36, 36): V = _BB @ D
_AA = np.kron(AT, AT).astype(np.float32)      # (16, 36): Y = _AA @ M
_GG = np.kron(G, G)                           # (36, 9), float64: U = _GG @ w (per channel pair)
_GG32 = _GG.astype(np.float32)                # dw = dU^T @ _GG32

#: bound of the float32 error relative to sum(|x| * |w|) over the output's window (measured
#: max 1.1e-5 on the test's shapes and data; im2col's is about 2e-7)
ERROR_BOUND = 3e-5
#: most input channels the bound was measured for
MAX_CHANNELS = 512
#: fewest channels (min(C, O)) worth the transforms
MIN_CHANNELS = 32
#: fewest 4x4 output tiles of the whole batch per output channel: below, the weight
#: transform's memory (36 x C x O, kept by the plan) outweighs the saved multiplies. Measured
#: (process CPU time, one thread, F(4x4) / F(2x2)-or-im2col) on ResNet-18's layers: batch 1:
#: 64@56 0.26, 128@28 0.50, 256@14 0.92, 512@7 1.34; batch 8: 0.85, 0.71, 0.86, 0.60 (but
#: 512@7 would keep 38 MB of transformed weight per layer)
MIN_TILES_PER_CHANNEL = 0.25
#: ... with the compiled transforms (winograd4_jit.py), which make F(4x4) pay with fewer tiles
#: (ResNet-18 batch 1: 256@14 1.2x faster than im2col), for transformed weights of at most
#: JIT_MAX_WEIGHT_BYTES (512@7 at batch 8 is faster too, but would keep 113 MB more)
JIT_MIN_TILES_PER_CHANNEL = 0.0625
JIT_MAX_WEIGHT_BYTES = 16 << 20
#: bytes of gathered tiles (36 x C x tiles) per chunk of images (single-threaded BLAS)
CHUNK_BYTES = (12 << 20) if THREADED_BLAS else (8 << 20)
#: with the compiled transforms (winograd4_jit.py): fewest tiles per chunk, and bytes of
#: tiles a chunk may grow to beyond that
JIT_MIN_CHUNK_TILES = 196
JIT_CHUNK_BYTES = 1 << 20
#: the residual argument of the compiled output transform when there is none
_NO_RESIDUAL = np.empty((0, 0, 0, 0), np.float32)


def enabled() -> bool:
    """HYBRIDGRAPH_WINOGRAD4=0 turns F(4x4, 3x3) off."""
    return os.environ.get("HYBRIDGRAPH_WINOGRAD4", "1") not in ("0", "")


def use_winograd4(dshape: tuple, wshape: tuple, dtype, a) -> bool:
    """Whether an inference plan runs the Convolution with attributes `a` on data of `dshape`
    by F(4x4, 3x3): 3x3, stride 1, undilated, ungrouped, 2-D, channel-first float32, within
    the accuracy bound's channel range and with enough output tiles per channel."""
    if not enabled() or np.dtype(dtype) != np.float32 or len(dshape) != 4 or a.layout not in (None, "NCHW"):
        return False
    if tuple(a.kernel) != (3, 3) or a.num_group != 1 or any(s != 1 for s in a.stride or ()) \
            or any(d != 1 for d in a.dilate or ()):
        return False
    c, o = dshape[1], wshape[0]
    tiles = _tiles(dshape, o, tuple(a.pad) if a.pad else (0, 0))
    if not tiles:
        return False
    if tiles >= MIN_TILES_PER_CHANNEL * max(c, o):
        return True
    return (jit.available() and 36 * c * o * 4 <= JIT_MAX_WEIGHT_BYTES
            and tiles >= JIT_MIN_TILES_PER_CHANNEL * max(c, o))


#: most channel pairs (C x O) for which convolutions outside inference plans (training, eager)
#: run F(4x4) with the compiled transforms, transforming their weight on every call (weight4:
#: 0.3 ms at 128 x 128, 1.4 ms at 256 x 256; 512 x 512 would write 38 MB per call), and the
#: fewest 4x4 output tiles that amortise it (ResNet-18's 256@14 at batch 8, 128 tiles: 9.6 ms
#: against F(2x2)'s 14; at batch 1, 16 tiles: 2.9 against 1.7)
DIRECT_MAX_PAIRS = 256 * 256
DIRECT_MIN_TILES = 32


def use_winograd4_direct(x, w, geo, finish) -> bool:
    """Whether conv_kernels.conv_forward runs a convolution by F(4x4, 3x3) with the weight
    transformed per call: the compiled transforms installed, float32, 3x3, stride 1,
    undilated, ungrouped, no epilogue, within the channel range of the accuracy bound and
    DIRECT_MAX_PAIRS, and enough output tiles per channel."""
    if finish is not None:
        return False
    c, o = x.shape[1], w.shape[0]
    tiles = _compiled_tiles(x, w, o, geo)
    least = max(DIRECT_MIN_TILES, JIT_MIN_TILES_PER_CHANNEL * max(c, o))
    return bool(tiles) and c * o <= DIRECT_MAX_PAIRS and tiles >= least


#: most channel pairs (C x O) whose weight gradient runs by F(4x4, 3x3): its 36 (O, C) partial
#: products, 4x the weight, outweigh the saved multiplies on wider layers (ResNet-18's 512@7
#: at batch 8: 24 ms against im2col's 14)
WEIGHT_GRAD_MAX_PAIRS = 256 * 256
#: bound of the weight gradient's float32 error relative to sum(|x| * |g|) over each weight
#: entry's products (measured by tests/nd/test_winograd4_weight_grad.py up to 256 x 256
#: channels: max 1.3e-5 on normal, positive, or six-orders-wide data or gradients, 1.8e-4 when
#: both span six orders; im2col's is about 1e-6). The transforms mix every product of a tile's
#: inputs and gradients, so the error scales with the tile's magnitudes, not the window's.
WEIGHT_GRAD_ERROR_BOUND = 3e-4
#: fewest 4x4 output tiles of the batch per channel (max(C, O)) for the weight gradient
WEIGHT_GRAD_MIN_TILES_PER_CHANNEL = 0.25
#: fewest tiles per chunk of images in the weight gradient (the inner dimension of its GEMMs)
WEIGHT_GRAD_MIN_CHUNK_TILES = 392


def use_winograd4_weight_grad(x, g, geo) -> bool:
    """Whether conv_kernels.conv_weight_grad runs by F(4x4, 3x3) (winograd4_weight_grad):
    the compiled transforms installed, float32, 3x3, stride 1, undilated, ungrouped, within
    the channel range of the accuracy bound and WEIGHT_GRAD_MAX_PAIRS, and enough output
    tiles per channel."""
    c, o = x.shape[1], g.shape[1]
    tiles = _compiled_tiles(x, g, o, geo)
    return bool(tiles) and c * o <= WEIGHT_GRAD_MAX_PAIRS and tiles >= WEIGHT_GRAD_MIN_TILES_PER_CHANNEL * max(c, o)


def _compiled_tiles(x, other, o: int, geo) -> int:
    """4x4 output tiles of the convolution of x into `o` channels by the compiled F(4x4)
    transforms (`other`: the weight or the output gradient, float32 too), or 0 where they do
    not apply: switches off, not 2-D float32 3x3 stride-1 undilated ungrouped, or outside
    the accuracy bound's channel range (_tiles)."""
    if not enabled() or not jit.available() or x.ndim != 4 or x.dtype != np.float32 \
            or other.dtype != np.float32 or geo.kernel != (3, 3) or geo.groups != 1 \
            or geo.stride != (1, 1) or geo.dilate != (1, 1):
        return 0
    return _tiles(x.shape, o, geo.pad)


def _tiles(dshape: tuple, o: int, pad: tuple) -> int:
    """4x4 output tiles of a 3x3 stride-1 convolution of (N, C, H, W) data into `o` channels,
    or 0 where F(4x4) does not apply: an empty output, or channels outside the range of the
    accuracy bound."""
    n, c, h, w = dshape
    oh, ow = h + 2 * pad[0] - 2, w + 2 * pad[1] - 2
    if oh < 1 or ow < 1 or not MIN_CHANNELS <= min(c, o) or c > MAX_CHANNELS:
        return 0
    return n * ((oh + 3) // 4) * ((ow + 3) // 4)


def weight4(w: np.ndarray) -> np.ndarray:
    """U (36, C, O) = G w G^T for every (output, input) channel pair: one GEMM (36x9) x
    (9, C*O) in w's dtype, written in U's layout (G's rounding to float32 moves U by ~3e-8 of
    its largest entry from a float64 transform; 256 x 256: 1.4 ms against 6.5 in float64)."""
    o, c = w.shape[:2]
    w9 = np.ascontiguousarray(w.reshape(o, c, 9).transpose(2, 1, 0)).reshape(9, c * o)
    gg = _GG32 if w.dtype == np.float32 else _GG.astype(w.dtype)
    return np.matmul(gg, w9).reshape(36, c, o)


def winograd4_forward(xp, x, u, b, pad: tuple, out, residual=None, relu: bool = False,
                      workspace=None) -> None:
    """3x3 stride-1 convolution of x (N, C, H, W) with the transformed weight u (36, C, O)
    (+ bias b), padding `pad`, into `out` (N, O, OH, OW), chunked over images; then the
    epilogue of `_fused_convolution` (+ `residual` (N, O, OH, OW), ReLU if `relu`) on each
    chunk. The tile transforms are compiled (winograd4_jit.py) where numba is installed and
    numpy GEMMs otherwise; the temporaries come from `workspace` (scratch.take)."""
    n, c, h, wd = x.shape
    o = u.shape[2]
    th, tw = (out.shape[2] + 3) // 4, (out.shape[3] + 3) // 4
    compiled = winograd4_jit.kernels() if xp is np else None
    k = _images_per_chunk(xp, compiled, n, max(c, o), th * tw)
    # two buffers, taking turns: tiles D, then V (D dead) into the second, M (V's operand
    # D dead) into the first, Y into the second -- half the memory of one buffer per stage
    big = ((36 * k * th * tw * max(c, o),), x.dtype)            # float32 (use_winograd4)
    xpad, dbuf, vbuf = scratch.take(xp, workspace, [((k, 4 * th + 2, 4 * tw + 2, c), x.dtype), big, big])
    scratch.zero_margins(xpad, pad[0], pad[1], h, wd)
    finish = epilogue(xp, residual, relu)
    if compiled is not None:     # the compiled output transform always adds a (float32) bias
        b = np.zeros(o, np.float32) if b is None else np.ascontiguousarray(b, dtype=np.float32)
    for n0 in range(0, n, k):
        n1 = min(n, n0 + k)
        xpad[:n1 - n0, pad[0]:pad[0] + h, pad[1]:pad[1] + wd] = x[n0:n1].transpose(0, 2, 3, 1)
        if compiled is not None:
            _chunk_jit(compiled, xpad[:n1 - n0], u, b, None if residual is None else residual[n0:n1], relu,
                       out[n0:n1], dbuf, vbuf)
            continue
        _chunk_numpy(xp, xpad[:n1 - n0], u, b, out[n0:n1], dbuf, vbuf)
        if finish is not None:
            finish(out[n0:n1], slice(n0, n1))


def winograd4_weight_grad(x: np.ndarray, g: np.ndarray, pad: tuple) -> np.ndarray:
    """Weight gradient (O, C, 3, 3) of the 3x3 stride-1 convolution of x (N, C, H, W) with
    padding `pad` and output gradient g (N, O, OH, OW), by the compiled transforms: the
    adjoint of Y = A^T [U * V] A is dU = sum over tiles of (A dY A^T) * V, 36 GEMMs
    (O, tiles) x (tiles, C) accumulated over chunks of images, then dw = G^T dU G in float64."""
    kernels = winograd4_jit.kernels()
    n, c, h, wd = x.shape
    o, oh, ow = g.shape[1:]
    th, tw = (oh + 3) // 4, (ow + 3) // 4
    k = max(1, min(n, -(-WEIGHT_GRAD_MIN_CHUNK_TILES // (th * tw))))
    xpad = np.empty((k, 4 * th + 2, 4 * tw + 2, c), np.float32)
    scratch.zero_margins(xpad, pad[0], pad[1], h, wd)
    gpad = np.empty((k, 4 * th, 4 * tw, o), np.float32)
    scratch.zero_margins(gpad, 0, 0, oh, ow)
    vbuf = np.empty(36 * k * th * tw * c, np.float32)
    mbuf = np.empty(36 * k * th * tw * o, np.float32)
    acc = np.empty((36, o, c), np.float32)
    part = np.empty_like(acc) if k < n else acc
    for n0 in range(0, n, k):
        n1 = min(n, n0 + k)
        q = n1 - n0
        t = q * th * tw
        xpad[:q, pad[0]:pad[0] + h, pad[1]:pad[1] + wd] = x[n0:n1].transpose(0, 2, 3, 1)
        gpad[:q, :oh, :ow] = g[n0:n1].transpose(0, 2, 3, 1)
        v = vbuf[:36 * t * c].reshape(36, t, c)
        kernels.input(xpad[:q], q, th, tw, v)
        dm = mbuf[:36 * t * o].reshape(36, t, o)
        kernels.grad(gpad[:q], q, th, tw, dm)
        np.matmul(dm.transpose(0, 2, 1), v, out=acc if n0 == 0 else part)
        if n0:
            acc += part
    dw = np.matmul(acc.reshape(36, o * c).T, _GG32)       # (O*C, 9): the weight's layout
    return dw.reshape(o, c, 3, 3)


def _images_per_chunk(xp, compiled, n: int, channels: int, tiles_per_image: int) -> int:
    """Images per chunk: the whole batch for cupy; with the compiled transforms, the fewest
    that give the GEMMs JIT_MIN_CHUNK_TILES rows, or more up to JIT_CHUNK_BYTES of tiles
    (small chunks keep the tiles in cache between the transforms and the GEMMs); with numpy's
    GEMM transforms, CHUNK_BYTES of tiles."""
    if xp is not np:
        return n
    per_image = 36 * channels * tiles_per_image * 4
    if compiled is None:
        return max(1, min(n, CHUNK_BYTES // per_image))
    return max(1, min(n, max(-(-JIT_MIN_CHUNK_TILES // tiles_per_image), JIT_CHUNK_BYTES // per_image)))


def _chunk_jit(kernels, xpad, u, b, residual, relu: bool, out, vbuf, mbuf) -> None:
    """One chunk by the compiled transforms around the 36 GEMMs M = V U, the bias `b` (float32
    (O,)) and the epilogue (+ `residual`, the chunk's rows, or None; ReLU if `relu`) fused into
    the output transform."""
    q, c, o = xpad.shape[0], u.shape[1], u.shape[2]
    th, tw = (xpad.shape[1] - 2) // 4, (xpad.shape[2] - 2) // 4
    t = q * th * tw
    v = vbuf[:36 * t * c].reshape(36, t, c)
    kernels.input(xpad, q, th, tw, v)
    m = mbuf[:36 * t * o].reshape(36, t, o)
    np.matmul(v, u, out=m)
    kernels.output(m, b, _NO_RESIDUAL if residual is None else residual, relu, q, th, tw, out)


def _chunk_numpy(xp, xpad, u, b, out, dbuf, vbuf) -> None:
    """One chunk by BLAS: the tiles gathered by a strided copy, B^T and A^T as GEMMs."""
    q, c, o = xpad.shape[0], u.shape[1], u.shape[2]
    th, tw = (xpad.shape[1] - 2) // 4, (xpad.shape[2] - 2) // 4
    oh, ow = out.shape[2:]
    t = q * th * tw
    bb, aa = xp.asarray(_BB), xp.asarray(_AA)
    s = xpad.strides
    dq = dbuf[:36 * t * c].reshape(6, 6, q, th, tw, c)     # the 6x6 tiles, stride 4
    dq[...] = xp.lib.stride_tricks.as_strided(xpad, (6, 6, q, th, tw, c),
                                              (s[1], s[2], s[0], 4 * s[1], 4 * s[2], s[3]))
    vq = vbuf[:36 * t * c].reshape(36, t * c)
    xp.matmul(bb, dq.reshape(36, t * c), out=vq)
    mq = dbuf[:36 * t * o].reshape(36, t, o)
    xp.matmul(vq.reshape(36, t, c), u, out=mq)
    if b is not None:
        mq.reshape(6, 6, t, o)[1, 1] += b
    yq = vbuf[:16 * t * o].reshape(16, t * o)
    xp.matmul(aa, mq.reshape(36, t * o), out=yq)
    tiles_out = yq.reshape(4, 4, q, th, tw, o).transpose(2, 5, 3, 0, 4, 1)     # (q, O, th, 4, tw, 4)
    if (oh, ow) == (4 * th, 4 * tw):
        out.reshape(q, o, th, 4, tw, 4)[...] = tiles_out
    else:
        out[...] = tiles_out.reshape(q, o, 4 * th, 4 * tw)[:, :, :oh, :ow]
