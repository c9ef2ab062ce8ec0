"""AdamW update operators (MXNet 1.9.1's src/operator/contrib/adamw.cc): `_adamw_update`,
`_mp_adamw_update` and the aggregated `_multi_adamw_update` / `_multi_mp_adamw_update`
(Python front ends `mx.nd.contrib.adamw_update`, ...).

Unlike `adam_update`, the gradient scale is an input (`rescale_grad`, shape (1,)), so a loss
scaler can skip a step from the device: when it is 0, inf or nan nothing is updated (the
states keep their values and an `out=` buffer is left as it is). Otherwise, with
g = clip(rescale_grad * grad):
    mean = beta1 * mean + (1 - beta1) * g;  var = beta2 * var + (1 - beta2) * g^2
    w = w - eta * (lr * mean / (sqrt(var) + epsilon) + wd * w)
in the weight's dtype (float32 for the `mp_` ops, which also update the float32 master
weight). MXNet's `_adamw_update` also overwrites its `grad` input with g, an undeclared side
effect that is not copied here.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import register
from .optim import _clip, _epsilon, _lr, _wd

_F32 = np.dtype(np.float32)
_BETAS = {"beta1": Attr("float", 0.9, "The decay rate for the 1st moment estimates."),
          "beta2": Attr("float", 0.999, "The decay rate for the 2nd moment estimates."), "epsilon": _epsilon(1e-8)}
_SINGLE_ATTRS = {"lr": _lr(), **_BETAS, "wd": _wd(),
                 "eta": Attr("float", doc="Learning rate schedule multiplier"),
                 **_clip()}
_MULTI_ATTRS = {"lrs": Attr("floats", doc="Learning rates"), **_BETAS,
                "wds": Attr("floats", doc="Weight decay augments the objective function with a regularization term "
                            "that penalizes large weights. The penalty scales with the square of the magnitude of "
                            "each weight."),
                "etas": Attr("floats", doc="Learning rates schedule multiplier"), **_clip(),
                "num_weights": Attr("int", 1, "Number of updated weights.")}


def _scale(xp, rescale_grad) -> float | None:
    """The gradient scale, or None when the step must be skipped (0, inf or nan)."""
    s = float(np.float32(rescale_grad.reshape(-1)[0]))
    return s if np.isfinite(s) and s != 0 else None


def _step(xp, a, w, g, mean, var, scale, lr, wd, eta, dt):
    """One AdamW step in dtype `dt`; updates mean and var in place, returns the new weight."""
    c = {k: dt.type(np.float32(v)) for k, v in
         (("b1", a.beta1), ("b2", a.beta2), ("eps", a.epsilon), ("lr", lr), ("wd", wd), ("eta", eta),
          ("clip", a.clip_gradient), ("scale", scale))}
    g = g.astype(dt) * c["scale"]
    if a.clip_gradient >= 0:
        g = xp.clip(g, -c["clip"], c["clip"])
    mean[...] = c["b1"] * mean + (dt.type(1) - c["b1"]) * g
    var[...] = c["b2"] * var + (dt.type(1) - c["b2"]) * g * g
    return w - c["eta"] * (c["lr"] * mean / (xp.sqrt(var) + c["eps"]) + c["wd"] * w)


def _groups(op: str, a, n_inputs: int, stride: int) -> int:
    """The number of weights, checked against the inputs (stride per weight, then rescale_grad)."""
    n = a.num_weights
    if n < 1 or not len(a.lrs) == len(a.wds) == len(a.etas) == n:
        raise AttrError(f"operator {op}: num_weights={n} needs that many lrs, wds and etas, got {len(a.lrs)}, "
                        f"{len(a.wds)} and {len(a.etas)}")
    if n_inputs != stride * n + 1:
        raise ShapeError(f"operator {op}: expected {stride * n + 1} inputs ({stride} per weight, then rescale_grad), "
                         f"got {n_inputs}")
    return n


def _rules(op: str, stride: int, mp: bool, multi: bool):
    """infer_shape / infer_type: per weight, every input has the weight's shape; rescale_grad is (1,).
    Dtypes: weight and grad share a float dtype; mean, var (and weight32) are float32 for `mp`,
    else the weight's."""
    def n_of(a, n_inputs):
        return _groups(op, a, n_inputs, stride) if multi else 1

    def shape(a, *shapes):
        n = n_of(a, len(shapes))
        ins, outs = [], []
        for i in range(n):
            group = [s for s in shapes[stride * i: stride * (i + 1)] if s is not None]
            if not group:
                return None
            if any(tuple(s) != tuple(group[0]) for s in group):
                raise ShapeError(f"operator {op}: the inputs of weight {i} have shapes "
                                 f"{list(shapes[stride * i: stride * (i + 1)])}; they must all be equal")
            ins += [tuple(group[0])] * stride
            outs.append(tuple(group[0]))
        r = shapes[-1]
        if r is not None and tuple(r) != (1,):
            raise ShapeError(f"operator {op}: input 'rescale_grad' must have shape (1,), got {tuple(r)}")
        return ins + [(1,)], outs

    def dtype(a, *types):
        n = n_of(a, len(types))
        ins, outs = [], []
        for i in range(n):
            w, g, *states = types[stride * i: stride * (i + 1)]
            t = w if w is not None else g
            if t is None:
                return None
            if t.kind != "f" or (g is not None and g != t):
                raise DTypeError(f"operator {op}: weight and grad of weight {i} must share one floating dtype, "
                                 f"got {w} and {g}")
            want = _F32 if mp else t
            for s in states:
                if s is not None and s != want:
                    raise DTypeError(f"operator {op}: the states of weight {i} must be {want}, got {s}")
            ins += [t, t] + [want] * len(states)
            outs.append(t)
        if types[-1] is not None and types[-1].kind != "f":
            raise DTypeError(f"operator {op}: rescale_grad must be floating point, got {types[-1]}")
        return ins + [types[-1] if types[-1] is not None else _F32], outs
    return shape, dtype


