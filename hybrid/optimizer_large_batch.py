"""Layer-wise adaptive optimizers for large-batch training: LARS, LBSGD and
LAMB, with MXNet 1.9.1's arguments, state layout and update formulas.
"""
from __future__ import annotations

import math
import os
import warnings
from typing import Any

import numpy as np

from hybridgraph import nd
from hybridgraph.nd.ndarray import NDArray

from .optimizer_base import ImplUpdates, Optimizer, _common_kwargs, _kernel, _zeros, register
from .optimizer_sgd import _SGD, _SGDStates, _sgd_step


def _l2norm(v: NDArray) -> float:
    """The L2 norm of v, computed in float32 (MXNet's `NDnorm(v.astype('float32'))`)."""
    return float(nd.norm(v.astype("float32")).asnumpy().reshape(-1)[0])


@register
class LARS(ImplUpdates, _SGDStates, Optimizer):
    """The LARS optimizer (*Large Batch Training of Convolution Networks*).

    SGD with momentum whose per-layer rate is scaled (except for parameters whose
    name ends in gamma, beta or bias)::

        lr_layer = lr * eta * w_norm / (g_norm + wd * w_norm + eps)   if both norms > 0

    Parameters
    ----------
    momentum : float, optional
        The momentum value.
    lazy_update : bool, optional
        Kept for MXNet compatibility.
    eta : float, optional
        LARS coefficient.
    eps : float, optional
        Added to the denominator.
    momentum_correction : bool, optional
        Scale the momentum by the change of the global learning rate.
    """

    _decayed_suffixes = ("_weight",)  # MXNet's LARS also decays no ``_gamma``

    def __init__(self, momentum: float = 0.0, lazy_update: bool = True, eta: float = 0.001, eps: float = 0,
                 momentum_correction: bool = True, **kwargs: Any):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.momentum_correction = momentum_correction
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))
        self.eta = eta
        self.eps = eps
        self.skip = 0
        self.last_lr = None
        self.cur_lr = None

    def _get_lrs(self, indices: list) -> list:
        if self.cur_lr is not None:
            self.last_lr = self.cur_lr
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        if self.cur_lr is None:
            self.last_lr = lr
        self.cur_lr = lr
        return self._scaled_lrs(lr, indices)

    def _get_lars(self, i: Any, weight: NDArray, g: NDArray, lr: float, wd: float) -> float:
        """The layer's learning rate: `lr` scaled by the LARS trust ratio."""
        name = self.idx2name[i] if i in self.idx2name else str(i)
        if name.endswith(("gamma", "beta", "bias")):
            return lr
        w_norm = _l2norm(weight)
        g_norm = _l2norm(g) * self.rescale_grad
        lars = self.eta * w_norm / (g_norm + wd * w_norm + self.eps) if w_norm > 0.0 and g_norm > 0.0 else 1.0
        return lars * lr

    def _update_impl(self, indices: Any, weights: Any, grads: Any, states: Any,
                     multi_precision: bool = False) -> None:
        if not isinstance(indices, (tuple, list)):
            indices, weights, grads, states = [indices], [weights], [grads], [states]
        self._update_count(indices)
        lrs = self._get_lrs(indices)
        wds = self._get_wds(indices)
        kwargs = _common_kwargs(self)
        if self.momentum > 0:
            correct = self.momentum_correction and self.last_lr != 0
            kwargs["momentum"] = self.momentum * (self.cur_lr / self.last_lr) if correct else self.momentum
        lrs = [self._get_lars(i, w, g, lr, wd) for i, w, g, lr, wd in zip(indices, weights, grads, lrs, wds)]
        for weight, grad, state, lr, wd in zip(weights, grads, states, lrs, wds):
            _sgd_step(weight, grad, state, multi_precision, {"lr": lr, "wd": wd, **kwargs})


