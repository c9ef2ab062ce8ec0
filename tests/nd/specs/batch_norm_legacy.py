"""Specs for nd/ops/batch_norm_legacy.py: BatchNorm_v1 and contrib SyncBatchNorm (float32,
channel axis 1; MXNet 1.9.1's values: tests/nd/test_batch_norm_legacy.py)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr


def _case(ndims, extra):
    def case(draw):
        nd_ = draw(st.sampled_from(ndims))
        shape = (draw(st.integers(2, 3)), draw(st.integers(1, 3))) + tuple(
            draw(st.integers(1, 3)) for _ in range(nd_ - 2))
        c = shape[1]
        ins = [draw(arr(shape)), draw(arr((c,), 0.5, 1.5)), draw(arr((c,))), draw(arr((c,), -0.5, 0.5)),
               draw(arr((c,), 0.5, 1.5))]
        attrs = {"fix_gamma": draw(st.booleans()), "use_global_stats": draw(st.booleans()),
                 "eps": draw(st.sampled_from([1e-3, 1e-5])), **extra}
        return [x.astype(np.float32) for x in ins], attrs
    return case


def _ref(data, gamma, beta, moving_mean, moving_var, fix_gamma, use_global_stats, eps, **_):
    # the specs run at inference (is_train=False): the moving statistics normalize
    bs = (1, -1) + (1,) * (data.ndim - 2)
    g = np.ones_like(gamma) if fix_gamma else gamma
    x = data.astype(np.float64)
    out = (x - moving_mean.reshape(bs)) / np.sqrt(moving_var.reshape(bs) + eps) * g.reshape(bs) + beta.reshape(bs)
    return out


_GRAD = ("float32-only kernel (as MXNet's); its gradient is BatchNorm's (_backward_BatchNorm), "
         "checked against MXNet 1.9.1 in tests/nd/test_batch_norm_legacy.py")
SPECS = [
    OpSpec("BatchNorm_v1", case=_case((2, 4), {}), ref=_ref, rtol=1e-5, atol=1e-5, nondiff=_GRAD),
    OpSpec("_contrib_SyncBatchNorm", case=_case((2, 3, 4), {"key": "spec"}), ref=_ref, rtol=1e-5, atol=1e-5,
           nondiff=_GRAD),
]
