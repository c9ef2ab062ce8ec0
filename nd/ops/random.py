"""Random sampling operators (MXNet 1.9.1's src/operator/random/).

Three families, each drawn from the per-device generator of `nd.rng` (so
`mx.random.seed` makes them reproducible):

* `_random_<dist>`: scalar parameters as attributes, output shape from `shape`
  (`_random_uniform`, alias `uniform` / `random_uniform`, ...);
* `_random_<dist>_like`: the same, with the shape and dtype of an input;
* `_sample_<dist>`: parameters as arrays; each parameter entry draws `shape`
  samples, so the output shape is `param.shape + shape`;

plus `_sample_multinomial` and `_shuffle`. Parameter values MXNet rejects at run
time (scale <= 0, lam < 0, ...) raise AttrError (or ValueError for array
parameters) here. Counting distributions (poisson, negative binomial) return
floating dtypes, as in MXNet.
"""
from __future__ import annotations

import numpy as np

from .. import rng
from ..attrs import REQUIRED, Attr
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import ZERO_GRAD, merge_shape, register
from .init import parse_ctx

_FLOATS = ("float16", "float32", "float64")
_F32 = np.dtype(np.float32)


def _shape_attr(default=None) -> Attr:
    return Attr("shape", default, "Shape of the output." if default is None
                else "Shape to be sampled from each random distribution.")


def _ctx_attr() -> Attr:
    return Attr(parse_ctx, None, "Context of output, in format [cpu|gpu|cpu_pinned](n). "
                "Only used for imperative calls.", fmt=str)


def _dtype_attr(choices=_FLOATS, what="float32") -> Attr:
    return Attr("dtype", None, f"DType of the output in case this can't be inferred. Defaults to {what} if "
                "not defined (dtype=None).", choices=choices)


# -- the distributions: parameters, checks, samplers ---------------------------------
#
# Each sampler is `draw(xp, gen, params, size, dtype)` where `params` are floats or
# arrays broadcastable to `size`; it returns an array of `size` in `dtype`.

def _float_kind(dtype) -> np.dtype:
    """numpy's generators make float32 or float64; float16 is drawn as float32."""
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else _F32


def _draw_uniform(xp, gen, p, size, dtype):
    low, high = p
    return (low + (high - low) * gen.random(size, dtype=_float_kind(dtype))).astype(dtype, copy=False)


def _draw_normal(xp, gen, p, size, dtype):
    loc, scale = p
    return (loc + scale * gen.standard_normal(size, dtype=_float_kind(dtype))).astype(dtype, copy=False)


def _draw_gamma(xp, gen, p, size, dtype):
    alpha, beta = p
    return (gen.standard_gamma(alpha, size) * beta).astype(dtype, copy=False)


def _draw_exponential(xp, gen, p, size, dtype):
    (lam,) = p
    return (gen.standard_exponential(size, dtype=_float_kind(dtype)) / lam).astype(dtype, copy=False)


def _draw_poisson(xp, gen, p, size, dtype):
    (lam,) = p
    return gen.poisson(lam, size).astype(dtype)


def _draw_negative_binomial(xp, gen, p, size, dtype):
    """Failures before k successes (success probability p): a Gamma-Poisson mixture."""
    k, prob = p
    lam = gen.standard_gamma(k, size) * ((1.0 - prob) / prob)
    return gen.poisson(lam).astype(dtype)


def _draw_generalized_negative_binomial(xp, gen, p, size, dtype):
    """Mean mu, dispersion alpha (variance mu + alpha mu^2); alpha = 0 is Poisson(mu)."""
    mu, alpha = p
    mu = xp.broadcast_to(xp.asarray(mu, dtype=np.float64), size)
    alpha = xp.broadcast_to(xp.asarray(alpha, dtype=np.float64), size)
    poisson_only = alpha < 1e-12  # the Gamma mixing is degenerate there (and 1/alpha may overflow)
    safe_alpha = xp.where(poisson_only, 1.0, alpha)
    lam = xp.where(poisson_only, mu, gen.standard_gamma(1.0 / safe_alpha, size) * safe_alpha * mu)
    return gen.poisson(lam).astype(dtype)


