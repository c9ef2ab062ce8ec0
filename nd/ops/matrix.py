"""Shape manipulation (MXNet's src/operator/tensor/matrix_op*): the reshape
family (Reshape, reshape_like, Flatten, transpose, SwapAxis, expand_dims,
squeeze, reverse, tile, repeat) and the helpers shared with its sibling
modules matrix_join.py (Concat, stack, split), matrix_slice.py (slicing,
padding, depth/space) and matrix_misc.py (shape_array, diag, Cast, clip).

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

from ..attrs import Attr
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import register, same_shape, shape_known

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
    while i < len(codes):  # one pass; each step reads only the codes and dims it uses
        if codes[i] == -1:
            if inf >= 0:
                raise ShapeError(f"Reshape: shape={_short(spec)} has more than one -1; only one dim can be inferred")
            inf, inf_code = len(out), i
        used, skip = _reshape_step(spec, dshape, dims, src, codes, i, out)
        src += used
        i += 1 + skip
    if inf >= 0:
        out = _place_inferred(out, dshape, inf, inf_code)
    return tuple(out[::-1] if reverse else out)


def _short(spec) -> str:
    """A spec for an error message, cut short when a file gave thousands of codes."""
    text = str(tuple(spec))
    return text if len(text) <= 200 else text[:200] + f"... ({len(spec)} codes)"


def _reshape_step(spec, dshape, dims: list, src: int, codes: list, i: int, out: list) -> tuple[int, int]:
    """Code `codes[i]` of a Reshape spec on the input dims from `src`: appends the dims it
    emits to `out`; returns (input dims consumed, following codes consumed)."""
    c = codes[i]
    left = max(0, len(dims) - src)
    if c == 0:
        if not left:
            raise ShapeError(f"{_where(spec, dshape)} code 0 copies a dim past the end of the input")
        out.append(dims[src])
        return 1, 0
    if c == -1:
        out.append(1)  # placeholder, filled by _place_inferred
        return 1, 0
    if c == -2:
        out.extend(dims[src:])
        return left, 0
    if c == -3:
        if left < 2:
            raise ShapeError(f"{_where(spec, dshape)} code -3 merges two dims but fewer than two are left")
        out.append(dims[src] * dims[src + 1])
        return 2, 0
    if c == -4:
        if len(codes) - i < 3 or not left:
            raise ShapeError(f"{_where(spec, dshape)} code -4 needs two following values and an input dim to split")
        out.extend(_split_dim(spec, dims[src], codes[i + 1], codes[i + 2]))
        return 1, 2
    if c > 0:
        out.append(c)
        return 1, 0
    raise AttrError(f"Reshape: invalid code {c} in shape={_short(spec)}; expected a positive "
                    "size or one of 0, -1, -2, -3, -4")


def _where(spec, dshape) -> str:
    return f"Reshape: shape={_short(spec)} on input {tuple(dshape)}:"


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
        raise ShapeError(f"Reshape: shape={_short(spec)}: split dims after -4 cannot both be -1")
    if not (d1 == -1 or d1 > 0) or not (d2 == -1 or d2 > 0):
        raise ShapeError(f"Reshape: shape={_short(spec)}: split dims after -4 must be positive or -1, "
                         f"got {d1}, {d2}")
    if not d0:  # unknown input dim: a -1 stays unknown
        return (0 if d1 == -1 else d1), (0 if d2 == -1 else d2)
    if d1 == -1:
        d1 = d0 // d2
    if d2 == -1:
        d2 = d0 // d1
    if d1 < 1 or d2 < 1 or d1 * d2 != d0:
        raise ShapeError(f"Reshape: shape={_short(spec)}: split dims {d1}, {d2} do not divide input dim {d0}")
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


def _reshape_from_output(a, ins, outs):
    """A known output (fixed downstream, e.g. by elemwise_add with a known array) fills the
    input's single unknown dim (MXNet's ReverseReshapeInferShape)."""
    if ins[0] is None or outs[0] is None:
        return None
    return [_fill_one_unknown(tuple(ins[0]), tuple(outs[0]))]


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


@register("Reshape", monitor_inputs="input", aliases=("reshape",), inplace=((0, 0),), infer_shape=_reshape_shape,
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


reshape.shape_from_outputs = _reshape_from_output


def _range(op: str, side: str, ndim: int, begin, end) -> tuple[int, int]:
    """reshape_like's lhs/rhs dim range: negative indices and None, as MXNet checks them."""
    if ndim == 0 and begin is None and end is None:
        return 0, 0   # a 0-d side (numpy-front-end gradients): its whole (empty) shape
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


@register("Flatten", monitor_inputs="input", aliases=("flatten",), inplace=((0, 0),), infer_shape=_flatten_shape,
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


def _transpose_from_output(a, ins, outs):
    """The input's dims are the output's, permuted back: in[axes[i]] = out[i]."""
    out = outs[0]
    if out is None:
        return None
    perm = _transpose_axes(a, len(out))
    data = [0] * len(out)
    for i, p in enumerate(perm):
        data[p] = out[i]
    return [tuple(data)]


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


@register("transpose", monitor_inputs="input", infer_shape=_transpose_shape, self_compose=_transpose_compose,
          identity_when=_transpose_is_identity,
          attrs={"axes": Attr("shape", (), "Target axis order. By default the axes are reversed.")})
def transpose(xp, a, x):
    """Permute the axes of the input."""
    return (xp.ascontiguousarray(xp.transpose(x, _transpose_axes(a, x.ndim))),)


transpose.shape_from_outputs = _transpose_from_output


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


@register("expand_dims",
          monitor_inputs="input", inplace=((0, 0),), infer_shape=_expand_dims_shape, gradient=_reshape_grad,
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
