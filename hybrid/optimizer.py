"""Optimizers (`mx.optimizer`): MXNet 1.9.1's weight-update rules.

Each optimizer mirrors MXNet's Python class: the same constructor arguments and
defaults, the same state layout (so `Trainer.save_states` pickles the same
structure), and the same update formula. Where MXNet calls a fused update
operator (`sgd_mom_update`, `adam_update`, ...) the registry's kernel of that
name runs in place on the weight; the others are written with NDArray
operations exactly as MXNet writes them.

Differences from MXNet, all deliberate:

- No sparse storage, so `lazy_update` never changes anything, and MXNet's
  aggregated multi-tensor kernels (`multi_sgd_update`, `multi_lamb_update`,
  `multi_lars`) are replaced by one per-tensor kernel call each (same formula).
- AdaDelta does not scale the caller's gradient array in place.
- DCASGD with momentum works (MXNet's `if mom:` raises for arrays of more than
  one element).
"""
from __future__ import annotations

import io
import math
import os
import pickle
import sys
import warnings
from typing import Any

import numpy as np

import nd
from nd.dispatch import parse_cached
from nd.ndarray import NDArray
from nd.registry import get_op

from . import lr_scheduler as _lr_scheduler_module

__all__ = ["AdaDelta", "AdaGrad", "Adam", "Adamax", "DCASGD", "FTML", "Ftrl", "LARS", "LBSGD", "NAG",
           "Nadam", "Optimizer", "RMSProp", "SGD", "SGLD", "Signum", "LAMB", "Test", "Updater", "ccSGD",
           "create", "get_updater", "register"]


# -- calling the registry's update kernels --------------------------------------------

class _Kernel:
    """An update operator of the registry, called in place on its weight.

    `run(inputs, attrs)` computes the kernel on `inputs` (weight first) and writes
    the result into the weight (or into `out`). The operator's own state inputs
    (momentum, moments) are updated in place by the kernel itself. This skips the
    front end's argument binding: one attribute parse (memoised) and one kernel.
    """

    __slots__ = ("op",)

    def __init__(self, name: str):
        self.op = get_op(name)

    def __call__(self, inputs: list, attrs: dict, out: NDArray | None = None) -> NDArray:
        op = self.op
        target = inputs[0] if out is None else out
        res = op.compute(target._ctx.xp, parse_cached(op, attrs), [x._data for x in inputs])
        target._data[...] = res[0]
        return target


def _kernel(name: str) -> _Kernel:
    return _Kernel(name)


def _zeros(weight: NDArray, dtype: Any = None) -> NDArray:
    return nd.zeros(weight.shape, ctx=weight.context, dtype=weight.dtype if dtype is None else dtype)


def _flatten(x: Any) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