class Dist:
    """One distribution: MXNet's parameter names/defaults, validity rules and sampler."""

    def __init__(self, name, params, checks, draw, doc):
        self.name = name            # e.g. "uniform"
        self.params = params        # {attr name: Attr} of the scalar form
        self.checks = checks        # [(param names, predicate(*values) -> bool, message)]
        self.draw = draw
        self.doc = doc

    def validate(self, op: str, xp, values: dict) -> None:
        """Raise a clear error for parameter values MXNet rejects."""
        for names, ok, message in self.checks:
            vals = [values[n] for n in names]
            good = ok(*vals)
            if not (good if isinstance(good, bool) else bool(xp.all(good))):
                shown = ", ".join(f"{n}={_show(v)}" for n, v in zip(names, vals))
                raise (AttrError if all(isinstance(v, (int, float)) for v in vals) else ValueError)(
                    f"operator {op}: {message}; got {shown}")


def _show(v):
    return v if isinstance(v, (int, float)) else f"array with min {float(v.min()) if v.size else 'n/a'}"


DISTS = {d.name: d for d in (
    Dist("uniform", {"low": Attr("float", 0.0, "Lower bound of the distribution."),
                     "high": Attr("float", 1.0, "Upper bound of the distribution.")},
         [(("low", "high"), lambda lo, hi: lo <= hi, "low must be less or equal to high in uniform distribution")],
         _draw_uniform, "Draw random samples from a uniform distribution on [low, high)."),
    Dist("normal", {"loc": Attr("float", 0.0, "Mean of the distribution."),
                    "scale": Attr("float", 1.0, "Standard deviation of the distribution.")},
         [(("scale",), lambda s: s > 0, "scale parameter in gaussian has to be positive")],
         _draw_normal, "Draw random samples from a normal (Gaussian) distribution."),
    Dist("gamma", {"alpha": Attr("float", 1.0, "Alpha parameter (shape) of the gamma distribution."),
                   "beta": Attr("float", 1.0, "Beta parameter (scale) of the gamma distribution.")},
         [(("alpha",), lambda a: a > 0, "alpha parameter in gamma distribution has to be positive"),
          (("beta",), lambda b: b > 0, "beta parameter in gamma distribution has to be positive")],
         _draw_gamma, "Draw random samples from a gamma distribution (shape alpha, scale beta)."),
    Dist("exponential", {"lam": Attr("float", 1.0, "Lambda parameter (rate) of the exponential distribution.")},
         [(("lam",), lambda lam: lam > 0, "lambda parameter in exponential distribution has to be positive")],
         _draw_exponential, "Draw random samples from an exponential distribution with rate lam."),
    Dist("poisson", {"lam": Attr("float", 1.0, "Lambda parameter (rate) of the Poisson distribution.")},
         [(("lam",), lambda lam: lam >= 0, "lambda parameter in poisson distribution has to be non-negative")],
         _draw_poisson, "Draw random samples from a Poisson distribution (returned as floats)."),
    Dist("negative_binomial", {"k": Attr("int", 1, "Limit of unsuccessful experiments."),
                               "p": Attr("float", 1.0, "Failure probability in each experiment.")},
         [(("k",), lambda k: k >= 0, "k parameter in negative binomial distribution has to be non-negative"),
          (("p",), lambda p: (p > 0) & (p <= 1),
           "p parameter in negative binomial distribution has to be in (0, 1]")],
         _draw_negative_binomial, "Draw random samples from a negative binomial distribution (as floats)."),
    Dist("generalized_negative_binomial",
         {"mu": Attr("float", 1.0, "Mean of the negative binomial distribution."),
          "alpha": Attr("float", 1.0, "Alpha (dispersion) parameter of the negative binomial distribution.")},
         [(("mu",), lambda mu: mu >= 0,
           "mu parameter in generalized negative binomial distribution has to be non-negative"),
          (("alpha",), lambda a: a >= 0,
           "alpha parameter in generalized negative binomial distribution has to be non-negative")],
         _draw_generalized_negative_binomial,
         "Draw random samples from a generalized negative binomial distribution (mean mu, dispersion alpha)."),
)}

