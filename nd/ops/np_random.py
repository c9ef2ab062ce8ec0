"""`mx.np.random` / `mx.npx.random` samplers with MXNet 1.9.1's operator names and attributes:
`_npi_normal`, `_npi_logistic`, `_npi_gumbel`, `_npi_exponential`, `_npi_rayleigh`,
`_npi_weibull`, `_npi_pareto` (reparameterised: a hidden `noise` output and a gradient with
respect to array parameters, as MXNet's `_backward_broadcast_*`), `_npi_gamma`, `_npi_powerd`,
`_npi_bernoulli`, `_npi_normal_n`, `_npi_uniform_n` (zero gradients, as MXNet) and
`_npx_constraint_check`.

A parameter is an attribute, or an array input (`input1`, `input2` in parameter order) when the
attribute is None; `size` None means the parameters' broadcast shape. Samples come from the
per-device generator (`mx.random.seed` / `npx.random.seed` reproduce them). Invalid parameters
raise AttrError (a ValueError), as MXNet raises ValueError.
"""
from __future__ import annotations

import numpy as np

from .. import rng
from ..attrs import Attr
from ..errors import AttrError, DTypeError
from ..registry import ZERO_GRAD, register
from .np_init import _ctx_attr
from .reduce import sum_to_shape


def _kind(dtype) -> np.dtype:
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)


# noise(gen, size, float dtype) -> standard sample; out(params, noise) -> sample;
# dparams(params, noise, out) -> d out / d param (one per parameter)
_FAMILIES = {
    "normal": (("loc", 0.0), ("scale", 1.0)),
    "logistic": (("loc", 0.0), ("scale", 1.0)),
    "gumbel": (("loc", 0.0), ("scale", 1.0)),
    "exponential": (("scale", 1.0),),
    "rayleigh": (("scale", 1.0),),
    "weibull": (("a", None),),
    "pareto": (("a", None),),
}


def _noise(dist: str, gen, size, dt):
    if dist == "normal":
        return gen.standard_normal(size, dtype=dt)
    if dist in ("exponential", "weibull", "pareto"):
        return gen.standard_exponential(size, dtype=dt)
    u = gen.random(size, dtype=dt)
    tiny = np.finfo(dt).tiny
    if dist == "logistic":
        u = np.clip(u, tiny, 1 - np.finfo(dt).eps)
        return np.log(u) - np.log1p(-u)
    if dist == "gumbel":
        return -np.log(-np.log(np.maximum(u, tiny)))
    return np.sqrt(-2.0 * np.log1p(-u))      # rayleigh


def _sample(dist: str, p: list, noise):
    if dist in ("normal", "logistic", "gumbel"):
        return p[0] + p[1] * noise
    if dist in ("exponential", "rayleigh"):
        return p[0] * noise
    if dist == "weibull":
        return noise ** (1.0 / p[0])
    return np.expm1(noise / p[0])             # pareto (Lomax, as numpy's pareto)


def _dparams(dist: str, p: list, noise, out) -> list:
    if dist in ("normal", "logistic", "gumbel"):
        return [np.ones_like(noise), noise]
    if dist in ("exponential", "rayleigh"):
        return [noise]
    if dist == "weibull":   # d/da E^(1/a) = -out log(out) / a
        safe = np.where(out > 0, out, 1)
        return [-out * np.log(safe) / p[0]]
    return [-(out + 1) * np.log1p(out) / p[0]]   # pareto: d/da expm1(E/a)


def _check(op: str, dist: str, p: list) -> None:
    rules = {"scale": (lambda v: v >= 0, "scale must be non-negative"),
             "a": (lambda v: v > 0, "a must be greater than 0")}
    for (name, _), v in zip(_FAMILIES[dist], p):
        rule = rules.get(name)
        if rule is not None and not bool(np.all(rule[0](np.asarray(v)))):
            raise AttrError(f"operator {op}: {rule[1]}, got {name}={v if np.ndim(v) == 0 else 'an array'}")


def _param_inputs(names: tuple):
    def inputs(a):
        n = sum(a.get(p) is None for p in names)
        return tuple(f"input{i + 1}" for i in range(n))
    return inputs


