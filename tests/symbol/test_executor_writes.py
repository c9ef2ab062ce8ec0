"""An Executor's in-place writes reach nd.writes watches (what keeps hybridized inference's
folded parameters fresh when an Executor is bound to the same arrays)."""
from __future__ import annotations

import numpy as np

from hybridgraph import nd
from hybridgraph import symbol as S  # noqa: N812
from hybridgraph.nd.writes import Watch


def _bn_net():
    x = S.var("data")
    return S.BatchNorm(S.FullyConnected(x, num_hidden=3, name="fc"), name="bn")


def test_copy_params_from_reports_its_writes():
    exe = _bn_net().simple_bind(nd.cpu(), data=(4, 5), grad_req="null")
    w = exe.arg_dict["fc_weight"]
    watch = Watch([w._data])
    exe.copy_params_from({"fc_weight": nd.ones(w.shape)}, allow_extra_params=True)
    assert watch.stale
    watch.close()


def test_training_backward_reports_the_moving_statistics():
    exe = _bn_net().simple_bind(nd.cpu(), data=(4, 5))
    for k, v in exe.arg_dict.items():
        v[:] = nd.array(np.random.RandomState(len(k)).rand(*v.shape))
    mean = exe.aux_dict["bn_moving_mean"]
    watch = Watch([mean._data])
    exe.forward(is_train=True)
    exe.backward([nd.ones((4, 3))])
    assert watch.stale
    watch.close()
