"""BatchNorm_v1 and contrib SyncBatchNorm (MXNet 1.9.1): batch normalization over the channel
axis 1, in float32, with the BatchNorm kernels of norm.py.

They differ from BatchNorm in what they expose: the third (hidden, or with output_mean_var
visible) output is the batch *variance*, not the inverse standard deviation, and there is no
`axis`. BatchNorm_v1 takes 2-D or 4-D data only. SyncBatchNorm synchronises the statistics of
`ndev` devices under `key`; hybridgraph runs on one process, where its result is the local
batch's (ndev > 1 raises: there is nothing to synchronise with). As in MXNet, the moving
statistics are updated by the backward pass.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import DTypeError, ShapeError
from ..registry import get_op, register
from .norm import _BN_INPUTS, _mean_center, _others

_COMMON = {
    "eps": Attr("float", 1e-3, "Epsilon to prevent div 0"),
    "momentum": Attr("float", 0.9, "Momentum for moving average"),
    "fix_gamma": Attr("bool", True, "Fix gamma while training"),
    "use_global_stats": Attr("bool", False, "Whether use global moving statistics instead of local "
                             "batch-norm. This will force change batch-norm into a scale shift operator."),
    "output_mean_var": Attr("bool", False, "Output All,normal mean and var"),
}
_SYNC = {**_COMMON,
         "ndev": Attr("int", 1, "The count of GPU devices"),
         "key": Attr("str", doc="Hash key for synchronization, please set the same hash key for same "
                                "layer, Block.prefix is typically used as in "
                                ":class:`gluon.nn.contrib.SyncBatchNorm`.")}


def _bn_attrs(a):
    """The BatchNorm attributes computing the same normalization (channel axis 1)."""
    return get_op("BatchNorm").parse_attrs({"eps": a.eps, "momentum": a.momentum, "fix_gamma": a.fix_gamma,
                                            "use_global_stats": a.use_global_stats, "axis": 1})


def _shape_rule(op: str, ndims: tuple | None):
    def infer(a, data, *params):
        if data is None:
            return None
        if (ndims is not None and len(data) not in ndims) or len(data) < 2:
            want = " or ".join(map(str, ndims)) if ndims else "at least 2"
            raise ShapeError(f"operator {op}: input 'data' must have {want} dimensions "
                             f"(batch, channel, ...), got {tuple(data)}")
        got = get_op("BatchNorm").infer_shape(_bn_attrs(a), data, *params)
        return None if got is None else (got[0], got[1])
    return infer


def _type_rule(op: str):
    def infer(a, data, *params):
        if data is None:
            return None
        for name, d in zip(_BN_INPUTS, (data, *params)):
            if d is not None and np.dtype(d) != np.float32:
                raise DTypeError(f"operator {op}: input {name!r} must be float32 (as MXNet 1.9.1's "
                                 f"kernel), got {np.dtype(d).name}")
        t = np.dtype(np.float32)
        return [t] * 5, [t] * 3
    return infer


def _forward(op: str, ndims: tuple | None):
    def forward(xp, a, data, gamma, beta, moving_mean, moving_var, is_train: bool = False):  # noqa: PLR0917
        _type_rule(op)(a, data.dtype, gamma.dtype, beta.dtype, moving_mean.dtype, moving_var.dtype)
        _shape_rule(op, ndims)(a, data.shape, gamma.shape, beta.shape, moving_mean.shape, moving_var.shape)
        if getattr(a, "ndev", 1) > 1:
            raise NotImplementedError(f"operator {op}: ndev={a.ndev} synchronises statistics across "
                                      "devices, which hybridgraph (one process) cannot do; use ndev=1 "
                                      "(or BatchNorm)")
        out, mean, _ = get_op("BatchNorm").forward(xp, _bn_attrs(a), data, gamma, beta, moving_mean, moving_var,
                                  is_train=is_train)
        if is_train and not a.use_global_stats:
            var = _mean_center(xp, data, _others(data.ndim, (1,)), np.dtype(np.float32))[2].reshape(-1)
        else:
            var = moving_var.copy()
        return out, mean, var
    return forward


def _gradient(F, a, inputs, outputs, ograds):
    data, gamma, _, moving_mean, moving_var = inputs
    invstd = F.rsqrt(F._plus_scalar(outputs[2], scalar=a.eps))
    dx, dgamma, dbeta = F._backward_BatchNorm(ograds[0], data, gamma, outputs[1], invstd, moving_mean,
                                              moving_var, eps=a.eps, momentum=a.momentum,
                                              fix_gamma=a.fix_gamma, use_global_stats=a.use_global_stats,
                                              axis=1)
    return [dx, dgamma, dbeta, None, None]


def _declare(name: str, attrs: dict, ndims: tuple | None, doc: str, **kwargs):
    register(name, inputs=_BN_INPUTS, aux=("moving_mean", "moving_var"), outputs=("output", "mean", "var"),
             num_visible_outputs=lambda a: 3 if a.output_mean_var else 1, attrs=dict(attrs),
             infer_shape=_shape_rule(name, ndims), infer_type=_type_rule(name), train_aware=True,
             learnable=("gamma", "beta", "moving_mean", "moving_var"), gradient=_gradient,
             var_init={3: '["zero", {}]', 4: '["one", {}]'}, doc=doc, **kwargs)(_forward(name, ndims))


_declare("BatchNorm_v1", _COMMON, (2, 4),
         "Batch normalization (MXNet's first version) over 2-D or 4-D float32 data, channel axis 1; "
         "the hidden outputs are the mean and the variance used.")
_declare("_contrib_SyncBatchNorm", _SYNC, None,
         "Cross-device synchronized batch normalization; on one process (ndev=1) the batch "
         "normalization of the local batch, channel axis 1, float32.", hint="syncbatchnorm")
