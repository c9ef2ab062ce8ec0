"""Optimizer update operators (`sgd_update`, `adam_update`, ...), as MXNet 1.9.1
declares them in src/operator/optimizer_op.cc.

Each op returns the updated weight and updates its state inputs (momentum,
moments, history, fp32 master weights) in place, so the states are declared in
`mutate_inputs`. The weight input itself is only written when the caller passes
`out=weight`, as in MXNet. None of them is differentiable.

Two MXNet details are kept on purpose: gradient clipping is on whenever
`clip_gradient >= 0` (so 0 clips every gradient to 0, although the attribute
doc says "<= 0 turns it off"), and some ops add `wd * weight` to the gradient
before clipping (adam, rmsprop, rmspropalex, ftml) while others do not.
All arithmetic happens in the weight's dtype, or in float32 for the `mp_` ops,
with the attributes rounded to float32 as MXNet stores them.

Two MXNet defects are not copied. NAG's momentum uses the weight from before the
step, as documented: MXNet's NAGMomKernel writes the new weight before it computes
the momentum's `wd * weight` term, so whenever the output aliases the weight
(always for mp_nag_mom_update, and for nag_mom_update called with out=weight, as
MXNet's NAG optimizer does) that term uses the updated weight. And
mp_lamb_update_phase2 writes the new master weight back to weight32 (MXNet's never
does, so its float32 master copy never advances).
"""
from __future__ import annotations

import numpy as np

from ..attrs import REQUIRED, Attr
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import merge_shape, register
from . import optim_jit

_F32 = np.dtype(np.float32)


# -- attribute declarations ----------------------------------------------------

def _lr() -> Attr:
    return Attr("float", doc="Learning rate")


def _wd(default=0.0) -> Attr:
    return Attr("float", default, "Weight decay augments the objective function with a regularization term that "
                "penalizes large weights. The penalty scales with the square of the magnitude of each weight.")


def _rescale() -> Attr:
    return Attr("float", 1.0, "Rescale gradient to grad = rescale_grad*grad.")


def _clip(name="clip_gradient") -> dict:
    return {name: Attr("float", -1.0, "Clip gradient to the range of [-clip_gradient, clip_gradient] If "
                       "clip_gradient <= 0, gradient clipping is turned off. "
                       "grad = max(min(grad, clip_gradient), -clip_gradient).")}


def _clip_weights() -> Attr:
    return Attr("float", -1.0, "Clip weights to the range of [-clip_weights, clip_weights] If clip_weights <= 0, "
                "weight clipping is turned off. weights = max(min(weights, clip_weights), -clip_weights).")


def _momentum() -> Attr:
    return Attr("float", 0.0, "The decay rate of momentum estimates at each epoch.")


def _lazy(doc="If true, lazy updates are applied if gradient's stype is row_sparse.") -> Attr:
    return Attr("bool", True, doc)


def _epsilon(default) -> Attr:
    return Attr("float", default, "A small constant for numerical stability.")


SGD_ATTRS = {"lr": _lr(), "wd": _wd(), "rescale_grad": _rescale(), **_clip()}
MOM_ATTRS = {"lr": _lr(), "momentum": _momentum(), "wd": _wd(), "rescale_grad": _rescale(), **_clip()}
_LAZY_MOM = ("If true, lazy updates are applied if gradient's stype is row_sparse and both weight and "
             "momentum have the same stype")


# -- shared rules ----------------------------------------------------------------

def _same_shapes(name: str, inputs: tuple, scalars: tuple = ()):
    """infer_shape: every input but the `scalars` (shape (1,)) has the weight's shape."""
    def infer(a, *shapes):
        s = None
        for n, x in zip(inputs, shapes):
            if n in scalars:
                continue
            try:
                s = merge_shape(s, x)
            except ShapeError:
                raise ShapeError(f"operator {name}: input {n!r} has shape {x}, expected the weight's shape "
                                 f"{s}") from None
        outs = []
        for n, x in zip(inputs, shapes):
            if n in scalars:
                if x is not None and (len(x) == 0 or x[0] not in (0, 1)):
                    raise ShapeError(f"operator {name}: input {n!r} must have shape (1,), got {x}")
                outs.append(x if x is not None else (1,))
            else:
                outs.append(s)
        return outs, [s]
    return infer


