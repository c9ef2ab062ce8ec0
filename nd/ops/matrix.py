"""Shape manipulation: reshape, transpose, slicing, joining and splitting,
padding, tiling, casting and clipping (MXNet's src/operator/tensor/matrix_op*).

Kernels return fresh arrays (never views of an input) so the memory planner
can treat every output as owned storage. Gradient rules only call registry
operators; where a gradient needs the *shape* of a forward input that a
symbolic rule cannot know (Concat, tile, repeat, slice_axis, diag, Cast), a
hidden backward operator takes that input as a shape donor (`_backward_tile`
and friends) and has its own forward, shape rule and gradient.

Shape rules follow the registry convention: None is an unknown shape, a 0 dim
is an unknown dim.
"""
from __future__ import annotations

import math

import numpy as np

from ..attrs import Attr, parse_dtype
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import ZERO_GRAD, merge_shape, register, same_shape, shape_known

# ---------------------------------------------------------------------------
# shared helpers


def _axis(op: str, axis: int, ndim: int, what: str = "axis") -> int:
    """Normalise a possibly negative axis for an array of `ndim` dims."""
    if not -ndim <= axis < ndim:
        raise ShapeError(f"{op}: {what}={axis} is out of range for an input with {ndim} dims "
                         f"(expected {-ndim} <= {what} < {ndim})")
    return axis % ndim


def _prod(dims) -> int:
    return int(math.prod(dims))


def _copy(x):
    """A contiguous copy (outputs never alias inputs)."""
    return x.copy(order="C")


def _first_dtype(a, data, *rest):
    """Output takes the first input's dtype; the other inputs only donate shapes."""
    return [data, *rest], [data]


def _as_list(res, n: int) -> list:
    """The outputs of a multi-output F call as a list (one output comes back bare)."""
    return [res] if n == 1 else [res[i] for i in range(n)]


def _same_dtypes(op: str, arrays) -> None:
    """Joining kernels would silently upcast; MXNet requires one dtype."""
    dts = {x.dtype for x in arrays}
    if len(dts) > 1:
        raise DTypeError(f"{op}: every input must have the same dtype, got {[str(x.dtype) for x in arrays]}")


def _like_data_shape(a, g, data):
    """Hidden backward ops whose output has the shape of their shape-donor input."""
    return None if data is None else ([g, data], [data])


def _grad_of_shape_donor(rule):
    """Gradient of a hidden backward op `(ograd, data)`: data only gives a shape."""
    def gradient(F, a, inputs, outputs, ograds):
        return [rule(F, a, ograds[0], inputs[0]), None]
    return gradient


# ---------------------------------------------------------------------------
# Reshape and friends


def infer_reshape(spec: tuple, dshape: tuple, reverse: bool = False) -> tuple:
    """MXNet's InferReshapeShape: the output shape for the special codes
    0 (copy), -1 (infer), -2 (copy the rest), -3 (merge two), -4 (split one).

    MXNet writes the inferred (-1) dim at the index of the -1 in `spec`, not at
    its place in the output; the two differ when -2/-3/-4 precede it. Where
    MXNet's placement gives a result of the input's size we keep it (same
    shapes as MXNet); where it gives a wrong size (MXNet then corrupts memory)
    or indexes past the end, the dim goes where the -1 was emitted.
    """
    dims = list(dshape)[::-1] if reverse else list(dshape)
    codes = list(spec)[::-1] if reverse else list(spec)
    out: list[int] = []
    src, inf, inf_code, i = 0, -1, -1, 0
    while i < len(codes):
        if codes[i] == -1:
            if inf >= 0:
                raise ShapeError(f"Reshape: shape={tuple(spec)} has more than one -1; only one dim can be inferred")
            inf, inf_code = len(out), i
        emitted, used, skip = _reshape_step(spec, dshape, dims[src:], codes[i:])
        out.extend(emitted)
        src += used
        i += 1 + skip
    if inf >= 0:
        out = _place_inferred(out, dshape, inf, inf_code)
    return tuple(out[::-1] if reverse else out)


def _reshape_step(spec, dshape, dims: list, codes: list) -> tuple[list, int, int]:
    """One code of a Reshape spec on the remaining input `dims`:
    (dims emitted, input dims consumed, following codes consumed)."""
    c = codes[0]
    where = f"Reshape: shape={tuple(spec)} on input {tuple(dshape)}:"
    if c == 0:
        if not dims:
            raise ShapeError(f"{where} code 0 copies a dim past the end of the input")
        return [dims[0]], 1, 0
    if c == -1:
        return [1], 1, 0  # placeholder, filled by _place_inferred
    if c == -2:
        return list(dims), len(dims), 0
    if c == -3:
        if len(dims) < 2:
            raise ShapeError(f"{where} code -3 merges two dims but fewer than two are left")
        return [dims[0] * dims[1]], 2, 0
    if c == -4:
        if len(codes) < 3 or not dims:
            raise ShapeError(f"{where} code -4 needs two following values and an input dim to split")
        return list(_split_dim(spec, dims[0], codes[1], codes[2])), 1, 2
    if c > 0:
        return [c], 1, 0
    raise AttrError(f"Reshape: invalid code {c} in shape={tuple(spec)}; expected a positive "
                    "size or one of 0, -1, -2, -3, -4")