class Optimizer:
    """The base class inherited by all optimizers.

    Parameters
    ----------
    rescale_grad : float, optional, default 1.0
        Multiply the gradient with `rescale_grad` before updating. Often
        chosen to be ``1.0/batch_size``.
    param_idx2name : dict from int to string, optional, default None
        A dictionary that maps int index to string name.
    clip_gradient : float, optional, default None
        Clip the gradient by projecting onto the box ``[-clip_gradient, clip_gradient]``.
    learning_rate : float, optional, default None
        The initial learning rate. If None, the rate of ``lr_scheduler`` is used;
        if that is None too, 0.01.
    lr_scheduler : LRScheduler, optional, default None
        The learning rate scheduler.
    wd : float, optional, default 0.0
        The weight decay (L2 regularization) coefficient.
    sym : Symbol, optional, default None
        The Symbol this optimizer is applying to (its `__lr_mult__` / `__wd_mult__`
        attributes set the multipliers).
    begin_num_update : int, optional, default 0
        The initial number of updates.
    multi_precision : bool, optional, default False
        Keep a float32 master copy of float16 weights and update that.
    param_dict : dict of int -> gluon.Parameter, default None
        Parameter of each index, whose `lr_mult` / `wd_mult` are used. Not deep copied.

    Properties
    ----------
    learning_rate : float
        The current learning rate of the optimizer.
    """

    opt_registry: dict[str, type] = {}

    def __init__(self, rescale_grad: float = 1., param_idx2name: dict | None = None, wd: float = 0.,
                 clip_gradient: float | None = None, learning_rate: float | None = None,
                 lr_scheduler: Any = None, sym: Any = None, begin_num_update: int = 0,
                 multi_precision: bool = False, param_dict: dict | None = None):
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if self.lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if self.lr_scheduler is not None and learning_rate is not None \
                and self.lr_scheduler.base_lr != learning_rate:
            print(UserWarning("learning rate from ``lr_scheduler`` has been overwritten by "
                              "``learning_rate`` in optimizer."))
            self.lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.lr_mult: dict = {}
        self.wd_mult: dict = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts: dict = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise TypeError("param_idx2name should be a dict of param indexes to names.")
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.allow_np_array = False
        self.set_lr_mult({})
        self.set_wd_mult({})

    # -- registry ---------------------------------------------------------------------
    @staticmethod
    def register(klass: type) -> type:
        """Register an optimizer class under its lower-cased name (`@mx.optimizer.register`)."""
        if not isinstance(klass, type):
            raise TypeError(f"register expects a class, got {klass!r}")
        name = klass.__name__.lower()
        if name in Optimizer.opt_registry:
            old = Optimizer.opt_registry[name]
            warnings.warn(f"WARNING: New optimizer {klass.__module__}.{klass.__name__} is overriding existing "
                          f"optimizer {old.__module__}.{old.__name__}", stacklevel=2)
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name: str, **kwargs: Any) -> "Optimizer":
        """Instantiate a registered optimizer by (case-insensitive) name."""
        if name.lower() in Optimizer.opt_registry:
            return Optimizer.opt_registry[name.lower()](**kwargs)
        raise ValueError(f"Cannot find optimizer {name}")

    # -- learning rate ------------------------------------------------------------------
    @property
    def learning_rate(self) -> float:
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr: float) -> None:
        """Set a new learning rate (only when there is no lr_scheduler)."""
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been defined. Note that "
                              "set_learning_rate can mutate the value of the learning rate of the optimizer "
                              "only when the LRScheduler of the optimizer is undefined.")
        self.lr = lr

    def set_lr_scale(self, args_lrscale: dict) -> None:  # noqa: ARG002 - MXNet's deprecated API
        """[DEPRECATED] Sets lr scale. Use set_lr_mult instead."""
        raise DeprecationWarning

    def set_lr_mult(self, args_lr_mult: dict) -> None:
        """Set a learning rate multiplier per parameter name (or index)."""
        self.lr_mult = {}
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and "__lr_mult__" in attr[name]:
                    self.lr_mult[name] = float(attr[name]["__lr_mult__"])
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult: dict) -> None:
        """Set a weight decay multiplier per parameter name (or index).

        Names from `param_idx2name` that end neither in ``_weight`` nor ``_gamma``
        get 0 (no weight decay on biases), as in MXNet.
        """
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not (n.endswith("_weight") or n.endswith("_gamma")):
                self.wd_mult[n] = 0.0
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and "__wd_mult__" in attr[name]:
                    self.wd_mult[name] = float(attr[name]["__wd_mult__"])
        self.wd_mult.update(args_wd_mult)

    # -- bookkeeping -----------------------------------------------------------------------
    def _set_current_context(self, device_id: int) -> None:
        """Switch the per-device update counters."""
        if device_id not in self._all_index_update_counts:
            self._all_index_update_counts[device_id] = {}
        self._index_update_count = self._all_index_update_counts[device_id]

    def _update_count(self, index: Any) -> None:
        """Count one more update of `index` (an index or a list of them)."""
        counts = self._index_update_count
        for idx in (index if isinstance(index, (list, tuple)) else (index,)):
            n = counts.get(idx, self.begin_num_update) + 1
            counts[idx] = n
            self.num_update = max(self.num_update, n)

    def _get_lrs(self, indices: list) -> list:
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        lrs = [lr] * len(indices)
        for i, index in enumerate(indices):
            if index in self.param_dict:
                lrs[i] *= self.param_dict[index].lr_mult
            elif index in self.lr_mult:
                lrs[i] *= self.lr_mult[index]
            elif index in self.idx2name:
                lrs[i] *= self.lr_mult.get(self.idx2name[index], 1.0)
        return lrs

    def _get_lr(self, index: Any) -> float:
        return self._get_lrs([index])[0]

    def _get_wds(self, indices: list) -> list:
        wds = [self.wd] * len(indices)
        for i, index in enumerate(indices):
            if index in self.param_dict:
                wds[i] *= self.param_dict[index].wd_mult
            elif index in self.wd_mult:
                wds[i] *= self.wd_mult[index]
            elif index in self.idx2name:
                wds[i] *= self.wd_mult.get(self.idx2name[index], 1.0)
        return wds

    def _get_wd(self, index: Any) -> float:
        return self._get_wds([index])[0]

    # -- states and updates ----------------------------------------------------------------
    def create_state(self, index: Any, weight: NDArray) -> Any:
        """Create the auxiliary state (e.g. momentum) of one weight; None when there is none."""
        return None

    def create_state_multi_precision(self, index: Any, weight: NDArray) -> Any:
        """Like `create_state`, plus a float32 master copy of a float16 weight when
        `multi_precision` is on: returns ``(weight32, state)``."""
        if self.multi_precision and weight.dtype == np.float16:
            weight_master_copy = weight.astype(np.float32)
            return (weight_master_copy, self.create_state(index, weight_master_copy))
        if weight.dtype == np.float16 and not self.multi_precision:
            warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy or slow "
                          "convergence. Consider using multi_precision=True option of the optimizer",
                          stacklevel=2)
        return self.create_state(index, weight)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """Update `weight` in place from `grad` and `state`."""
        raise NotImplementedError()

    def update_multi_precision(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """`update`, run on the float32 master copy when the weight is float16 and
        `multi_precision` is on."""
        if self.multi_precision and weight.dtype == np.float16:
            weight_master_copy, original_state = state
            self.update(index, weight_master_copy, grad.astype(np.float32), original_state)
            weight._data[...] = weight_master_copy._data.astype(weight.dtype)
        else:
            self.update(index, weight, grad, state)

    # -- pickling (Trainer.save_states) -------------------------------------------------------
    def __getstate__(self) -> dict:
        ret = self.__dict__.copy()
        del ret["param_dict"]  # set again by the trainer that loads it
        return ret

    def __setstate__(self, state: dict) -> None:
        self.__dict__ = state
        self.param_dict = {}


register = Optimizer.register
create = Optimizer.create_optimizer


def _common_kwargs(opt: Optimizer, clip_name: str = "clip_gradient") -> dict:
    """`rescale_grad`, plus the clip bound when set (MXNet tests it for truth)."""
    kwargs = {"rescale_grad": opt.rescale_grad}
    if opt.clip_gradient:
        kwargs[clip_name] = opt.clip_gradient
    return kwargs


def _clip_grad(opt: Optimizer, grad: NDArray) -> NDArray:
    """``clip(grad * rescale_grad)`` with MXNet's `is not None` test of the Python optimizers."""
    grad = grad * opt.rescale_grad
    if opt.clip_gradient is not None:
        grad = nd.clip(grad, -opt.clip_gradient, opt.clip_gradient)
    return grad


_SGD = _kernel("sgd_update")
_SGD_MOM = _kernel("sgd_mom_update")
_MP_SGD = _kernel("mp_sgd_update")
_MP_SGD_MOM = _kernel("mp_sgd_mom_update")


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
class SGD(_SGDStates, Optimizer):
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
        if not isinstance(indices, (tuple, list)):
            indices, weights, grads, states = [indices], [weights], [grads], [states]
        self._update_count(indices)
        lrs = self._get_lrs(indices)
        wds = self._get_wds(indices)
        kwargs = _common_kwargs(self)
        if self.momentum > 0:
            kwargs["momentum"] = self.momentum
        for weight, grad, state, lr, wd in zip(weights, grads, states, lrs, wds):
            _sgd_step(weight, grad, state, multi_precision, {"lr": lr, "wd": wd, **kwargs})

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        first = weight[0] if isinstance(index, (tuple, list)) else weight
        self._update_impl(index, weight, grad, state,
                          multi_precision=self.multi_precision and first.dtype == np.float16)


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
class FTML(Optimizer):
    """The FTML optimizer (*FTML - Follow the Moving Leader in Deep Learning*)::

        rescaled_grad = clip(grad * rescale_grad + wd * weight, clip_gradient)
        v = beta2 * v + (1 - beta2) * square(rescaled_grad)
        d_t = (1 - power(beta1, t)) / lr * (square_root(v / (1 - power(beta2, t))) + epsilon)
        z = beta1 * z + (1 - beta1) * rescaled_grad - (d_t - beta1 * d_(t-1)) * weight
        weight = - z / d_t

    Parameters
    ----------
    beta1 : float, optional
        0 < beta1 < 1. Generally close to 0.5.
    beta2 : float, optional
        0 < beta2 < 1. Generally close to 1.
    epsilon : float, optional
        Small value to avoid division by 0.
    """

    def __init__(self, beta1: float = 0.6, beta2: float = 0.999, epsilon: float = 1e-8, **kwargs: Any):
        super().__init__(**kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index: Any, weight: NDArray) -> tuple:
        return (_zeros(weight), _zeros(weight), _zeros(weight))  # d_0, v_0, z_0

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        kwargs = {"lr": self._get_lr(index), "wd": self._get_wd(index), "beta1": self.beta1,
                  "beta2": self.beta2, "epsilon": self.epsilon, "t": self._index_update_count[index],
                  **_common_kwargs(self, "clip_grad")}
        prev_d, prev_v, prev_z = state
        _kernel("ftml_update")([weight, grad, prev_d, prev_v, prev_z], kwargs)


def _l2norm(v: NDArray) -> float:
    """The L2 norm of v, computed in float32 (MXNet's `NDnorm(v.astype('float32'))`)."""
    return float(nd.norm(v.astype("float32")).asnumpy().reshape(-1)[0])


@register
class LARS(_SGDStates, Optimizer):
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
        lrs = [lr] * len(indices)
        for i, index in enumerate(indices):
            if index in self.param_dict:
                lrs[i] *= self.param_dict[index].lr_mult
            elif index in self.lr_mult:
                lrs[i] *= self.lr_mult[index]
            elif index in self.idx2name:
                lrs[i] *= self.lr_mult.get(self.idx2name[index], 1.0)
        return lrs

    def set_wd_mult(self, args_wd_mult: dict) -> None:
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not n.endswith("_weight"):
                self.wd_mult[n] = 0.0
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and "__wd_mult__" in attr[name]:
                    self.wd_mult[name] = float(attr[name]["__wd_mult__"])
        self.wd_mult.update(args_wd_mult)

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

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        first = weight[0] if isinstance(index, (tuple, list)) else weight
        self._update_impl(index, weight, grad, state,
                          multi_precision=self.multi_precision and first.dtype == np.float16)


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
class LAMB(Optimizer):
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

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        first = weight[0] if isinstance(index, (tuple, list)) else weight
        self._update_impl(index, weight, grad, state,
                          multi_precision=self.multi_precision and first.dtype == np.float16)


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
        from nd import random as ndrandom
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        grad = _clip_grad(self, grad)
        weight[:] += - lr / 2 * (grad + wd * weight)
        weight[:] += ndrandom.normal(0, math.sqrt(lr), shape=weight.shape, dtype=weight.dtype,
                                     ctx=weight.context)


@register
class Adam(Optimizer):
    """The Adam optimizer (*Adam: A Method for Stochastic Optimization*), via `adam_update`::

        rescaled_grad = clip(grad * rescale_grad + wd * weight, clip_gradient)
        m = beta1 * m + (1 - beta1) * rescaled_grad
        v = beta2 * v + (1 - beta2) * (rescaled_grad**2)
        lr = learning_rate * sqrt(1 - beta2**t) / (1 - beta1**t)
        w = w - lr * m / (sqrt(v) + epsilon)

    Parameters
    ----------
    beta1 : float, optional
        Exponential decay rate for the first moment estimates.
    beta2 : float, optional
        Exponential decay rate for the second moment estimates.
    epsilon : float, optional
        Small value to avoid division by 0.
    lazy_update : bool, optional
        Kept for MXNet compatibility.
    """

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, lazy_update: bool = True, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def create_state(self, index: Any, weight: NDArray) -> tuple:
        return (_zeros(weight), _zeros(weight))  # mean, variance

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        t = self._index_update_count[index]
        coef1 = 1. - self.beta1 ** t
        coef2 = 1. - self.beta2 ** t
        lr *= math.sqrt(coef2) / coef1
        kwargs = {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon, "lr": lr, "wd": wd,
                  **_common_kwargs(self)}
        mean, var = state
        _kernel("adam_update")([weight, grad, mean, var], kwargs)


@register
class AdaGrad(Optimizer):
    """The AdaGrad optimizer (*Adaptive Subgradient Methods*)::

        grad = clip(grad * rescale_grad, clip_gradient)
        history += square(grad)
        div = grad / sqrt(history + float_stable_eps)
        weight += (div + weight * wd) * -lr

    Parameters
    ----------
    eps : float, optional
        Initial value of the history accumulator. Avoids division by 0.
    """

    def __init__(self, eps: float = 1e-7, **kwargs: Any):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index: Any, weight: NDArray) -> NDArray:
        return nd.zeros(weight.shape, ctx=weight.context)  # history (float32, as MXNet)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        history = state
        grad = _clip_grad(self, grad)
        history[:] += nd.square(grad)
        div = grad / nd.sqrt(history + self.float_stable_eps)
        weight[:] += (div + weight * wd) * -lr


