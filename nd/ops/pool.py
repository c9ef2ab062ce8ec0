"""Pooling (MXNet 1.9.1 semantics): max, avg, sum and Lp pooling in 1-D, 2-D and 3-D.

Windows are strided slices of the input, one per kernel offset, clipped to the
input (padding adds nothing to a max or a sum, so no padded copy is made): the
forward reduces one spatial dim at a time (max and sum are separable: k - 1
elementwise ops per dim instead of prod(kernel) - 1 over the output; global
pooling is one reduction) and the backward scatters the output gradient back
through the per-offset slices, so no Python loop runs over pixels or batch.

Window geometry follows MXNet's CPU kernels (pool.h): a window starts at
`o*stride - pad`; for avg pooling its divisor is the window clipped to
`[-pad, in + pad)` (count_include_pad, the default) or to `[0, in)`.

`pooling_convention='same'` fails shape inference in MXNet 1.9.1
(formats.md, section 3); here it is TensorFlow's SAME: output `ceil(in/stride)`,
with the padding the windows need split evenly (the extra one at the end).
The `pad` attribute must then be zero, as MXNet requires.

Max pooling declares MXNet's hidden MKLDNN `workspace` output (see
`has_workspace`) so graph files count outputs as MXNet does; its backward is
MXNet's native CPU kernel, which for 3-D avg pooling with the 'full'
convention differs from MXNet's MKLDNN backward (that one ignores the
clipped window sizes).
"""
from __future__ import annotations

import itertools

import numpy as np

from . import pool_jit, scratch
from ..attrs import Attr, Attrs
from ..errors import AttrError, AutogradError, ShapeError
from ..registry import merge_shape, register, same_type
from .conv import (check_layout, from_cf, from_cf_shape, given_attrs, is_channel_last, spatial_tuple, to_cf,
                   to_cf_shape)

Shape = tuple

POOL_ATTRS = {
    "kernel": Attr("shape", (), "Pooling kernel size: (y, x) or (d, y, x)"),
    "pool_type": Attr("str", "max", "Pooling type to be applied.", choices=("avg", "lp", "max", "sum")),
    "global_pool": Attr("bool", False, "Ignore kernel size, do global pooling based on current input "
                                       "feature map."),
    "cudnn_off": Attr("bool", False, "Turn off cudnn pooling and use MXNet pooling operator (accepted and "
                                     "ignored)."),
    "pooling_convention": Attr("str", "valid", "Pooling convention to be applied.",
                               choices=("full", "same", "valid")),
    "stride": Attr("shape", (), "Stride: for pooling (y, x) or (d, y, x). Defaults to 1 for each dimension."),
    "pad": Attr("shape", (), "Pad for pooling: (y, x) or (d, y, x). Defaults to no padding."),
    "p_value": Attr("int", None, "Value of p for Lp pooling, can be 1 or 2, required for Lp Pooling."),
    "count_include_pad": Attr("bool", None, "Only used for AvgPool, specify whether to count padding "
                                            "elements for average calculation. Defaults to true."),
    "layout": Attr("str", None, "Set layout for input and output. Empty for default layout: NCW for 1d, "
                                "NCHW for 2d and NCDHW for 3d.",
                   choices=("NCDHW", "NCHW", "NCW", "NDHWC", "NHWC", "NWC")),
}


class PoolGeometry:
    """Where every window of one pooling call lies, per spatial dim."""

    __slots__ = ("kernel", "stride", "pad_lo", "pad_hi", "clip_hi", "in_sp", "out_sp")

    def __init__(self, kernel, stride, pad_lo, pad_hi, clip_hi, in_sp, out_sp):
        self.kernel, self.stride = kernel, stride
        self.pad_lo, self.pad_hi = pad_lo, pad_hi  # padding of the input buffer
        self.clip_hi = clip_hi                      # windows end at in + clip_hi for avg's divisor
        self.in_sp, self.out_sp = in_sp, out_sp

    def divisor(self, include_pad: bool) -> np.ndarray:
        """avg pooling's window sizes, shape out_sp (float64)."""
        counts = []
        for k, s, lo, hi, n, o in zip(self.kernel, self.stride, self.pad_lo, self.clip_hi,
                                      self.in_sp, self.out_sp):
            start = np.arange(o) * s - lo
            end = np.minimum(start + k, n + hi)
            if not include_pad:
                start, end = np.maximum(start, 0), np.minimum(end, n)
            # a window wholly in the padding sums nothing; MXNet outputs 0 there
            counts.append(np.maximum(end - start, 1).astype(np.float64))
        out = counts[0]
        for c in counts[1:]:
            out = np.multiply.outer(out, c)
        return out