def _params(a, names: tuple, arrays) -> list:
    it = iter(arrays)
    return [next(it) if a.get(p) is None else a.get(p) for p in names]


def _size(a, arrays) -> tuple:
    if a.size is not None:
        return tuple(a.size)
    return tuple(np.broadcast_shapes(*[x.shape for x in arrays])) if arrays else ()


def _size_shape(a, *shapes):
    if a.size is not None:
        out = tuple(a.size)
        if shapes and all(s is not None for s in shapes):
            np.broadcast_shapes(out, *shapes)   # parameters must broadcast to the size (numpy's rule)
        return list(shapes), [out]
    if any(s is None for s in shapes):
        return None
    return list(shapes), [tuple(np.broadcast_shapes(*shapes)) if shapes else ()]


def _float_out(a) -> np.dtype:
    dt = np.dtype(a.get("dtype") or "float32")
    if dt.kind != "f":
        raise DTypeError(f"the sample dtype must be a float type, got {dt}")
    return dt


def _sampler_attrs(names: tuple, with_dtype: bool) -> dict:
    attrs = {n: Attr("float", None, f"The {n} parameter (None: an array input).") for n in names}
    attrs.update({"size": Attr("shape", None, "Output shape (None: the parameters' broadcast shape)."),
                  "ctx": _ctx_attr()})
    if with_dtype:
        attrs["dtype"] = Attr("dtype", "float32", "The dtype of the samples.")
    return attrs


def _register_reparam(dist: str) -> None:
    names = tuple(n for n, _ in _FAMILIES[dist])
    op_name, back_name = f"_npi_{dist}", f"_backward_broadcast_{dist}"
    with_dtype = dist == "normal"

    def forward(xp, a, *arrays):
        p = _params(a, names, arrays)
        _check(op_name, dist, p)
        dt = _float_out(a) if with_dtype else np.dtype("float32")
        noise = _noise(dist, rng.generator(xp), _size(a, arrays), _kind(dt))
        out = _sample(dist, [np.asarray(v, dtype=_kind(dt)) if np.ndim(v) else v for v in p], noise)
        return xp.asarray(out, dtype=dt), xp.asarray(noise, dtype=dt)

    def infer_shape(a, *shapes):
        res = _size_shape(a, *shapes)
        return None if res is None else (res[0], res[1] * 2)

    def infer_type(a, *t):
        dt = _float_out(a) if with_dtype else np.dtype("float32")
        return list(t), [dt, dt]

    def gradient(F, a, inputs, outputs, ograds):
        if not inputs:
            return []
        res = getattr(F, back_name)(ograds[0], *inputs, outputs[0], outputs[1], **a.values())
        return list(res) if len(inputs) > 1 else [res]

    def backward(xp, a, g, *rest):
        arrays, out, noise = rest[:-2], rest[-2], rest[-1]
        p = _params(a, names, arrays)
        grads, it = [], iter(_dparams(dist, p, noise, out))
        for name, v in zip(names, p):
            d = next(it)
            if a.get(name) is None:
                grads.append(sum_to_shape(xp, g * d, v.shape).astype(v.dtype, copy=False))
        return tuple(grads)

    register(op_name, inputs=_param_inputs(names), outputs=("output", "noise"), num_visible_outputs=1,
             attrs=_sampler_attrs(names, with_dtype), infer_shape=infer_shape, infer_type=infer_type,
             gradient=gradient, is_random=True, hint=dist,
             doc=f"numpy.random.{dist}, reparameterised (differentiable in its array parameters).")(forward)
    register(back_name, inputs=lambda a: ("ograd",) + _param_inputs(names)(a) + ("sample", "noise"),
             outputs=lambda a: tuple(f"grad_{n}" for n in names if a.get(n) is None),
             attrs=_sampler_attrs(names, with_dtype), public=False, fluent=False,
             infer_shape=lambda a, g, *s: None if any(x is None for x in s) else ([g, *s], list(s[:-2])),
             infer_type=lambda a, g, *t: None if any(x is None for x in t) else ([g, *t], list(t[:-2])),
             doc=f"numpy.random.{dist}'s gradient with respect to its array parameters.")(backward)