def _place_inferred(out: list, dshape: tuple, inf: int, inf_code: int) -> list:
    """Fill the -1 dim (see infer_reshape); `out` holds a placeholder 1 at `inf`."""
    if not shape_known(dshape):
        return out[:inf] + [0] + out[inf + 1:]
    size, rest = _prod(dshape), _prod(out)
    if inf_code != inf and inf_code < len(out):  # MXNet's placement, when it is consistent
        mx = out[:inf_code] + [size // rest] + out[inf_code + 1:]
        if _prod(mx) == size:
            return mx
    return out[:inf] + [size // rest] + out[inf + 1:]


def _split_dim(spec, d0: int, d1: int, d2: int) -> tuple[int, int]:
    """The two dims code -4 splits `d0` into (either may be -1)."""
    if d1 == -1 and d2 == -1:
        raise ShapeError(f"Reshape: shape={tuple(spec)}: split dims after -4 cannot both be -1")
    if not (d1 == -1 or d1 > 0) or not (d2 == -1 or d2 > 0):
        raise ShapeError(f"Reshape: shape={tuple(spec)}: split dims after -4 must be positive or -1, "
                         f"got {d1}, {d2}")
    if not d0:  # unknown input dim: a -1 stays unknown
        return (0 if d1 == -1 else d1), (0 if d2 == -1 else d2)
    if d1 == -1:
        d1 = d0 // d2
    if d2 == -1:
        d2 = d0 // d1
    if d1 < 1 or d2 < 1 or d1 * d2 != d0:
        raise ShapeError(f"Reshape: shape={tuple(spec)}: split dims {d1}, {d2} do not divide input dim {d0}")
    return d1, d2


def _target_shape(a, dshape: tuple) -> tuple:
    """The deprecated `target_shape` / `keep_highest` form (one 0 is inferred)."""
    out = list(a.target_shape)
    start = 1 if a.keep_highest else 0
    if a.keep_highest:
        out[0] = dshape[0]
    zeros = [i for i in range(start, len(out)) if out[i] == 0]
    if len(zeros) == 1:
        out[zeros[0]] = 1
        out[zeros[0]] = _prod(dshape) // _prod(out) if shape_known(dshape) else 0
    return tuple(out)


def _reshape_out(a, dshape: tuple) -> tuple | None:
    if a.shape:
        return infer_reshape(a.shape, dshape, a.reverse)
    if a.target_shape:
        return _target_shape(a, dshape)
    return None


def _fill_one_unknown(dshape: tuple, oshape: tuple) -> tuple:
    """MXNet's ReverseReshapeInferShape: a known output fixes one unknown input dim."""
    unknown = [i for i, d in enumerate(dshape) if d == 0]
    if len(unknown) != 1 or not shape_known(oshape):
        return dshape
    known = _prod(d for d in dshape if d)
    return tuple(_prod(oshape) // known if i == unknown[0] else d for i, d in enumerate(dshape))


def _reshape_shape(a, dshape):
    if dshape is None:
        return None
    oshape = _reshape_out(a, dshape)
    if oshape is None:
        return None
    return [_fill_one_unknown(dshape, oshape)], [oshape]


def _reshape_grad(F, a, inputs, outputs, ograds):
    return [F.reshape_like(ograds[0], inputs[0])]


def _reshape_compose(inner, outer, shape):
    """reshape(reshape(x, inner), outer) as one reshape (simplify pass): the outer target alone
    when no code of it reads the intermediate shape, else the final shape when x's is known."""
    spec = tuple(outer.shape)
    if spec and not outer.reverse and all(d > 0 or d == -1 for d in spec) and spec.count(-1) <= 1:
        return {"shape": spec}
    if not shape_known(shape):
        return None
    mid = _reshape_out(inner, tuple(shape))
    out = None if mid is None else _reshape_out(outer, mid)
    return {"shape": tuple(out)} if out is not None and shape_known(out) else None


def _reshape_is_identity(a, is_train, shape) -> bool:
    return shape_known(shape) and _reshape_out(a, tuple(shape)) == tuple(shape)


@register("Reshape", aliases=("reshape",), inplace=((0, 0),), infer_shape=_reshape_shape,
          gradient=_reshape_grad, self_compose=_reshape_compose, identity_when=_reshape_is_identity,
          attrs={"shape": Attr("shape", (), "The target shape, with MXNet's special codes "
                                            "0, -1, -2, -3, -4."),
                 "reverse": Attr("bool", False, "If true then the special values are inferred "
                                                "from right to left."),
                 "target_shape": Attr("shape", (), "(Deprecated! Use `shape` instead.) Target new "
                                                   "shape; one 0 dim is inferred."),
                 "keep_highest": Attr("bool", False, "(Deprecated! Use `shape` instead.) Keep the "
                                                     "first dim of the input.")})
def reshape(xp, a, x):
    """Give the input a new shape without changing its data (MXNet's special codes)."""
    oshape = _reshape_out(a, x.shape)
    if oshape is None:
        raise AttrError("Reshape: attribute 'shape' is required (or the deprecated 'target_shape')")
    if _prod(oshape) != x.size or any(d < 0 for d in oshape):
        raise ShapeError(f"Reshape: cannot reshape an input of shape {x.shape} (size {x.size}) with "
                         f"shape={a.shape or a.target_shape}: the target {oshape} has size {_prod(oshape)}")
    return (_copy(x.reshape(oshape)),)


def _range(op: str, side: str, ndim: int, begin, end) -> tuple[int, int]:
    """reshape_like's lhs/rhs dim range: negative indices and None, as MXNet checks them."""
    b = 0 if begin is None else begin + (ndim if begin < 0 else 0)
    e = ndim if end is None else end + (ndim if end < 0 else 0)
    if not (0 <= b < e <= ndim):
        raise ShapeError(f"{op}: invalid {side}_begin={begin}, {side}_end={end} for an input with {ndim} dims")
    return b, e


def _reshape_like_out(a, lshape: tuple, rshape: tuple) -> tuple:
    lb, le = _range("reshape_like", "lhs", len(lshape), a.lhs_begin, a.lhs_end)
    rb, re_ = _range("reshape_like", "rhs", len(rshape), a.rhs_begin, a.rhs_end)
    oshape = tuple(lshape[:lb]) + tuple(rshape[rb:re_]) + tuple(lshape[le:])
    if shape_known(lshape) and shape_known(oshape) and _prod(oshape) != _prod(lshape):
        raise ShapeError(f"reshape_like: cannot reshape lhs {tuple(lshape)} to {oshape}: sizes differ")
    return oshape


def _reshape_like_shape(a, lhs, rhs):
    if lhs is None or rhs is None:
        return None
    return [lhs, rhs], [_reshape_like_out(a, lhs, rhs)]


_RANGE_DOC = "Index along which the {} dimensions are {}; negative indices are supported."


@register("reshape_like", inputs=("lhs", "rhs"), inplace=((0, 0),), infer_shape=_reshape_like_shape,
          infer_type=_first_dtype,
          attrs={"lhs_begin": Attr("int", None, _RANGE_DOC.format("lhs", "reshaped (default 0)")),
                 "lhs_end": Attr("int", None, _RANGE_DOC.format("lhs", "reshaped up to (default: end)")),
                 "rhs_begin": Attr("int", None, _RANGE_DOC.format("rhs", "used (default 0)")),
                 "rhs_end": Attr("int", None, _RANGE_DOC.format("rhs", "used up to (default: end)"))})
def reshape_like(xp, a, lhs, rhs):
    """Reshape (some dims of) `lhs` to (some dims of) the shape of `rhs`."""
    oshape = _reshape_like_out(a, lhs.shape, rhs.shape)
    return (_copy(lhs.reshape(oshape)),)


@reshape_like.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F.reshape_like(ograds[0], inputs[0]), None]


def _flatten_shape(a, data):
    if not shape_known(data):
        return None
    return [data], [(data[0], _prod(data[1:]))]


@register("Flatten", aliases=("flatten",), inplace=((0, 0),), infer_shape=_flatten_shape,
          gradient=_reshape_grad)
def flatten(xp, a, x):
    """Collapse every axis but the first: (d0, d1, ..., dk) -> (d0, d1*...*dk)."""
    return (_copy(x.reshape(x.shape[0], -1)),)


# ---------------------------------------------------------------------------
# axis permutations: transpose, SwapAxis, expand_dims, squeeze, reverse


def _transpose_axes(a, ndim: int) -> tuple:
    if not a.axes:
        return tuple(range(ndim - 1, -1, -1))
    axes = tuple(ax % ndim if -ndim <= ax < ndim else ax for ax in a.axes)
    if len(axes) != ndim or sorted(axes) != list(range(ndim)):
        raise ShapeError(f"transpose: axes={tuple(a.axes)} is not a permutation of the {ndim} axes of the input")
    return axes


def _permuted_shape(perm, data):
    """Shapes of input and output of an axis permutation, each filled from the other."""
    out = tuple(data[p] for p in perm)
    return [data], [out]


def _transpose_shape(a, data):
    return None if data is None else _permuted_shape(_transpose_axes(a, len(data)), data)


def _transpose_compose(inner, outer, shape):
    """transpose(transpose(x, p1), p2) = transpose(x, p1[p2]) (simplify pass); two default
    (reversing) transposes cancel whatever the rank."""
    n = len(inner.axes) or len(outer.axes) or (len(shape) if shape is not None else None)
    if n is None:
        return "identity" if not inner.axes and not outer.axes else None
    p1, p2 = _transpose_axes(inner, n), _transpose_axes(outer, n)
    return {"axes": tuple(p1[i] for i in p2)}


def _transpose_is_identity(a, is_train, shape) -> bool:
    if a.axes:
        return tuple(ax % len(a.axes) for ax in a.axes) == tuple(range(len(a.axes)))
    return shape is not None and len(shape) <= 1


@register("transpose", infer_shape=_transpose_shape, self_compose=_transpose_compose,
          identity_when=_transpose_is_identity,
          attrs={"axes": Attr("shape", (), "Target axis order. By default the axes are reversed.")})
def transpose(xp, a, x):
    """Permute the axes of the input."""
    return (xp.ascontiguousarray(xp.transpose(x, _transpose_axes(a, x.ndim))),)


@transpose.def_gradient
def _(F, a, inputs, outputs, ograds):
    if not a.axes:
        return [F.transpose(ograds[0])]
    n = len(a.axes)
    inverse = tuple(int(i) for i in np.argsort([ax % n for ax in a.axes]))
    return [F.transpose(ograds[0], axes=inverse)]


def _swap_perm(a, ndim: int) -> list:
    d1, d2 = _axis("SwapAxis", a.dim1, ndim, "dim1"), _axis("SwapAxis", a.dim2, ndim, "dim2")
    perm = list(range(ndim))
    perm[d1], perm[d2] = d2, d1
    return perm


@register("SwapAxis", aliases=("swapaxes",),
          infer_shape=lambda a, data: None if data is None else _permuted_shape(_swap_perm(a, len(data)), data),
          attrs={"dim1": Attr("int", 0, "The first axis to be swapped."),
                 "dim2": Attr("int", 0, "The second axis to be swapped.")})
def swap_axis(xp, a, x):
    """Interchange two axes of the input."""
    return (xp.ascontiguousarray(xp.transpose(x, _swap_perm(a, x.ndim))),)


@swap_axis.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F.SwapAxis(ograds[0], dim1=a.dim1, dim2=a.dim2)]


def _expand_axis(a, ndim: int) -> int:
    if not -ndim - 1 <= a.axis <= ndim:
        raise ShapeError(f"expand_dims: axis={a.axis} is out of range for an input with {ndim} dims "
                         f"(expected {-ndim - 1} <= axis <= {ndim})")
    return a.axis % (ndim + 1)


def _expand_dims_shape(a, data):
    if data is None:
        return None
    ax = _expand_axis(a, len(data))
    return [data], [tuple(data[:ax]) + (1,) + tuple(data[ax:])]


@register("expand_dims", inplace=((0, 0),), infer_shape=_expand_dims_shape, gradient=_reshape_grad,
          attrs={"axis": Attr("int", doc="Position where the new axis is inserted, in [-ndim-1, ndim].")})
def expand_dims(xp, a, x):
    """Insert a new axis of size 1."""
    return (_copy(xp.expand_dims(x, _expand_axis(a, x.ndim))),)


def _squeezed(a, shape: tuple) -> tuple:
    if a.axis is None:
        drop = {i for i, d in enumerate(shape) if d == 1}
    else:
        drop = set()
        for ax in a.axis:
            i = _axis("squeeze", ax, len(shape))
            if shape[i] != 1:
                raise ShapeError(f"squeeze: cannot squeeze axis {ax} of shape {tuple(shape)}: its size is "
                                 f"{shape[i]}, not 1")
            if i in drop:
                raise ShapeError(f"squeeze: duplicate value in axis={tuple(a.axis)}")
            drop.add(i)
    out = tuple(d for i, d in enumerate(shape) if i not in drop)
    return out or (1,)  # MXNet keeps one dim when everything is squeezed


@register("squeeze", inplace=((0, 0),), gradient=_reshape_grad,
          infer_shape=lambda a, data: ([data], [_squeezed(a, data)]) if shape_known(data) else None,
          attrs={"axis": Attr("shape", None, "The size-1 axes to remove (default: all of them); "
                                             "selecting an axis of another size is an error.")})
def squeeze(xp, a, x):
    """Remove axes of size 1."""
    return (_copy(x.reshape(_squeezed(a, x.shape))),)


def _reverse_axes(a, ndim: int) -> tuple:
    axes = tuple(_axis("reverse", ax, ndim) for ax in a.axis)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"reverse: duplicate value in axis={tuple(a.axis)}")
    return axes


