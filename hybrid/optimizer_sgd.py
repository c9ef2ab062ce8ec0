"""Stochastic gradient descent optimizers: SGD (and its deprecated alias
ccSGD), Signum, DCASGD, NAG and SGLD, with MXNet 1.9.1's arguments, state
layout and update formulas (fused `sgd_*` / `nag_*` / `signum_update`
kernels where MXNet calls them).
"""
from __future__ import annotations

import math
import os
import warnings
from itertools import chain, repeat
from operator import is_
from typing import Any

import numpy as np

from hybridgraph.nd.ndarray import NDArray

from .optimizer_base import ImplUpdates, Optimizer, _Kernel, _clip_grad, _common_kwargs, _kernel, _zeros, register


_SGD = _kernel("sgd_update")
_SGD_MOM = _kernel("sgd_mom_update")
_MP_SGD = _kernel("mp_sgd_update")
_MP_SGD_MOM = _kernel("mp_sgd_mom_update")
_MULTI_SGD = _kernel("multi_sgd_update")
_MULTI_SGD_MOM = _kernel("multi_sgd_mom_update")


def _sgd_step(weight: NDArray, grad: NDArray, state: Any, multi_precision: bool, attrs: dict) -> None:
    """One (mp_)sgd(_mom)_update call, in place on `weight`."""
    if not multi_precision:
        if state is not None:
            _SGD_MOM([weight, grad, state], attrs)
        else:
            _SGD([weight, grad], attrs)
    elif state[0] is not None:
        _MP_SGD_MOM([weight, grad, state[0], state[1]], attrs)
    else:
        _MP_SGD([weight, grad, state[1]], attrs)


class _SGDStates:
    """State layout shared by SGD, NAG and LARS: momentum (or None), and
    ``(momentum, weight32)`` for multi-precision float16 weights."""

    momentum: float
    multi_precision: bool

    def create_state_multi_precision(self, index: Any, weight: NDArray) -> Any:
        if self.multi_precision and weight.dtype == np.float16:
            weight_master_copy = weight.astype(np.float32)
            return (self.create_state(index, weight_master_copy), weight_master_copy)
        if weight.dtype == np.float16 and not self.multi_precision:
            warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy or slow "
                          f"convergence. Consider using multi_precision=True option of the "
                          f"{type(self).__name__} optimizer", stacklevel=2)
        return self.create_state(index, weight)

    def create_state(self, index: Any, weight: NDArray) -> NDArray | None:  # noqa: ARG002
        return _zeros(weight) if self.momentum != 0.0 else None


@register
class SGD(ImplUpdates, _SGDStates, Optimizer):
    """The SGD optimizer with momentum and weight decay.

    Updates (`sgd_update` / `sgd_mom_update`)::

        rescaled_grad = lr * (rescale_grad * clip(grad, clip_gradient) + wd * weight)
        state = momentum * state + rescaled_grad
        weight = weight - state

    Parameters
    ----------
    momentum : float, optional
        The momentum value.
    lazy_update : bool, optional
        Kept for MXNet compatibility (arrays are dense, so updates are never lazy).
    multi_precision : bool, optional
        Update a float32 master copy of float16 weights.
    """

    def __init__(self, momentum: float = 0.0, lazy_update: bool = True, **kwargs: Any):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))

    def _update_impl(self, indices: Any, weights: Any, grads: Any, states: Any,
                     multi_precision: bool = False) -> None:
        aggregate = isinstance(indices, (tuple, list))
        if not aggregate:
            indices, weights, grads, states = [indices], [weights], [grads], [states]
        self._update_count(indices)
        lrs = self._get_lrs(indices)
        wds = self._get_wds(indices)
        kwargs = _common_kwargs(self)
        momentum = self.momentum > 0
        if momentum:
            kwargs["momentum"] = self.momentum
        if aggregate and not multi_precision and not (momentum and any(map(is_, states, repeat(None)))):
            # MXNet's aggregated update: one multi_sgd(_mom)_update call for the group
            kwargs.update(lrs=tuple(lrs), wds=tuple(wds), num_weights=len(weights))
            groups = zip(weights, grads, states) if momentum else zip(weights, grads)
            (_MULTI_SGD_MOM if momentum else _MULTI_SGD)(list(chain.from_iterable(groups)), kwargs, list(weights))
            return
        for weight, grad, state, lr, wd in zip(weights, grads, states, lrs, wds):
            _sgd_step(weight, grad, state, multi_precision, {"lr": lr, "wd": wd, **kwargs})


@register
class ccSGD(SGD):  # noqa: N801 - MXNet's name
    """[DEPRECATED] Same as `SGD`. Left here for backward compatibility."""


