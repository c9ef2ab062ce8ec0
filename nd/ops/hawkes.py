"""contrib.hawkesll (MXNet 1.9.1's `_contrib_hawkesll`): the log likelihood of K independent
marked self-exciting (Hawkes) processes with exponential decay, for N ragged sequences.

Sample i has `valid_length[i]` events; event j comes `lags[i, j]` after the previous one
(whatever its mark) and has mark `marks[i, j]` in [0, K). Mark k has background intensity
``lda[i, k]``, branching ratio ``alpha[k]`` and decay ``beta[k]``; its conditional intensity
is ``lda + alpha * beta * sum(exp(-beta * (t - t_l)))`` over its own earlier events, plus the
carried-in memory ``state[i, k]`` decayed from time 0. The outputs are the log likelihood over
(0, max_time[i]] (shape (N,)) and the memory at max_time (shape (N, K)), to carry into the
next window. Each mark's memory follows ``s <- 1 + s * exp(-beta * d)`` at its events.

The gradient covers lda, alpha, beta and state and takes both outputs' head gradients into
account (MXNet 1.9.1 ignores the head gradient of the state output and leaves the state's
gradient unset; with the usual `ll.backward()` the two agree). lags, marks, valid_length and
max_time get no gradient: MXNet refuses to compute one for them.
"""
from __future__ import annotations

import numpy as np

from ..errors import DTypeError, ShapeError
from ..registry import register

_INPUTS = ("lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time")
_NDIMS = (2, 1, 1, 2, 2, 2, 1, 1)
_INT32 = np.dtype(np.int32)


def _check_shapes(shapes: tuple) -> tuple[int, int, int]:
    """(N, T, K) from the eight input shapes, checked as MXNet does."""
    for name, nd_, s in zip(_INPUTS, _NDIMS, shapes):
        if len(s) != nd_:
            raise ShapeError(f"operator _contrib_hawkesll: input {name!r} must be {nd_}-D, got shape {tuple(s)}")
    n, t = shapes[4]
    k = shapes[0][1]
    want = ((n, k), (k,), (k,), (n, k), (n, t), (n, t), (n,), (n,))
    for name, s, w in zip(_INPUTS, shapes, want):
        if tuple(s) != w:
            raise ShapeError(f"operator _contrib_hawkesll: input {name!r} must have shape {w} (N={n} sequences "
                             f"of T={t} events from lags, K={k} marks from lda), got {tuple(s)}")
    return n, t, k


def _hawkes_shape(a, *shapes):
    if any(s is None for s in shapes):
        return None
    n, _, k = _check_shapes(shapes)
    return list(shapes), [(n,), (n, k)]


def _hawkes_type(a, *types):
    known = [t for i, t in enumerate(types) if t is not None and i != 5]
    if not known:
        return None
    dt = types[0] if types[0] is not None else known[0]
    for name, t in zip(_INPUTS, types):
        if name == "marks":
            if t is not None and t != _INT32:
                raise DTypeError(f"operator _contrib_hawkesll: input 'marks' must be int32, got {t}")
        elif t is not None and t != dt:
            raise DTypeError(f"operator _contrib_hawkesll: input {name!r} has dtype {t} but 'lda' has {dt}; "
                             "all inputs but 'marks' must share one dtype")
    return [dt] * 5 + [_INT32, dt, dt], [dt, dt]


