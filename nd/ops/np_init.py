"""The numpy front end's creation and sampling operators (`_npi_zeros`, `_npi_full_like`,
`_npi_arange`, `_npi_uniform`, `_npi_random_randint`, ...; `_npi_normal` and the other samplers
are in np_random.py).

Creation ops reuse init.py's kernels (the legacy `_zeros`, `_arange`, ... declarations)
under MXNet's np names and attribute schemas; sampling ops draw with random.py's
distribution samplers from the per-device generator (`mx.random.seed` / `npx.random.seed`
reproduce them). np sampling ops take their parameters as attributes, or as arrays in
`input1` / `input2` when an attribute is None, as MXNet's `_npi_uniform` does.
"""
from __future__ import annotations

import numpy as np

from .. import rng
from ..attrs import Attr
from ..errors import AttrError
from ..registry import ZERO_GRAD, OpDef, add_op, get_op, same_shape
from .init import parse_ctx
from .random import DISTS

_F32 = np.dtype(np.float32)


def _ctx_attr() -> Attr:
    return Attr(parse_ctx, None, "Context of output, in format [cpu|gpu|cpu_pinned](n).", fmt=str)


def _dtype_attr(default="float32") -> Attr:
    return Attr("dtype", default, "Data type of the result.")


def _clone(name: str, legacy: str, attrs: dict, doc: str) -> None:
    """An np creation op running a legacy creation kernel (same attribute meanings)."""
    op = get_op(legacy)
    add_op(OpDef(name, inputs=(), attrs=attrs, forward=op.forward, infer_shape=op.infer_shape,
                 infer_type=op.infer_type, gradient=ZERO_GRAD, hint=name[5:], doc=doc))


_SHAPE = Attr("shape", (), "The shape of the output.")
for _name in ("zeros", "ones"):
    _clone(f"_npi_{_name}", f"_{_name}", {"shape": _SHAPE, "ctx": _ctx_attr(), "dtype": _dtype_attr()},
           f"numpy's {_name}.")
_clone("_npi_full", "_full", {"shape": _SHAPE, "ctx": _ctx_attr(), "dtype": _dtype_attr(),
                              "value": Attr("float", 0.0, "The fill value.")}, "numpy's full.")
_clone("_npi_arange", "_arange", {k: v for k, v in get_op("_arange").schema.attrs.items()}, "numpy's arange.")
def _eye_shape(a) -> tuple:
    m = a.N if a.M is None else a.M   # numpy: M=None means N, M=0 no columns
    if a.N < 0 or m < 0:
        raise AttrError(f"operator _npi_eye: negative dimensions are not allowed (N={a.N}, M={a.M})")
    return (a.N, m)


add_op(OpDef("_npi_eye", inputs=(), attrs={
    "N": Attr("int", 0, "Number of rows."), "M": Attr("int", None, "Number of columns (None: N)."),
    "k": Attr("int", 0, "Index of the diagonal."), "ctx": _ctx_attr(), "dtype": _dtype_attr()},
    forward=lambda xp, a: (xp.eye(*_eye_shape(a), a.k, dtype=a.dtype or "float32"),),
    infer_shape=lambda a: ([], [_eye_shape(a)]), infer_type=lambda a, *t: ([], [np.dtype(a.dtype or "float32")]),
    gradient=ZERO_GRAD, hint="eye", doc="numpy's eye (M=None: square; M=0: no columns)."))


def _identity(xp, a):
    return (xp.eye(a.shape[0], dtype=a.dtype or "float32"),)


add_op(OpDef("_npi_identity", inputs=(), attrs={"shape": _SHAPE, "ctx": _ctx_attr(), "dtype": _dtype_attr()},
             forward=_identity, infer_shape=lambda a: ([], [tuple(a.shape)]),
             infer_type=lambda a, *t: ([], [np.dtype(a.dtype or "float32")]), gradient=ZERO_GRAD,
             hint="identity", doc="numpy's identity (shape=(n, n))."))


def _full_like(xp, a, x):
    dt = np.dtype(a.dtype) if a.dtype is not None else x.dtype
    return (xp.full(x.shape, a.fill_value, dtype=dt),)


add_op(OpDef("_npi_full_like", inputs=("a",),
             attrs={"fill_value": Attr("float", 0.0, "The fill value."), "ctx": _ctx_attr(),
                    "dtype": Attr("dtype", None, "The dtype (default: the input's).")},
             forward=_full_like, infer_shape=same_shape,
             infer_type=lambda a, x: None if x is None else ([x], [np.dtype(a.dtype) if a.dtype else x]),
             gradient=ZERO_GRAD, hint="full_like", doc="numpy's full_like (and zeros_like / ones_like)."))


# -- sampling ---------------------------------------------------------------------------------

def _sampler(dist: str, p1: str, p2: str):
    draw = DISTS[dist].draw

    def inputs(a):
        return tuple(n for n, p in (("input1", p1), ("input2", p2)) if a.get(p) is None)

    def size_of(a, arrays):
        if a.size is not None:
            return tuple(a.size)
        return tuple(np.broadcast_shapes(*[x.shape for x in arrays])) if arrays else ()

    def forward(xp, a, *arrays):
        it = iter(arrays)
        params = [next(it) if a.get(p) is None else a.get(p) for p in (p1, p2)]
        dt = np.dtype(a.dtype or "float32")
        out = draw(xp, rng.generator(xp), params, size_of(a, arrays), dt)
        return (xp.asarray(out, dtype=dt),)

    def infer_shape(a, *shapes):
        if a.size is not None:
            return list(shapes), [tuple(a.size)]
        if any(s is None for s in shapes):
            return None
        return list(shapes), [tuple(np.broadcast_shapes(*shapes)) if shapes else ()]

    return inputs, forward, infer_shape


for _name, _dist, _p1, _p2 in (("_npi_uniform", "uniform", "low", "high"),):   # _npi_normal: np_random.py
    _inputs, _fwd, _shape = _sampler(_dist, _p1, _p2)
    add_op(OpDef(_name, inputs=_inputs, attrs={
        _p1: Attr("float", None, "The first parameter (None: from input1)."),
        _p2: Attr("float", None, "The second parameter (None: from input2)."),
        "size": Attr("shape", None, "Output shape (None: the parameters' broadcast shape)."),
        "ctx": _ctx_attr(), "dtype": Attr("dtype", "float32", "The dtype of the samples.")},
        forward=_fwd, infer_shape=_shape, infer_type=lambda a, *t: (list(t), [np.dtype(a.dtype or "float32")]),
        gradient=ZERO_GRAD, is_random=True, hint=_dist, doc=f"numpy.random.{_dist}."))


def _randint(xp, a):
    if a.high is None or a.low >= a.high:
        raise AttrError(f"operator _npi_random_randint: need low < high, got low={a.low}, high={a.high}")
    dt = np.dtype(a.dtype or "int64")
    return (xp.asarray(rng.generator(xp).integers(a.low, a.high, size=tuple(a.shape)), dtype=dt),)


add_op(OpDef("_npi_random_randint", inputs=(), attrs={
    "low": Attr("int", 0, "Lowest integer drawn."), "high": Attr("int", None, "One above the highest."),
    "shape": Attr("shape", (), "The output shape."), "ctx": _ctx_attr(),
    "dtype": Attr("dtype", "int64", "The integer dtype.")},
    forward=_randint, infer_shape=lambda a: ([], [tuple(a.shape)]),
    infer_type=lambda a, *t: ([], [np.dtype(a.dtype or "int64")]), gradient=ZERO_GRAD, is_random=True,
    hint="randint", doc="numpy.random.randint."))