@register
class Signum(Optimizer):
    r"""The Signum optimizer, which takes the sign of the gradient or momentum::

        rescaled_grad = rescale_grad * clip(grad, clip_gradient) + wd * weight
        state = momentum * state + (1-momentum)*rescaled_grad
        weight = (1 - lr * wd_lh) * weight - lr * sign(state)

    Parameters
    ----------
    momentum : float, optional
        The momentum value.
    wd_lh : float, optional
        The amount of decoupled weight decay regularization.
    """

    def __init__(self, learning_rate: float = 0.01, momentum: float = 0.9, wd_lh: float = 0.0, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index: Any, weight: NDArray) -> NDArray | None:
        return _zeros(weight) if self.momentum != 0.0 else None

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        kwargs = {"lr": self._get_lr(index), "wd": self._get_wd(index), **_common_kwargs(self)}
        if self.momentum > 0:
            kwargs["momentum"] = self.momentum
        if self.wd_lh:
            kwargs["wd_lh"] = self.wd_lh
        if state is not None:
            _kernel("signum_update")([weight, grad, state], kwargs)
        else:
            kwargs.pop("momentum", None)
            _kernel("signsgd_update")([weight, grad], kwargs)


@register
class DCASGD(Optimizer):
    """The DCASGD optimizer (*Asynchronous Stochastic Gradient Descent with Delay Compensation*).

    Parameters
    ----------
    momentum : float, optional
        The momentum value.
    lamda : float, optional
        Scale DC value.
    """

    def __init__(self, momentum: float = 0.0, lamda: float = 0.04, **kwargs: Any):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.weight_previous: dict = {}
        self.lamda = lamda

    def create_state(self, index: Any, weight: NDArray) -> tuple:
        return (None if self.momentum == 0.0 else _zeros(weight), weight.copy())

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        grad = _clip_grad(self, grad)
        mom, previous_weight = state
        step = -lr * (grad + wd * weight + self.lamda * grad * grad * (weight - previous_weight))
        if mom is not None:
            mom[:] *= self.momentum
            mom[:] += step
        else:
            mom = step
        previous_weight[:] = weight
        weight[:] += mom


_NAG_MOM = _kernel("nag_mom_update")
_MP_NAG_MOM = _kernel("mp_nag_mom_update")


def _nag_in_place(kernel: _Kernel, inputs: list, master: NDArray, kwargs: dict) -> None:
    """Run (mp_)nag_mom_update in place, as MXNet's optimizer does.

    MXNet's kernel writes the new weight before it writes the momentum, and the
    optimizer passes ``out=weight``, so the momentum's weight-decay term reads
    the *updated* weight (weight32 for mp_). The registry's kernel uses the
    weight from before the step; this adds the difference,
    ``-lr * wd * (new - old)``, so the optimizer's numbers equal MXNet's.
    """
    wd = kwargs["wd"]
    if not wd:
        kernel(inputs, kwargs)
        return
    old = master._data.copy()
    kernel(inputs, kwargs)
    mom = inputs[2]._data
    mom -= np.float32(kwargs["lr"]) * np.float32(wd) * (master._data - old).astype(mom.dtype, copy=False)


@register
class NAG(_SGDStates, Optimizer):
    """Nesterov accelerated gradient (`nag_mom_update`)::

        state = momentum * state + grad + wd * weight
        weight = weight - (lr * (grad + momentum * state))

    Parameters
    ----------
    momentum : float, optional
        The momentum value.
    multi_precision : bool, optional
        Update a float32 master copy of float16 weights.
    """

    def __init__(self, momentum: float = 0.0, **kwargs: Any):
        super().__init__(**kwargs)
        self.momentum = momentum

    def _update_impl(self, index: Any, weight: NDArray, grad: NDArray, state: Any,
                     multi_precision: bool = False) -> None:
        self._update_count(index)
        kwargs = {"lr": self._get_lr(index), "wd": self._get_wd(index), **_common_kwargs(self)}
        if self.momentum > 0:
            kwargs["momentum"] = self.momentum
        if not multi_precision:
            if state is not None:
                _nag_in_place(_NAG_MOM, [weight, grad, state], weight, kwargs)
            else:
                kwargs.pop("momentum", None)
                _SGD([weight, grad], kwargs)
        elif state[0] is not None:
            _nag_in_place(_MP_NAG_MOM, [weight, grad, state[0], state[1]], state[1], kwargs)
        else:
            kwargs.pop("momentum", None)
            _MP_SGD([weight, grad, state[1]], kwargs)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        use_mp = self.multi_precision and weight.dtype == np.float16 and isinstance(state, (tuple, list))
        self._update_impl(index, weight, grad, state, multi_precision=use_mp)


@register
class SGLD(Optimizer):
    """Stochastic Gradient Riemannian Langevin Dynamics: a half gradient step plus
    Gaussian noise of variance `lr`."""

    def create_state(self, index: Any, weight: NDArray) -> None:
        return None

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        from hybridgraph.nd import random as ndrandom
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        grad = _clip_grad(self, grad)
        weight[:] += - lr / 2 * (grad + wd * weight)
        weight[:] += ndrandom.normal(0, math.sqrt(lr), shape=weight.shape, dtype=weight.dtype,
                                     ctx=weight.context)
