"""Specs for nd/ops/adamw.py: the AdamW update operators against their documented rule in
float64 (the states they update, float16 weights and skipped steps are checked against MXNet
1.9.1's numbers in tests/nd/test_adamw.py)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, shapes

_ND = "optimizer update: not differentiable (MXNet registers no gradient)"


def _attrs(draw, multi: int = 0):
    attrs = {"beta1": draw(st.sampled_from([0.9, 0.5])), "beta2": draw(st.sampled_from([0.999, 0.75])),
             "epsilon": 1e-8, "clip_gradient": draw(st.sampled_from([-1.0, 0.25, 1.0]))}
    per = {"lr": [0.5, 0.25], "wd": [0.0, 0.125], "eta": [1.0, 0.5]}
    if multi:
        attrs.update({k + "s": [draw(st.sampled_from(v)) for _ in range(multi)] for k, v in per.items()})
        attrs["num_weights"] = multi
    else:
        attrs.update({k: draw(st.sampled_from(v)) for k, v in per.items()})
    return attrs


def _group(draw, shape, mp: bool):
    w, g, m = draw(arr(shape)), draw(arr(shape)), draw(arr(shape))
    v = draw(arr(shape, 0.0, 2.0))
    f32 = np.float32
    return [w, g, m.astype(f32), v.astype(f32), w.astype(f32)] if mp else [w, g, m, v]


def _case(mp: bool, multi: int = 0):
    def case(draw):
        groups = [_group(draw, draw(shapes(max_dims=2)), mp) for _ in range(max(multi, 1))]
        scale = np.array([draw(st.sampled_from([1.0, 0.5, 2.0]))])
        return [x for grp in groups for x in grp] + [scale], _attrs(draw, multi)
    return case


def _rule(w, g, m, v, scale, lr, wd, eta, beta1, beta2, epsilon, clip_gradient):
    g = g * scale[0]
    if clip_gradient >= 0:
        g = np.clip(g, -clip_gradient, clip_gradient)
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    return w - eta * (lr * m / (np.sqrt(v) + epsilon) + wd * w)


def _ref(mp: bool, multi: bool):
    stride = 5 if mp else 4

    def ref(*xs, **a):
        scale, n = xs[-1], a.get("num_weights", 1)
        common = {k: a[k] for k in ("beta1", "beta2", "epsilon", "clip_gradient")}
        outs = []
        for i in range(n):
            w, g, m, v = xs[stride * i: stride * i + 4]
            per = {"lr": a["lrs"][i], "wd": a["wds"][i], "eta": a["etas"][i]} if multi else \
                {"lr": a["lr"], "wd": a["wd"], "eta": a["eta"]}
            outs.append(_rule(w, g, m, v, scale, **per, **common))
        return tuple(outs) if multi else outs[0]
    return ref


SPECS = [
    OpSpec("_adamw_update", case=_case(False), ref=_ref(False, False), nondiff=_ND, rtol=1e-5, atol=1e-5),
    OpSpec("_mp_adamw_update", case=_case(True), ref=_ref(True, False), nondiff=_ND, rtol=1e-4, atol=1e-4),
    OpSpec("_multi_adamw_update", case=_case(False, 2), ref=_ref(False, True), nondiff=_ND, rtol=1e-5, atol=1e-5),
    OpSpec("_multi_mp_adamw_update", case=_case(True, 2), ref=_ref(True, True), nondiff=_ND, rtol=1e-4,
           atol=1e-4),
]