def _float_types(name: str, inputs: tuple, n_low: int | None = None, out_f32: bool = False):
    """infer_type: the first `n_low` inputs (all when None) share one floating dtype,
    the rest are float32 (MXNet's MP_*_InferType); the output has the shared dtype
    (or float32 when `out_f32`)."""
    n_low = len(inputs) if n_low is None else n_low

    def infer(a, *dtypes):
        t = None
        for n, d in zip(inputs[:n_low], dtypes[:n_low]):
            if d is None:
                continue
            if t is None:
                t = d
            elif d != t:
                raise DTypeError(f"operator {name}: input {n!r} has dtype {d}, expected {t} (the weight's)")
        for n, d in zip(inputs[n_low:], dtypes[n_low:]):
            if d is not None and d != _F32:
                raise DTypeError(f"operator {name}: input {n!r} must be float32, got {d}")
        if t is not None and t.kind != "f":
            raise DTypeError(f"operator {name}: this operation only supports floating point types, not {t}")
        if t is None:
            return None
        return [t] * n_low + [_F32] * (len(inputs) - n_low), [_F32 if out_f32 else t]
    return infer


def _check(name: str, inputs: tuple, arrays: tuple, n_low: int | None = None) -> None:
    """Eager-time shape/dtype checks (the executor has run infer_* already)."""
    w = arrays[0]
    dt, shape = w.dtype, w.shape
    if n_low is None and dt.kind == "f":
        for x in arrays:
            if x.dtype != dt or x.shape != shape:
                break
        else:
            return  # the common case: every input has the weight's floating dtype and shape
    n_low = len(inputs) if n_low is None else n_low
    _float_types(name, inputs, n_low)(None, *[x.dtype for x in arrays])
    for n, x in zip(inputs, arrays):
        if n in ("r1", "r2"):
            if x.ndim == 0 or x.shape[0] != 1 or x.size != 1:
                raise ShapeError(f"operator {name}: input {n!r} must have shape (1,), got {x.shape}")
        elif x.shape != shape:
            raise ShapeError(f"operator {name}: input {n!r} has shape {x.shape}, expected the weight's shape {shape}")


def _grad(xp, a, g, *, w=None, wd: float = 0.0, dtype=None):
    """rescale_grad * g (+ wd * w), clipped to [-clip, clip] when clip_gradient >= 0."""
    r = g.astype(dtype, copy=False) * a.rescale_grad if dtype is not None else g * a.rescale_grad
    if w is not None and wd:
        r = r + wd * w
    clip = a.get("clip_gradient")
    if clip is None:  # ftml_update calls it clip_grad
        clip = a.clip_grad
    if clip >= 0:
        r = xp.clip(r, -clip, clip)
    return r


def _grad_into(xp, a, g, s, *, w=None, wd: float = 0.0):
    """`_grad` written into the scratch buffer `s` (same operations, so the same values)."""
    if a.rescale_grad != 1.0 and g.dtype == s.dtype:
        xp.multiply(g, a.rescale_grad, out=s)
    else:                       # mp_ kernels: cast to float32 first, as `_grad` does
        xp.copyto(s, g)
        if a.rescale_grad != 1.0:
            s *= a.rescale_grad
    if w is not None and wd:
        s += wd * w
    clip = a.clip_gradient
    if clip >= 0:
        xp.clip(s, -clip, clip, out=s)
    return s


def _lr_grad_into(xp, a, g, s):
    """lr * _grad(g) (no weight decay) into the scratch buffer `s`. Without clipping this is
    MXNet's `(lr * rescale_grad) * grad`: the two factors multiplied first, in grad's dtype,
    then one pass over the gradient."""
    if a.clip_gradient < 0 and g.dtype == s.dtype:
        dt = g.dtype.type
        return xp.multiply(g, dt(a.lr) * dt(a.rescale_grad), out=s)
    _grad_into(xp, a, g, s)
    s *= a.lr
    return s