for _dist in _FAMILIES:
    _register_reparam(_dist)


# -- samplers without gradients (MXNet's MakeZeroGradNodes) ----------------------------------

def _register_plain(op_name: str, names: tuple, draw, check, doc: str, size_attr: str = "size",
                    extra: dict | None = None, batch: bool = False) -> None:
    def forward(xp, a, *arrays):
        p = _params(a, names, arrays)
        check(op_name, a, p)
        dt = np.dtype(a.dtype or "float32")
        shape = _size(a, arrays) if not batch else (tuple(a.size or ()) + _size(_NoSize, arrays))
        return (xp.asarray(draw(rng.generator(xp), a, p, shape, dt), dtype=dt),)

    def infer_shape(a, *shapes):
        if batch:
            if any(s is None for s in shapes):
                return None
            return list(shapes), [tuple(a.size or ()) + (tuple(np.broadcast_shapes(*shapes)) if shapes else ())]
        return _size_shape(a, *shapes)

    attrs = {n: Attr("float", None, f"The {n} parameter (None: an array input).") for n in names}
    attrs.update(extra or {})
    attrs.update({"size": Attr("shape", None, "Output shape (None: the parameters' broadcast shape)."),
                  "ctx": _ctx_attr(), "dtype": Attr("dtype", "float32", "The dtype of the samples.")})
    register(op_name, inputs=_param_inputs(names), attrs=attrs, infer_shape=infer_shape,
             infer_type=lambda a, *t: (list(t), [np.dtype(a.dtype or "float32")]), gradient=ZERO_GRAD,
             is_random=True, hint=op_name[5:], doc=doc)(forward)


class _NoSize:
    size = None


def _gamma_check(op, a, p):
    for name, v in zip(("shape", "scale"), p):
        if not bool(np.all(np.asarray(v) > 0)):
            raise AttrError(f"operator {op}: {name} must be greater than 0, got "
                            f"{v if np.ndim(v) == 0 else 'an array with non-positive values'}")


def _positive_a(op, a, p):
    if not bool(np.all(np.asarray(p[0]) > 0)):
        raise AttrError(f"operator {op}: a must be greater than 0")


def _any_bounds(op, a, p):
    """uniform_n takes any bounds (high < low draws from (high, low]), as MXNet."""


def _normal_check(op, a, p):
    if not bool(np.all(np.asarray(p[1]) >= 0)):
        raise AttrError(f"operator {op}: scale must be non-negative")


def _draw_gamma(gen, a, p, size, dt):
    return gen.standard_gamma(np.asarray(p[0], dtype=np.float64), size) * np.asarray(p[1], dtype=np.float64)


def _draw_power(gen, a, p, size, dt):
    return np.power(-np.expm1(-gen.standard_exponential(size)), 1.0 / np.asarray(p[0], dtype=np.float64))


def _draw_uniform_n(gen, a, p, size, dt):
    return p[0] + (np.asarray(p[1]) - p[0]) * gen.random(size)


def _draw_normal_n(gen, a, p, size, dt):
    return p[0] + np.asarray(p[1]) * gen.standard_normal(size)


_register_plain("_npi_gamma", ("shape", "scale"), _draw_gamma, _gamma_check,
                "numpy.random.gamma (shape k, scale theta).")
_register_plain("_npi_powerd", ("a",), _draw_power, _positive_a,
                "numpy.random.power: samples in [0, 1] with density a x^(a-1).")
_register_plain("_npi_uniform_n", ("low", "high"), _draw_uniform_n, _any_bounds,
                "npx.random.uniform_n: `size` (the batch shape) + the parameters' broadcast shape.", batch=True)
_register_plain("_npi_normal_n", ("loc", "scale"), _draw_normal_n, _normal_check,
                "npx.random.normal_n: `size` (the batch shape) + the parameters' broadcast shape.", batch=True)


def _bernoulli_check(op, a, p):
    if not a.is_logit and not bool(np.all((np.asarray(p[0]) >= 0) & (np.asarray(p[0]) <= 1))):
        raise AttrError(f"operator {op}: prob must be in [0, 1]")


