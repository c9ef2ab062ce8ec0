"""Convolution (MXNet 1.9.1 semantics), 1-D, 2-D and 3-D, and the GEMM kernels
and geometry helpers shared with Deconvolution (deconv.py), pool.py and
spatial.py.

Kernels (no Python loop over pixels, channels or groups; loops only over chunks of
images/rows, kernel taps or Winograd's 4x4 transform entries):

* im2col: columns (C, *kernel, N, *out) copied from a strided window view of the
  padded input, input channels outermost so groups are a free reshape to
  (G, C/G*K, N*P); one (batched-over-groups) matmul `W (G, O/G, C/G*K) @ cols`,
  whose (O, N, *out) result goes to the (N, O, *out) output with the bias added in
  the same pass (into the planner's `out=` buffer when it gives one);
* stride 1 (`FlatGrid`): the input laid out on a grid whose rows are widened by
  the padding makes the column matrix a strided view with long contiguous runs --
  one fast copy -- at the cost of computing the (few) row-tail positions;
* 3x3 stride 1 with enough channels: Winograd F(2x2, 3x3) (winograd.py), 16 GEMMs with
  2.25x fewer multiplies than im2col, transforms as adds over contiguous channel vectors;
* strided, undilated, large kernels (ResNet's 7x7 stride-2 stem): im2col gathers per stride
  phase, so every copy moves contiguous runs (`_gather_by_phase`);
* 1x1: the GEMM straight on the input; depthwise (one input channel per group), 1-D and
  2-D: a multiply-add per kernel tap over whole planes laid out on stride-phase grids
  (depthwise.py); 3-D or with a channel multiplier: over strided slices;
* weight gradient: `cols @ ograd^T` (chunked on the FlatGrid for stride 1); data
  gradient: for stride 1 a convolution with the flipped, transposed weight (so the
  fast forward kernels serve), else `W^T @ ograd` and col2im, which loops only over
  the kernel offsets.

Work is chunked so a chunk's column matrix stays in the CPU caches when numpy's BLAS
runs single-threaded; a threaded BLAS pays a synchronisation per call, so it gets
few, large GEMMs instead (`THREADED_BLAS`, blas.py).

Deconvolution (deconv.py) is the adjoint of Convolution and reuses these
kernels. Channel-last layouts (NWC/NHWC/NDHWC) are computed by transposing to
channel-first and back (MXNet 1.9.1 runs them only on GPU).

Deliberate differences from MXNet 1.9.1: 3-D dilation runs on CPU (MXNet
refuses it without cuDNN).
"""
from __future__ import annotations

import itertools

import numpy as np

from ..attrs import Attrs
from ..errors import AttrError, ShapeError
from . import conv_jit, depthwise, scratch, winograd4
from .blas import CHUNK_BYTES, THREADED_BLAS, chunk_limit  # noqa: F401 - THREADED_BLAS re-exported
from .flat_grid import FlatGrid
from .winograd import use_winograd, winograd_forward

Shape = tuple

_CHANNEL_LAST = {"NWC", "NHWC", "NDHWC"}
_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


# ---------------------------------------------------------------------------
# geometry helpers (shared with pool.py and spatial.py)


def prod(dims) -> int:
    """Product of a sequence of ints (1 for an empty one)."""
    out = 1
    for d in dims:
        out *= int(d)
    return out


def given_attrs(a: Attrs) -> dict:
    """The attributes a call gave (MXNet strings), without hidden `__x__` ones."""
    return {k: v for k, v in a.given.items() if not (k.startswith("__") and k.endswith("__"))}


def spatial_tuple(op: str, name: str, value: tuple, nsp: int, default: int, low: int) -> tuple:
    """An attribute tuple per spatial dim (empty = `default`), validated against `low`."""
    if not value:
        return (default,) * nsp
    value = tuple(int(v) for v in value)
    if len(value) != nsp:
        raise AttrError(f"operator {op}: attribute {name!r} must have {nsp} entries like the kernel, "
                        f"got {value}")
    if any(v < low for v in value):
        raise AttrError(f"operator {op}: attribute {name!r} entries must be >= {low}, got {value}")
    return value


def is_channel_last(layout: str | None) -> bool:
    return layout in _CHANNEL_LAST


def check_layout(op: str, layout: str | None, ndim: int) -> None:
    """The layout (if given) must match the data's number of dimensions."""
    if layout is not None and layout not in _LAYOUTS.get(ndim - 2, ()):
        raise ShapeError(f"operator {op}: layout {layout} does not fit {ndim}-D data; expected one of "
                         f"{list(_LAYOUTS.get(ndim - 2, ()))}")