class _Float32Params:
    """The attributes as the kernels see them: MXNet declares them `float`, so e.g.
    lr=0.1 is 0.100000001490116 even when the weights are float64. Values are plain
    instance attributes, converted once per parsed Attrs (see `_params`)."""

    def __init__(self, a, exact: tuple = ()):
        for k, v in a.values().items():
            setattr(self, k, float(np.float32(v)) if isinstance(v, float) and k not in exact else v)

    def get(self, name: str, default=None):
        v = getattr(self, name, None)
        return default if v is None else v


_PARAMS: dict = {}


def _params(a, exact: tuple) -> _Float32Params:
    """The converted attributes of one Attrs object (cached: kernels are called with the same
    parsed Attrs over and over, by the eager attribute cache and by compiled plans)."""
    hit = _PARAMS.get(id(a))
    if hit is not None and hit[0] is a:
        return hit[1]
    p = _Float32Params(a, exact)
    if len(_PARAMS) > 4096:
        _PARAMS.clear()
    _PARAMS[id(a)] = (a, p)    # keeps `a` alive, so its id is not reused while cached
    return p


def _optimizer(name: str, inputs: tuple, attrs: dict, *, mutate: tuple = (), n_low: int | None = None,
               scalars: tuple = (), out_f32: bool = False, exact: tuple = (), direct: bool = False, **kwargs):
    """Register one update op (non-differentiable, no fluent method). Attributes named
    in `exact` are double precision in MXNet; every other float attribute is float32.

    Every update op accepts `out=(buffer,)` (which may be the weight itself). `direct`
    kernels take `out=` and write the new weight there without a temporary; the others
    return a new array that is copied into the buffer."""
    def wrap(fn):
        def forward(xp, a, *arrays, out=None):
            _check(name, inputs, arrays, n_low)
            p = _params(a, exact)
            if direct:
                return (fn(xp, p, *arrays, out=None if out is None else out[0]),)
            res = fn(xp, p, *arrays)
            if out is None:
                return (res,)
            out[0][...] = res
            return (out[0],)
        forward.__doc__ = fn.__doc__
        return register(name, monitor_inputs="input", inputs=inputs, attrs=attrs, mutate_inputs=mutate, fluent=False,
                        writes_out=True, inplace=((0, 0),),
                        infer_shape=_same_shapes(name, inputs, scalars),
                        infer_type=_float_types(name, inputs, n_low, out_f32), doc=fn.__doc__, **kwargs)(forward)
    return wrap


def _dest(xp, w, out):
    """Where a direct kernel writes the new weight: `out`, or a new array."""
    return xp.empty_like(w) if out is None else out


# -- SGD family ----------------------------------------------------------------

@_optimizer("sgd_update", ("weight", "grad"), {**SGD_ATTRS, "lazy_update": _lazy()},
            aliases=("_sparse_sgd_update",), direct=True)
def sgd_update(xp, a, w, g, out=None):
    """Update function for Stochastic Gradient Descent (SGD) optimizer:
    weight = weight - lr * (rescale_grad * grad + wd * weight)."""
    step = _lr_grad_into(xp, a, g, xp.empty_like(w))
    dst = _dest(xp, w, out)
    if a.wd:
        xp.multiply(w, 1.0 - a.lr * a.wd, out=dst)
    elif dst is not w:
        xp.copyto(dst, w)
    dst -= step
    return dst


@_optimizer("sgd_mom_update", ("weight", "grad", "mom"), {**MOM_ATTRS, "lazy_update": _lazy(_LAZY_MOM)},
            mutate=(2,), aliases=("_sparse_sgd_mom_update",), direct=True)
def sgd_mom_update(xp, a, w, g, mom, out=None):  # noqa: PLR0917 - one positional per input
    """Momentum SGD: mom = momentum * mom - lr * (grad + wd * weight); weight += mom."""
    dst = _dest(xp, w, out)
    compiled = optim_jit.kernels() if xp is np and a.clip_gradient < 0 else None
    if compiled is not None and optim_jit.applies(w, g, mom, dst):    # the passes below, as one
        dt = w.dtype.type
        optim_jit.sgd_mom(compiled, w, g, mom, dst, dt(a.momentum), dt(a.lr * a.wd),
                          dt(a.lr) * dt(a.rescale_grad), bool(a.wd))
        return dst
    s = xp.empty_like(w)
    mom *= a.momentum
    if a.wd:
        mom -= xp.multiply(w, a.lr * a.wd, out=s)
    mom -= _lr_grad_into(xp, a, g, s)
    return xp.add(w, mom, out=dst)