@register("reverse", aliases=("flip",), infer_shape=same_shape,
          attrs={"axis": Attr("shape", doc="The axes along which to reverse elements.")})
def reverse(xp, a, x):
    """Reverse the order of elements along the given axes."""
    return (_copy(xp.flip(x, _reverse_axes(a, x.ndim))),)


@reverse.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F.reverse(ograds[0], axis=a.axis)]


# ---------------------------------------------------------------------------
# tile and repeat


def _tile_shape(a, data):
    if data is None:
        return None
    if any(r < 1 for r in a.reps):
        raise AttrError(f"tile: every entry of reps must be a positive integer, got reps={tuple(a.reps)}")
    n = max(len(data), len(a.reps))
    d = (1,) * (n - len(data)) + tuple(data)
    r = (1,) * (n - len(a.reps)) + tuple(a.reps)
    return [data], [tuple(x * y for x, y in zip(d, r))]


@register("tile", infer_shape=_tile_shape,
          attrs={"reps": Attr("shape", doc="Times to repeat the input along each axis; shorter reps "
                                           "are padded with leading 1s, a shorter input with leading axes.")})
def tile(xp, a, x):
    """Repeat the whole array `reps` times along each axis (numpy.tile)."""
    _tile_shape(a, x.shape)
    return (_copy(xp.tile(x, tuple(a.reps))) if a.reps else _copy(x),)


@tile.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_tile(ograds[0], inputs[0], reps=a.reps)]


@register("_backward_tile", inputs=("ograd", "data"), infer_type=_first_dtype,
          infer_shape=_like_data_shape,
          gradient=_grad_of_shape_donor(lambda F, a, gg, g: F.tile(gg, reps=a.reps)),
          attrs={"reps": Attr("shape", doc="The reps of the forward tile.")})
def backward_tile(xp, a, g, data):
    """tile's gradient: sum the tiled copies back onto the input's shape."""
    if not a.reps:
        return (_copy(g),)
    n = max(data.ndim, len(a.reps))
    d = (1,) * (n - data.ndim) + data.shape
    r = (1,) * (n - len(a.reps)) + tuple(a.reps)
    inter = tuple(v for pair in zip(r, d) for v in pair)
    return (g.reshape(inter).sum(axis=tuple(range(0, 2 * n, 2))).reshape(data.shape),)