#: MXNet's public aliases of the `_random_<dist>` operators
_RANDOM_ALIASES = {"uniform": ("random_uniform", "uniform"), "normal": ("normal", "random_normal")}


def _out_dtype(a, default=_F32) -> np.dtype:
    return np.dtype(a.dtype) if a.dtype is not None else np.dtype(default)


def _np_shape_on() -> bool:
    from hybridgraph.util import is_np_shape  # noqa: PLC0415 - util imports nd
    return is_np_shape()


def _need_shape(op: str, shape) -> tuple:
    """The sample shape; () is a 0-d sample under numpy shape semantics (MXNet), else missing."""
    if not shape and not (shape is not None and _np_shape_on()):
        raise ShapeError(f"operator {op}: attribute 'shape' is required to draw samples (got {shape!r}); "
                         "pass shape=(...) or out=")
    return tuple(shape)


# -- _random_<dist> and _random_<dist>_like -------------------------------------------

def _register_random(dist: Dist) -> None:
    name = f"_random_{dist.name}"

    def forward(xp, a):
        values = {p: getattr(a, p) for p in dist.params}
        dist.validate(name, xp, values)
        size = _need_shape(name, a.shape)
        return (dist.draw(xp, rng.generator(xp), list(values.values()), size, _out_dtype(a)),)

    register(name, inputs=(), aliases=_RANDOM_ALIASES.get(dist.name, (f"random_{dist.name}",)),
             attrs={**dist.params, "shape": _shape_attr(), "ctx": _ctx_attr(), "dtype": _dtype_attr()},
             infer_shape=lambda a: ([], [tuple(a.shape) if a.shape or (a.shape is not None and _np_shape_on())
                                         else None]),
             infer_type=lambda a, *t: ([], [_out_dtype(a)]), gradient=ZERO_GRAD, is_random=True,
             doc=dist.doc)(forward)

    def forward_like(xp, a, data):
        if data.dtype.kind != "f":
            raise DTypeError(f"operator {name}_like: this operation only supports floating point types, "
                             f"not {data.dtype}")
        values = {p: getattr(a, p) for p in dist.params}
        dist.validate(name + "_like", xp, values)
        return (dist.draw(xp, rng.generator(xp), list(values.values()), data.shape, data.dtype),)

    register(name + "_like",
             monitor_inputs="input", inputs=("data",), attrs=dict(dist.params), infer_shape=_same_shape_io,
             gradient=ZERO_GRAD, is_random=True, fluent=False,
             doc=dist.doc + " The output has the shape and dtype of `data`.")(forward_like)


def _same_shape_io(a, data):
    return [data], [data]


# -- _sample_<dist>: array parameters ----------------------------------------------------

def _register_sample(dist: Dist) -> None:
    name = f"_sample_{dist.name}"
    inputs = {"normal": ("mu", "sigma")}.get(dist.name, tuple(dist.params))

    def forward(xp, a, *params):
        shape = params[0].shape
        for n, p in zip(inputs, params):
            if p.shape != shape:
                raise ShapeError(f"operator {name}: input {n!r} has shape {p.shape}, expected {shape} "
                                 f"(the shape of {inputs[0]!r})")
        size = shape + tuple(a.shape)
        cols = (Ellipsis,) + (None,) * len(a.shape)
        values = {p: v[cols].astype(np.float64) for p, v in zip(dist.params, params)}
        dist.validate(name, xp, values)
        return (dist.draw(xp, rng.generator(xp), list(values.values()), size, _out_dtype(a)),)

    def infer_shape(a, *shapes):
        s = None
        for n, x in zip(inputs, shapes):
            try:
                s = merge_shape(s, x)
            except ShapeError:
                raise ShapeError(f"operator {name}: input {n!r} has shape {x}, expected {s}") from None
        return [s] * len(shapes), [None if s is None else tuple(s) + tuple(a.shape)]

    def infer_type(a, *dtypes):
        known = [d for d in dtypes if d is not None]
        t = known[0] if known else None
        return [t] * len(dtypes), [_out_dtype(a)]

    register(name, inputs=inputs, aliases=(f"sample_{dist.name}",),
             attrs={"shape": _shape_attr(()), "dtype": _dtype_attr()},
             infer_shape=infer_shape, infer_type=infer_type, gradient=ZERO_GRAD, is_random=True,
             fluent=False,
             doc=f"{dist.doc} Parameters are arrays of one shape; `shape` samples are drawn per entry, "
                 "so the output has shape `param.shape + shape`.")(forward)