@_optimizer("mp_sgd_update", ("weight", "grad", "weight32"), {**SGD_ATTRS, "lazy_update": _lazy()},
            mutate=(2,), n_low=2)
def mp_sgd_update(xp, a, w, g, w32):
    """Multi-precision SGD: the update runs on the float32 master copy `weight32`."""
    w32[...] = (1.0 - a.lr * a.wd) * w32 - a.lr * _grad(xp, a, g, dtype=_F32)
    return w32.astype(w.dtype)


@_optimizer("mp_sgd_mom_update", ("weight", "grad", "mom", "weight32"),
            {**MOM_ATTRS, "lazy_update": _lazy(_LAZY_MOM)}, mutate=(2, 3), n_low=2)
def mp_sgd_mom_update(xp, a, w, g, mom, w32):  # noqa: PLR0917 - one positional per input
    """Multi-precision momentum SGD on the float32 master copy `weight32`."""
    mom[...] = a.momentum * mom - a.lr * a.wd * w32 - a.lr * _grad(xp, a, g, dtype=_F32)
    w32 += mom
    return w32.astype(w.dtype)


def _nag_step(xp, a, w, g, mom, *, dtype=None, out=None):
    """Nesterov momentum: returns the new weight (written into `out`, which may be `w`);
    updates `mom` in place. Two scratch buffers.

    Both the weight and the momentum use the weight from before the step (see the
    module docstring for MXNet's in-place aliasing defect, not copied)."""
    r = xp.empty(w.shape, dtype=dtype or w.dtype)
    _grad_into(xp, a, g, r)
    t = None
    if a.wd:
        t = xp.multiply(w, a.wd, out=xp.empty_like(r))
        r += t
    r *= a.lr                                           # lr * r
    mom *= a.momentum
    mom -= r
    t = xp.multiply(mom, a.momentum, out=t)             # momentum * mom
    if out is w:
        w += t
    else:
        out = xp.add(w, t, out=out)
    out -= r
    return out


@_optimizer("nag_mom_update", ("weight", "grad", "mom"), MOM_ATTRS, mutate=(2,), direct=True)
def nag_mom_update(xp, a, w, g, mom, out=None):  # noqa: PLR0917 - one positional per input
    """Nesterov Accelerated Gradient: mom = momentum * mom - lr * g';
    weight = weight + momentum * mom - lr * g', with g' = grad + wd * weight."""
    return _nag_step(xp, a, w, g, mom, out=out)


@_optimizer("mp_nag_mom_update", ("weight", "grad", "mom", "weight32"), MOM_ATTRS, mutate=(2, 3), n_low=2)
def mp_nag_mom_update(xp, a, w, g, mom, w32):  # noqa: PLR0917 - one positional per input
    """Multi-precision Nesterov momentum on the float32 master copy `weight32`."""
    w32[...] = _nag_step(xp, a, w32, g, mom, dtype=_F32)
    return w32.astype(w.dtype)


@_optimizer("signsgd_update", ("weight", "grad"), SGD_ATTRS)
def signsgd_update(xp, a, w, g):
    """SignSGD: weight = (1 - lr * wd) * weight - lr * sign(grad) (rescale/clip do not change a sign)."""
    return (1.0 - a.lr * a.wd) * w - a.lr * xp.sign(g)


@_optimizer("signum_update", ("weight", "grad", "mom"),
            {**MOM_ATTRS, "wd_lh": Attr("float", 0.0, "The amount of weight decay that does not go into "
                                        "gradient/momentum calculationsotherwise do weight decay "
                                        "algorithmically only.")}, mutate=(2,))
def signum_update(xp, a, w, g, mom):
    """Signum: mom = momentum * mom - (1 - momentum) * (grad + wd * weight);
    weight = (1 - lr * wd_lh) * weight + lr * sign(mom)."""
    mom[...] = a.momentum * mom - (1 - a.momentum) * a.wd * w - (1 - a.momentum) * _grad(xp, a, g)
    return (1.0 - a.lr * a.wd_lh) * w + a.lr * xp.sign(mom)


