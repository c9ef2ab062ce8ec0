"""Creation operators: arrays made from attributes alone (`_zeros`, `_arange`, ...)
and the `*_like` ones."""
from __future__ import annotations

import math
import mmap

import numpy as np

from ..attrs import Attr
from ..backend import Context
from ..errors import AttrError
from ..registry import ZERO_GRAD, register, same_shape


def parse_ctx(v) -> Context | None:
    """`"cpu(0)"`, `"gpu(1)"`, a Context, or "" for the current context."""
    if isinstance(v, Context):
        return v
    s = str(v).strip()
    if not s:
        return None
    dev, _, rest = s.partition("(")
    return Context(dev, int(rest.rstrip(")") or 0))


def _ctx_attr():
    return Attr(parse_ctx, None, "Context of output, in format [cpu|gpu|cpu_pinned](n).",
                fmt=str)


def _dtype_attr(default="float32"):
    return Attr("dtype", default, "Target data type.")


def _init_shape(a):
    return [], [tuple(a.shape)]


def _dtype_out(a):
    return [], [np.dtype(a.dtype or "float32")]


#: zero arrays of at least this many bytes are mapped from the OS (`lazy_zeros`)
LAZY_ZEROS_BYTES = 1 << 20


def lazy_zeros(xp, shape: tuple, dtype):
    """A zero array whose pages become resident only when written: gradient buffers that
    inference never writes cost no memory. numpy's calloc gives that only while glibc serves
    the size by mmap; once a freed block has raised glibc's (dynamic) mmap threshold, calloc
    takes it from the heap and writes every byte. So arrays of LAZY_ZEROS_BYTES or more are
    a private anonymous mapping of their own (private: a forked worker's writes stay its own),
    unmapped when the array goes."""
    dtype = np.dtype(dtype)
    size = math.prod(shape)
    if xp is not np or size * dtype.itemsize < LAZY_ZEROS_BYTES:
        return xp.zeros(shape, dtype=dtype)
    pages = mmap.mmap(-1, size * dtype.itemsize, flags=mmap.MAP_PRIVATE,
                      prot=mmap.PROT_READ | mmap.PROT_WRITE)
    return np.frombuffer(pages, dtype=dtype, count=size).reshape(shape)


def _filled(value_of):
    def forward(xp, a):
        value = value_of(a)
        if value == 0:
            # lazily mapped: zero pages cost no resident memory until written (xp.full writes
            # every page)
            return (lazy_zeros(xp, tuple(a.shape), a.dtype or "float32"),)
        return (xp.full(tuple(a.shape), value, dtype=a.dtype or "float32"),)
    return forward


_SHAPE = Attr("shape", (), "The shape of the output.")

for _name, _value_of, _extra in (("_zeros", lambda a: 0, {}), ("_ones", lambda a: 1, {}),
                                 ("_full", lambda a: a.value,
                                  {"value": Attr("float", 0.0, "Value with which to fill.")})):
    register(_name, inputs=(), attrs={"shape": _SHAPE, "ctx": _ctx_attr(), "dtype": _dtype_attr(), **_extra},
             infer_shape=_init_shape, infer_type=lambda a, *t: _dtype_out(a),
             gradient=ZERO_GRAD, hint=_name)(_filled(_value_of))

register("_empty", inputs=(), attrs={"shape": _SHAPE, "ctx": _ctx_attr(), "dtype": _dtype_attr()},
         infer_shape=_init_shape, infer_type=lambda a, *t: _dtype_out(a),
         gradient=ZERO_GRAD, doc="An uninitialised array (zeros here).")(_filled(lambda a: 0))


def _arange_len(a) -> int:
    start, stop = (0.0, a.start) if a.stop is None else (a.start, a.stop)
    n = int(math.ceil((stop - start) / a.step))
    return max(n, 0) * a.repeat


_RANGE_ATTRS = {
    "start": Attr("float", 0.0, "Start of interval."),
    "stop": Attr("float", None, "End of interval."),
    "step": Attr("float", 1.0, "Spacing between values."),
    "repeat": Attr("int", 1, "The repeating time of all elements."),
    "infer_range": Attr("bool", False, "When True, infer the stop position from the start, step, "
                        "repeat, and output tensor size."),
    "ctx": _ctx_attr(), "dtype": _dtype_attr()}