for _dist in DISTS.values():
    _register_random(_dist)
    _register_sample(_dist)


# -- randint ---------------------------------------------------------------------------------

def _randint_dtype(a) -> np.dtype:
    return _out_dtype(a, np.int32)


@register("_random_randint", inputs=(), aliases=("random_randint",), is_random=True, gradient=ZERO_GRAD,
          attrs={"low": Attr("int", REQUIRED, "Lower bound of the distribution."),
                 "high": Attr("int", REQUIRED, "Upper bound of the distribution."),
                 "shape": _shape_attr(), "ctx": _ctx_attr(),
                 "dtype": _dtype_attr(("int32", "int64"), "int32")},
          infer_shape=lambda a: ([], [tuple(a.shape) if a.shape else None]),
          infer_type=lambda a, *t: ([], [_randint_dtype(a)]))
def _random_randint(xp, a):
    """Draw random integers uniformly from the half-open interval [low, high)."""
    dtype = _randint_dtype(a)
    if a.high <= a.low:
        raise AttrError(f"operator _random_randint: high must be greater than low; got low={a.low}, "
                        f"high={a.high}")
    info = np.iinfo(dtype)
    if a.low < info.min or a.high - 1 > info.max:
        raise AttrError(f"operator _random_randint: [low, high) = [{a.low}, {a.high}) does not fit dtype "
                        f"{dtype.name}; use dtype='int64'")
    size = _need_shape("_random_randint", a.shape)
    return (rng.generator(xp).integers(a.low, a.high, size=size, dtype=dtype),)


# -- multinomial ----------------------------------------------------------------------------

def _multinomial_outputs(a):
    """MXNet names them as for any op without output names: output, or output0/output1."""
    return ("output0", "output1") if a.get_prob else ("output",)


def _multinomial_shape(a, data):
    if data is None:
        return None
    if len(data) == 0:
        raise ShapeError("operator _sample_multinomial: input 'data' must have at least 1 dimension, got ()")
    lead = tuple(data[:-1]) + tuple(a.shape)
    out = lead if lead else (1,)
    return [data], [out] * (2 if a.get_prob else 1)


def _multinomial_type(a, data):
    sample = np.dtype(a.dtype)
    if data is None:
        return None
    return [data], [sample, data] if a.get_prob else [sample]


def _inverse_cdf(xp, rows, u):
    """Per row, the first class whose cumulative probability exceeds u (MXNet's rule;
    the last class when the probabilities sum to less than u). One searchsorted over
    all rows: row r's cumulative sums are shifted by r * stride so rows never overlap."""
    nrows, k = rows.shape
    cdf = xp.cumsum(rows, axis=1)
    stride = float(xp.abs(cdf).max()) + 2.0 if cdf.size else 1.0
    shift = (xp.arange(nrows, dtype=np.float64) * stride)[:, None]
    pos = xp.searchsorted((cdf + shift).ravel(), (u + shift).ravel(), side="right").reshape(u.shape)
    return xp.clip(pos - xp.arange(nrows)[:, None] * k, 0, k - 1)