def _check_attrs(a: Attrs, nsp: int) -> None:
    if a.pool_type == "lp":
        if a.p_value is None:
            raise AttrError("operator Pooling: pool_type='lp' needs the attribute 'p_value'")
        if a.p_value < 1:
            raise AttrError(f"operator Pooling: attribute 'p_value' must be >= 1, got {a.p_value}")
    if not a.global_pool:
        if len(a.kernel) != nsp:
            raise AttrError(f"operator Pooling: kernel {tuple(a.kernel)} must have {nsp} entries for "
                            f"{nsp + 2}-D data (or set global_pool=True)")
        spatial_tuple("Pooling", "kernel", a.kernel, nsp, 1, 1)


def pool_geometry(a: Attrs, in_sp: tuple) -> PoolGeometry:
    """Kernel, stride, padding and output size of a Pooling call on spatial size `in_sp`."""
    nsp = len(in_sp)
    _check_attrs(a, nsp)
    if a.global_pool:
        ones = (1,) * nsp
        zeros = (0,) * nsp
        return PoolGeometry(tuple(in_sp), ones, zeros, zeros, zeros, tuple(in_sp), ones)
    kernel = tuple(int(k) for k in a.kernel)
    stride = spatial_tuple("Pooling", "stride", a.stride, nsp, 1, 1)
    conv = a.pooling_convention
    if conv == "same":   # MXNet only checks that pad is all zeros, whatever its length
        if a.pad is not None and any(a.pad):
            raise AttrError("operator Pooling: pooling_convention='same' disables the pad attribute, "
                            f"got {tuple(a.pad)}")
        pad = (0,) * nsp
    else:
        pad = spatial_tuple("Pooling", "pad", a.pad, nsp, 0, 0)
    lo, hi, clip, out = [], [], [], []
    for x, k, s, p in zip(in_sp, kernel, stride, pad):
        if conv == "same":
            o = -(-x // s)
            total = max((o - 1) * s + k - x, 0)
            lo.append(total // 2)
            hi.append(total - total // 2)
            clip.append(total - total // 2)
            out.append(o)
            continue
        if k > x + 2 * p:
            raise ShapeError(f"operator Pooling: kernel size {k} exceeds the input size {x} padded to "
                             f"{x + 2 * p} (kernel {kernel}, pad {pad})")
        o = (x + 2 * p - k) // s + 1 if conv == "valid" else 1 + -(-(x + 2 * p - k) // s)
        lo.append(p)
        clip.append(p)
        hi.append(max(p, (o - 1) * s + k - x - p))
        out.append(o)
    return PoolGeometry(kernel, stride, tuple(lo), tuple(hi), tuple(clip), tuple(in_sp), tuple(out))


def _pool_shape(a: Attrs, dshape):
    if dshape is None:
        return None
    if not 3 <= len(dshape) <= 5:
        raise ShapeError(f"operator Pooling: data must be 3-D, 4-D or 5-D (batch, channel, *spatial), "
                         f"got shape {tuple(dshape)}")
    check_layout("Pooling", a.layout, len(dshape))
    cl = is_channel_last(a.layout)
    d_cf = to_cf_shape(dshape, cl)
    if not all(d_cf[2:]):
        _check_attrs(a, len(dshape) - 2)
        return [tuple(dshape)], [from_cf_shape(d_cf[:2] + (0,) * (len(dshape) - 2), cl)]
    geo = pool_geometry(a, tuple(d_cf[2:]))
    return [tuple(dshape)], [from_cf_shape(tuple(d_cf[:2]) + geo.out_sp, cl)]


def _lowest(dtype):
    """The start of a max: the lowest finite value, as MXNet's, so a window that lies wholly in the
    padding (pooling_convention='full') gives -FLT_MAX, not -inf."""
    dtype = np.dtype(dtype)
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def _signed_power(xp, x, p: int):
    return x if p == 1 else x ** p


def _signed_root(xp, s, p: int):
    """The real p-th root (odd p keeps the sign of a negative sum, as MXNet's cbrt)."""
    if p == 1:
        return s
    if p == 2:
        return xp.sqrt(s)
    if p == 3:
        return xp.cbrt(s)
    if p % 2:
        return (xp.sign(s) * xp.abs(s) ** (1.0 / p)).astype(s.dtype, copy=False)
    return (s ** (1.0 / p)).astype(s.dtype, copy=False)


def _along(axis: int, ndim: int, sl: slice) -> tuple:
    return (slice(None),) * axis + (sl,) + (slice(None),) * (ndim - axis - 1)


def _window_taps(n_in: int, n_out: int, k: int, s: int, lo: int):
    """(first output, end output, first input) of each kernel tap along one dim, clipped to
    the outputs whose tap lies inside the input (padding contributes nothing)."""
    for t in range(k):
        o0 = max(0, -(-(lo - t) // s))
        o1 = min(n_out, (n_in - 1 + lo - t) // s + 1)
        if o1 > o0:
            yield o0, o1, o0 * s - lo + t


def _reduce_dim(xp, x, axis: int, k: int, s: int, lo: int, n_out: int, is_max: bool, fill, dst=None):
    """Max or sum over the windows of one spatial dim (window o starts at o*s - lo), from
    strided slices of the unpadded input: k - 1 elementwise ops over the reduced array,
    written into `dst` (the result's shape and dtype, any content) when given."""
    n_in, nd = x.shape[axis], x.ndim
    if n_out == 1 and lo == 0 and k >= n_in:          # one window over the whole dim
        red = x.max(axis=axis, keepdims=True) if is_max else x.sum(axis=axis, keepdims=True, dtype=x.dtype)
        if dst is None:
            return red
        dst[...] = red
        return dst
    op = xp.maximum if is_max else xp.add
    taps = list(_window_taps(n_in, n_out, k, s, lo))
    part = [x[_along(axis, nd, slice(i0, i0 + (o1 - o0 - 1) * s + 1, s))] for o0, o1, i0 in taps]
    full = [j for j, (o0, o1, _) in enumerate(taps) if o0 == 0 and o1 == n_out]
    if len(full) >= 2:
        out = op(part[full[0]], part[full[1]], out=dst)
        done = set(full[:2])
    elif full:
        out = part[full[0]].copy() if dst is None else _assign(dst, part[full[0]])
        done = {full[0]}
    else:
        shape = x.shape[:axis] + (n_out,) + x.shape[axis + 1:]
        out = xp.full(shape, fill, dtype=x.dtype) if dst is None else _assign(dst, fill)
        done = set()
    for j, (o0, o1, _) in enumerate(taps):
        if j not in done:
            dst = out[_along(axis, nd, slice(o0, o1))]
            op(dst, part[j], out=dst)
    return out


def _assign(dst, value):
    dst[...] = value
    return dst


def pool_forward(xp, a: Attrs, x, geo: PoolGeometry, workspace=None):
    """Channel-first pooling of x (N, C, *in) -> (N, C, *out): max and sum are separable, so
    each spatial dim is reduced in turn (no padded copy; windows are clipped to the input,
    the padding adding nothing), then avg divides and Lp takes the root. The partly reduced
    arrays between the dims come from `workspace` (scratch.take)."""
    is_max = a.pool_type == "max"
    if is_max and _tiles_input(geo) and geo.kernel == (2, 2) and (compiled := _compiled(xp, geo, x)) is not None:
        y = np.empty(x.shape[:2] + tuple(geo.out_sp), x.dtype)
        compiled.tiled_max_2x2(x, y)         # one pass, np.maximum's order (LeNet's pool: 3.5x)
        return y
    out = _signed_power(xp, x, a.p_value) if a.pool_type == "lp" else x
    fill = _lowest(x.dtype) if is_max else 0
    axes = tuple(range(2, x.ndim))
    if all(o == 1 and lo == 0 and k >= n for o, lo, k, n in zip(geo.out_sp, geo.pad_lo, geo.kernel, geo.in_sp)):
        # global pooling: one reduction over every spatial axis
        red = out.max(axis=axes, keepdims=True) if is_max else out.sum(axis=axes, keepdims=True, dtype=out.dtype)
        return _finish(xp, a, geo, red)
    nsp = len(geo.kernel)
    steps = [tuple(x.shape[:2]) + tuple(geo.out_sp[:d + 1]) + tuple(x.shape[3 + d:]) for d in range(nsp - 1)]
    between = scratch.take(xp, workspace, [(shape, out.dtype) for shape in steps]) + [None]
    for d in range(nsp):
        out = _reduce_dim(xp, out, 2 + d, geo.kernel[d], geo.stride[d], geo.pad_lo[d], geo.out_sp[d],
                          is_max, fill, between[d])
    if out is x:
        out = out.copy()
    return _finish(xp, a, geo, out)


def _finish(xp, a: Attrs, geo: PoolGeometry, out):
    """avg's division by the window sizes, Lp's root; a contiguous result."""
    if a.pool_type == "avg":
        div = geo.divisor(a.count_include_pad is not False)
        out /= xp.asarray(div.astype(out.dtype))
    elif a.pool_type == "lp":
        out = _signed_root(xp, out, a.p_value)
    return xp.ascontiguousarray(out)


def _clipped_taps(geo: PoolGeometry):
    """(output index, first input, count) of every kernel offset in row-major order, each
    clipped to the outputs whose tap lies inside the input (per spatial dim: first input
    element and number of outputs); offsets wholly in the padding are skipped."""
    per_dim = [list(_window_taps(n, o, k, s, lo))
               for n, o, k, s, lo in zip(geo.in_sp, geo.out_sp, geo.kernel, geo.stride, geo.pad_lo)]
    lead = (slice(None), slice(None))
    for combo in itertools.product(*per_dim):
        yield (lead + tuple(slice(o0, o1) for o0, o1, _ in combo),
               tuple(i0 for _, _, i0 in combo), tuple(o1 - o0 for o0, o1, _ in combo))


class _Phases:
    """An input-shaped array split by stride phase: element i of a dim with stride s lives in
    phase i % s at i // s, so each kernel offset's strided slice is a contiguous slice of one
    phase (strided elementwise ops are several times slower in numpy)."""

    def __init__(self, xp, shape: tuple, stride: tuple, dtype, src=None):
        self.stride = stride
        self.keys = list(itertools.product(*(range(s) for s in stride)))
        self.parts = {}
        for key in self.keys:
            idx = self._lattice(key)
            if src is not None:
                self.parts[key] = xp.ascontiguousarray(src[idx])
            else:
                sub = tuple(len(range(p, n, s)) for p, n, s in zip(key, shape[2:], stride))
                self.parts[key] = xp.zeros(shape[:2] + sub, dtype=dtype)

    def _lattice(self, key: tuple) -> tuple:
        return (slice(None), slice(None)) + tuple(slice(p, None, s) for p, s in zip(key, self.stride))

    def slice(self, first: tuple, count: tuple):
        key = tuple(f % s for f, s in zip(first, self.stride))
        return self.parts[key][(slice(None), slice(None)) + tuple(
            slice(f // s, f // s + c) for f, s, c in zip(first, self.stride, count))]

    def gather(self, out) -> None:
        """Write the phases back into an input-shaped array."""
        for key in self.keys:
            out[self._lattice(key)] = self.parts[key]


def _compiled(xp, geo: PoolGeometry, x, *others):
    """pool_jit's kernels where they apply (numpy, 2-D, float32/float64 x and `others` of its
    dtype), else None."""
    if xp is not np or len(geo.kernel) != 2 or x.dtype not in (np.float32, np.float64) \
            or any(o.dtype != x.dtype for o in others):
        return None
    return pool_jit.kernels()


def _tiles_input(geo: PoolGeometry) -> bool:
    """Whether the windows tile the input exactly: stride = kernel, no padding, no remainder."""
    return (geo.stride == geo.kernel and not any(geo.pad_lo) and not any(geo.pad_hi)
            and all(o * k == n for o, k, n in zip(geo.out_sp, geo.kernel, geo.in_sp)))


def _tiled_max_backward(xp, g, x, y, geo: PoolGeometry):
    """Max pooling's gradient when the windows tile the input (LeNet's and VGG's 2x2 / 2):
    each input position belongs to one window, so each kernel offset writes its positions
    directly -- g where the offset holds its window's first maximum, else zero (-0.0 for a
    negative g, equal to 0) -- with no phase copies and no accumulation."""
    n, c = x.shape[:2]
    split = (n, c) + tuple(v for o, k in zip(geo.out_sp, geo.kernel) for v in (o, k))
    xs = x.reshape(split)
    dx = xp.empty(x.shape, dtype=g.dtype)
    ds = dx.reshape(split)
    open_ = xp.ones(y.shape, dtype=bool)      # windows whose maximum is not found yet
    hit = xp.empty(y.shape, dtype=bool)
    for offset in itertools.product(*(range(k) for k in geo.kernel)):
        at = (slice(None), slice(None)) + tuple(v for t in offset for v in (slice(None), t))
        xp.equal(xs[at], y, out=hit)
        xp.logical_and(hit, open_, out=hit)
        xp.logical_xor(open_, hit, out=open_)
        xp.multiply(g, hit, out=ds[at])
    return dx


def pool_backward(xp, a: Attrs, g, x, y, geo: PoolGeometry):
    """Gradient of pool_forward with respect to x, given the head gradient g and output y:
    per kernel offset, one scatter-add of the outputs' gradient into the offset's slice of
    the input (for max pooling only where the offset holds the window's first maximum),
    with the input split by stride phase so that every slice is contiguous."""
    compiled = _compiled(xp, geo, x, g) if a.pool_type == "max" else None
    if a.pool_type == "max" and _tiles_input(geo):
        if compiled is not None and geo.kernel == (2, 2):
            dx = np.empty(x.shape, g.dtype)
            compiled.tiled_max_grad_2x2(x, y, g, dx)
            return dx
        return _tiled_max_backward(xp, g, x, y, geo)  # numpy's offset-by-offset pass beats the general scan
    if compiled is not None:
        dx = np.empty(x.shape, g.dtype)
        compiled.max_pool_grad(x, y, g, geo.kernel, geo.stride, geo.pad_lo, dx)
        return dx
    dx = _Phases(xp, x.shape, geo.stride, g.dtype)
    taps = list(_clipped_taps(geo))
    if a.pool_type == "max":
        xs = _Phases(xp, x.shape, geo.stride, x.dtype, src=x)
        open_ = xp.ones(y.shape, dtype=bool)      # windows whose maximum is not found yet
        hit = xp.empty(y.shape, dtype=bool)
        tmp = xp.empty(g.shape, dtype=g.dtype)
        for o_idx, first, count in taps:
            h, t, op = hit[o_idx], tmp[o_idx], open_[o_idx]
            xp.equal(xs.slice(first, count), y[o_idx], out=h)
            xp.logical_and(h, op, out=h)
            xp.logical_xor(op, h, out=op)
            xp.multiply(g[o_idx], h, out=t)
            dst = dx.slice(first, count)
            dst += t
    else:
        scale = g
        if a.pool_type == "avg":
            scale = g / xp.asarray(geo.divisor(a.count_include_pad is not False).astype(g.dtype))
        lp = a.pool_type == "lp" and a.p_value > 1
        if lp:
            xs = _Phases(xp, x.shape, geo.stride, x.dtype, src=x)
            zero = y == 0
            safe = xp.where(zero, 1, y)
        for o_idx, first, count in taps:
            dst = dx.slice(first, count)
            if lp:
                ratio = (xs.slice(first, count) / safe[o_idx]) ** (a.p_value - 1)
                dst += xp.where(zero[o_idx], 0, scale[o_idx] * ratio)
            else:
                dst += scale[o_idx]
    if len(dx.keys) == 1:
        return dx.parts[dx.keys[0]]
    out = xp.empty(x.shape, dtype=g.dtype)
    dx.gather(out)
    return out


def has_workspace(a: Attrs) -> bool:
    """MXNet 1.9.1 (an MKLDNN build) gives max pooling with a 1-3-D kernel and a channel-first
    layout a hidden second output, the MKLDNN workspace; graphs it wrote count it
    (`node_row_ptr`), so the operator declares it too. It holds zeros here."""
    return (a.pool_type == "max" and 1 <= len(a.kernel) <= 3
            and a.layout in (None, "NCW", "NCHW", "NCDHW"))


def _pool_outputs(a: Attrs) -> tuple:
    return ("output", "workspace") if has_workspace(a) else ("output",)


def _pool_forward_shape(a: Attrs, dshape):
    res = _pool_shape(a, dshape)
    if res is None or not has_workspace(a):
        return res
    return res[0], [res[1][0], res[1][0]]


def _pool_type(a: Attrs, dtype):
    if dtype is None:
        return None
    return [dtype], [dtype] + ([np.dtype(np.int32)] if has_workspace(a) else [])


@register("Pooling", aliases=("_npx_pooling",), outputs=_pool_outputs, num_visible_outputs=1,
          attrs=dict(POOL_ATTRS), infer_shape=_pool_forward_shape, infer_type=_pool_type, scratch=True)
def Pooling(xp, a: Attrs, data, scratch=None):
    """Max / average / sum / Lp pooling over 1-D, 2-D or 3-D windows (the partial reductions
    in `scratch`, a plan's lent buffer)."""
    _pool_shape(a, data.shape)
    cl = is_channel_last(a.layout)
    x = to_cf(data, cl)
    geo = pool_geometry(a, tuple(x.shape[2:]))
    out = from_cf(xp, pool_forward(xp, a, x, geo, scratch), cl)
    if has_workspace(a):
        return out, xp.broadcast_to(xp.zeros((), dtype=np.int32), out.shape)
    return (out,)


@Pooling.def_gradient
def _pool_gradient(F, a, inputs, outputs, ograds):
    return [F._backward_Pooling(ograds[0], inputs[0], outputs[0], **given_attrs(a))]


def _pool_backward_shape(a: Attrs, gshape, dshape, oshape):
    fwd = _pool_shape(a, dshape)
    if fwd is None:
        return None
    out = merge_shape(merge_shape(gshape, fwd[1][0]), oshape)
    return [out, fwd[0][0], out], [fwd[0][0]]


def _pool_backward_type(a: Attrs, *dtypes):
    res = same_type(a, *dtypes)
    return None if res is None else (res[0], [res[1][0]])


@register("_backward_Pooling", inputs=("ograd", "data", "output"), outputs=("data_grad",),
          attrs=dict(POOL_ATTRS), infer_shape=_pool_backward_shape, infer_type=_pool_backward_type)
def _backward_Pooling(xp, a: Attrs, ograd, data, output):
    """Pooling's data gradient: to the (first) maximum of each window for max pooling,
    spread over the window for avg/sum, scaled by (x/out)^(p-1) for Lp."""
    _pool_shape(a, data.shape)
    cl = is_channel_last(a.layout)
    x = to_cf(data, cl)
    geo = pool_geometry(a, tuple(x.shape[2:]))
    dx = pool_backward(xp, a, to_cf(ograd, cl), x, to_cf(output, cl), geo)
    return (from_cf(xp, dx, cl),)


@_backward_Pooling.def_gradient
def _pool_backward_gradient(F, a, inputs, outputs, ograds):
    """avg/sum pooling is linear, so its backward's gradient is the forward again; the
    max/Lp backwards depend on the data's arg-max / values and have no rule (as MXNet)."""
    if a.pool_type not in ("avg", "sum"):
        raise AutogradError(f"operator _backward_Pooling: no second-order gradient for "
                            f"pool_type={a.pool_type!r} (only avg and sum)")
    return [F.Pooling(ograds[0], **given_attrs(a)), F.zeros_like(inputs[1]), F.zeros_like(inputs[2])]