def _repeat_axis(a, ndim: int) -> int | None:
    if a.repeats < 0:
        raise AttrError(f"repeat: repeats must be >= 0, got {a.repeats}")
    return None if a.axis is None else _axis("repeat", a.axis, ndim)


def _repeat_shape(a, data):
    if data is None:
        return None
    ax = _repeat_axis(a, len(data))
    if a.repeats == 0:  # MXNet: an empty 1-D array, whatever the axis
        return [data], [(0,)]
    if ax is None:
        return ([data], [(_prod(data) * a.repeats,)]) if shape_known(data) else None
    return [data], [tuple(d * a.repeats if i == ax else d for i, d in enumerate(data))]


@register("repeat", infer_shape=_repeat_shape,
          attrs={"repeats": Attr("int", doc="The number of repetitions of each element."),
                 "axis": Attr("int", None, "The axis along which to repeat values (default: the "
                                           "flattened input, giving a flat output).")})
def repeat(xp, a, x):
    """Repeat each element `repeats` times (numpy.repeat)."""
    ax = _repeat_axis(a, x.ndim)
    if a.repeats == 0:  # MXNet: an empty 1-D array, whatever the axis
        return (xp.zeros((0,), dtype=x.dtype),)
    return (xp.repeat(x.reshape(-1) if ax is None else x, a.repeats, axis=0 if ax is None else ax),)


@repeat.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_repeat(ograds[0], inputs[0], repeats=a.repeats, axis=a.axis)]


@register("_backward_repeat", inputs=("ograd", "data"), infer_type=_first_dtype,
          infer_shape=_like_data_shape,
          gradient=_grad_of_shape_donor(lambda F, a, gg, g: F.repeat(gg, repeats=a.repeats, axis=a.axis)),
          attrs={"repeats": Attr("int", doc="The repeats of the forward repeat."),
                 "axis": Attr("int", None, "The axis of the forward repeat.")})
def backward_repeat(xp, a, g, data):
    """repeat's gradient: sum each element's copies."""
    ax = _repeat_axis(a, data.ndim)
    if a.repeats == 0:
        return (xp.zeros(data.shape, dtype=g.dtype),)
    if ax is None:
        return (g.reshape(data.size, a.repeats).sum(axis=1).reshape(data.shape),)
    split = data.shape[:ax + 1] + (a.repeats,) + data.shape[ax + 1:]
    return (g.reshape(split).sum(axis=ax + 1),)


# ---------------------------------------------------------------------------
# joining: Concat, stack


def _arg_names(a) -> tuple:
    return tuple(f"arg{i}" for i in range(a.num_args or 0))


def _concat_shape(a, *shapes):
    known = [s for s in shapes if s is not None]
    if not known:
        return None
    ndim = len(known[0])
    axis = _axis("Concat", a.dim, ndim, "dim")
    common = None
    for i, s in enumerate(shapes):
        if s is not None:
            try:
                common = merge_shape(common, tuple(0 if j == axis else d for j, d in enumerate(s)))
            except ShapeError:
                raise ShapeError(f"Concat: input arg{i} has shape {s}, incompatible with the other "
                                 f"inputs outside dim {axis} (expected {common})") from None
    ins = [tuple(s[axis] if (s is not None and j == axis) else d for j, d in enumerate(common))
           for s in shapes]
    sizes = [s[axis] for s in ins]
    out = tuple(sum(sizes) if (j == axis and all(sizes)) else (0 if j == axis else d)
                for j, d in enumerate(common))
    return ins, [out]


@register("Concat", aliases=("concat", "_sparse_concat"), inputs=_arg_names, key_var_num_args="num_args",
          infer_shape=_concat_shape,
          attrs={"num_args": Attr("int", doc="Number of inputs to be concatenated."),
                 "dim": Attr("int", 1, "The dimension to be concatenated along.")})
def concat(xp, a, *xs):
    """Join arrays along an existing axis."""
    if not xs:
        raise AttrError("Concat: needs at least one input (num_args >= 1)")
    _same_dtypes("Concat", xs)
    _concat_shape(a, *[x.shape for x in xs])
    return (xp.concatenate(xs, axis=_axis("Concat", a.dim, xs[0].ndim, "dim")),)


@concat.def_gradient
def _(F, a, inputs, outputs, ograds):
    n = len(inputs)
    return _as_list(F._backward_Concat(ograds[0], *inputs, num_args=n, dim=a.dim), n)


def _backward_concat_shape(a, g, *shapes):
    if any(s is None for s in shapes):
        return None
    return [g, *shapes], list(shapes)


@register("_backward_Concat", inputs=lambda a: ("ograd",) + _arg_names(a),
          outputs=lambda a: tuple(f"output{i}" for i in range(a.num_args or 0)),
          infer_shape=_backward_concat_shape,
          infer_type=lambda a, g, *ts: ([g, *ts], [g] * len(ts)),
          attrs={"num_args": Attr("int", doc="Number of inputs of the forward Concat."),
                 "dim": Attr("int", 1, "The dimension of the forward Concat.")})
def backward_concat(xp, a, g, *xs):
    """Concat's gradient: split the head gradient at the inputs' sizes (inputs give shapes only)."""
    axis = _axis("Concat", a.dim, g.ndim, "dim")
    cuts = np.cumsum([x.shape[axis] for x in xs])[:-1].tolist()
    return tuple(_copy(p) for p in xp.split(g, cuts, axis=axis))


@backward_concat.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F.Concat(*ograds, dim=a.dim)] + [None] * (len(inputs) - 1)


def _stack_shape(a, *shapes):
    common = None
    for i, s in enumerate(shapes):
        try:
            common = merge_shape(common, s)
        except ShapeError:
            raise ShapeError(f"stack: input arg{i} has shape {s}, expected {common} like the others") from None
    if common is None:
        return None
    axis = _axis("stack", a.axis, len(common) + 1)
    return [common] * len(shapes), [tuple(common[:axis]) + (a.num_args,) + tuple(common[axis:])]


@register("stack", inputs=_arg_names, key_var_num_args="num_args", infer_shape=_stack_shape,
          attrs={"axis": Attr("int", 0, "The axis of the result along which the inputs are stacked."),
                 "num_args": Attr("int", doc="Number of inputs to be stacked.")})
def stack(xp, a, *xs):
    """Join arrays of one shape along a new axis."""
    if not xs:
        raise AttrError("stack: needs at least one input (num_args >= 1)")
    _same_dtypes("stack", xs)
    _stack_shape(a, *[x.shape for x in xs])
    return (xp.stack(xs, axis=_axis("stack", a.axis, xs[0].ndim + 1)),)


@stack.def_gradient
def _(F, a, inputs, outputs, ograds):
    n = len(inputs)
    return _as_list(F.SliceChannel(ograds[0], num_outputs=n, axis=a.axis, squeeze_axis=True), n)


