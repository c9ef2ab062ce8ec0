"""Joining and splitting: Concat, stack, SliceChannel (split) and _split_v2
(MXNet's src/operator/tensor/matrix_op*, concat.cc, slice_channel.cc), and
`_rnn_param_concat`, the Concat Gluon's RNN layers use to pack their weights.

Shared helpers and conventions are those of nd/ops/matrix.py.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import merge_shape, register
from .matrix import _as_list, _axis, _copy, _same_dtypes


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
        if not b <= e:  # equal indices give an empty piece, as MXNet 1.9.1
            raise ShapeError(f"_split_v2: indices={tuple(idx)} must increase (or repeat) and stay within the "
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
# _rnn_param_concat


def _concat_arg_names(a) -> tuple:
    return tuple(f"arg{i}" for i in range(a.num_args or 0))


def _param_concat_shape(a, *shapes):
    """Concat's rule; inputs whose size along `dim` is unknown leave the output's unknown."""
    known = [s for s in shapes if s is not None]
    if not known:
        return None
    ndim = len(known[0])
    if not -ndim <= a.dim < ndim:
        raise ShapeError(f"operator _rnn_param_concat: dim={a.dim} is out of range for inputs "
                         f"with {ndim} dims")
    axis = a.dim % ndim
    common = None
    for i, s in enumerate(shapes):
        if s is None:
            continue
        try:
            common = merge_shape(common, tuple(0 if j == axis else d for j, d in enumerate(s)))
        except ShapeError:
            raise ShapeError(f"operator _rnn_param_concat: input arg{i} has shape {tuple(s)}, "
                             f"incompatible with the other inputs outside dim {axis}") from None
    ins = [common if s is None else tuple(s[j] if j == axis else d for j, d in enumerate(common))
           for s in shapes]
    sizes = [s[axis] for s in ins]
    total = sum(sizes) if all(sizes) else 0
    return ins, [tuple(total if j == axis else d for j, d in enumerate(common))]


@register("_rnn_param_concat", aliases=("_npi_rnn_param_concat",), inputs=_concat_arg_names,
          key_var_num_args="num_args", infer_shape=_param_concat_shape, hint="_rnn_param_concat",
          attrs={"num_args": Attr("int", doc="Number of inputs to be concated."),
                 "dim": Attr("int", 1, "the dimension to be concated.")})
def rnn_param_concat(xp, a, *xs):
    """Concat for the packed parameter vector of Gluon's RNN layers (MXNet's own op name)."""
    if len({x.dtype for x in xs}) > 1:
        raise DTypeError(f"operator _rnn_param_concat: every input must have the same dtype, got "
                         f"{[str(x.dtype) for x in xs]}")
    _param_concat_shape(a, *[x.shape for x in xs])
    return (xp.concatenate(xs, axis=a.dim % xs[0].ndim),)


@rnn_param_concat.def_gradient
def _param_concat_gradient(F, a, inputs, outputs, ograds):  # noqa: N803
    n = len(inputs)
    res = F._backward_Concat(ograds[0], *inputs, num_args=n, dim=a.dim)
    return [res] if n == 1 else [res[i] for i in range(n)]