def to_cf_shape(shape: Shape, channel_last: bool) -> Shape:
    """(N, *sp, C) -> (N, C, *sp) when channel-last, else unchanged."""
    if not channel_last:
        return tuple(shape)
    return (shape[0], shape[-1], *shape[1:-1])


def from_cf_shape(shape: Shape, channel_last: bool) -> Shape:
    """(N, C, *sp) -> (N, *sp, C) when channel-last, else unchanged."""
    if not channel_last:
        return tuple(shape)
    return (shape[0], *shape[2:], shape[1])


def to_cf(x, channel_last: bool):
    """A channel-last array as a channel-first view."""
    return x if not channel_last else x.transpose(0, x.ndim - 1, *range(1, x.ndim - 1))


def from_cf(xp, x, channel_last: bool):
    """A channel-first array back in channel-last layout (contiguous copy)."""
    return x if not channel_last else xp.ascontiguousarray(x.transpose(0, *range(2, x.ndim), 1))


def pad_spatial(xp, x, lo: tuple, hi: tuple, value: float = 0.0):
    """Pad the spatial dims (2..) of a channel-first array by `lo` before and `hi` after."""
    if not any(lo) and not any(hi):
        return x
    shape = x.shape[:2] + tuple(s + b + e for s, b, e in zip(x.shape[2:], lo, hi))
    out = xp.full(shape, value, dtype=x.dtype) if value != 0 else xp.zeros(shape, dtype=x.dtype)
    out[(slice(None), slice(None)) + tuple(slice(b, b + s) for b, s in zip(lo, x.shape[2:]))] = x
    return out


def offset_slices(offset: tuple, stride: tuple, out_sp: tuple) -> tuple:
    """Index of the input elements that kernel offset `offset` (already times dilation)
    touches for every output position."""
    return (slice(None), slice(None)) + tuple(
        slice(o, o + s * (n - 1) + 1, s) for o, s, n in zip(offset, stride, out_sp))


def kernel_offsets(kernel: tuple, dilate: tuple):
    """Every kernel tap as (tap index tuple, input offset tuple), in row-major order."""
    for idx in itertools.product(*(range(k) for k in kernel)):
        yield idx, tuple(i * d for i, d in zip(idx, dilate))


def window_view(xp, x, out_sp: tuple, kernel: tuple, stride: tuple, dilate: tuple):
    """Strided view (N, C, *out, *kernel) of a channel-first array's sliding windows."""
    st = x.strides
    n = len(kernel)
    shape = tuple(x.shape[:2]) + tuple(out_sp) + tuple(kernel)
    strides = tuple(st[:2]) + tuple(st[2 + i] * stride[i] for i in range(n)) + \
        tuple(st[2 + i] * dilate[i] for i in range(n))
    return xp.lib.stride_tricks.as_strided(x, shape=shape, strides=strides)


# ---------------------------------------------------------------------------
# GEMM kernels (channel-first; all shapes already validated)

class Geometry:
    """Kernel, stride, dilation and (symmetric) padding of one convolution."""

    __slots__ = ("kernel", "stride", "dilate", "pad", "groups")

    def __init__(self, kernel: tuple, stride: tuple, dilate: tuple, pad: tuple, groups: int):
        self.kernel, self.stride, self.dilate, self.pad, self.groups = kernel, stride, dilate, pad, groups

    def out_size(self, in_sp: tuple) -> tuple:
        return tuple((x + 2 * p - (d * (k - 1) + 1)) // s + 1
                     for x, p, k, s, d in zip(in_sp, self.pad, self.kernel, self.stride, self.dilate))

    def extent(self) -> tuple:
        """The dilated kernel's size per spatial dim."""
        return tuple(d * (k - 1) + 1 for k, d in zip(self.kernel, self.dilate))


def _store(xp, dst, src, b, axis: int = 1) -> None:
    """dst = src, plus the bias b along channel axis `axis` when given (one pass)."""
    if b is None:
        dst[...] = src
    else:
        xp.add(src, b.reshape((-1,) + (1,) * (dst.ndim - axis - 1)), out=dst)