# ---------------------------------------------------------------------------
# splitting: SliceChannel, _split_v2


def _output_names(n: int) -> tuple:
    return tuple(f"output{i}" for i in range(n))


def _piece_shapes(op: str, data: tuple, axis: int, bounds: list, squeeze: bool) -> list:
    """Output shapes for pieces [bounds[i], bounds[i+1]) along `axis` (None = to the end)."""
    shapes = []
    for b, e in zip(bounds[:-1], bounds[1:]):
        n = 0 if (e is None and not data[axis]) else (e if e is not None else data[axis]) - b
        if squeeze:
            if n not in (0, 1):
                raise ShapeError(f"{op}: squeeze_axis=True needs pieces of size 1 along axis {axis}, got {n}")
            shapes.append(tuple(data[:axis]) + tuple(data[axis + 1:]))
        else:
            shapes.append(tuple(data[:axis]) + (n,) + tuple(data[axis + 1:]))
    return shapes


def _slice_channel_bounds(a, data: tuple) -> tuple[int, list]:
    axis = _axis("SliceChannel", a.axis, len(data))
    n, size = a.num_outputs, data[axis]
    if n < 1:
        raise AttrError(f"SliceChannel: num_outputs must be >= 1, got {n}")
    if size and size % n:
        raise ShapeError(f"SliceChannel: cannot split axis {axis} of shape {tuple(data)} into "
                         f"num_outputs={n} equal pieces: {n} does not divide {size}")
    if a.squeeze_axis and size and size != n:
        raise ShapeError(f"SliceChannel: squeeze_axis=True needs input.shape[axis] == num_outputs, "
                         f"got shape {tuple(data)}, axis={axis}, num_outputs={n}")
    if not size:
        return axis, None
    step = size // n
    return axis, [i * step for i in range(n + 1)]


def _slice_channel_shape(a, data):
    if data is None:
        return None
    axis, bounds = _slice_channel_bounds(a, data)
    n = a.num_outputs
    if bounds is None:  # unknown split axis: pieces unknown there (or squeezed away)
        piece = tuple(data[:axis]) + (() if a.squeeze_axis else (0,)) + tuple(data[axis + 1:])
        filled = tuple(n if (a.squeeze_axis and i == axis) else d for i, d in enumerate(data))
        return [filled], [piece] * n
    return [data], _piece_shapes("SliceChannel", data, axis, bounds, a.squeeze_axis)


def _join_pieces(F, ograds, axis: int, squeeze: bool):
    """Gradient of a split: the head gradients joined back (re-expanded when squeezed)."""
    gs = [F.expand_dims(g, axis=axis) for g in ograds] if squeeze else list(ograds)
    return [F.Concat(*gs, dim=axis)]


@register("SliceChannel", aliases=("split",), outputs=lambda a: _output_names(a.num_outputs or 1),
          infer_shape=_slice_channel_shape,
          gradient=lambda F, a, inputs, outputs, ograds: _join_pieces(F, ograds, a.axis, a.squeeze_axis),
          attrs={"num_outputs": Attr("int", doc="Number of equal pieces; must divide the axis size."),
                 "axis": Attr("int", 1, "Axis along which to split."),
                 "squeeze_axis": Attr("bool", False, "Remove the split axis from the outputs (its size "
                                                     "must then equal num_outputs).")})
def slice_channel(xp, a, x):
    """Split the input into `num_outputs` equal pieces along an axis."""
    axis, bounds = _slice_channel_bounds(a, x.shape)
    shapes = _piece_shapes("SliceChannel", x.shape, axis, bounds, a.squeeze_axis)
    pieces = xp.split(x, a.num_outputs, axis=axis)
    return tuple(_copy(p.reshape(s)) for p, s in zip(pieces, shapes))


def _split_v2_bounds(a, data: tuple) -> tuple[int, list]:
    axis = _axis("_split_v2", a.axis, len(data))
    size = data[axis]
    if a.sections > 0:
        if size and size % a.sections:
            raise ShapeError(f"_split_v2: sections={a.sections} does not divide axis {axis} of shape {tuple(data)}")
        step = size // a.sections
        return axis, [i * step for i in range(a.sections)] + [None]
    idx = list(a.indices)
    if not idx:
        raise AttrError("_split_v2: give either indices (non-empty) or sections > 0")
    if idx[0] != 0:
        raise ShapeError(f"_split_v2: indices={tuple(idx)} must start at 0 (the pieces must cover the "
                         f"whole axis; the split_v2 helper prepends the 0)")
    for b, e in zip(idx, idx[1:] + ([size] if size else [])):
        if not b < e:
            raise ShapeError(f"_split_v2: indices={tuple(idx)} must increase strictly and stay below the "
                             f"axis size {size} (axis {axis} of {tuple(data)})")
    return axis, idx + [None]


def _split_v2_shape(a, data):
    if data is None:
        return None
    axis, bounds = _split_v2_bounds(a, data)
    shapes = _piece_shapes("_split_v2", data, axis, bounds, a.squeeze_axis)
    if a.squeeze_axis and not data[axis]:
        data = tuple(len(bounds) - 1 if i == axis else d for i, d in enumerate(data))
    return [data], shapes


def _split_v2_count(a) -> int:
    return a.sections if (a.sections or 0) > 0 else len(a.indices or ())


@register("_split_v2", outputs=lambda a: _output_names(_split_v2_count(a)), infer_shape=_split_v2_shape,
          gradient=lambda F, a, inputs, outputs, ograds: _join_pieces(F, ograds, a.axis, a.squeeze_axis),
          attrs={"indices": Attr("shape", doc="Boundaries of the pieces along the axis (first one 0)."),
                 "axis": Attr("int", 1, "Axis along which to split."),
                 "squeeze_axis": Attr("bool", False, "Remove the split axis from the outputs (every "
                                                     "piece must then have size 1)."),
                 "sections": Attr("int", 0, "Number of equal pieces; 0 means split by indices.")})
def split_v2(xp, a, x):
    """Split the input along an axis at given indices, or into equal sections."""
    axis, bounds = _split_v2_bounds(a, x.shape)
    shapes = _piece_shapes("_split_v2", x.shape, axis, bounds, a.squeeze_axis)
    cuts = list(bounds[1:-1])
    return tuple(_copy(p.reshape(s)) for p, s in zip(xp.split(x, cuts, axis=axis), shapes))


# ---------------------------------------------------------------------------
# slicing: slice, _slice_assign, _slice_assign_scalar, slice_axis, slice_like


def _slice_key(op: str, shape: tuple, begin, end, step) -> tuple:
    """Python slices with MXNet's slice semantics (None entries, negative steps)."""
    if len(begin) != len(end):
        raise AttrError(f"{op}: begin={tuple(begin)} and end={tuple(end)} must have the same length")
    if step and len(step) != len(begin):
        raise AttrError(f"{op}: step={tuple(step)} must have the length of begin={tuple(begin)}")
    if len(begin) > len(shape):
        raise ShapeError(f"{op}: begin={tuple(begin)} slices more axes than the input {tuple(shape)} has")
    key = []
    for i, (b, e) in enumerate(zip(begin, end)):
        s = step[i] if step and step[i] is not None else 1
        if s == 0:
            raise AttrError(f"{op}: step[{i}] cannot be 0")
        key.append(slice(b, e, s))
    return tuple(key)