@register("_sample_multinomial",
          monitor_inputs="input", inputs=("data",), aliases=("sample_multinomial",), is_random=True,
          outputs=_multinomial_outputs, fluent=False,
          attrs={"shape": _shape_attr(()),
                 "get_prob": Attr("bool", False, "Whether to also return the log probability of sampled "
                                  "result. This is usually used for differentiating through stochastic "
                                  "variables, e.g. in reinforcement learning."),
                 "dtype": Attr("dtype", "int32", "DType of the output in case this can't be inferred.",
                               choices=("float16", "float32", "float64", "int32", "uint8"))},
          infer_shape=_multinomial_shape, infer_type=_multinomial_type)
def _sample_multinomial(xp, a, data):
    """Concurrent sampling from multiple multinomial distributions: `data` holds
    probabilities on its last axis; `shape` samples are drawn from each row."""
    if data.ndim == 0:
        raise ShapeError("operator _sample_multinomial: input 'data' must have at least 1 dimension, got ()")
    k = data.shape[-1]
    rows = data.reshape(-1, k).astype(np.float64)
    if rows.size and not bool(xp.all(rows >= 0)):
        raise ValueError("operator _sample_multinomial: input 'data' must hold probabilities (>= 0 and "
                         "summing to 1 on the last axis); got negative or NaN entries")
    n = int(np.prod(a.shape, dtype=np.int64)) if a.shape else 1
    idx = _inverse_cdf(xp, rows, rng.generator(xp).random((rows.shape[0], n)))
    lead = data.shape[:-1] + tuple(a.shape)
    shape = lead if lead else (1,)
    sample = idx.reshape(shape).astype(a.dtype)
    if not a.get_prob:
        return (sample,)
    picked = xp.take_along_axis(rows, idx, axis=1)
    return sample, xp.log(picked).astype(data.dtype).reshape(shape)


@_sample_multinomial.def_gradient
def _multinomial_gradient(F, a, inputs, outputs, ograds):
    """d log p[sample] / d p = 1 / p at each sampled class; no gradient through the samples."""
    if not a.get_prob:
        return [F.zeros_like(inputs[0])]
    return [F._backward_sample_multinomial(ograds[1], inputs[0], outputs[0], shape=a.shape,
                                           get_prob=a.get_prob, dtype=a.dtype)]


@register("_backward_sample_multinomial", inputs=("ograd", "data", "sample"), fluent=False,
          attrs={"shape": _shape_attr(()), "get_prob": Attr("bool", True, "Unused (kept from the forward)."),
                 "dtype": Attr("dtype", "int32", "Unused (kept from the forward).")},
          infer_shape=lambda a, g, d, s: ([g, d, s], [d]),
          infer_type=lambda a, g, d, s: None if d is None else ([d, d, s], [d]))
def _backward_sample_multinomial(xp, a, ograd, data, sample):
    """Gradient of the log-probabilities: ograd / p scattered onto the sampled classes."""
    k = data.shape[-1]
    rows = data.reshape(-1, k)
    idx = sample.reshape(rows.shape[0], -1).astype(np.int64)
    g = ograd.reshape(idx.shape).astype(data.dtype) / xp.take_along_axis(rows, idx, axis=1)
    grad = xp.zeros_like(rows)
    for_rows = xp.broadcast_to(xp.arange(rows.shape[0])[:, None], idx.shape)
    xp.add.at(grad, (for_rows, idx), g)
    return (grad.reshape(data.shape),)


# -- shuffle ---------------------------------------------------------------------------------

@register("_shuffle", monitor_inputs="input", inputs=("data",), aliases=("shuffle",), is_random=True, fluent=False,
          infer_shape=_same_shape_io)
def _shuffle(xp, a, data):
    """Shuffle the array along its first axis (rows move, each row is unchanged);
    the input is not modified."""
    if data.ndim == 0:
        raise ShapeError("operator _shuffle: input 'data' must have at least 1 dimension, got shape ()")
    return (data[xp.argsort(rng.generator(xp).random(data.shape[0]))],)