# -- adaptive methods --------------------------------------------------------------

@_optimizer("adam_update", ("weight", "grad", "mean", "var"),
            {"lr": _lr(), "beta1": Attr("float", 0.9, "The decay rate for the 1st moment estimates."),
             "beta2": Attr("float", 0.999, "The decay rate for the 2nd moment estimates."),
             "epsilon": _epsilon(1e-8), "wd": _wd(), "rescale_grad": _rescale(), **_clip(),
             "lazy_update": _lazy("If true, lazy updates are applied if gradient's stype is row_sparse and all "
                                  "of w, m and v have the same stype")}, mutate=(2, 3),
            aliases=("_sparse_adam_update",), direct=True)
def adam_update(xp, a, w, g, mean, var, out=None):  # noqa: PLR0917 - one positional per input
    """Adam: m = beta1 m + (1-beta1) g; v = beta2 v + (1-beta2) g^2;
    weight -= lr * m / (sqrt(v) + epsilon), with g = clip(rescale_grad * grad + wd * weight)."""
    compiled = optim_jit.kernels() if out is w and xp is np and a.clip_gradient < 0 else None
    if compiled is not None and optim_jit.applies(w, g, mean, var):    # the passes below, as one
        optim_jit.adam(compiled, w, g, mean, var, a)
        return w
    r = _grad_into(xp, a, g, xp.empty_like(w), w=w, wd=a.wd)
    t = xp.empty_like(w)
    mean *= a.beta1
    mean += xp.multiply(r, 1.0 - a.beta1, out=t)
    xp.multiply(r, 1.0 - a.beta2, out=t)
    t *= r
    var *= a.beta2
    var += t
    xp.sqrt(var, out=t)
    t += a.epsilon
    xp.multiply(mean, a.lr, out=r)
    r /= t
    return xp.subtract(w, r, out=out)


def _clip_weights_of(xp, a, w):
    return xp.clip(w, -a.clip_weights, a.clip_weights) if a.clip_weights >= 0 else w


@_optimizer("rmsprop_update", ("weight", "grad", "n"),
            {"lr": _lr(), "gamma1": Attr("float", 0.95, "The decay rate of momentum estimates."),
             "epsilon": _epsilon(1e-8), "wd": _wd(), "rescale_grad": _rescale(), **_clip(),
             "clip_weights": _clip_weights()}, mutate=(2,))
def rmsprop_update(xp, a, w, g, n):
    """RMSProp (Tieleman & Hinton): n = (1-gamma1) g^2 + gamma1 n;
    weight -= lr * g / sqrt(n + epsilon), then weights clipped to clip_weights."""
    r = _grad(xp, a, g, w=w, wd=a.wd)
    n[...] = (1.0 - a.gamma1) * r * r + a.gamma1 * n
    return _clip_weights_of(xp, a, w - a.lr * (r / xp.sqrt(n + a.epsilon)))


@_optimizer("rmspropalex_update", ("weight", "grad", "n", "g", "delta"),
            {"lr": _lr(), "gamma1": Attr("float", 0.95, "Decay rate."), "gamma2": Attr("float", 0.9, "Decay rate."),
             "epsilon": _epsilon(1e-8), "wd": _wd(), "rescale_grad": _rescale(), **_clip(),
             "clip_weights": _clip_weights()}, mutate=(2, 3, 4))
def rmspropalex_update(xp, a, w, grad, n, g, delta):  # noqa: PLR0917 - one positional per input
    """Centered RMSProp (Graves 2013): n and g are running means of grad^2 and grad;
    delta = gamma2 delta - lr * grad / sqrt(n - g^2 + epsilon); weight += delta."""
    r = _grad(xp, a, grad, w=w, wd=a.wd)
    n[...] = (1.0 - a.gamma1) * r * r + a.gamma1 * n
    g[...] = (1.0 - a.gamma1) * r + a.gamma1 * g
    delta[...] = a.gamma2 * delta - a.lr * (r / xp.sqrt(n - g * g + a.epsilon))
    return _clip_weights_of(xp, a, w + delta)