def _sliced_shape(op: str, shape: tuple, begin, end, step) -> tuple:
    key = _slice_key(op, shape, begin, end, step)
    out = [len(range(*k.indices(d))) if d else 0 for k, d in zip(key, shape)]
    return tuple(out) + tuple(shape[len(key):])


_SLICE_ATTRS = {
    "begin": Attr("shape", doc="Starting indices of the slice; None entries and negative indices allowed."),
    "end": Attr("shape", doc="Ending indices of the slice; None entries and negative indices allowed."),
    "step": Attr("shape", (), "Steps of the slice; negative values allowed."),
}


@register("slice", aliases=("crop", "_sparse_slice"), attrs=dict(_SLICE_ATTRS),
          infer_shape=lambda a, data: None if data is None else
          ([data], [_sliced_shape("slice", data, a.begin, a.end, a.step)]))
def slice_op(xp, a, x):
    """x[begin:end:step] over the leading axes (MXNet's slice / crop)."""
    return (_copy(x[_slice_key("slice", x.shape, a.begin, a.end, a.step)]),)


@slice_op.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._slice_assign(F.zeros_like(inputs[0]), ograds[0], begin=a.begin, end=a.end, step=a.step)]


def _slice_assign_shape(a, lhs, rhs):
    if lhs is None:
        return None
    vshape = _sliced_shape("_slice_assign", lhs, a.begin, a.end, a.step)
    return [lhs, merge_shape(rhs, vshape, "_slice_assign: rhs ")], [lhs]


@register("_slice_assign", aliases=("_crop_assign",), inputs=("lhs", "rhs"), attrs=dict(_SLICE_ATTRS),
          infer_shape=_slice_assign_shape, inplace=((0, 0),))
def slice_assign(xp, a, lhs, rhs):
    """A copy of `lhs` with lhs[begin:end:step] = rhs."""
    _same_dtypes("_slice_assign", (lhs, rhs))
    key = _slice_key("_slice_assign", lhs.shape, a.begin, a.end, a.step)
    out = _copy(lhs)
    if out[key].shape != rhs.shape:
        raise ShapeError(f"_slice_assign: rhs has shape {rhs.shape}, the slice of lhs {lhs.shape} "
                         f"has shape {out[key].shape}")
    out[key] = rhs
    return (out,)


@slice_assign.def_gradient
def _(F, a, inputs, outputs, ograds):
    g = ograds[0]
    return [F._slice_assign_scalar(g, scalar=0.0, begin=a.begin, end=a.end, step=a.step),
            F.slice(g, begin=a.begin, end=a.end, step=a.step)]


@register("_slice_assign_scalar", aliases=("_crop_assign_scalar",), infer_shape=same_shape,
          inplace=((0, 0),),
          attrs={"scalar": Attr("float", 0.0, "The scalar value for assignment."), **_SLICE_ATTRS})
def slice_assign_scalar(xp, a, x):
    """A copy of the input with x[begin:end:step] = scalar."""
    out = _copy(x)
    out[_slice_key("_slice_assign_scalar", x.shape, a.begin, a.end, a.step)] = x.dtype.type(a.scalar)
    return (out,)


@slice_assign_scalar.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._slice_assign_scalar(ograds[0], scalar=0.0, begin=a.begin, end=a.end, step=a.step)]


def _slice_axis_range(a, shape: tuple) -> tuple[int, int, int]:
    """MXNet's GetSliceAxisParams: (axis, begin, end); no clamping, bad ranges are errors."""
    axis = _axis("slice_axis", a.axis, len(shape))
    size = shape[axis]
    begin = a.begin + size if a.begin < 0 else a.begin
    if not size:
        return axis, 0, 0
    end = size if a.end is None else (a.end + size if a.end < 0 else a.end)
    if not (0 <= begin < end <= size):
        raise ShapeError(f"slice_axis: invalid begin={a.begin}, end={a.end} for axis {axis} of size {size}")
    return axis, begin, end


def _slice_axis_shape(a, data):
    if data is None:
        return None
    axis, b, e = _slice_axis_range(a, data)
    return [data], [tuple(e - b if i == axis else d for i, d in enumerate(data))]


_SLICE_AXIS_ATTRS = {
    "axis": Attr("int", doc="Axis along which to slice; negative values allowed."),
    "begin": Attr("int", doc="The beginning index along the axis; negative values allowed."),
    "end": Attr("int", doc="The ending index along the axis (None: the end); negative values allowed.",
                optional=True),
}


@register("slice_axis", attrs=dict(_SLICE_AXIS_ATTRS), infer_shape=_slice_axis_shape)
def slice_axis(xp, a, x):
    """x[..., begin:end, ...] along one axis."""
    axis, b, e = _slice_axis_range(a, x.shape)
    return (_copy(x[(slice(None),) * axis + (slice(b, e),)]),)


@slice_axis.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_slice_axis(ograds[0], inputs[0], axis=a.axis, begin=a.begin, end=a.end)]


@register("_backward_slice_axis", inputs=("ograd", "data"), attrs=dict(_SLICE_AXIS_ATTRS),
          infer_shape=_like_data_shape, infer_type=_first_dtype,
          gradient=_grad_of_shape_donor(lambda F, a, gg, g: F.slice_axis(gg, axis=a.axis, begin=a.begin, end=a.end)))
def backward_slice_axis(xp, a, g, data):
    """slice_axis' gradient: zeros of the input's shape with the head gradient in the slice."""
    axis, b, e = _slice_axis_range(a, data.shape)
    out = xp.zeros(data.shape, dtype=g.dtype)
    out[(slice(None),) * axis + (slice(b, e),)] = g
    return (out,)


def _slice_like_out(a, ishape: tuple, fshape: tuple) -> tuple:
    if not a.axes:
        if len(ishape) != len(fshape):
            raise ShapeError(f"slice_like: by default every axis is sliced, but the inputs have "
                             f"{len(ishape)} and {len(fshape)} dims")
        axes = range(len(ishape))
    else:
        axes = [_axis("slice_like", ax, len(ishape)) for ax in a.axes]
    out = list(ishape)
    for ax in axes:
        if ax >= len(fshape):
            raise ShapeError(f"slice_like: axis {ax} exceeds the {len(fshape)} dims of shape_like")
        if ishape[ax] and fshape[ax] and fshape[ax] > ishape[ax]:
            raise ShapeError(f"slice_like: axis {ax} of shape_like has size {fshape[ax]}, more than the "
                             f"input's {ishape[ax]}")
        out[ax] = fshape[ax]
    return tuple(out)


@register("slice_like", inputs=("data", "shape_like"), infer_type=_first_dtype,
          infer_shape=lambda a, data, like: None if data is None or like is None else
          ([data, like], [_slice_like_out(a, data, like)]),
          attrs={"axes": Attr("shape", (), "Axes to slice to the size of shape_like's (default: all); "
                                           "negative values allowed.")})