def _run(xp, lda, alpha, beta, state, lags, marks, valid_length, max_time, tangents: bool):
    """Log likelihood (N,), final memory (N, K) and, with `tangents`, the forward-mode
    derivatives of both w.r.t. lda, alpha, beta and state, in float64."""
    n, t_len, k = _check_shapes(tuple(x.shape for x in (lda, alpha, beta, state, lags, marks, valid_length,
                                                         max_time)))
    f = np.float64
    lda, alpha, beta, s = (x.astype(f) for x in (lda, alpha, beta, state))
    s = s.copy()
    lags, vl, tmax = lags.astype(f), valid_length.astype(f), max_time.astype(f)
    rows = xp.arange(n)
    last, now, ll = xp.zeros((n, k)), xp.zeros(n), xp.zeros(n)
    # per (i, k): d ll / d(lda, alpha, beta), and d s / d beta, d s / d state0 along the chain
    g_lda, g_alpha, g_beta = xp.zeros((n, k)), xp.zeros((n, k)), xp.zeros((n, k))
    ds_beta, ds_s0 = xp.zeros((n, k)), xp.ones((n, k))
    g_s0 = xp.zeros((n, k))
    for j in range(t_len):
        live = j < vl
        if not bool(live.any()):
            break
        r, c = rows[live], marks[live, j].astype(np.int64)
        if bool(((c < 0) | (c >= k)).any()):
            bad = int(c[(c < 0) | (c >= k)][0])
            raise ShapeError(f"operator _contrib_hawkesll: marks must be in [0, {k}) (K from lda), got {bad} "
                             f"at event {j}")
        now[r] += lags[r, j]
        d = now[r] - last[r, c]
        b, al, sp, mu = beta[c], alpha[c], s[r, c], lda[r, c]
        e = xp.exp(-b * d)
        lam = mu + al * b * sp * e
        ll[r] += xp.log(lam) - (mu * d + al * sp * (1 - e))
        if tangents:
            dsb, dss = ds_beta[r, c], ds_s0[r, c]
            g_lda[r, c] += 1 / lam - d
            g_alpha[r, c] += b * sp * e / lam - sp * (1 - e)
            g_beta[r, c] += al * e * (sp * (1 - b * d) + b * dsb) / lam - al * (dsb * (1 - e) + sp * d * e)
            g_s0[r, c] += (al * b * e / lam - al * (1 - e)) * dss
            ds_beta[r, c] = e * (dsb - d * sp)
            ds_s0[r, c] = e * dss
        s[r, c] = 1 + sp * e
        last[r, c] = now[r]
    dd = tmax[:, None] - last
    ee = xp.exp(-beta * dd)
    ll -= (lda * dd + alpha * s * (1 - ee)).sum(axis=1)
    out_state = ee * s
    if not tangents:
        return ll, out_state, None
    g_lda -= dd
    g_alpha -= s * (1 - ee)
    g_beta -= alpha * (ds_beta * (1 - ee) + s * dd * ee)
    g_s0 -= alpha * (1 - ee) * ds_s0
    # d out_state / d(beta, state0); it does not depend on lda or alpha
    st_beta, st_s0 = ee * ds_beta - dd * ee * s, ee * ds_s0
    return ll, out_state, (g_lda, g_alpha, g_beta, g_s0, st_beta, st_s0)


@register("_contrib_hawkesll", hint="hawkesll", inputs=_INPUTS, outputs=("output", "out_state"),
          infer_shape=_hawkes_shape, infer_type=_hawkes_type)
def hawkesll(xp, a, lda, alpha, beta, state, lags, marks, valid_length, max_time):
    """Log likelihood of marked Hawkes processes and their memory at max_time (see the module doc)."""
    ll, out_state, _ = _run(xp, lda, alpha, beta, state, lags, marks, valid_length, max_time, tangents=False)
    return ll.astype(lda.dtype), out_state.astype(lda.dtype)


@hawkesll.def_gradient
def _(F, a, inputs, outputs, ograds):
    grads = F._contrib_backward_hawkesll(ograds[0], ograds[1], *inputs)
    return [grads[0], grads[1], grads[2], grads[3], None, None, None, None]


@register("_contrib_backward_hawkesll", inputs=("ograd_output", "ograd_out_state", *_INPUTS),
          outputs=("lda_grad", "alpha_grad", "beta_grad", "state_grad"),
          infer_shape=lambda a, g1, g2, *s: None if any(x is None for x in s[:4]) else ([g1, g2, *s], list(s[:4])),
          infer_type=lambda a, g1, g2, *t: None if t[0] is None else ([t[0], t[0], *t], [t[0]] * 4))
def _contrib_backward_hawkesll(xp, a, g_ll, g_state, lda, alpha, beta, state, lags, marks, valid_length, max_time):
    """Gradients of _contrib_hawkesll w.r.t. lda, alpha, beta and state."""
    _, _, (g_lda, g_alpha, g_beta, g_s0, st_beta, st_s0) = _run(
        xp, lda, alpha, beta, state, lags, marks, valid_length, max_time, tangents=True)
    gl, gs = g_ll.astype(np.float64)[:, None], g_state.astype(np.float64)
    dt = lda.dtype
    return ((gl * g_lda).astype(dt), (gl * g_alpha).sum(axis=0).astype(dt),
            (gl * g_beta + gs * st_beta).sum(axis=0).astype(dt), (gl * g_s0 + gs * st_s0).astype(dt))
