"""Specs for nd/ops/matrix.py: reshaping, axis permutations, tile/repeat, joining,
splitting, slicing, Pad, depth/space moves, shape_array/size_array, diag, Cast, clip
and their hidden backward operators.

References are written independently of the kernels (index maps, explicit loops
over blocks) so a shared mistake cannot hide.
"""
from __future__ import annotations

import itertools

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.op_specs import OpSpec, arr, shapes

# -- Reshape ------------------------------------------------------------------


def reshape_spec(draw, shape: tuple) -> tuple[tuple, tuple]:
    """A valid MXNet shape spec for `shape` and the shape it must give.

    Built walking the input dims (right to left for reverse=True); -1 is only
    used before -2/-3/-4, where MXNet places it unambiguously.
    """
    dims = list(shape)
    codes, out, src, used_inf, special = [], [], 0, False, False
    while src < len(dims):
        kind = draw(st.sampled_from(["copy", "infer", "rest", "merge", "split", "value"]))
        d = dims[src]
        if kind == "copy":
            codes.append(0)
            out.append(d)
            src += 1
        elif kind == "infer" and not used_inf and not special:
            codes.append(-1)
            out.append(d)
            used_inf = True
            src += 1
        elif kind == "rest":
            codes.append(-2)
            out.extend(dims[src:])
            src = len(dims)
            special = True
        elif kind == "merge" and src + 1 < len(dims):
            codes.append(-3)
            out.append(d * dims[src + 1])
            src += 2
            special = True
        elif kind == "split":
            k = draw(st.sampled_from([v for v in range(1, d + 1) if d % v == 0]))
            codes.extend(draw(st.sampled_from([[-4, k, d // k], [-4, -1, d // k], [-4, k, -1]])))
            out.extend([k, d // k])
            src += 1
            special = True
        else:
            codes.append(d)
            out.append(d)
            src += 1
    return tuple(codes), tuple(out)


def _reshape_case(draw):
    x = draw(arr(shapes(max_dims=4, max_side=4)))
    reverse = draw(st.booleans())
    if reverse:
        codes, out = reshape_spec(draw, x.shape[::-1])
        codes, out = codes[::-1], out[::-1]
    else:
        codes, out = reshape_spec(draw, x.shape)
    _EXPECTED[(x.shape, codes, reverse)] = out
    return [x], {"shape": codes, "reverse": reverse}


#: output shapes the case generators derived, looked up by the references
_EXPECTED: dict = {}


def _reshape_ref(x, shape, reverse):
    return x.reshape(_EXPECTED[(x.shape, tuple(shape), reverse)])


def _factor(draw, n: int) -> tuple:
    """A random shape of size n."""
    out = []
    while n > 1 and len(out) < 3:
        k = draw(st.sampled_from([v for v in range(2, n + 1) if n % v == 0]))
        out.append(k)
        n //= k
    if n > 1:
        out.append(n)
    return tuple(out) or (1,)


def _reshape_like_case(draw):
    lhs = draw(arr(shapes(max_dims=3, max_side=4)))
    if draw(st.booleans()):
        return [lhs, np.zeros(_factor(draw, lhs.size))], {}
    lb = draw(st.integers(0, lhs.ndim - 1))
    le = draw(st.integers(lb + 1, lhs.ndim))
    mid = _factor(draw, int(np.prod(lhs.shape[lb:le])))
    pre = draw(st.sampled_from([(), (2,)]))
    rhs = np.zeros(pre + mid + (3,))
    attrs = {"lhs_begin": lb - lhs.ndim if draw(st.booleans()) else lb,
             "lhs_end": None if le == lhs.ndim and draw(st.booleans()) else le,
             "rhs_begin": len(pre), "rhs_end": -1}
    _EXPECTED[("like", lhs.shape, rhs.shape)] = lhs.shape[:lb] + mid + lhs.shape[le:]
    return [lhs, rhs], attrs


def _reshape_like_ref(lhs, rhs, **attrs):
    if not attrs:
        return lhs.reshape(rhs.shape)
    return lhs.reshape(_EXPECTED[("like", lhs.shape, rhs.shape)])


# -- permutations ---------------------------------------------------------------


def _transpose_case(draw):
    x = draw(arr(shapes(max_dims=4, max_side=3)))
    if draw(st.booleans()):
        return [x], {}
    perm = draw(st.permutations(range(x.ndim)))
    return [x], {"axes": tuple(p - x.ndim if draw(st.booleans()) else p for p in perm)}


def _swap_case(draw):
    x = draw(arr(shapes(max_dims=4, max_side=3)))
    n = x.ndim
    return [x], {"dim1": draw(st.integers(-n, n - 1)), "dim2": draw(st.integers(-n, n - 1))}


def _expand_case(draw):
    x = draw(arr(shapes(max_dims=3)))
    return [x], {"axis": draw(st.integers(-x.ndim - 1, x.ndim))}


def _squeeze_case(draw):
    x = draw(arr(shapes(max_dims=4, max_side=2)))
    ones = [i for i, d in enumerate(x.shape) if d == 1]
    if not ones or draw(st.booleans()):
        return [x], {}
    axes = draw(st.lists(st.sampled_from(ones), min_size=1, unique=True))
    return [x], {"axis": tuple(a - x.ndim if draw(st.booleans()) else a for a in axes)}


def _squeeze_ref(x, axis=None):
    out = np.squeeze(x, axis=axis)
    return out.reshape(1) if out.ndim == 0 else out


def _reverse_case(draw):
    x = draw(arr(shapes(max_dims=3)))
    axes = draw(st.lists(st.integers(0, x.ndim - 1), min_size=1, unique=True))
    return [x], {"axis": tuple(a - x.ndim if draw(st.booleans()) else a for a in axes)}


# -- tile / repeat ----------------------------------------------------------------


def _tile_case(draw):
    x = draw(arr(shapes(max_dims=3, max_side=3)))
    return [x], {"reps": tuple(draw(st.lists(st.integers(1, 3), max_size=4)))}


def _tile_ref(x, reps):
    return np.tile(x, reps) if reps else x


def _backward_tile_case(draw):
    (x,), attrs = _tile_case(draw)
    return [draw(arr(_tile_ref(x, **attrs).shape)), x], attrs


def _backward_tile_ref(g, data, reps):
    """Sum of the tile blocks, block by block."""
    if not reps:
        return g
    n = max(data.ndim, len(reps))
    d = (1,) * (n - data.ndim) + data.shape
    out = np.zeros(d)
    gg = g.reshape(tuple(v * r for v, r in zip(d, (1,) * (n - len(reps)) + tuple(reps))))
    for block in itertools.product(*[range(gg.shape[i] // d[i]) for i in range(n)]):
        out += gg[tuple(slice(b * d[i], (b + 1) * d[i]) for i, b in enumerate(block))]
    return out.reshape(data.shape)


def _repeat_case(draw):
    x = draw(arr(shapes(max_dims=3, max_side=3)))
    axis = draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)))
    return [x], {"repeats": draw(st.integers(0, 3)), "axis": axis}


def _repeat_ref(x, repeats, axis):
    if repeats == 0:  # MXNet: an empty 1-D array, whatever the axis
        return np.zeros((0,))
    return np.repeat(x.reshape(-1) if axis is None else x, repeats, axis=0 if axis is None else axis)


def _backward_repeat_case(draw):
    (x,), attrs = _repeat_case(draw)
    return [draw(arr(_repeat_ref(x, **attrs).shape)), x], attrs


def _backward_repeat_ref(g, data, repeats, axis):
    if repeats == 0:
        return np.zeros_like(data)
    ax = 0 if axis is None else axis % data.ndim
    src = data.reshape(-1) if axis is None else data
    out = sum(np.take(g, np.arange(j, g.shape[ax], repeats), axis=ax) for j in range(repeats))
    return out.reshape(data.shape) if axis is None else out.reshape(src.shape)


# -- Concat / stack / splits ----------------------------------------------------------


def _concat_case(draw):
    base = list(draw(shapes(max_dims=3, max_side=3)))
    n = draw(st.integers(1, 3))
    dim = draw(st.integers(-len(base), len(base) - 1))
    xs = []
    for _ in range(n):
        base[dim] = draw(st.integers(1, 3))
        xs.append(draw(arr(tuple(base))))
    return xs, {"dim": dim, "num_args": n}


def _backward_concat_case(draw):
    xs, attrs = _concat_case(draw)
    return [draw(arr(np.concatenate(xs, axis=attrs["dim"]).shape))] + xs, attrs


def _backward_concat_ref(g, *xs, dim, num_args):
    cuts = np.cumsum([x.shape[dim] for x in xs])[:-1]
    return tuple(np.split(g, cuts, axis=dim))


def _stack_case(draw):
    shape = draw(shapes(max_dims=3, max_side=3))
    n = draw(st.integers(1, 3))
    return [draw(arr(shape)) for _ in range(n)], {"num_args": n,
                                                  "axis": draw(st.integers(-len(shape) - 1, len(shape)))}


def _slice_channel_case(draw):
    x = draw(arr(shapes(max_dims=3, max_side=4)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    n = draw(st.sampled_from([v for v in range(1, x.shape[axis] + 1) if x.shape[axis] % v == 0]))
    squeeze = n == x.shape[axis] and draw(st.booleans())
    return [x], {"num_outputs": n, "axis": axis, "squeeze_axis": squeeze}


def _slice_channel_ref(x, num_outputs, axis, squeeze_axis):
    return [np.squeeze(p, axis) if squeeze_axis else p for p in np.split(x, num_outputs, axis=axis)]


def _split_v2_case(draw):
    x = draw(arr(shapes(max_dims=3, max_side=4)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    size = x.shape[axis]
    if draw(st.booleans()):   # sections need not divide the axis (MXNet: the first pieces are longer)
        n = draw(st.integers(1, max(size, 1) + 1))
        return [x], {"indices": (), "sections": n, "axis": axis,
                     "squeeze_axis": n == size and draw(st.booleans())}
    # indices may repeat and reach the axis size (empty pieces, as MXNet allows)
    cuts = sorted(draw(st.lists(st.integers(0, size), max_size=size))) if size > 1 else []
    indices = (0, *cuts)
    return [x], {"indices": indices, "axis": axis,
                 "squeeze_axis": indices == tuple(range(size)) and draw(st.booleans())}


def _split_v2_ref(x, indices, axis, squeeze_axis, sections=0):
    pieces = np.array_split(x, sections, axis=axis) if sections else np.split(x, list(indices[1:]), axis=axis)
    return [np.squeeze(p, axis) if squeeze_axis else p for p in pieces]


# -- slicing ------------------------------------------------------------------------------


def _slice_attrs(draw, shape: tuple) -> dict:
    k = draw(st.integers(1, len(shape)))
    bound = st.one_of(st.none(), st.integers(-5, 5))
    begin = tuple(draw(bound) for _ in range(k))
    end = tuple(draw(bound) for _ in range(k))
    attrs = {"begin": begin, "end": end}
    if draw(st.booleans()):
        attrs["step"] = tuple(draw(st.one_of(st.none(), st.sampled_from([-2, -1, 1, 2]))) for _ in range(k))
    return attrs


def _slice_case(draw):
    x = draw(arr(shapes(max_dims=3, max_side=4)))
    return [x], _slice_attrs(draw, x.shape)


def _np_slice(x, begin, end, step=()):
    return x[tuple(slice(b, e, step[i] if step else None) for i, (b, e) in enumerate(zip(begin, end)))]


def _slice_ref(x, begin, end, step=()):
    return _np_slice(x, begin, end, step)


def _slice_assign_case(draw):
    (x,), attrs = _slice_case(draw)
    return [x, draw(arr(_np_slice(x, **attrs).shape))], attrs


def _slice_assign_ref(lhs, rhs, begin, end, step=()):
    out = lhs.copy()
    out[tuple(slice(b, e, step[i] if step else None) for i, (b, e) in enumerate(zip(begin, end)))] = rhs
    return out


def _slice_assign_scalar_case(draw):
    (x,), attrs = _slice_case(draw)
    return [x], dict(attrs, scalar=draw(st.sampled_from([0.0, 1.5, -2.0])))


def _slice_assign_scalar_ref(x, begin, end, scalar, step=()):
    return _slice_assign_ref(x, np.float64(scalar), begin, end, step)


def _slice_axis_case(draw):
    x = draw(arr(shapes(max_dims=3, max_side=4)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[axis]
    b = draw(st.integers(0, n - 1))
    e = draw(st.integers(b + 1, n))
    return [x], {"axis": axis, "begin": b - n if draw(st.booleans()) else b,
                 "end": None if e == n and draw(st.booleans()) else (e - n if e < n and draw(st.booleans()) else e)}


def _slice_axis_ref(x, axis, begin, end):
    return np.take(x, np.arange(x.shape[axis])[begin:end], axis=axis)


def _backward_slice_axis_case(draw):
    (x,), attrs = _slice_axis_case(draw)
    return [draw(arr(_slice_axis_ref(x, **attrs).shape)), x], attrs


def _backward_slice_axis_ref(g, data, axis, begin, end):
    out = np.zeros_like(data)
    idx = np.arange(data.shape[axis])[begin:end]
    out[(slice(None),) * (axis % data.ndim) + (idx,)] = g
    return out


def _slice_like_case(draw):
    x = draw(arr(shapes(min_dims=1, max_dims=3, max_side=4)))
    like = tuple(draw(st.integers(1, d)) for d in x.shape)
    if draw(st.booleans()):
        return [x, np.zeros(like)], {}
    axes = draw(st.lists(st.integers(0, x.ndim - 1), min_size=1, unique=True))
    return [x, np.zeros(like)], {"axes": tuple(a - x.ndim if draw(st.booleans()) else a for a in axes)}


def _slice_like_ref(x, like, axes=()):
    axes = range(x.ndim) if not axes else [a % x.ndim for a in axes]
    return x[tuple(slice(0, like.shape[i]) if i in axes else slice(None) for i in range(x.ndim))]


def _backward_slice_like_case(draw):
    x = draw(arr(shapes(max_dims=3, max_side=4)))
    g = draw(arr(tuple(draw(st.integers(1, d)) for d in x.shape)))
    return [g, x], {}


def _backward_slice_like_ref(g, data):
    out = np.zeros_like(data)
    out[tuple(slice(0, d) for d in g.shape)] = g
    return out


# -- Pad --------------------------------------------------------------------------------------


def _pad_case(draw):
    nd5 = draw(st.booleans())
    spatial = [draw(st.integers(2, 4)) for _ in range(3 if nd5 else 2)]
    x = draw(arr((draw(st.integers(1, 2)), draw(st.integers(1, 2)), *spatial)))
    mode = draw(st.sampled_from(["constant", "edge", "reflect"]))
    top = 1 if mode == "reflect" else 3
    pads = [0, 0, 0, 0] + [draw(st.integers(0, min(top, d - 1) if mode == "reflect" else top))
                           for d in spatial for _ in range(2)]
    attrs = {"mode": mode, "pad_width": tuple(pads)}
    if mode == "constant" and draw(st.booleans()):
        attrs["constant_value"] = draw(st.sampled_from([1.5, -2.0]))
    return [x], attrs


def _pairs(pad_width):
    return list(zip(pad_width[::2], pad_width[1::2]))


def _pad_ref(x, mode, pad_width, constant_value=0.0):
    if mode == "constant":
        return np.pad(x, _pairs(pad_width), mode="constant", constant_values=constant_value)
    return np.pad(x, _pairs(pad_width), mode=mode)


def _backward_pad_case(draw):
    (x,), attrs = _pad_case(draw)
    attrs.pop("constant_value", None)
    return [draw(arr(_pad_ref(x, **attrs).shape))], attrs


def _backward_pad_ref(g, mode, pad_width):
    """Scatter-add through the index map of the padding."""
    pairs = _pairs(pad_width)
    shape = tuple(d - b - e for d, (b, e) in zip(g.shape, pairs))
    idx = np.arange(int(np.prod(shape))).reshape(shape)
    if mode == "constant":
        padded = np.pad(idx, pairs, mode="constant", constant_values=-1)
    else:
        padded = np.pad(idx, pairs, mode=mode)
    keep = padded >= 0
    return np.bincount(padded[keep], weights=g[keep], minlength=idx.size).reshape(shape)


# -- depth/space ----------------------------------------------------------------------------


def _d2s_case(draw):
    b = draw(st.integers(1, 3))
    shape = (draw(st.integers(1, 2)), b * b * draw(st.integers(1, 2)), draw(st.integers(1, 3)),
             draw(st.integers(1, 3)))
    return [draw(arr(shape))], {"block_size": b}


def _d2s_ref(x, block_size):
    b = block_size
    n, c, h, w = x.shape
    out = np.zeros((n, c // (b * b), h * b, w * b))
    for i, j in itertools.product(range(b), range(b)):
        out[:, :, i::b, j::b] = x[:, (i * b + j) * (c // (b * b)):(i * b + j + 1) * (c // (b * b))]
    return out


def _s2d_case(draw):
    b = draw(st.integers(1, 3))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2)), b * draw(st.integers(1, 2)),
             b * draw(st.integers(1, 2)))
    return [draw(arr(shape))], {"block_size": b}


def _s2d_ref(x, block_size):
    b = block_size
    n, c, h, w = x.shape
    out = np.zeros((n, c * b * b, h // b, w // b))
    for i, j in itertools.product(range(b), range(b)):
        out[:, (i * b + j) * c:(i * b + j + 1) * c] = x[:, :, i::b, j::b]
    return out


# -- diag ------------------------------------------------------------------------------------


def _diag_case(draw):
    x = draw(arr(shapes(max_dims=3, max_side=4)))
    if x.ndim == 1:
        return [x], {"k": draw(st.integers(-3, 3))}
    a1, a2 = draw(st.permutations(range(x.ndim)))[:2]
    k = draw(st.integers(-x.shape[a1], x.shape[a2]))
    return [x], {"k": k, "axis1": a1 - x.ndim if draw(st.booleans()) else a1, "axis2": a2}


def _diag_ref(x, k=0, axis1=0, axis2=1):
    return np.diag(x, k) if x.ndim == 1 else np.diagonal(x, k, axis1, axis2)


def _backward_diag_case(draw):
    (x,), attrs = _diag_case(draw)
    return [draw(arr(_diag_ref(x, **attrs).shape)), x], attrs


def _backward_diag_ref(g, data, k=0, axis1=0, axis2=1):
    if data.ndim == 1:
        return np.diagonal(g, k).copy()
    out = np.zeros_like(data)
    moved = np.moveaxis(out, (axis1, axis2), (-2, -1))
    i = np.arange(g.shape[-1])
    moved[..., i + max(-k, 0), i + max(k, 0)] = g
    return out


# -- Cast / clip ----------------------------------------------------------------------------


def _clip_case(draw):
    lo, hi = draw(st.sampled_from([(-0.5, 0.7), (-1.25, 1.0), (0.3, 0.3), (-3.0, 3.0)]))
    elements = st.floats(-2, 2, width=64).filter(lambda v: abs(v - lo) > 0.05 and abs(v - hi) > 0.05)
    return [draw(hnp.arrays(np.float64, shapes(max_dims=3), elements=elements))], {"a_min": lo, "a_max": hi}


def _pair_case(fn):
    """Hidden backward op cases: (head gradient shaped like `fn(data)`, data)."""
    def case(draw):
        x = draw(arr(shapes(max_dims=3)))
        return [draw(arr(fn(x).shape)), x], {}
    return case


SPECS = [
    OpSpec("Reshape", case=_reshape_case, ref=_reshape_ref),
    OpSpec("reshape_like", case=_reshape_like_case, ref=_reshape_like_ref, grad_inputs=(0,)),
    OpSpec("Flatten", case=lambda draw: ([draw(arr(shapes(max_dims=4, max_side=3)))], {}),
           ref=lambda x: x.reshape(x.shape[0], -1)),
    OpSpec("transpose", case=_transpose_case, ref=lambda x, axes=(): np.transpose(x, axes or None)),
    OpSpec("SwapAxis", case=_swap_case, ref=lambda x, dim1, dim2: np.swapaxes(x, dim1, dim2)),  # noqa: PLW0108 - MXNet names
    OpSpec("expand_dims", case=_expand_case, ref=np.expand_dims),
    OpSpec("squeeze", case=_squeeze_case, ref=_squeeze_ref),
    OpSpec("reverse", case=_reverse_case, ref=np.flip),
    OpSpec("tile", case=_tile_case, ref=_tile_ref),
    OpSpec("_backward_tile", case=_backward_tile_case, ref=_backward_tile_ref, grad_inputs=(0,)),
    OpSpec("repeat", case=_repeat_case, ref=_repeat_ref),
    OpSpec("_backward_repeat", case=_backward_repeat_case, ref=_backward_repeat_ref, grad_inputs=(0,)),
    OpSpec("Concat", case=_concat_case, ref=lambda *xs, dim, num_args: np.concatenate(xs, axis=dim)),
    OpSpec("_backward_Concat", case=_backward_concat_case, ref=_backward_concat_ref, grad_inputs=(0,)),
    OpSpec("stack", case=_stack_case, ref=lambda *xs, axis, num_args: np.stack(xs, axis=axis)),
    OpSpec("SliceChannel", case=_slice_channel_case, ref=_slice_channel_ref),
    OpSpec("_split_v2", case=_split_v2_case, ref=_split_v2_ref),
    OpSpec("slice", case=_slice_case, ref=_slice_ref),
    OpSpec("_slice_assign", case=_slice_assign_case, ref=_slice_assign_ref),
    OpSpec("_slice_assign_scalar", case=_slice_assign_scalar_case, ref=_slice_assign_scalar_ref),
    OpSpec("slice_axis", case=_slice_axis_case, ref=_slice_axis_ref),
    OpSpec("_backward_slice_axis", case=_backward_slice_axis_case, ref=_backward_slice_axis_ref,
           grad_inputs=(0,)),
    OpSpec("slice_like", case=_slice_like_case, ref=_slice_like_ref, grad_inputs=(0,)),
    OpSpec("_backward_slice_like", case=_backward_slice_like_case, ref=_backward_slice_like_ref,
           grad_inputs=(0,)),
    OpSpec("Pad", case=_pad_case, ref=_pad_ref),
    OpSpec("_backward_Pad", case=_backward_pad_case, ref=_backward_pad_ref),
    OpSpec("depth_to_space", case=_d2s_case, ref=_d2s_ref),
    OpSpec("space_to_depth", case=_s2d_case, ref=_s2d_ref),
    OpSpec("shape_array", case=lambda draw: ([draw(arr(shapes()))], {}),
           ref=lambda x: np.array(x.shape, dtype=np.int64), nondiff="zero gradient (MXNet's MakeZeroGradNodes)"),
    OpSpec("size_array", case=lambda draw: ([draw(arr(shapes()))], {}),
           ref=lambda x: np.array([x.size], dtype=np.int64), nondiff="zero gradient (MXNet's MakeZeroGradNodes)"),
    OpSpec("diag", case=_diag_case, ref=_diag_ref),
    OpSpec("_backward_diag", case=_backward_diag_case, ref=_backward_diag_ref, grad_inputs=(0,)),
    OpSpec("Cast", case=lambda draw: ([draw(arr(shapes()))], {"dtype": "float64"}),
           ref=lambda x, dtype: x.astype(dtype)),
    OpSpec("_backward_cast", case=_pair_case(lambda x: x), ref=lambda g, data: g.astype(data.dtype),
           grad_inputs=(0,)),
    OpSpec("clip", case=_clip_case, ref=np.clip),
]