def _adagrad_forward(xp, a, w, g, history):
    """AdaGrad: history += g^2; weight -= lr * g / sqrt(history + epsilon)."""
    if a.wd != 0:
        raise AttrError(f"operator _sparse_adagrad_update: attribute 'wd' must be 0 (AdaGrad's update does "
                        f"not support weight decay), got {a.wd}")
    r = _grad(xp, a, g)
    history += r * r
    return w - (r / xp.sqrt(history + a.epsilon)) * a.lr


# MXNet only has the row_sparse-gradient kernel; a dense gradient is the case where every row is present
_optimizer("_sparse_adagrad_update", ("weight", "grad", "history"),
           {"lr": _lr(), "epsilon": Attr("float", 1e-7, "epsilon"), "wd": Attr("float", 0.0, "weight decay"),
            "rescale_grad": _rescale(), **_clip()}, mutate=(2,))(_adagrad_forward)


@_optimizer("ftrl_update", ("weight", "grad", "z", "n"),
            {"lr": _lr(), "lamda1": Attr("float", 0.01, "The L1 regularization coefficient."),
             "beta": Attr("float", 1.0, "Per-Coordinate Learning Rate beta."), "wd": _wd(),
             "rescale_grad": _rescale(), **_clip()}, mutate=(2, 3), aliases=("_sparse_ftrl_update",))
def ftrl_update(xp, a, w, g, z, n):  # noqa: PLR0917 - one positional per input
    """FTRL-Proximal (McMahan et al.): z += g - (sqrt(n + g^2) - sqrt(n)) * w / lr; n += g^2;
    w = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)."""
    r = _grad(xp, a, g)
    z += r - (xp.sqrt(n + r * r) - xp.sqrt(n)) * w / a.lr
    n += r * r
    out = (xp.sign(z) * a.lamda1 - z) / ((a.beta + xp.sqrt(n)) / a.lr + a.wd)
    return out * (xp.abs(z) > a.lamda1).astype(w.dtype)


@_optimizer("ftml_update", ("weight", "grad", "d", "v", "z"),
            {"lr": Attr("float", doc="Learning rate."), "beta1": Attr("float", 0.6, "Generally close to 0.5."),
             "beta2": Attr("float", 0.999, "Generally close to 1."),
             "epsilon": Attr("float", 1e-8, "Epsilon to prevent div 0."),
             "t": Attr("int", doc="Number of update."), "wd": _wd(), "rescale_grad": _rescale(),
             **_clip("clip_grad")}, mutate=(2, 3, 4), exact=("epsilon",))
def ftml_update(xp, a, w, g, d, v, z):  # noqa: PLR0917 - one positional per input
    """FTML (Zheng & Kwok 2017): v = beta2 v + (1-beta2) g^2;
    d_t = (1 - beta1^t) / lr * (sqrt(v / (1 - beta2^t)) + epsilon);
    z = beta1 z + (1 - beta1) g - (d_t - beta1 d) w; d = d_t; weight = -z / d_t."""
    r = _grad(xp, a, g, w=w, wd=a.wd)
    v[...] = a.beta2 * v + (1.0 - a.beta2) * r * r
    d_t = (1.0 - a.beta1 ** a.t) / a.lr * (xp.sqrt(v / (1.0 - a.beta2 ** a.t)) + a.epsilon)
    z[...] = a.beta1 * z + (1.0 - a.beta1) * r - (d_t - a.beta1 * d) * w
    d[...] = d_t
    return -z / d_t


# -- LAMB ---------------------------------------------------------------------------

_LAMB1_ATTRS = {"beta1": Attr("float", 0.9, "The decay rate for the 1st moment estimates."),
                "beta2": Attr("float", 0.999, "The decay rate for the 2nd moment estimates."),
                "epsilon": _epsilon(1e-6), "t": Attr("int", doc="Index update count."),
                "bias_correction": Attr("bool", True, "Whether to use bias correction."),
                "wd": _wd(default=REQUIRED), "rescale_grad": _rescale(), **_clip()}
