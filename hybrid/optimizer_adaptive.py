"""Optimizers with per-coordinate adaptive step sizes: FTML, Adam, AdaGrad,
RMSProp, AdaDelta, Ftrl, Adamax and Nadam, with MXNet 1.9.1's arguments,
state layout and update formulas (fused kernels where MXNet calls them).

AdaDelta does not scale the caller's gradient array in place (MXNet does).
"""
from __future__ import annotations

import math
from typing import Any

from hybridgraph import nd
from hybridgraph.nd.ndarray import NDArray

from .optimizer_base import Optimizer, _clip_grad, _common_kwargs, _kernel, _zeros, register


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
        lr, wd, t = self._begin_update(index)
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
        lr, wd, t = self._begin_update(index)
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
        lr, wd, t = self._begin_update(index)
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