def slice_like(xp, a, x, like):
    """Slice the input from the origin to the shape of `shape_like` (on some or all axes)."""
    out = _slice_like_out(a, x.shape, like.shape)
    return (_copy(x[tuple(slice(0, d) for d in out)]),)


@slice_like.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_slice_like(ograds[0], inputs[0]), None]


@register("_backward_slice_like", inputs=("ograd", "data"), infer_shape=_like_data_shape,
          infer_type=_first_dtype,
          gradient=_grad_of_shape_donor(lambda F, a, gg, g: F.slice_like(gg, g)))
def backward_slice_like(xp, a, g, data):
    """slice_like's gradient: zeros of the input's shape with the head gradient at the origin."""
    out = xp.zeros(data.shape, dtype=g.dtype)
    out[tuple(slice(0, d) for d in g.shape)] = g
    return (out,)


# ---------------------------------------------------------------------------
# Pad


def _pad_pairs(a, shape: tuple, dtype=None) -> list:
    """Validate MXNet's Pad restrictions; return ((before, after), ...) per axis."""
    nd, pw = len(shape), tuple(a.pad_width)
    if nd not in (4, 5):
        raise ShapeError(f"Pad: only 4-D and 5-D inputs are supported, got shape {tuple(shape)}")
    if len(pw) != 2 * nd:
        raise AttrError(f"Pad: pad_width needs 2*ndim = {2 * nd} entries for shape {tuple(shape)}, got {pw}")
    if any(pw[:4]) or any(p < 0 for p in pw):
        raise AttrError(f"Pad: padding must be >= 0 and zero on the first two axes, got pad_width={pw}")
    if dtype is not None and np.dtype(dtype).kind != "f":
        raise DTypeError(f"Pad: only floating point inputs are supported, got {np.dtype(dtype)}")
    pairs = list(zip(pw[::2], pw[1::2]))
    if a.mode == "reflect" and any(d and (b >= d or e >= d) for d, (b, e) in zip(shape, pairs)):
        raise ShapeError(f"Pad: reflect padding must be smaller than the input size, got "
                         f"pad_width={pw} for shape {tuple(shape)}")
    return pairs


def _pad_shape(a, data):
    if data is None:
        return None
    pairs = _pad_pairs(a, data)
    return [data], [tuple(d + b + e if d else 0 for d, (b, e) in zip(data, pairs))]


_PAD_ATTRS = {
    "mode": Attr("str", doc="constant: pad with constant_value; edge: repeat the edge values; "
                            "reflect: reflect the values about the edges.",
                 choices=("constant", "edge", "reflect")),
    "pad_width": Attr("shape", doc="(before_1, after_1, ..., before_N, after_N) padding of each axis; "
                                   "the first two axes take no padding."),
    "constant_value": Attr("float", 0.0, "The value used for padding when mode is constant."),
}


@register("Pad", aliases=("pad",), attrs=dict(_PAD_ATTRS), infer_shape=_pad_shape)
def pad(xp, a, x):
    """Pad the spatial axes of a 4-D/5-D array (numpy.pad modes constant/edge/reflect)."""
    pairs = _pad_pairs(a, x.shape, x.dtype)
    if a.mode == "constant":
        return (xp.pad(x, pairs, mode="constant", constant_values=x.dtype.type(a.constant_value)),)
    return (xp.pad(x, pairs, mode=a.mode),)


@pad.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_Pad(ograds[0], mode=a.mode, pad_width=a.pad_width)]


def _unpad_axis(xp, g, axis: int, widths: tuple[int, int], mode: str):
    """Adjoint of padding one axis: fold the padded borders back onto the input."""
    before, after = widths
    n = g.shape[axis] - before - after

    def cut(start, stop):
        return (slice(None),) * axis + (slice(start, stop),)
    out = _copy(g[cut(before, before + n)])
    if mode == "edge":
        out[cut(0, 1)] += g[cut(0, before)].sum(axis=axis, keepdims=True)
        out[cut(n - 1, n)] += g[cut(before + n, None)].sum(axis=axis, keepdims=True)
    elif mode == "reflect":
        out[cut(1, before + 1)] += xp.flip(g[cut(0, before)], axis)
        out[cut(n - 1 - after, n - 1)] += xp.flip(g[cut(before + n, None)], axis)
    return out


@register("_backward_Pad", inputs=("ograd",), attrs={k: v for k, v in _PAD_ATTRS.items() if k != "constant_value"},
          infer_shape=lambda a, g: None if g is None else
          ([g], [tuple(d - b - e if d else 0 for d, (b, e) in zip(g, _pad_pairs(a, g)))]))
def backward_pad(xp, a, g):
    """Pad's gradient: the head gradient of the padded array summed back onto the input."""
    pairs = list(zip(a.pad_width[::2], a.pad_width[1::2]))
    for axis, (b, e) in enumerate(pairs):
        if b or e:
            g = _unpad_axis(xp, g, axis, (b, e), a.mode)
    return (_copy(g),)


@backward_pad.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F.Pad(ograds[0], mode=a.mode, pad_width=a.pad_width)]


# ---------------------------------------------------------------------------
# depth_to_space, space_to_depth


def _block(op: str, a, shape: tuple) -> int:
    b = a.block_size
    if b < 1:
        raise AttrError(f"{op}: block_size must be a positive integer, got {b}")
    if len(shape) != 4:
        raise ShapeError(f"{op}: needs a 4-D (N, C, H, W) input, got shape {tuple(shape)}")
    return b


def _d2s_shape(a, data: tuple) -> tuple:
    b = _block("depth_to_space", a, data)
    n, c, h, w = data
    if c % (b * b):
        raise ShapeError(f"depth_to_space: the depth dim {c} of shape {data} must be a multiple of "
                         f"block_size^2 = {b * b}")
    return n, c // (b * b), h * b, w * b


def _s2d_shape(a, data: tuple) -> tuple:
    b = _block("space_to_depth", a, data)
    n, c, h, w = data
    if h % b or w % b:
        raise ShapeError(f"space_to_depth: the spatial dims of shape {data} must be multiples of "
                         f"block_size={b}")
    return n, c * b * b, h // b, w // b


_BLOCK_ATTRS = {"block_size": Attr("int", doc="Size of the [block_size, block_size] blocks moved.")}


@register("depth_to_space", attrs=dict(_BLOCK_ATTRS),
          infer_shape=lambda a, data: ([data], [_d2s_shape(a, data)]) if shape_known(data) else None)
def depth_to_space(xp, a, x):
    """Move depth blocks into spatial blocks: (N, C, H, W) -> (N, C/b^2, H*b, W*b)."""
    n, c, h, w = x.shape
    out = _d2s_shape(a, x.shape)
    b = a.block_size
    y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return (_copy(y.reshape(out)),)


@depth_to_space.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F.space_to_depth(ograds[0], block_size=a.block_size)]