@register
class RMSProp(Optimizer):
    """The RMSProp optimizer: Tieleman & Hinton's (`rmsprop_update`), or Graves's
    centered version (`rmspropalex_update`) when ``centered=True``.

    Parameters
    ----------
    gamma1 : float, optional
        Decay factor of the moving average of squared gradients.
    gamma2 : float, optional
        A "momentum" factor, used only when `centered`.
    epsilon : float, optional
        Small value to avoid division by 0.
    centered : bool, optional
        Use Graves's centered RMSProp.
    clip_weights : float, optional
        Clip weights into ``[-clip_weights, clip_weights]``.
    """

    def __init__(self, learning_rate: float = 0.001, gamma1: float = 0.9, gamma2: float = 0.9,
                 epsilon: float = 1e-8, centered: bool = False, clip_weights: float | None = None, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    def create_state(self, index: Any, weight: NDArray) -> tuple:
        n = 3 if self.centered else 1  # n (, g, delta); float32, as MXNet
        return tuple(nd.zeros(weight.shape, ctx=weight.context) for _ in range(n))

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        kwargs = {"lr": self._get_lr(index), "wd": self._get_wd(index), "gamma1": self.gamma1,
                  "epsilon": self.epsilon, **_common_kwargs(self)}
        if self.centered:
            kwargs["gamma2"] = self.gamma2
        if self.clip_weights:
            kwargs["clip_weights"] = self.clip_weights
        if not self.centered:
            _kernel("rmsprop_update")([weight, grad, state[0]], kwargs)
        else:
            n, g, delta = state
            _kernel("rmspropalex_update")([weight, grad, n, g, delta], kwargs)


@register
class AdaDelta(Optimizer):
    """The AdaDelta optimizer (*ADADELTA: An adaptive learning rate method*)::

        grad = clip(grad * rescale_grad, clip_gradient)
        acc_grad = rho * acc_grad + (1. - rho) * grad * grad
        delta = sqrt(acc_delta + epsilon) / sqrt(acc_grad + epsilon) * grad
        acc_delta = rho * acc_delta + (1. - rho) * delta * delta
        weight -= (delta + wd * weight)

    Parameters
    ----------
    rho : float
        Decay rate for both squared gradients and delta.
    epsilon : float
        Small value to avoid division by 0.
    """

    def __init__(self, rho: float = 0.90, epsilon: float = 1e-5, **kwargs: Any):
        super().__init__(**kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index: Any, weight: NDArray) -> tuple:
        return (nd.zeros(weight.shape, ctx=weight.context),  # accumulated g
                nd.zeros(weight.shape, ctx=weight.context))  # accumulated delta

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        wd = self._get_wd(index)
        self._update_count(index)
        grad = _clip_grad(self, grad)
        acc_g, acc_delta = state
        acc_g[:] *= self.rho
        acc_g[:] += (1. - self.rho) * grad * grad
        current_delta = nd.sqrt(acc_delta + self.epsilon) / nd.sqrt(acc_g + self.epsilon) * grad
        acc_delta[:] *= self.rho
        acc_delta[:] += (1. - self.rho) * current_delta * current_delta
        weight[:] -= current_delta + wd * weight


@register
class Ftrl(Optimizer):
    """The Ftrl optimizer (*Ad Click Prediction: a View from the Trenches*), via `ftrl_update`::

        rescaled_grad = clip(grad * rescale_grad, clip_gradient)
        z += rescaled_grad - (sqrt(n + rescaled_grad**2) - sqrt(n)) * weight / learning_rate
        n += rescaled_grad**2
        w = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / learning_rate + wd) * (abs(z) > lamda1)

    Parameters
    ----------
    lamda1 : float, optional
        L1 regularization coefficient.
    learning_rate : float, optional
        The initial learning rate.
    beta : float, optional
        Per-coordinate learning rate correlation parameter.
    """

    def __init__(self, lamda1: float = 0.01, learning_rate: float = 0.1, beta: float = 1, **kwargs: Any):
        super().__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index: Any, weight: NDArray) -> tuple:
        return (nd.zeros(weight.shape, ctx=weight.context),  # z
                nd.zeros(weight.shape, ctx=weight.context))  # n

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        wd = self._get_wd(index)
        lr = self._get_lr(index)
        kwargs = {"lamda1": self.lamda1, "beta": self.beta, "lr": lr, "wd": wd, **_common_kwargs(self)}
        z, n = state
        _kernel("ftrl_update")([weight, grad, z, n], kwargs)