@register
class LBSGD(Optimizer):
    """The Large Batch SGD optimizer with momentum, weight decay and warmup of the
    rate multiplier (`warmup_strategy` 'linear', 'power2', 'sqrt' or 'lars').

    Parameters
    ----------
    momentum : float, optional
        The momentum value.
    multi_precision : bool, optional
        Update a float32 master copy of float16 weights.
    warmup_strategy : str
        'linear', 'power2', 'sqrt' or 'lars'.
    warmup_epochs : int
        Epochs of warmup.
    batch_scale : int
        Number of batches accumulated into one large batch.
    updates_per_epoch : int
        Updates per epoch (for warmup).
    begin_epoch : int
        Starting epoch.
    num_epochs : int
        Total number of epochs.
    """

    def __init__(self, momentum: float = 0.0, multi_precision: bool = False, warmup_strategy: str = "linear",
                 warmup_epochs: int = 5, batch_scale: int = 1, updates_per_epoch: int = 32,
                 begin_epoch: int = 0, num_epochs: int = 60, **kwargs: Any):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.multi_precision = multi_precision
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = warmup_epochs
        self.batch_scale = batch_scale
        self.updates_per_epoch = updates_per_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.lbmult = 1
        self.cumgrads: dict = {}
        self.adaptive = False
        self.admult = 1

    def create_state(self, index: Any, weight: NDArray) -> Any:
        momentum = None
        if self.multi_precision and weight.dtype == np.float16:
            weight_master_copy = weight.astype(np.float32)
            if self.momentum != 0.0:
                momentum = _zeros(weight, np.float32)
            return (momentum, weight_master_copy)
        if weight.dtype == np.float16 and not self.multi_precision:
            warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy or slow "
                          "convergence. Consider using multi_precision=True option of the SGD optimizer",
                          stacklevel=2)
        if self.momentum != 0.0:
            momentum = _zeros(weight)
        return momentum

    def _get_lbmult(self, nup: int) -> float:
        nwup = self.warmup_epochs * self.updates_per_epoch
        maxmult = float(self.batch_scale)
        if nup >= nwup:
            return maxmult
        if nwup <= 1:
            return 1.0
        if self.warmup_strategy == "linear":
            return 1.0 + (maxmult - 1) * nup / nwup
        if self.warmup_strategy == "power2":
            return 1.0 + (maxmult - 1) * (nup * nup) / (nwup * nwup)
        if self.warmup_strategy == "sqrt":
            return 1.0 + (maxmult - 1) * math.sqrt(float(nup) / nwup)
        return 1.0

    def _get_lars(self, weight: NDArray, g: NDArray, wd: float) -> float:
        weight2 = float((weight * weight).asnumpy().sum())
        grad2 = float((g * g).asnumpy().sum())
        lars = math.sqrt(weight2 / (grad2 + wd * weight2 + 1e-18))
        return min(max(lars, 0.01), 100)

    def _cumulate_gradient(self, grad: NDArray, index: Any) -> dict:
        cgrad = self.cumgrads.get(index, {})
        if cgrad and cgrad["num_cums"] > 0:
            cgrad = {"cum_grad": cgrad["cum_grad"] + grad, "num_cums": cgrad["num_cums"] + 1}
        else:
            cgrad = {"cum_grad": grad, "num_cums": self.init_updates + 1}
        self.cumgrads[index] = cgrad
        return cgrad

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        self._update_count(index)
        cgrad = self._cumulate_gradient(grad, index)
        if cgrad["num_cums"] % self.batch_scale != 0:
            _SGD([weight, grad], {"lr": 0.0, "wd": wd})
            return
        grad = cgrad["cum_grad"] / self.batch_scale
        if self.warmup_strategy == "lars":
            lbmult = self._get_lars(weight, grad, wd)
        else:
            lbmult = self._get_lbmult(cgrad["num_cums"])
        kwargs = {"lr": lr * lbmult, "wd": wd, **_common_kwargs(self)}
        if self.momentum > 0:
            kwargs["momentum"] = self.momentum
        _sgd_step(weight, grad, state, isinstance(state, (list, tuple)), kwargs)
        self.cumgrads[index]["cum_grad"] = 0


_LAMB1 = _kernel("lamb_update_phase1")
_LAMB2 = _kernel("lamb_update_phase2")
_MP_LAMB1 = _kernel("mp_lamb_update_phase1")
_MP_LAMB2 = _kernel("mp_lamb_update_phase2")


@register
class LAMB(ImplUpdates, Optimizer):
    """The LAMB optimizer (*Large Batch Optimization for Deep Learning*), run as
    `lamb_update_phase1` then `lamb_update_phase2` per weight.

    Parameters
    ----------
    beta1, beta2 : float
        Decay rates of the first and second moment estimates.
    epsilon : float
        Small value to avoid division by 0.
    lower_bound, upper_bound : float or None
        Bounds on the weight norm in the trust ratio.
    bias_correction : bool
        Whether to use bias correction.
    """

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-6, lower_bound: float | None = None, upper_bound: float | None = None,
                 bias_correction: bool = True, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction
        self.aggregate_num = max(1, min(45, int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "45"))))

    def create_state(self, index: Any, weight: NDArray) -> tuple:
        return (_zeros(weight), _zeros(weight))

    def _update_one(self, index: Any, weight: NDArray, grad: NDArray, state: Any, multi_precision: bool) -> None:
        self._update_count(index)
        kwargs = {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                  "bias_correction": self.bias_correction, "t": self._index_update_count[index],
                  "wd": self._get_wd(index), **_common_kwargs(self)}
        lr = self._get_lr(index)
        bounds = {}
        if self.lower_bound:
            bounds["lower_bound"] = self.lower_bound
        if self.upper_bound:
            bounds["upper_bound"] = self.upper_bound
        if multi_precision:
            weight32 = state[0]
            mean, var = state[1]
            g = nd.empty(weight.shape, ctx=weight.context, dtype=np.float32)
            _MP_LAMB1([weight, grad, mean, var, weight32], kwargs, out=g)
            _MP_LAMB2([weight, g, nd.norm(weight32), nd.norm(g), weight32], {"lr": lr, **bounds})
        else:
            mean, var = state
            g = nd.empty(weight.shape, ctx=weight.context, dtype=weight.dtype)
            _LAMB1([weight, grad, mean, var], kwargs, out=g)
            _LAMB2([weight, g, nd.norm(weight), nd.norm(g)], {"lr": lr, **bounds})

    def _update_impl(self, index: Any, weight: Any, grad: Any, state: Any, multi_precision: bool = False) -> None:
        if not isinstance(index, (tuple, list)):
            self._update_one(index, weight, grad, state, multi_precision)
            return
        for i, w, g, s in zip(index, weight, grad, state):
            self._update_one(i, w, g, s, multi_precision)