@register("space_to_depth", attrs=dict(_BLOCK_ATTRS),
          infer_shape=lambda a, data: ([data], [_s2d_shape(a, data)]) if shape_known(data) else None)
def space_to_depth(xp, a, x):
    """Move spatial blocks into depth: (N, C, H, W) -> (N, C*b^2, H/b, W/b)."""
    n, c, h, w = x.shape
    out = _s2d_shape(a, x.shape)
    b = a.block_size
    y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return (_copy(y.reshape(out)),)


@space_to_depth.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F.depth_to_space(ograds[0], block_size=a.block_size)]


# ---------------------------------------------------------------------------
# shape_array, size_array, diag


def _int64_out(a, data):
    return [data], [np.dtype(np.int64)]


@register("shape_array", infer_type=_int64_out, gradient=ZERO_GRAD,
          ignored_attrs=("lhs_begin", "lhs_end", "rhs_begin", "rhs_end"),
          infer_shape=lambda a, data: None if data is None else ([data], [(len(data),)]))
def shape_array(xp, a, x):
    """The input's shape as a 1-D int64 array."""
    return (xp.asarray(x.shape, dtype=np.int64).reshape(x.ndim),)


@register("size_array", infer_type=_int64_out, gradient=ZERO_GRAD,
          infer_shape=lambda a, data: ([data], [(1,)]))
def size_array(xp, a, x):
    """The input's size as a 1-element int64 array."""
    return (xp.asarray([x.size], dtype=np.int64),)


def _diag_shape(a, data: tuple) -> tuple:
    if len(data) == 1:
        s = data[0] + abs(a.k)
        return s, s
    x1, x2 = _axis("diag", a.axis1, len(data), "axis1"), _axis("diag", a.axis2, len(data), "axis2")
    if x1 == x2:
        raise ShapeError(f"diag: axis1 and axis2 cannot refer to the same axis {x1}")
    h, w = data[x1] + min(a.k, 0), data[x2] - max(a.k, 0)
    if min(h, w) < 0:
        raise ShapeError(f"diag: diagonal k={a.k} does not exist for axes ({x1}, {x2}) of shape {tuple(data)}")
    return tuple(d for i, d in enumerate(data) if i not in (x1, x2)) + (min(h, w),)


_DIAG_ATTRS = {
    "k": Attr("int", 0, "Diagonal in question: k>0 above the main diagonal, k<0 below."),
    "axis1": Attr("int", 0, "The first axis of the sub-arrays (ignored for 1-D input)."),
    "axis2": Attr("int", 1, "The second axis of the sub-arrays (ignored for 1-D input)."),
}


@register("diag", attrs=dict(_DIAG_ATTRS),
          infer_shape=lambda a, data: ([data], [_diag_shape(a, data)]) if shape_known(data) else None)
def diag(xp, a, x):
    """1-D input: a matrix with it on diagonal k; N-D input: diagonal k of axes (axis1, axis2)."""
    _diag_shape(a, x.shape)
    if x.ndim == 1:
        return (xp.diag(x, a.k),)
    return (_copy(xp.diagonal(x, a.k, a.axis1, a.axis2)),)


@diag.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_diag(ograds[0], inputs[0], k=a.k, axis1=a.axis1, axis2=a.axis2)]


@register("_backward_diag", inputs=("ograd", "data"), attrs=dict(_DIAG_ATTRS),
          infer_shape=_like_data_shape, infer_type=_first_dtype,
          gradient=_grad_of_shape_donor(lambda F, a, gg, g: F.diag(gg, k=a.k, axis1=a.axis1, axis2=a.axis2)))
def backward_diag(xp, a, g, data):
    """diag's gradient: the head gradient's diagonal (1-D input), or zeros with g on the diagonal."""
    if data.ndim == 1:
        return (_copy(xp.diagonal(g, a.k)),)
    x1, x2 = a.axis1 % data.ndim, a.axis2 % data.ndim
    out = xp.zeros(data.shape, dtype=g.dtype)
    i = xp.arange(g.shape[-1])
    view = xp.moveaxis(out, (x1, x2), (-2, -1))
    view[..., i + max(-a.k, 0), i + max(a.k, 0)] = g
    return (out,)


# ---------------------------------------------------------------------------
# Cast, clip

_CAST_TYPES = ("bool", "float16", "float32", "float64", "int32", "int64", "int8", "uint8")


def _cast_dtype(v) -> str:
    if str(v).strip() == "bfloat16":
        raise ValueError("bfloat16 is not supported (numpy has no bfloat16 type)")
    return parse_dtype(v)


def _cast_array(x, dtype: str):
    """x.astype(dtype) with C's wrap-around for out-of-range floats to small ints."""
    if x.dtype.kind == "f" and np.dtype(dtype).kind in "iu" and np.dtype(dtype).itemsize < 8:
        with np.errstate(invalid="ignore"):
            return x.astype(np.int64).astype(dtype)
    return x.astype(dtype)


@register("Cast", aliases=("cast",), infer_shape=same_shape,
          infer_type=lambda a, data: ([data], [np.dtype(a.dtype)]),
          attrs={"dtype": Attr(_cast_dtype, doc="Output data type.", choices=_CAST_TYPES)})
def cast(xp, a, x):
    """Cast the elements to another dtype."""
    return (_cast_array(x, a.dtype),)


@cast.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_cast(ograds[0], inputs[0])]


@register("_backward_cast", inputs=("ograd", "data"), infer_shape=_like_data_shape,
          infer_type=lambda a, g, data: ([g, data], [data]),
          gradient=_grad_of_shape_donor(lambda F, a, gg, g: F._backward_cast(gg, g)))
def backward_cast(xp, a, g, data):
    """Cast's gradient: the head gradient cast back to the input's dtype."""
    return (_cast_array(g, data.dtype.name),)


def _clip_bounds(a) -> tuple[float, float]:
    """MXNet keeps a_min/a_max as float32 (real_t)."""
    return float(np.float32(a.a_min)), float(np.float32(a.a_max))


@register("clip", aliases=("_sparse_clip",), infer_shape=same_shape, elementwise=True,
          inplace=((0, 0),), writes_out=True, cexpr="x0 > a_max ? a_max : (x0 < a_min ? a_min : x0)",
          attrs={"a_min": Attr("float", doc="Minimum value."),
                 "a_max": Attr("float", doc="Maximum value.")})
def clip(xp, a, x, out=None):
    """Limit values to [a_min, a_max]: above a_max -> a_max, else below a_min -> a_min."""
    lo, hi = _clip_bounds(a)
    res = xp.where(x > hi, x.dtype.type(hi), xp.where(x < lo, x.dtype.type(lo), x)).astype(x.dtype, copy=False)
    if out is None:
        return (res,)
    out[0][...] = res
    return (out[0],)


@clip.def_gradient
def _(F, a, inputs, outputs, ograds):
    lo, hi = _clip_bounds(a)
    x = inputs[0]
    inside = F.elemwise_mul(F._greater_equal_scalar(x, scalar=lo), F._lesser_equal_scalar(x, scalar=hi))
    return [F.elemwise_mul(ograds[0], inside)]