def _arange_shape(a):
    """(length,), or an unknown length that the graph decides under infer_range (MXNet's)."""
    return [], [(0,) if a.infer_range else (_arange_len(a),)]


def _arange_resolved(a, shape: tuple):
    """The attributes giving `shape[0]` values from `start` in `step`s: a stop half a step past
    the last value (exact under ceil), infer_range spent."""
    n = shape[0] // a.repeat
    return a.replace(_arange.schema, stop=a.start + (n - 0.5) * a.step, infer_range=False)


@register("_arange", inputs=(), attrs=dict(_RANGE_ATTRS), gradient=ZERO_GRAD,
          infer_shape=_arange_shape, infer_type=lambda a, *t: _dtype_out(a),
          open_shape=(lambda a: a.infer_range, _arange_resolved))
def _arange(xp, a):
    """Evenly spaced values in [start, stop) with each value repeated `repeat` times."""
    if a.infer_range:
        raise AttrError("operator _arange: infer_range=True takes the length from the graph "
                        "(e.g. elemwise_add with an array of known shape); an eager call has no "
                        "graph, so give stop instead")
    start, stop = (0.0, a.start) if a.stop is None else (a.start, a.stop)
    n = _arange_len(a) // a.repeat
    dt = np.dtype(a.dtype or "float32")
    if dt.kind in "iu":   # MXNet casts start and step to the dtype first: (1.3, 456.6, 1.3) -> 1, 2, 3, ...
        first, step = np.array(start).astype(dt), np.array(a.step).astype(dt)
        out = (first + xp.arange(n).astype(dt) * step).astype(dt)
    else:
        out = (start + a.step * xp.arange(n, dtype=np.float64)).astype(dt)
    return (xp.repeat(out, a.repeat) if a.repeat != 1 else out,)


@register("_linspace", inputs=(), gradient=ZERO_GRAD,
          attrs={"start": Attr("float", 0.0, "Start of interval."),
                 "stop": Attr("float", None, "End of interval."),
                 "step": Attr("float", 1.0, "Unused by linspace."),
                 "repeat": Attr("int", 1, "The repeating time of all elements."),
                 "infer_range": Attr("bool", False, "Unused."),
                 "num": Attr("int", 50, "Number of samples."),
                 "endpoint": Attr("bool", True, "Include stop."),
                 "ctx": _ctx_attr(), "dtype": _dtype_attr()},
          infer_shape=lambda a: ([], [(a.num,)]), infer_type=lambda a, *t: _dtype_out(a))
def _linspace(xp, a):
    """`num` evenly spaced values over [start, stop]."""
    return (xp.linspace(a.start, a.stop, a.num, endpoint=a.endpoint).astype(a.dtype or "float32"),)


@register("_eye", inputs=(), gradient=ZERO_GRAD,
          attrs={"N": Attr("int", 0, "Number of rows."), "M": Attr("int", 0, "Number of columns (0 = N)."),
                 "k": Attr("int", 0, "Index of the diagonal."), "ctx": _ctx_attr(), "dtype": _dtype_attr()},
          infer_shape=lambda a: ([], [(a.N, a.M or a.N)]), infer_type=lambda a, *t: _dtype_out(a))
def _eye(xp, a):
    """A 2-D array with ones on the k-th diagonal."""
    return (xp.eye(a.N, a.M or a.N, a.k, dtype=a.dtype or "float32"),)


@register("zeros_like", monitor_inputs="input", gradient=ZERO_GRAD, infer_shape=same_shape, elementwise=True, cexpr="0")
def zeros_like(xp, a, x):
    """An array of zeros with the shape and dtype of the input."""
    return (xp.zeros_like(x),)


@register("ones_like", monitor_inputs="input", gradient=ZERO_GRAD, infer_shape=same_shape, elementwise=True, cexpr="1")
def ones_like(xp, a, x):
    """An array of ones with the shape and dtype of the input."""
    return (xp.ones_like(x),)
