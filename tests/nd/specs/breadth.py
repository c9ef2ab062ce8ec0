"""Specs of linalg_slogdet, multi_sum_sq, multi_lars, reset_arrays and the aggregated SGD operators
(multi_mp_*, preloaded_multi_*); their values against real MXNet are in tests/nd/ops/test_breadth_ops.py."""
from __future__ import annotations

import numpy as np
from hypothesis import assume, strategies as st

from tests.nd.specs.conv import conv_case, conv_ref
from tests.nd.specs.linalg import _square_case
from tests.nd.specs.optim import _ND, _common, ref_sgd, ref_sgd_mom
from tests.op_specs import OpSpec, arr, shapes

_MP_TOL = {"rtol": 2e-3, "atol": 2e-3}


def _per_matrix(values, a):
    return np.asarray(values).reshape(a.shape[:-2] or (1,))


def _slogdet_ref(a):
    sign, logabs = np.linalg.slogdet(a)
    return _per_matrix(sign, a), _per_matrix(logabs, a)


def _slogdet_backward_case(draw):
    (a,), _ = _square_case()(draw)
    return [draw(arr(a.shape[:-2] or (1,))), a], {}


def _slogdet_backward_ref(g, a):
    return g.reshape(a.shape[:-2] + (1, 1)) * np.swapaxes(np.linalg.inv(a), -1, -2)


def _arrays_case(draw):
    n = draw(st.integers(1, 3))
    return [draw(arr(shapes(max_dims=3))) for _ in range(n)], {"num_arrays": n}


def _lars_case(draw):
    n = draw(st.integers(1, 4))
    lrs, wds = draw(arr((n,), 0.01, 0.5)), draw(arr((n,), 0.0, 0.1))
    wsq, gsq = draw(arr((n,), 0.0, 4.0)), draw(arr((n,), 0.0, 4.0))
    wsq[0] = 0.0 if draw(st.booleans()) else wsq[0]       # the lr-unchanged branch
    return [lrs, wsq, gsq, wds], {"eta": draw(st.sampled_from([0.5, 1.0])), "eps": 1e-3,
                                  "rescale_grad": draw(st.sampled_from([1.0, 0.5]))}


def _lars_ref(lrs, wsq, gsq, wds, eta, eps, rescale_grad=1.0):
    lrs, wsq, gsq, wds = (x.astype(np.float32) for x in (lrs, wsq, gsq, wds))   # MXNet's float kernel
    wn = np.sqrt(wsq)
    with np.errstate(divide="ignore", invalid="ignore"):
        lars = lrs * eta * wn / (np.sqrt(gsq) * rescale_grad + wds * wn + eps)
    return np.where((wn > 0) & (gsq > 0), lars, lrs)


def _agg_case(momentum: bool, mp: bool, preloaded: bool):
    def case(draw):
        n = draw(st.integers(1, 3))
        xs, lrs, wds = [], [], []
        for _ in range(n):
            shape = draw(shapes(max_dims=2))
            w, g = draw(arr(shape)), draw(arr(shape))
            if mp:
                w, g = w.astype(np.float16), g.astype(np.float16)
            xs += [w, g] + ([draw(arr(shape)).astype(np.float32 if mp else np.float64)] if momentum else [])
            xs += [w.astype(np.float32)] if mp else []
            lrs.append(draw(st.sampled_from([0.5, 0.25])))
            wds.append(draw(st.sampled_from([0.0, 0.125])))
        attrs = _common(draw, momentum)
        attrs.pop("lr"), attrs.pop("wd")
        attrs["num_weights"] = n
        if preloaded:
            xs += [np.array(lrs, np.float32), np.array(wds, np.float32)]
        else:
            attrs.update(lrs=tuple(lrs), wds=tuple(wds))
        return xs, attrs
    return case


def _agg_ref(momentum: bool, mp: bool, preloaded: bool):
    stride = 2 + momentum + mp

    def ref(*arrays, num_weights, lrs=None, wds=None, **kw):
        if preloaded:
            lrs, wds, arrays = arrays[-2], arrays[-1], arrays[:-2]
        outs = []
        for i in range(num_weights):
            group = [x.astype(np.float64) for x in arrays[stride * i: stride * (i + 1)]]
            w = group[-1] if mp else group[0]
            step = ref_sgd_mom if momentum else ref_sgd
            new = step(w, group[1], *group[2:2 + momentum], lr=float(lrs[i]), wd=float(wds[i]), **kw)
            outs.append(new.astype(np.float32).astype(np.float16) if mp else new)
        return tuple(outs)
    return ref


def _agg(name: str, momentum: bool, mp: bool, preloaded: bool) -> OpSpec:
    return OpSpec(name, case=_agg_case(momentum, mp, preloaded), ref=_agg_ref(momentum, mp, preloaded),
                  nondiff=_ND, **(_MP_TOL if mp else {}))


def _reset_ref(*arrays, num_arrays):
    return ()


def _multicast_case(draw):
    n = draw(st.integers(1, 3))
    shape = draw(shapes(max_dims=3))
    return [draw(arr(shape)) for _ in range(n)], {"num_outputs": n, "cast_narrow": draw(st.booleans())}


def _conv_v1_case(draw):
    inputs, attrs = conv_case(draw)
    assume(len(attrs["kernel"]) >= 2)          # Convolution_v1 has 2-D and 3-D windows only
    return inputs, attrs


SPECS = [
    OpSpec("Convolution_v1", case=_conv_v1_case, ref=conv_ref),
    OpSpec("amp_multicast", case=_multicast_case, ref=lambda *xs, **kw: xs),   # float64 passes through
    OpSpec("_linalg_slogdet", case=_square_case(), ref=_slogdet_ref, grad_inputs=(0,)),
    OpSpec("_backward_linalg_slogdet", case=_slogdet_backward_case, ref=_slogdet_backward_ref,
           nondiff="hidden backward op without a gradient of its own (as MXNet)"),
    OpSpec("multi_sum_sq", case=_arrays_case, ref=lambda *xs, num_arrays: np.array([np.sum(x * x) for x in xs]),
           nondiff="MXNet registers no gradient for multi_sum_sq", rtol=1e-5),
    OpSpec("multi_lars", case=_lars_case, ref=_lars_ref, nondiff="MXNet registers no gradient for multi_lars",
           rtol=1e-5),
    OpSpec("reset_arrays", case=_arrays_case, ref=_reset_ref, nondiff="writes its inputs; no outputs"),
    _agg("multi_mp_sgd_update", False, True, False),
    _agg("multi_mp_sgd_mom_update", True, True, False),
    _agg("preloaded_multi_sgd_update", False, False, True),
    _agg("preloaded_multi_sgd_mom_update", True, False, True),
    _agg("preloaded_multi_mp_sgd_update", False, True, True),
    _agg("preloaded_multi_mp_sgd_mom_update", True, True, True),
]
