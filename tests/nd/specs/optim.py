"""Specs for nd/ops/optim.py: the optimizer update operators.

The numpy references (float64, from MXNet's documented update rules) check the
returned weight; the states they update in place are checked against MXNet's
own numbers in tests/nd/test_optim_ops.py. Attribute values are exact in
float32 (MXNet stores these attributes as C floats).
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, shapes

_ND = "optimizer update: not differentiable (MXNet registers no gradient)"


def _clip(g, rescale_grad=1.0, clip_gradient=-1.0, **_):
    g = g * rescale_grad
    return np.clip(g, -clip_gradient, clip_gradient) if clip_gradient >= 0 else g


def _common(draw, momentum=False):
    attrs = {"lr": draw(st.sampled_from([0.5, 0.25])), "wd": draw(st.sampled_from([0.0, 0.125])),
             "rescale_grad": draw(st.sampled_from([1.0, 0.5, 2.0])),
             "clip_gradient": draw(st.sampled_from([-1.0, 0.25, 1.0]))}
    if momentum:
        attrs["momentum"] = draw(st.sampled_from([0.0, 0.5, 0.75]))
    return attrs


def _case(n_arrays, positive=(), momentum=False, extra=None):
    """`n_arrays` float64 arrays of one shape (indices in `positive` drawn > 0)."""
    def case(draw):
        shape = draw(shapes(max_dims=3))
        xs = [draw(arr(shape, 0.1, 2.0) if i in positive else arr(shape)) for i in range(n_arrays)]
        attrs = _common(draw, momentum)
        attrs.update(extra(draw) if extra else {})
        return xs, {k: v for k, v in attrs.items() if v is not None}
    return case


def ref_sgd(w, g, lr, wd=0.0, **kw):
    return (1 - lr * wd) * w - lr * _clip(g, **kw)


def ref_sgd_mom(w, g, mom, lr, momentum=0.0, wd=0.0, **kw):
    return w + momentum * mom - lr * wd * w - lr * _clip(g, **kw)


def ref_nag(w, g, mom, lr, momentum=0.0, wd=0.0, **kw):
    r = _clip(g, **kw) + wd * w
    new_mom = momentum * mom - lr * r
    return w + momentum * new_mom - lr * r


def ref_adam(w, g, mean, var, lr, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0, rescale_grad=1.0,
             clip_gradient=-1.0, **_):
    r = _clip(g * rescale_grad + wd * w, 1.0, clip_gradient)
    m = beta1 * mean + (1 - beta1) * r
    v = beta2 * var + (1 - beta2) * r * r
    return w - lr * m / (np.sqrt(v) + epsilon)


def ref_rmsprop(w, g, n, lr, gamma1=0.95, epsilon=1e-8, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
                clip_weights=-1.0, **_):
    r = _clip(g * rescale_grad + wd * w, 1.0, clip_gradient)
    n = (1 - gamma1) * r * r + gamma1 * n
    out = w - lr * r / np.sqrt(n + epsilon)
    return np.clip(out, -clip_weights, clip_weights) if clip_weights >= 0 else out


def ref_rmspropalex(w, grad, n, g, delta, lr, gamma1=0.95, gamma2=0.9, epsilon=1e-8, wd=0.0, rescale_grad=1.0,
                    clip_gradient=-1.0, clip_weights=-1.0, **_):
    r = _clip(grad * rescale_grad + wd * w, 1.0, clip_gradient)
    n = (1 - gamma1) * r * r + gamma1 * n
    g = (1 - gamma1) * r + gamma1 * g
    delta = gamma2 * delta - lr * r / np.sqrt(n - g * g + epsilon)
    out = w + delta
    return np.clip(out, -clip_weights, clip_weights) if clip_weights >= 0 else out


def ref_adagrad(w, g, history, lr, epsilon=1e-7, **kw):
    r = _clip(g, **kw)
    return w - lr * r / np.sqrt(history + r * r + epsilon)


def ref_ftrl(w, g, z, n, lr, lamda1=0.01, beta=1.0, wd=0.0, **kw):
    r = _clip(g, **kw)
    z = z + r - (np.sqrt(n + r * r) - np.sqrt(n)) * w / lr
    n = n + r * r
    return (np.sign(z) * lamda1 - z) / ((beta + np.sqrt(n)) / lr + wd) * (np.abs(z) > lamda1)


def ref_signsgd(w, g, lr, wd=0.0, **_):
    return (1 - lr * wd) * w - lr * np.sign(g)


def ref_signum(w, g, mom, lr, momentum=0.0, wd=0.0, wd_lh=0.0, **kw):
    mom = momentum * mom - (1 - momentum) * wd * w - (1 - momentum) * _clip(g, **kw)
    return (1 - lr * wd_lh) * w + lr * np.sign(mom)


def ref_ftml(w, g, d, v, z, lr, t, beta1=0.6, beta2=0.999, epsilon=1e-8, wd=0.0, rescale_grad=1.0,
             clip_grad=-1.0, **_):
    r = _clip(g * rescale_grad + wd * w, 1.0, clip_grad)
    v = beta2 * v + (1 - beta2) * r * r
    d_t = (1 - beta1 ** t) / lr * (np.sqrt(v / (1 - beta2 ** t)) + epsilon)
    z = beta1 * z + (1 - beta1) * r - (d_t - beta1 * d) * w
    return -z / d_t


def ref_lamb1(w, g, mean, var, t, wd, beta1=0.9, beta2=0.999, epsilon=1e-6, bias_correction=True, **kw):
    r = _clip(g, **kw)
    m = beta1 * mean + (1 - beta1) * r
    v = beta2 * var + (1 - beta2) * r * r
    if bias_correction:
        m, v = m / (1 - beta1 ** t), v / (1 - beta2 ** t)
    return m / (np.sqrt(v) + epsilon) + wd * w


def ref_lamb2(w, g, r1, r2, lr, lower_bound=-1.0, upper_bound=-1.0, **_):
    r1 = float(r1.ravel()[0])
    r2 = float(r2.ravel()[0])
    if lower_bound >= 0:
        r1 = max(r1, lower_bound)
    if upper_bound >= 0:
        r1 = min(r1, upper_bound)
    ratio = 1.0 if r1 == 0 or r2 == 0 else r1 / r2
    return w - lr * ratio * g


def _mp_case(n_states, positive=(), momentum=False, out_f32=False, extra=None):
    """weight/grad float16, states and weight32 float32; weight32 equals the weight."""
    def case(draw):
        shape = draw(shapes(max_dims=3))
        w = draw(arr(shape)).astype(np.float16)
        g = draw(arr(shape)).astype(np.float16)
        states = [draw(arr(shape, 0.1, 2.0) if i in positive else arr(shape)).astype(np.float32)
                  for i in range(n_states)]
        attrs = _common(draw, momentum)
        attrs.update(extra(draw) if extra else {})
        return [w, g, *states, w.astype(np.float32)], {k: v for k, v in attrs.items() if v is not None}
    return case


def _mp_ref(ref, n_states, out_dtype=np.float16):
    """An mp_ op's weight = the plain op's on float32 master weights, cast to the weight dtype."""
    def run(w, g, *rest, **attrs):
        states, w32 = rest[:n_states], rest[n_states]
        out = ref(w32.astype(np.float64), g.astype(np.float64), *[s.astype(np.float64) for s in states], **attrs)
        return np.asarray(out).astype(np.float32).astype(out_dtype)
    return run


def _lamb1_extra(draw):
    """LAMB phase 1 has no lr (phase 2 applies it): the `None` drops the common one."""
    return {"t": draw(st.integers(1, 4)), "beta1": 0.5, "beta2": 0.75, "epsilon": 0.0625,
            "bias_correction": draw(st.booleans()), "lr": None}


def _lamb2_case(mp=False):
    def case(draw):
        shape = draw(shapes(max_dims=3))
        w, g = draw(arr(shape)), draw(arr(shape))
        r1 = np.array([draw(st.sampled_from([0.0, 0.5, 2.0]))])
        r2 = np.array([draw(st.sampled_from([0.0, 1.0, 4.0]))])
        attrs = {"lr": 0.5, "lower_bound": draw(st.sampled_from([-1.0, 1.0])),
                 "upper_bound": draw(st.sampled_from([-1.0, 1.5]))}
        if mp:
            return [w.astype(np.float16), g.astype(np.float32), r1.astype(np.float32), r2.astype(np.float32),
                    w.astype(np.float16).astype(np.float32)], attrs
        return [w, g, r1, r2], attrs
    return case


def _mp_lamb2_ref(w, g, r1, r2, w32, **attrs):
    return ref_lamb2(w32.astype(np.float64), g.astype(np.float64), r1, r2, **attrs).astype(np.float32) \
        .astype(np.float16)


def _adam_extra(draw):
    return {"beta1": 0.5, "beta2": 0.75, "epsilon": 0.0625}


def _rmspropalex_case(draw):
    shape = draw(shapes(max_dims=3))
    w, grad, g, delta = (draw(arr(shape)) for _ in range(4))
    n = g * g + draw(arr(shape, 0.1, 2.0))  # n >= g^2 keeps the centred variance positive
    attrs = _common(draw)
    attrs.update(_RMS_EXTRA, clip_weights=draw(st.sampled_from([-1.0, 0.5])))
    return [w, grad, n, g, delta], attrs


def _adagrad_case(draw):
    shape = draw(shapes(max_dims=3))
    attrs = _common(draw)
    attrs["wd"] = 0.0  # AdaGrad's kernel has no weight decay
    attrs["epsilon"] = draw(st.sampled_from([1e-7, 0.0625]))
    return [draw(arr(shape)), draw(arr(shape)), draw(arr(shape, 0.1, 2.0))], attrs


def _ftml_case(draw):
    shape = draw(shapes(max_dims=3))
    w, g, z = draw(arr(shape)), draw(arr(shape)), draw(arr(shape))
    d, v = draw(arr(shape, 0.1, 2.0)), draw(arr(shape, 0.1, 2.0))
    attrs = _common(draw)
    attrs["clip_grad"] = attrs.pop("clip_gradient")
    attrs.update(t=draw(st.integers(1, 4)), beta1=0.5, beta2=0.75, epsilon=0.0625)
    return [w, g, d, v, z], attrs


_RMS_EXTRA = {"gamma1": 0.5, "gamma2": 0.25, "epsilon": 0.0625}
_MP_TOL = {"rtol": 2e-3, "atol": 2e-3}

def _multi_case(stride: int, momentum: bool):
    """Several weights (of different shapes) with their gradients (and momenta)."""
    def case(draw):
        n = draw(st.integers(1, 3))
        xs = []
        for _ in range(n):
            shape = draw(shapes(max_dims=2))
            xs += [draw(arr(shape)) for _ in range(stride)]
        attrs = _common(draw, momentum)
        attrs.pop("lr"), attrs.pop("wd")
        attrs.update(num_weights=n, lrs=tuple(draw(st.sampled_from([0.5, 0.25])) for _ in range(n)),
                     wds=tuple(draw(st.sampled_from([0.0, 0.125])) for _ in range(n)))
        return xs, attrs
    return case


def _multi_ref(one, stride: int):
    def ref(*arrays, lrs, wds, num_weights, **kw):
        return tuple(one(*arrays[stride * i: stride * (i + 1)], lr=lrs[i], wd=wds[i], **kw)
                     for i in range(num_weights))
    return ref


SPECS = [
    OpSpec("multi_sgd_update", case=_multi_case(2, False), ref=_multi_ref(ref_sgd, 2), nondiff=_ND),
    OpSpec("multi_sgd_mom_update", case=_multi_case(3, True), ref=_multi_ref(ref_sgd_mom, 3), nondiff=_ND),
    OpSpec("sgd_update", case=_case(2), ref=ref_sgd, nondiff=_ND),
    OpSpec("sgd_mom_update", case=_case(3, momentum=True), ref=ref_sgd_mom, nondiff=_ND),
    OpSpec("nag_mom_update", case=_case(3, momentum=True), ref=ref_nag, nondiff=_ND),
    OpSpec("signsgd_update", case=_case(2), ref=ref_signsgd, nondiff=_ND),
    OpSpec("signum_update", case=_case(3, momentum=True, extra=lambda d: {"wd_lh": d(st.sampled_from([0.0, 0.25]))}),
           ref=ref_signum, nondiff=_ND),
    OpSpec("adam_update", case=_case(4, positive=(3,), extra=_adam_extra), ref=ref_adam, nondiff=_ND),
    OpSpec("rmsprop_update", case=_case(3, positive=(2,), extra=lambda d: {
        "gamma1": 0.5, "epsilon": 0.0625, "clip_weights": d(st.sampled_from([-1.0, 0.5]))}),
        ref=ref_rmsprop, nondiff=_ND),
    OpSpec("rmspropalex_update", case=_rmspropalex_case, ref=ref_rmspropalex, nondiff=_ND),
    OpSpec("_sparse_adagrad_update", case=_adagrad_case, ref=ref_adagrad, nondiff=_ND),
    OpSpec("ftrl_update", case=_case(4, positive=(3,), extra=lambda d: {"lamda1": d(st.sampled_from([0.0, 0.25])),
                                                                         "beta": 0.5}),
           ref=ref_ftrl, nondiff=_ND),
    OpSpec("ftml_update", case=_ftml_case, ref=ref_ftml, nondiff=_ND),
    OpSpec("lamb_update_phase1", case=_case(4, positive=(3,), extra=_lamb1_extra), ref=ref_lamb1, nondiff=_ND),
    OpSpec("lamb_update_phase2", case=_lamb2_case(), ref=ref_lamb2, nondiff=_ND),
    OpSpec("mp_sgd_update", case=_mp_case(0), ref=_mp_ref(ref_sgd, 0), nondiff=_ND, **_MP_TOL),
    OpSpec("mp_sgd_mom_update", case=_mp_case(1, momentum=True), ref=_mp_ref(ref_sgd_mom, 1), nondiff=_ND,
           **_MP_TOL),
    OpSpec("mp_nag_mom_update", case=_mp_case(1, momentum=True), ref=_mp_ref(ref_nag, 1), nondiff=_ND, **_MP_TOL),
    OpSpec("mp_lamb_update_phase1", case=_mp_case(2, positive=(1,), extra=_lamb1_extra),
           ref=_mp_ref(ref_lamb1, 2, np.float32), nondiff=_ND, rtol=1e-5, atol=1e-5),
    OpSpec("mp_lamb_update_phase2", case=_lamb2_case(mp=True), ref=_mp_lamb2_ref, nondiff=_ND, **_MP_TOL),
]