def _im2col(xp, x, geo: Geometry, out_sp: tuple, buf=None):
    """Columns (G, C/G*K, N*P) of a channel-first input, contiguous (layout (C, *kernel, N, *out)),
    gathered into `buf` (a flat array at least that large) when given."""
    n, c = x.shape[:2]
    shape = (c, *geo.kernel, n, *out_sp)
    cols = xp.empty(shape, dtype=x.dtype) if buf is None else buf[:prod(shape)].reshape(shape)
    compiled = None if _phase_gather_pays(geo) else _compiled(xp, x, len(geo.kernel))
    if compiled is not None:
        compiled.im2col(x, geo.stride, geo.dilate, geo.pad, cols)
        return cols.reshape(geo.groups, c // geo.groups * prod(geo.kernel), n * prod(out_sp))
    xpad = pad_spatial(xp, x, geo.pad, geo.pad)
    if _phase_gather_pays(geo):
        _gather_by_phase(xp, xpad, geo, out_sp, cols)
    else:
        nsp = len(geo.kernel)
        win = window_view(xp, xpad, out_sp, geo.kernel, geo.stride, geo.dilate)
        cols[...] = win.transpose((1, *range(2 + nsp, 2 + 2 * nsp), 0, *range(2, 2 + nsp)))
    return cols.reshape(geo.groups, c // geo.groups * prod(geo.kernel), n * prod(out_sp))


def _compiled(xp, a, nsp: int):
    """conv_jit's kernels where they apply (numpy, 2-D, float32/float64), else None."""
    if xp is not np or nsp != 2 or a.dtype not in (np.float32, np.float64):
        return None
    return conv_jit.kernels()


def _phase_gather_pays(geo: Geometry) -> bool:
    """Whether _gather_by_phase beats the plain window copy: strided and undilated, with
    enough taps per stride phase (kernel size >= 4 x stride size) that the extra pass over
    the input is small next to the columns (7x7 stride 2: yes; 3x3 stride 2: no)."""
    return (any(s > 1 for s in geo.stride) and all(d == 1 for d in geo.dilate)
            and prod(geo.kernel) >= 4 * prod(geo.stride))


def _gather_by_phase(xp, xpad, geo: Geometry, out_sp: tuple, cols) -> None:
    """cols (C, *kernel, N, *out) of a strided, undilated convolution, one copy per stride
    phase: tap t = r + s*a of a dim reads padded element s*(o + a) + r, i.e. element o + a of
    phase r (every s-th element from r). With each phase copied contiguous (C, N, *in/s) --
    one pass over the input -- every tap's windows are runs along the last dim on both
    sides of the copy, instead of elements s apart."""
    lead = (slice(None), slice(None))
    for r in itertools.product(*(range(min(s, k)) for s, k in zip(geo.stride, geo.kernel))):
        phase = xp.ascontiguousarray(
            xpad[lead + tuple(slice(ri, None, s) for ri, s in zip(r, geo.stride))].swapaxes(0, 1))
        taps = tuple(-(-(k - ri) // s) for k, ri, s in zip(geo.kernel, r, geo.stride))
        st = phase.strides
        view = xp.lib.stride_tricks.as_strided(
            phase, shape=(phase.shape[0], *taps, phase.shape[1], *out_sp),
            strides=(st[0], *st[2:], st[1], *st[2:]))
        cols[(slice(None),) + tuple(slice(ri, None, s) for ri, s in zip(r, geo.stride))] = view


def _col2im(xp, cols, x_shape: tuple, geo: Geometry, out_sp: tuple):
    """Sum columns (C, *kernel, N, *out) back into an array of `x_shape` (adjoint of im2col)."""
    n, c = x_shape[:2]
    cols = cols.reshape((c, *geo.kernel, n, *out_sp))
    compiled = _compiled(xp, cols, len(geo.kernel))
    if compiled is not None:
        out = xp.empty(x_shape, dtype=cols.dtype)
        compiled.col2im(cols, geo.stride, geo.dilate, geo.pad, out)
        return out
    padded = (n, c) + tuple(s + 2 * p for s, p in zip(x_shape[2:], geo.pad))
    out = xp.zeros(padded, dtype=cols.dtype)
    for idx, off in kernel_offsets(geo.kernel, geo.dilate):
        out[offset_slices(off, geo.stride, out_sp)] += cols[(slice(None), *idx)].swapaxes(0, 1)
    if any(geo.pad):
        out = out[(slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(geo.pad, x_shape[2:]))]
        out = xp.ascontiguousarray(out)
    return out


def _ograd_rows(xp, g, groups: int):
    """Output-shaped (N, O, *out) array as contiguous (G, O/G, N*P) rows."""
    n, o = g.shape[:2]
    g3 = g.reshape(n, groups, o // groups, -1)
    return xp.ascontiguousarray(g3.transpose(1, 2, 0, 3)).reshape(groups, o // groups, -1)


def _is_pointwise(geo: Geometry) -> bool:
    return all(k == 1 for k in geo.kernel) and not any(geo.pad) and geo.groups == 1


def _is_depthwise(geo: Geometry, channels: int) -> bool:
    """One input channel per group (MobileNet's depthwise convolutions)."""
    return geo.groups > 1 and channels == geo.groups


def _flat_forward(xp, x, w, b, geo: Geometry, out, grid: FlatGrid, finish=None, workspace=None) -> None:
    """Stride-1 convolution into `out` by FlatGrid chunks (any kernel, dilation, groups);
    `finish(dst, where)` (an epilogue: conv_forward) runs on each chunk of `out` once written;
    the temporaries come from `workspace` (scratch.take)."""
    n, c = x.shape[:2]
    o, g = w.shape[0], geo.groups
    kk = c * prod(geo.kernel)
    w3 = w.reshape(g, o // g, kk // g)
    spans = list(grid.chunks(xp, n, kk * out.itemsize))
    most = max(m for *_, m in spans)
    flat, buf, rbuf = scratch.take(xp, workspace, [(grid.flat_shape(x.shape), x.dtype), ((kk * most,), x.dtype),
                                                   ((o * most,), out.dtype)])
    grid.flatten(xp, x, flat)
    for ims, rows, q0, m in spans:
        cols = grid.columns(xp, flat, q0, m, buf).reshape(g, kk // g, m)
        res = rbuf[:o * m].reshape(g, o // g, m)
        xp.matmul(w3, cols, out=res)
        where = slice(ims[0], ims[1]) if rows is None else (ims[0], slice(None), slice(rows[0], rows[1]))
        dst = out[where]
        _store(xp, dst, grid.valid(res.reshape(o, m), ims, rows), b, 1 if rows is None else 0)
        if finish is not None:
            finish(dst, where)


def _im2col_forward(xp, x, w, b, geo: Geometry, out, finish=None, workspace=None) -> None:
    """Any convolution into `out` by im2col GEMMs, chunked over images; one column buffer
    and one GEMM result buffer serve every chunk (`finish`, `workspace`: see _flat_forward)."""
    n, c = x.shape[:2]
    o, g = w.shape[0], geo.groups
    out_sp = tuple(out.shape[2:])
    kk = c * prod(geo.kernel)
    w3 = w.reshape(g, o // g, kk // g)
    p = prod(out_sp)
    per = min(n, chunk_limit(xp, kk * p * x.itemsize))
    direct = g == 1 and p >= IM2COL_DIRECT_MIN_POSITIONS and out.dtype == x.dtype
    buf, rbuf = scratch.take(xp, workspace, [((kk * per * p,), x.dtype),
                                             ((0 if direct else o * per * p,), out.dtype)])
    for n0 in range(0, n, per):
        n1 = min(n, n0 + per)
        cols = _im2col(xp, x[n0:n1], geo, out_sp, buf)
        if direct:      # each image's GEMM writes its (O, P) output in place: no reordering copy
            cols = cols.reshape(kk, n1 - n0, p)
            for i in range(n1 - n0):
                dst = out[n0 + i].reshape(o, p)
                xp.matmul(w3[0], cols[:, i], out=dst)
                if b is not None:
                    dst += b.reshape(o, 1)
        else:
            res = rbuf[:o * (n1 - n0) * p].reshape(g, o // g, -1)
            xp.matmul(w3, cols, out=res)
            _store(xp, out[n0:n1], res.reshape((o, n1 - n0) + out_sp).swapaxes(0, 1), b)
        if finish is not None:
            finish(out[n0:n1], slice(n0, n1))


#: fewest output positions per image for which _im2col_forward runs one GEMM per image,
#: straight into the output, instead of one per chunk and a reordering copy (LeNet's first
#: layer, 576 positions and 20 channels: 1.6 ms against 3.0 at batch 64; fewer positions
#: make poor per-image GEMMs: 2x slower at 64)
IM2COL_DIRECT_MIN_POSITIONS = 512


#: fewest output positions per image for which a 1x1 convolution runs one GEMM per image
#: (single-threaded OpenBLAS: from 14x14 on; the batched GEMM costs two transposing copies)
POINTWISE_MIN_POSITIONS = 1024 if THREADED_BLAS else 128


def _pointwise_forward(xp, x, w, b, geo: Geometry, out) -> None:
    """1x1 convolution (any stride, no padding): a GEMM per image, or one over the batch
    when images are small (few positions make poor per-image GEMMs; a threaded BLAS wants
    few, large GEMMs)."""
    n, c = x.shape[:2]
    o = w.shape[0]
    xs = x[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in geo.stride)]
    p = prod(out.shape[2:])
    w2 = w.reshape(o, c)
    out3 = out.reshape(n, o, p)
    if p >= POINTWISE_MIN_POSITIONS or n == 1:
        # BLAS needs contiguous operands (numpy falls back to a slow loop otherwise)
        xp.matmul(w2, xp.ascontiguousarray(xs).reshape(n, c, p), out=out3)
        if b is not None:
            out3 += b.reshape(1, o, 1)
        return
    cols = xp.ascontiguousarray(xs.swapaxes(0, 1)).reshape(c, n * p)
    res = xp.matmul(w2, cols).reshape(o, n, p)
    _store(xp, out3, res.swapaxes(0, 1), b)


def _depthwise_forward(xp, x, w, b, geo: Geometry, out) -> None:
    """One input channel per group: a multiply-add per kernel tap over strided slices of the
    padded input (no GEMM, no loop over channels), chunked over images."""
    n, c = x.shape[:2]
    o = w.shape[0]
    mult = o // c
    out_sp = tuple(out.shape[2:])
    nsp = len(out_sp)
    wt = w.reshape(c, mult, -1)
    bcast = (1, c, mult) + (1,) * nsp
    per = chunk_limit(xp, 3 * c * mult * prod(out_sp) * out.itemsize)
    for n0 in range(0, n, per):
        n1 = min(n, n0 + per)
        xpad = pad_spatial(xp, x[n0:n1], geo.pad, geo.pad)
        acc = out[n0:n1].reshape((n1 - n0, c, mult) + out_sp)
        tmp = xp.empty_like(acc)
        for t, (_, off) in enumerate(kernel_offsets(geo.kernel, geo.dilate)):
            part = xpad[offset_slices(off, geo.stride, out_sp)][:, :, None]
            wk = wt[:, :, t].reshape(bcast)
            if t == 0:
                xp.multiply(part, wk, out=acc)
            else:
                xp.multiply(part, wk, out=tmp)
                acc += tmp
        if b is not None:
            acc += b.reshape(bcast)


def conv_forward(xp, x, w, b, geo: Geometry, out=None, finish=None, workspace=None):
    """Channel-first convolution: (N, C, *in) x (O, C/G, *k) -> (N, O, *out), written into
    `out` when given (a contiguous array of that shape); the GEMM and Winograd kernels take
    their temporaries from `workspace` (a uint8 buffer: scratch.py) when it is large enough.

    `finish(dst, where)` is an epilogue (a residual add, an activation: conv_fused.py) run
    in place on ``dst = out[where]``, chunk by chunk right after the GEMM wrote it (while it
    is in cache) where the kernel works in chunks, else once on the whole output."""
    n, c = x.shape[:2]
    o = w.shape[0]
    out_sp = geo.out_size(x.shape[2:])
    if out is None:
        out = xp.empty((n, o, *out_sp), dtype=xp.result_type(x.dtype, w.dtype))
    if out.size == 0:
        return out
    if c == 0:
        out[...] = 0 if b is None else b.reshape((o,) + (1,) * len(out_sp))
        if finish is not None:
            finish(out, Ellipsis)
        return out
    if _is_pointwise(geo):
        _pointwise_forward(xp, x, w, b, geo, out)
    elif depthwise.supports(geo, x.shape, w.shape):
        depthwise.depthwise_forward(xp, x, w, b, geo, out)
    elif _is_depthwise(geo, c):
        _depthwise_forward(xp, x, w, b, geo, out)
    elif winograd4.use_winograd4_direct(x, w, geo, finish):
        winograd4.winograd4_forward(xp, x, winograd4.weight4(w), b, geo.pad, out, workspace=workspace)
        return out
    elif use_winograd(x, w, geo.kernel, geo.stride, geo.dilate, geo.groups, out_sp):
        winograd_forward(xp, x, w, b, geo.pad, out, finish, workspace)
        return out
    else:
        grid = _flat_grid(geo, x.shape[2:], out_sp)
        if grid is not None:
            _flat_forward(xp, x, w, b, geo, out, grid, finish, workspace)
        else:
            _im2col_forward(xp, x, w, b, geo, out, finish, workspace)
        return out
    if finish is not None:
        finish(out, Ellipsis)
    return out


#: most grid positions per output position for which FlatGrid beats im2col
MAX_FLAT_WASTE = 1.1


def _flat_grid(geo: Geometry, in_sp: tuple, out_sp: tuple) -> FlatGrid | None:
    """The FlatGrid of a stride-1 convolution whose row tails waste little, else None."""
    if any(s != 1 for s in geo.stride):
        return None
    grid = FlatGrid(geo, in_sp, out_sp)
    return grid if grid.waste() <= MAX_FLAT_WASTE else None


# -- backward


def _flipped_weight(xp, w, groups: int):
    """(O, C/G, *k) -> (C, O/G, *k) with the kernel reversed: the weight of the convolution
    that computes the data gradient."""
    o, cg = w.shape[:2]
    k = w.shape[2:]
    w5 = w.reshape((groups, o // groups, cg) + k).swapaxes(1, 2)
    flip = (slice(None),) * 3 + (slice(None, None, -1),) * len(k)
    return xp.ascontiguousarray(w5[flip]).reshape((groups * cg, o // groups) + k)


def _depthwise_data_grad(xp, g, w, x_shape: tuple, geo: Geometry):
    """Adjoint of _depthwise_forward: each tap scatters g * weight back to its slice."""
    n, c = x_shape[:2]
    out_sp = tuple(g.shape[2:])
    mult = w.shape[0] // c
    nsp = len(out_sp)
    wt = w.reshape(c, mult, -1)
    g5 = g.reshape((n, c, mult) + out_sp)
    padded = (n, c) + tuple(s + 2 * p for s, p in zip(x_shape[2:], geo.pad))
    dpad = xp.zeros(padded, dtype=g.dtype)
    tmp = xp.empty((n, c, mult) + out_sp, dtype=g.dtype)
    for t, (_, off) in enumerate(kernel_offsets(geo.kernel, geo.dilate)):
        xp.multiply(g5, wt[:, :, t].reshape((1, c, mult) + (1,) * nsp), out=tmp)
        dpad[offset_slices(off, geo.stride, out_sp)] += tmp.sum(axis=2) if mult > 1 else tmp[:, :, 0]
    crop = (slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(geo.pad, x_shape[2:]))
    return xp.ascontiguousarray(dpad[crop]) if any(geo.pad) else dpad


#: most input positions per output position for which the stride-1 data gradient runs as a
#: convolution with the flipped weight (its GEMMs cover every input position, W^T @ g's cover
#: the output positions: LeNet's 5x5 unpadded layers, 12x12 from 8x8, run 2.25x the
#: multiplies that way; padded "same" layers, equal sizes, gain the fast forward kernels)
MAX_FLIPPED_AREA = 1.25


def conv_data_grad(xp, g, w, x_shape: tuple, geo: Geometry):
    """Gradient of conv_forward with respect to its data (the transposed convolution)."""
    if depthwise.supports(geo, x_shape, w.shape):
        return depthwise.depthwise_data_grad(xp, g, w, x_shape, geo)
    if _is_depthwise(geo, x_shape[1]):
        return _depthwise_data_grad(xp, g, w, x_shape, geo)
    ext = geo.extent()
    if all(s == 1 for s in geo.stride) and all(p <= e - 1 for p, e in zip(geo.pad, ext)) \
            and prod(x_shape[2:]) <= MAX_FLIPPED_AREA * prod(g.shape[2:]):
        # stride 1: a convolution of g with the flipped, transposed weight and the
        # complementary padding. It costs prod(x_sp)/prod(out_sp) times the products of
        # the GEMM + col2im below, so only where the output is about as large as the input
        # (a 224x224 kernel on a 224x224 image has a 1x1 output: 50176 times the work)
        full = Geometry(geo.kernel, geo.stride, geo.dilate, tuple(e - 1 - p for p, e in zip(geo.pad, ext)),
                        geo.groups)
        if full.out_size(g.shape[2:]) == tuple(x_shape[2:]) and (
                _compiled(xp, g, len(geo.kernel)) is None or _flipped_runs_winograd(g, w, x_shape, full)):
            return conv_forward(xp, g, _flipped_weight(xp, w, geo.groups), None, full)
    # _flat_data_grad's shifted adds over long runs beat numpy's col2im, not the compiled one
    if all(s == 1 for s in geo.stride) and geo.groups == 1 and g.shape[0] and prod(g.shape[2:]) \
            and _compiled(xp, g, len(geo.kernel)) is None:
        return _flat_data_grad(xp, g, w, x_shape, geo)
    g_rows = _ograd_rows(xp, g, geo.groups)  # (G, O/G, N*P)
    o = w.shape[0]
    w3 = w.reshape(geo.groups, o // geo.groups, -1)
    dcols = xp.matmul(w3.transpose(0, 2, 1), g_rows)  # (G, C/G*K, N*P)
    return _col2im(xp, dcols, x_shape, geo, tuple(g.shape[2:]))


def _flipped_runs_winograd(g, w, x_shape: tuple, full: Geometry) -> bool:
    """Whether the data gradient's flipped convolution would run by Winograd. Where it would
    not, W^T @ g and the compiled col2im are faster: they skip the flipped weight's copy and
    run one GEMM over the output positions (ResNet-18's 512@7 layers: 15.8 against 18.0 ms at
    batch 8, 3.0 against 5.9 at batch 1)."""
    flipped = np.broadcast_to(np.zeros((), w.dtype), (x_shape[1], w.shape[0] // full.groups) + tuple(full.kernel))
    return (winograd4.use_winograd4_direct(g, flipped, full, None)
            or use_winograd(g, flipped, full.kernel, full.stride, full.dilate, full.groups, tuple(x_shape[2:])))


def _flat_data_grad(xp, g, w, x_shape: tuple, geo: Geometry):
    """Stride-1, ungrouped data gradient as W^T @ g and a col2im whose adds run over long
    contiguous runs: g is laid out on the padded input's row width (zero row tails), so
    kernel tap t's columns land on the flat padded input shifted by one offset -- one add of
    (N, C, m) per tap instead of one per output row. Chunked over images."""
    n, o = g.shape[:2]
    c = x_shape[1]
    out_sp = tuple(g.shape[2:])
    kk = prod(geo.kernel)
    padded = tuple(s + 2 * p for s, p in zip(x_shape[2:], geo.pad))
    rows = (out_sp[0], *padded[1:])             # g's grid: the padded input's row widths
    m, area = prod(rows), prod(padded)
    steps = [1]
    for r in reversed(padded[1:]):
        steps.insert(0, steps[0] * r)
    shifts = [sum(f * st for f, st in zip(off, steps)) for _, off in kernel_offsets(geo.kernel, geo.dilate)]
    width = max(area, max(shifts) + m)
    wt = xp.ascontiguousarray(w.reshape(o, c * kk).T)            # (C*K, O)
    per = min(n, chunk_limit(xp, c * kk * m * g.itemsize))
    grid = xp.zeros((per, o) + rows, dtype=g.dtype)
    inside = (slice(None), slice(None)) + tuple(slice(0, s) for s in out_sp)
    dcols = xp.empty((per, c * kk, m), dtype=g.dtype)
    flat = xp.zeros((n, c, width), dtype=g.dtype)
    for n0 in range(0, n, per):
        n1 = min(n, n0 + per)
        q = n1 - n0
        grid[:q][inside] = g[n0:n1]
        d4 = xp.matmul(wt, grid[:q].reshape(q, o, m), out=dcols[:q]).reshape(q, c, kk, m)
        dst = flat[n0:n1]
        for t, sh in enumerate(shifts):
            dst[:, :, sh:sh + m] += d4[:, :, t]
    out = flat[:, :, :area].reshape((n, c) + padded)
    if any(geo.pad):
        out = xp.ascontiguousarray(out[(slice(None), slice(None)) + tuple(
            slice(p, p + s) for p, s in zip(geo.pad, x_shape[2:]))])
    return out


def _depthwise_weight_grad(xp, g, x, w_shape: tuple, geo: Geometry):
    n, c = x.shape[:2]
    out_sp = tuple(g.shape[2:])
    mult = w_shape[0] // c
    g5 = g.reshape((n, c, mult) + out_sp)
    xpad = pad_spatial(xp, x, geo.pad, geo.pad)
    axes = (0, *range(3, 3 + len(out_sp)))
    taps = []
    tmp = xp.empty_like(g5)
    for _, off in kernel_offsets(geo.kernel, geo.dilate):
        xp.multiply(g5, xpad[offset_slices(off, geo.stride, out_sp)][:, :, None], out=tmp)
        taps.append(tmp.sum(axis=axes))
    return xp.stack(taps, axis=-1).reshape(w_shape).astype(g.dtype, copy=False)


def _flat_weight_grad(xp, g, x, w_shape: tuple, geo: Geometry, grid: FlatGrid):
    """sum over chunks of cols @ g^T on the FlatGrid (g zero at the grid's row tails)."""
    n, c = x.shape[:2]
    o, gr = w_shape[0], geo.groups
    kk = c * prod(geo.kernel)
    flat = grid.flatten(xp, x)
    spans = list(grid.chunks(xp, n, kk * x.itemsize))
    most = max(m for *_, m in spans)
    buf = xp.empty(kk * most, dtype=x.dtype)
    gbuf = xp.empty(o * most, dtype=g.dtype)
    acc = xp.zeros((gr, kk // gr, o // gr), dtype=g.dtype)
    part = xp.empty_like(acc)
    for ims, rows, q0, m in spans:
        cols = grid.columns(xp, flat, q0, m, buf).reshape(gr, kk // gr, m)
        gc = gbuf[:o * m].reshape(o, m)
        gc[...] = 0
        src = g[ims[0]:ims[1]] if rows is None else g[ims[0], :, rows[0]:rows[1]]
        grid.valid(gc, ims, rows)[...] = src
        # cols @ g^T rather than g @ cols^T: OpenBLAS is several times slower on the
        # latter's shape (small M and N, long K in row-major order)
        xp.matmul(cols, gc.reshape(gr, o // gr, m).transpose(0, 2, 1), out=part)
        acc += part
    return xp.ascontiguousarray(acc.transpose(0, 2, 1)).reshape(w_shape)


def conv_weight_grad(xp, g, x, w_shape: tuple, geo: Geometry):
    """Gradient of conv_forward with respect to its weight."""
    if depthwise.supports(geo, x.shape, w_shape):
        return depthwise.depthwise_weight_grad(xp, g, x, w_shape, geo)
    if _is_depthwise(geo, x.shape[1]):
        return _depthwise_weight_grad(xp, g, x, w_shape, geo)
    if xp is np and winograd4.use_winograd4_weight_grad(x, g, geo):
        return winograd4.winograd4_weight_grad(x, g, geo.pad)
    out_sp = tuple(g.shape[2:])
    grid = _flat_grid(geo, x.shape[2:], out_sp)
    if grid is not None and x.shape[0] and prod(out_sp):
        return _flat_weight_grad(xp, g, x, w_shape, geo, grid)
    if xp is np and geo.groups == 1 and prod(out_sp) >= PER_IMAGE_WEIGHT_GRAD_MIN_POSITIONS:
        return _per_image_weight_grad(g, x, w_shape, geo, out_sp)
    cols = _im2col(xp, x, geo, out_sp)
    g_rows = _ograd_rows(xp, g, geo.groups)
    if prod(w_shape) >= DIRECT_WEIGHT_GRAD_MIN:
        # g @ cols^T straight in the weight's layout: transposing a large (C*K, O) result
        # costs more than the GEMM (ResNet-18's 512-channel layers: 28 ms against 11)
        return xp.matmul(g_rows, cols.transpose(0, 2, 1)).reshape(w_shape)
    # (cols @ g^T)^T rather than g @ cols^T: OpenBLAS is slower on the latter's shape when
    # M and N are small and K huge (LeNet's 20->50 layer at batch 64: 1.6 ms against 2.7)
    dw_t = xp.matmul(cols, g_rows.transpose(0, 2, 1))  # (G, C/G*K, O/G)
    return xp.ascontiguousarray(dw_t.transpose(0, 2, 1)).reshape(w_shape)


#: fewest weight elements for which conv_weight_grad's GEMM writes the weight's layout directly
DIRECT_WEIGHT_GRAD_MIN = 1 << 18
#: fewest output positions per image for which the weight gradient runs one GEMM per image
PER_IMAGE_WEIGHT_GRAD_MIN_POSITIONS = 4096


def _per_image_weight_grad(g, x, w_shape: tuple, geo: Geometry, out_sp: tuple):
    """Ungrouped weight gradient as one cols @ g[n]^T per image, summed: g[n] is used in place
    (no transposed copy of the whole output gradient) and each image's columns are reused
    while in cache (ResNet-18's 7x7 stem at batch 8: 31.8 -> 20.9 ms)."""
    o, p = w_shape[0], prod(out_sp)
    kk = x.shape[1] * prod(geo.kernel)
    buf = np.empty(kk * p, x.dtype)
    acc = np.zeros((kk, o), np.result_type(g.dtype, x.dtype))
    part = np.empty_like(acc)
    for n in range(x.shape[0]):
        cols = _im2col(np, x[n:n + 1], geo, out_sp, buf)[0]          # (C*K, P)
        np.matmul(cols, g[n].reshape(o, p).T, out=part)
        acc += part
    return np.ascontiguousarray(acc.T).reshape(w_shape)


def bias_grad(g):
    """Sum of an output-shaped gradient over every axis but the channels (1)."""
    return g.sum(axis=(0, *range(2, g.ndim)))