_LAMB2_ATTRS = {"lr": _lr(),
                "lower_bound": Attr("float", -1.0, "Lower limit of norm of weight. If lower_bound <= 0, Lower "
                                    "limit is not set"),
                "upper_bound": Attr("float", -1.0, "Upper limit of norm of weight. If upper_bound <= 0, Upper "
                                    "limit is not set")}


def _lamb_direction(xp, a, w, g, moments, *, dtype=None):
    """Phase 1: update the moments (mean, var) in place and return the step direction g."""
    mean, var = moments
    r = _grad(xp, a, g, dtype=dtype)
    mean[...] = a.beta1 * mean + (1.0 - a.beta1) * r
    var[...] = a.beta2 * var + (1.0 - a.beta2) * r * r
    m, v = mean, var
    if a.bias_correction:
        m = mean / (1.0 - a.beta1 ** a.t)
        v = var / (1.0 - a.beta2 ** a.t)
    return m / (xp.sqrt(v) + a.epsilon) + a.wd * w


def _lamb_step(xp, a, w, g, norms):
    """Phase 2: weight - lr * (r1 / r2) * g, with r1 clamped to [lower_bound, upper_bound]
    and the plain lr when either norm is 0 (computed on device: no host sync)."""
    r1, r2 = norms
    r1 = r1.reshape(-1)[:1].astype(w.dtype)
    r2 = r2.reshape(-1)[:1].astype(w.dtype)
    if a.lower_bound >= 0:
        r1 = xp.maximum(r1, a.lower_bound)
    if a.upper_bound >= 0:
        r1 = xp.minimum(r1, a.upper_bound)
    zero = (r1 == 0) | (r2 == 0)
    lr = xp.where(zero, w.dtype.type(a.lr), a.lr * r1 / xp.where(zero, w.dtype.type(1), r2))
    return w - lr * g.astype(w.dtype, copy=False)


@_optimizer("lamb_update_phase1", ("weight", "grad", "mean", "var"), dict(_LAMB1_ATTRS), mutate=(2, 3))
def lamb_update_phase1(xp, a, w, g, mean, var):  # noqa: PLR0917 - one positional per input
    """Phase I of LAMB: update mean/var and return
    g = m_hat / (sqrt(v_hat) + epsilon) + wd * weight (bias-corrected when bias_correction)."""
    return _lamb_direction(xp, a, w, g, (mean, var))


@_optimizer("lamb_update_phase2", ("weight", "g", "r1", "r2"), dict(_LAMB2_ATTRS), scalars=("r1", "r2"))
def lamb_update_phase2(xp, a, w, g, r1, r2):  # noqa: PLR0917 - one positional per input
    """Phase II of LAMB: weight = weight - lr * (r1 / r2) * g, where r1 = ||weight||
    (clamped by lower_bound/upper_bound when >= 0) and r2 = ||g||; plain lr when either is 0."""
    return _lamb_step(xp, a, w, g, (r1, r2))


@_optimizer("mp_lamb_update_phase1", ("weight", "grad", "mean", "var", "weight32"), dict(_LAMB1_ATTRS),
            mutate=(2, 3), n_low=2, out_f32=True)
def mp_lamb_update_phase1(xp, a, w, g, mean, var, w32):  # noqa: PLR0917 - one positional per input
    """Multi-precision LAMB phase I (float32 moments and master weight); returns float32 g."""
    return _lamb_direction(xp, a, w32, g, (mean, var), dtype=_F32)


@_optimizer("mp_lamb_update_phase2", ("weight", "g", "r1", "r2", "weight32"), dict(_LAMB2_ATTRS),
            mutate=(4,), n_low=1, scalars=("r1", "r2"))
def mp_lamb_update_phase2(xp, a, w, g, r1, r2, w32):  # noqa: PLR0917 - one positional per input
    """Multi-precision LAMB phase II: the step is applied to the float32 `weight32`,
    which is updated in place. (MXNet 1.9.1 computes the new weight from weight32 but
    never writes weight32 back, so its master copy never advances; we do.)"""
    w32[...] = _lamb_step(xp, a, w32, g, (r1, r2))
    return w32.astype(w.dtype)