def _register(op: str, mp: bool, multi: bool):
    groups = ("weight", "grad", "mean", "var", "weight32") if mp else ("weight", "grad", "mean", "var")
    stride = len(groups)
    shape, dtype = _rules(op, stride, mp, multi)

    def forward(xp, a, *arrays, out=None):
        shape(a, *[x.shape for x in arrays])
        dtype(a, *[x.dtype for x in arrays])
        n = _groups(op, a, len(arrays), stride) if multi else 1
        scale = _scale(xp, arrays[-1])
        results = []
        for i in range(n):
            w, g, mean, var, *w32 = arrays[stride * i: stride * (i + 1)]
            dest = None if out is None else out[i]
            if scale is None:                               # skipped step: nothing changes
                results.append(w.copy() if dest is None else dest)
                continue
            lr, wd, eta = (a.lrs[i], a.wds[i], a.etas[i]) if multi else (a.lr, a.wd, a.eta)
            src = w32[0] if mp else w
            new = _step(xp, a, src, g, mean, var, scale, lr, wd, eta, _F32 if mp else w.dtype)
            if mp:
                w32[0][...] = new
            if dest is None:
                results.append(new.astype(w.dtype))
            else:
                dest[...] = new
                results.append(dest)
        return tuple(results)

    if multi:
        inputs = lambda a: tuple(f"{g}_{i}" for i in range(max(a.num_weights or 0, 0)) for g in groups) + (  # noqa: E731
            "rescale_grad",)
        outputs = lambda a: tuple(f"output_{i}" for i in range(max(a.num_weights or 0, 0)))  # noqa: E731
        mutate = lambda a: tuple(stride * i + j for i in range(max(a.num_weights or 0, 0))  # noqa: E731
                                 for j in range(2, stride))
        attrs = dict(_MULTI_ATTRS)
    else:
        inputs, outputs, mutate, attrs = (*groups, "rescale_grad"), ("output",), tuple(range(2, stride)), \
            dict(_SINGLE_ATTRS)
    what = "multi-precision " if mp else ""
    doc = (f"AdamW {what}update{' of several weights' if multi else ''} (MXNet's contrib adamw; see "
           "hybridgraph.nd.ops.adamw): skipped when rescale_grad is 0, inf or nan.")
    register(op,
             monitor_inputs="input",
             inputs=inputs, outputs=outputs, attrs=attrs, mutate_inputs=mutate, fluent=False, writes_out=True,
             infer_shape=shape, infer_type=dtype, doc=doc)(forward)


_register("_adamw_update", mp=False, multi=False)
_register("_mp_adamw_update", mp=True, multi=False)
_register("_multi_adamw_update", mp=False, multi=True)
_register("_multi_mp_adamw_update", mp=True, multi=True)
