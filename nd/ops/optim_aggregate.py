"""MXNet's aggregated-optimizer helpers: `multi_mp_sgd_update` / `multi_mp_sgd_mom_update`, the four
`preloaded_multi_*sgd*_update`, `multi_sum_sq`, `multi_lars` and `reset_arrays`.

The SGD variants extend multi_sgd_update (optim_multi.py): `mp` ones keep a float32 master copy
(`weight32_i`, and float32 momenta) of float16 weights and do the arithmetic in float32, writing the
new weight32 / momentum in place and returning the weights cast back; `preloaded` ones take the
learning rates and weight decays as two float32 input arrays (`lrs`, `wds`, last) instead of
attributes, as MXNet's LARS optimizer feeds them from multi_lars. Per weight, as MXNet's kernel:
mom = momentum*mom - lr*wd*w - lr*rescale_grad*clip(grad); w = w + mom.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import merge_shape, register
from .optim import _clip, _momentum, _rescale
from .optim_multi import _attrs, _scaled_grad, merge_groups

_F32 = np.dtype("float32")


def _host(x) -> np.ndarray:
    return np.asarray(x.get() if hasattr(x, "get") else x, dtype=np.float32).reshape(-1)


class _Variant:
    """The slot layout of one aggregated SGD operator."""

    def __init__(self, name: str, momentum: bool, mp: bool, preloaded: bool):
        self.name, self.momentum, self.mp, self.preloaded = name, momentum, mp, preloaded
        self.groups = ("weight", "grad") + (("mom",) if momentum else ()) + (("weight32",) if mp else ())
        self.stride = len(self.groups)

    def count(self, a, n_inputs: int | None = None) -> int:
        n = a.num_weights
        if n < 1:
            raise AttrError(f"operator {self.name}: num_weights must be >= 1, got {n}")
        if not self.preloaded and (len(a.lrs) != n or len(a.wds) != n):
            raise AttrError(f"operator {self.name}: num_weights={n} needs that many lrs and wds, got "
                            f"{len(a.lrs)} lrs and {len(a.wds)} wds")
        want = self.stride * n + 2 * self.preloaded
        if n_inputs is not None and n_inputs != want:
            raise ShapeError(f"operator {self.name}: expected {want} inputs ({', '.join(self.groups)} per "
                             f"weight{', then lrs and wds' if self.preloaded else ''}), got {n_inputs}")
        return n

    def input_names(self, a) -> tuple:
        n = max(a.num_weights or 0, 0)
        names = tuple(f"{g}_{i}" for i in range(n) for g in self.groups)
        return names + (("lrs", "wds") if self.preloaded else ())

    def mutated(self, a) -> tuple:
        n = max(a.num_weights or 0, 0)
        return tuple(self.stride * i + j for i in range(n) for j in range(2, self.stride))

    def infer_shape(self, a, *shapes):
        n = self.count(a, len(shapes))
        ins, outs = merge_groups(self.name, shapes, n, self.stride)
        if self.preloaded:
            ins += [merge_shape(shapes[-2], (n,)), merge_shape(shapes[-1], (n,))]
        return ins, outs

    def infer_type(self, a, *dtypes):
        n = self.count(a, len(dtypes))
        ins, outs = [], []
        for i in range(n):
            group = dtypes[self.stride * i: self.stride * (i + 1)]
            t = group[0] if group[0] is not None else group[1]
            if group[1] is not None and t is not None and group[1] != t:
                raise DTypeError(f"operator {self.name}: weight_{i} is {t} but grad_{i} is {group[1]}")
            state = _F32 if self.mp else t
            for j, d in enumerate(group[2:]):
                if d is not None and state is not None and d != state:
                    raise DTypeError(f"operator {self.name}: {self.groups[j + 2]}_{i} must be {state}, got {d}")
            ins += [t, t] + [state] * (self.stride - 2)
            outs.append(t)
        if self.preloaded:
            ins += [_F32, _F32]
        return ins, outs

    def forward(self, xp, a, *arrays, out=None):
        n = self.count(a, len(arrays))
        if self.preloaded:
            lrs, wds = _host(arrays[-2]), _host(arrays[-1])
            if lrs.size != n or wds.size != n:
                raise ShapeError(f"operator {self.name}: lrs and wds must hold {n} values, got {lrs.size} "
                                 f"and {wds.size}")
        else:
            lrs, wds = np.float32(a.lrs), np.float32(a.wds)
        results = []
        for i in range(n):
            group = arrays[self.stride * i: self.stride * (i + 1)]
            w, g = group[0], group[1]
            if any(x.shape != w.shape for x in group):
                raise ShapeError(f"operator {self.name}: the inputs of weight {i} must have its shape {w.shape}")
            master = group[-1] if self.mp else w
            if self.mp:
                g = g.astype(np.float32)
            dt = master.dtype.type
            lr, wd = dt(lrs[i]), dt(wds[i])
            step = _scaled_grad(xp, a, lr, g, xp.empty_like(master))
            if self.momentum:
                mom = group[2]
                mom *= dt(a.momentum)
                if wd:
                    mom -= xp.multiply(master, lr * wd, out=xp.empty_like(master))
            else:
                mom = xp.multiply(master, lr * wd, out=xp.empty_like(master))
                xp.negative(mom, out=mom)
            mom -= step
            if self.mp:
                master += mom
                new = master.astype(w.dtype)
                if out is not None:
                    out[i][...] = new
                    new = out[i]
            else:
                new = xp.add(w, mom, out=xp.empty_like(w) if out is None else out[i])
            results.append(new)
        return tuple(results)


def _declare(v: _Variant, doc: str) -> None:
    if v.preloaded:
        attrs = {**({"momentum": _momentum()} if v.momentum else {}), "rescale_grad": _rescale(), **_clip(),
                 "num_weights": Attr("int", 1, "Number of updated weights.")}
    else:
        attrs = _attrs(v.momentum)
    register(v.name, inputs=v.input_names, outputs=lambda a: tuple(
                 f"output_{i}" for i in range(max(a.num_weights or 0, 0))),
             attrs=attrs, fluent=False, writes_out=True, mutate_inputs=v.mutated,
             infer_shape=v.infer_shape, infer_type=v.infer_type, doc=doc)(v.forward)


_MP = " Float16 weights keep a float32 master copy weight32_i, updated in place with the float32 arithmetic."
_PRE = " The learning rates and weight decays come as the float32 arrays lrs and wds (the last two inputs)."
_SGD = "SGD update of several weights: w_i = w_i - lr_i * (rescale_grad * grad_i + wd_i * w_i)."
_MOM = ("Momentum SGD update of several weights: mom_i = momentum * mom_i - lr_i * (rescale_grad * grad_i + "
        "wd_i * w_i); w_i += mom_i (momenta updated in place).")
_declare(_Variant("multi_mp_sgd_update", False, True, False), _SGD + _MP)
_declare(_Variant("multi_mp_sgd_mom_update", True, True, False), _MOM + _MP)
_declare(_Variant("preloaded_multi_sgd_update", False, False, True), _SGD + _PRE)
_declare(_Variant("preloaded_multi_sgd_mom_update", True, False, True), _MOM + _PRE)
_declare(_Variant("preloaded_multi_mp_sgd_update", False, True, True), _SGD + _MP + _PRE)
_declare(_Variant("preloaded_multi_mp_sgd_mom_update", True, True, True), _MOM + _MP + _PRE)


# -- multi_sum_sq / multi_lars / reset_arrays ------------------------------------------------------

def _num_arrays() -> dict:
    return {"num_arrays": Attr("int", doc="number of input arrays.")}


def _array_names(a) -> tuple:
    return tuple(f"array_{i}" for i in range(max(a.num_arrays or 0, 0)))


def _check_arrays(op: str, a, n: int) -> None:
    if a.num_arrays != n:
        raise ShapeError(f"operator {op}: num_arrays={a.num_arrays} but {n} arrays were given")


@register("multi_sum_sq", inputs=_array_names, attrs=_num_arrays(), fluent=False,
          infer_shape=lambda a, *s: (list(s), [(a.num_arrays,)]),
          infer_type=lambda a, *t: None if t[0] is None else ([t[0]] * len(t), [_F32]))
def _multi_sum_sq(xp, a, *arrays):
    """The sum of squares of each array, as one float32 vector of length num_arrays (as MXNet's
    kernel: each square in the array's dtype, accumulated in float32)."""
    _check_arrays("multi_sum_sq", a, len(arrays))
    out = [xp.square(x).astype(np.float32).sum(dtype=np.float32) for x in arrays]
    return (xp.asarray(out, dtype=np.float32).reshape(len(arrays)),)


@register("multi_lars", inputs=("lrs", "weights_sum_sq", "grads_sum_sq", "wds"), fluent=False, attrs={
    "eta": Attr("float", doc="LARS eta"), "eps": Attr("float", doc="LARS eps"),
    "rescale_grad": Attr("float", 1.0, "Gradient rescaling factor")},
    infer_shape=lambda a, *s: _same4(s), infer_type=lambda a, *t: _same4(t, "dtypes"))
def _multi_lars(xp, a, lrs, wsq, gsq, wds):
    """LARS learning rates: lr_i * eta * |w_i| / (|g_i| * rescale_grad + wd_i * |w_i| + eps) where both
    norms are positive, else lr_i (float32, as MXNet's kernel)."""
    f = np.float32
    lrs, wsq, gsq, wds = (x.astype(f, copy=False) for x in (lrs, wsq, gsq, wds))
    wn = xp.sqrt(wsq)
    valid = (wn > 0) & (gsq > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        lars = lrs * f(a.eta) * wn / (xp.sqrt(gsq) * f(a.rescale_grad) + wds * wn + f(a.eps))
    return (xp.where(valid, lars, lrs).astype(f),)


def _same4(values, what: str = "shapes"):
    v = None
    for x in values:
        if x is None:
            continue
        if v is not None and x != v:
            raise ShapeError(f"operator multi_lars: its four inputs must have equal {what}, got {list(values)}")
        v = x
    return None if v is None else ([v] * 4, [v])


@register("reset_arrays", inputs=_array_names, outputs=(), attrs=_num_arrays(), fluent=False,
          mutate_inputs=lambda a: tuple(range(max(a.num_arrays or 0, 0))),
          infer_shape=lambda a, *s: (list(s), []), infer_type=lambda a, *t: (list(t), []))
def _reset_arrays(xp, a, *arrays):
    """Set every input array to zero, in place (no outputs)."""
    _check_arrays("reset_arrays", a, len(arrays))
    for x in arrays:
        x[...] = 0
    return ()