@register
class Adamax(Optimizer):
    """The AdaMax optimizer, Adam with the infinity norm::

        grad = clip(grad * rescale_grad + wd * weight, clip_gradient)
        m = beta1 * m_t + (1 - beta1) * grad
        u = maximum(beta2 * u, abs(grad))
        weight -= lr / (1 - beta1**t) * m / u

    Parameters
    ----------
    beta1 : float, optional
        Exponential decay rate for the first moment estimates.
    beta2 : float, optional
        Exponential decay rate for the second moment estimates.
    """

    def __init__(self, learning_rate: float = 0.002, beta1: float = 0.9, beta2: float = 0.999, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2

    def create_state(self, index: Any, weight: NDArray) -> tuple:
        return (_zeros(weight), _zeros(weight))  # mean, variance

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        t = self._index_update_count[index]
        lr /= (1. - self.beta1 ** t)
        grad = grad * self.rescale_grad + wd * weight
        if self.clip_gradient is not None:
            grad = nd.clip(grad, -self.clip_gradient, self.clip_gradient)
        m_t, u_t = state
        m_t[:] *= self.beta1
        m_t[:] += (1. - self.beta1) * grad
        u_t[:] = nd.maximum(self.beta2 * u_t, nd.abs(grad))
        weight[:] -= lr * m_t / u_t


@register
class Nadam(Optimizer):
    """The Nesterov Adam optimizer.

    Parameters
    ----------
    beta1 : float, optional
        Exponential decay rate for the first moment estimates.
    beta2 : float, optional
        Exponential decay rate for the second moment estimates.
    epsilon : float, optional
        Small value to avoid division by 0.
    schedule_decay : float, optional
        Exponential decay rate for the momentum schedule.
    """

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, schedule_decay: float = 0.004, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.

    def create_state(self, index: Any, weight: NDArray) -> tuple:
        return (_zeros(weight), _zeros(weight))  # mean, variance

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        t = self._index_update_count[index]
        grad = grad * self.rescale_grad + wd * weight
        if self.clip_gradient is not None:
            grad = nd.clip(grad, -self.clip_gradient, self.clip_gradient)
        momentum_t = self.beta1 * (1. - 0.5 * (pow(0.96, t * self.schedule_decay)))
        momentum_t_1 = self.beta1 * (1. - 0.5 * (pow(0.96, (t + 1) * self.schedule_decay)))
        self.m_schedule = self.m_schedule * momentum_t
        m_schedule_next = self.m_schedule * momentum_t_1
        m_t, v_t = state
        m_t[:] *= self.beta1
        m_t[:] += (1. - self.beta1) * grad
        v_t[:] *= self.beta2
        v_t[:] += (1. - self.beta2) * grad * grad
        grad_prime = grad / (1. - self.m_schedule)
        m_t_prime = m_t / (1. - m_schedule_next)
        v_t_prime = v_t / (1. - pow(self.beta2, t))
        m_t_bar = (1. - momentum_t) * grad_prime + momentum_t_1 * m_t_prime
        weight[:] -= lr * m_t_bar / (nd.sqrt(v_t_prime) + self.epsilon)


@register
class Test(Optimizer):
    """The Test optimizer: ``weight += rescale_grad * grad``; the state copies the weight."""

    def create_state(self, index: Any, weight: NDArray) -> NDArray:
        return nd.zeros(weight.shape, ctx=weight.context)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        weight[:] += grad * self.rescale_grad
        state[:] = weight


# -- Updater: states per index, pickled by Trainer.save_states ------------------------------

class Updater:
    """Applies an optimizer to (index, grad, weight) triples, creating each index's
    state on first use (MXNet's kvstore updater)."""

    def __init__(self, optimizer: Optimizer):
        self.optimizer = optimizer
        self.states: dict = {}
        self.states_synced: dict = {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def __call__(self, index: Any, grad: Any, weight: Any) -> None:
        """Update weight(s) given gradient(s) and index(es)."""
        if not isinstance(index, (list, tuple)):
            indices, grads, weights = [index], [grad], [weight]
        else:
            indices, grads, weights = list(index), grad, weight
        if not weights:
            return
        opt = self.optimizer
        opt._set_current_context(weights[0].context.device_id)
        states = self.states
        for i, idx in enumerate(indices):
            if isinstance(idx, bytes):
                idx = indices[i] = idx.decode()
            if idx not in states:
                states[idx] = opt.create_state_multi_precision(idx, weights[i])
                self.states_synced[idx] = True
            elif not self.states_synced[idx]:
                states[idx] = self.sync_state_context(states[idx], weights[i].context)
                self.states_synced[idx] = True
        step = opt.aggregate_num
        if not self.aggregate_updates or step <= 0:  # the optimizer may have been replaced by set_states
            for i, w, g in zip(indices, weights, grads):
                opt.update_multi_precision(i, w, g, states[i])
            return
        by_dtype: dict = {}
        for i, w, g in zip(indices, weights, grads):
            by_dtype.setdefault(w.dtype, []).append((i, w, g))
        for group in by_dtype.values():
            idxs, ws, gs = zip(*group)
            for start in range(0, len(idxs), step):
                stop = start + step
                opt.update_multi_precision(list(idxs[start:stop]), list(ws[start:stop]), list(gs[start:stop]),
                                           [states[k] for k in idxs[start:stop]])

    def sync_state_context(self, state: Any, context: Any) -> Any:
        """Move a state (an NDArray, or nested tuples/lists of them) to `context`."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = [self.sync_state_context(s, context) for s in state]
            return tuple(synced) if isinstance(state, tuple) else synced
        return state

    def set_states(self, states: bytes) -> None:
        """Set the states from `get_states` bytes (also reads MXNet 1.x's)."""
        states = loads_states(states)
        if isinstance(states, tuple) and len(states) == 2:
            self.states, self.optimizer = states
        else:
            self.states = states
        self.states_synced = dict.fromkeys(self.states.keys(), False)
        self.aggregate_updates = self.optimizer.aggregate_num > 0

    def get_states(self, dump_optimizer: bool = False) -> bytes:
        """The states as pickled bytes; with `dump_optimizer`, the optimizer too
        (learning rate, schedules, update counts)."""
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)


def get_updater(optimizer: Optimizer) -> Updater:
    """Return an `Updater` applying `optimizer`."""
    return Updater(optimizer)


# -- reading states pickles (ours and MXNet 1.x's) ---------------------------------------------

class _MXNetArray:
    """Stand-in for `mxnet.ndarray.NDArray` while unpickling: keeps MXNet's raw bytes."""

    def __init__(self, *_args: Any):
        self.raw: bytes | None = None

    def __setstate__(self, state: dict) -> None:
        self.raw = state.get("handle")

    def to_ndarray(self) -> NDArray | None:
        from nd.serialization import _NONE, _read_record, _Reader
        if self.raw is None:
            return None
        arr = _read_record(_Reader(bytes(self.raw)), 0)
        return None if arr is _NONE else nd.array(arr, dtype=arr.dtype)


_MXNET_MODULES = {
    "mxnet.optimizer.optimizer": __name__, "mxnet.optimizer": __name__, "mxnet.optimizer.contrib": __name__,
    "mxnet.lr_scheduler": _lr_scheduler_module.__name__,
}
_SAFE_GLOBALS = {
    ("builtins", "bytearray"), ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "complex"),
    ("builtins", "slice"), ("builtins", "range"), ("collections", "OrderedDict"), ("nd.ndarray", "_rebuild"),
    ("numpy", "dtype"), ("numpy", "ndarray"), ("numpy.core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "scalar"), ("copyreg", "_reconstructor"), ("builtins", "object"),
}


class _StatesUnpickler(pickle.Unpickler):
    """Unpickles optimizer states: only optimizers, schedulers, arrays and plain data.

    MXNet's class paths are mapped to ours, so `.states` files written by MXNet 1.x
    load too. User-defined optimizer or scheduler classes are allowed when their
    module is already imported.
    """

    def find_class(self, module: str, name: str) -> Any:
        if module == "mxnet.ndarray.ndarray" and name == "NDArray":
            return _MXNetArray
        module = _MXNET_MODULES.get(module, module)
        if (module, name) in _SAFE_GLOBALS:
            return super().find_class(module, name)
        mod = sys.modules.get(module)
        obj = getattr(mod, name, None) if mod is not None else None
        if isinstance(obj, type) and issubclass(obj, (Optimizer, _lr_scheduler_module.LRScheduler)):
            return obj
        raise pickle.UnpicklingError(f"optimizer states: refusing to load global '{module}.{name}' (only "
                                     "optimizers, lr schedulers, arrays and plain data are allowed)")


def _convert_mxnet_arrays(obj: Any) -> Any:
    if isinstance(obj, _MXNetArray):
        return obj.to_ndarray()
    if isinstance(obj, tuple):
        return tuple(_convert_mxnet_arrays(x) for x in obj)
    if isinstance(obj, list):
        return [_convert_mxnet_arrays(x) for x in obj]
    if isinstance(obj, dict):
        return {k: _convert_mxnet_arrays(v) for k, v in obj.items()}
    if isinstance(obj, Optimizer):
        obj.__dict__.update(_convert_mxnet_arrays(obj.__dict__))
    return obj


def loads_states(data: bytes) -> Any:
    """Unpickle optimizer states written by `Updater.get_states` (here or in MXNet 1.x)."""
    return _convert_mxnet_arrays(_StatesUnpickler(io.BytesIO(data)).load())