def _draw_bernoulli(gen, a, p, size, dt):
    prob = np.asarray(p[0], dtype=np.float64)
    if a.is_logit:
        prob = 1.0 / (1.0 + np.exp(-prob))
    return (gen.random(size) < prob).astype(dt)


def _bernoulli(xp, a, *arrays):
    p = [arrays[0] if arrays else (a.logit if a.is_logit else a.prob)]
    if p[0] is None:
        raise AttrError("operator _npi_bernoulli: give prob or logit (an attribute or an input)")
    _bernoulli_check("_npi_bernoulli", a, p)
    dt = np.dtype(a.dtype or "float32")
    return (xp.asarray(_draw_bernoulli(rng.generator(xp), a, p, _size(a, arrays), dt), dtype=dt),)


register("_npi_bernoulli", inputs=lambda a: ("input1",) if a.prob is None and a.logit is None else (),
         attrs={"prob": Attr("float", None, "Probability of 1 (None: an input or logit)."),
                "logit": Attr("float", None, "Log-odds of 1 (None: an input or prob)."),
                "is_logit": Attr("bool", False, "Whether the input holds log-odds."),
                "size": Attr("shape", None, "Output shape (None: the parameter's shape)."),
                "ctx": _ctx_attr(), "dtype": Attr("dtype", "float32", "The dtype of the samples (0 and 1).")},
         infer_shape=_size_shape, infer_type=lambda a, *t: (list(t), [np.dtype(a.dtype or "float32")]),
         gradient=ZERO_GRAD, is_random=True, hint="bernoulli",
         doc="npx.random.bernoulli: 1 with probability prob (or sigmoid(logit)), else 0.")(_bernoulli)


@register("_npx_constraint_check", inputs=("input",), hint="constraint_check", gradient=ZERO_GRAD,
          attrs={"msg": Attr("str", "Constraint violated.", "The error message when the constraint fails.")},
          infer_shape=lambda a, s: None if s is None else ([s], [()]),
          infer_type=lambda a, t: None if t is None else ([t], [np.dtype(bool)]))
def _npx_constraint_check(xp, a, x):
    """True (0-d bool) when every element of the boolean input is true; ValueError otherwise."""
    if x.dtype != np.bool_:
        raise DTypeError(f"operator _npx_constraint_check: the input must be bool, got {x.dtype}")
    if not bool(xp.all(x)):
        raise AttrError(a.msg)
    return (xp.asarray(True),)


# -- multivariate normal ----------------------------------------------------------------------

def _mvn_shape(a, ms, cs):
    if ms is None or cs is None:
        return None
    if len(ms) < 1 or len(cs) < 2 or cs[-1] != cs[-2] or ms[-1] != cs[-1]:
        raise AttrError(f"operator _npi_mvn_fallback: mean (..., N) and cov (..., N, N) do not match: "
                        f"{tuple(ms)} and {tuple(cs)}")
    batch = tuple(np.broadcast_shapes(tuple(ms), tuple(cs[:-1])))
    return [ms, cs], [tuple(a.size or ()) + batch]


@register("_npi_mvn_fallback", inputs=("mean", "cov"), hint="mvn_fallback", gradient=ZERO_GRAD, is_random=True,
          attrs={"size": Attr("shape", None, "Leading sample shape (None: one sample per batch entry)."),
                 "ctx": _ctx_attr()},
          infer_shape=_mvn_shape, infer_type=lambda a, tm, tc: None if tm is None else ([tm, tc], [tm]))
def _npi_mvn_fallback(xp, a, mean, cov):
    """numpy.random.multivariate_normal over broadcast batches: mean + A z with A A^T = cov
    (A from the eigen-decomposition, so positive semi-definite covariances work)."""
    (_, _), (out_shape,) = _mvn_shape(a, mean.shape, cov.shape)
    w, v = np.linalg.eigh(np.asarray(cov, dtype=np.float64))
    factor = v * np.sqrt(np.maximum(w, 0))[..., None, :]
    z = rng.generator(xp).standard_normal(out_shape)
    out = np.asarray(mean, dtype=np.float64) + np.matmul(factor, z[..., None])[..., 0]
    return (xp.asarray(out, dtype=mean.dtype),)
