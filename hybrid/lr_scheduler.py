"""Learning rate schedules (`mx.lr_scheduler`), with MXNet 1.9.1's formulas.

A scheduler is called with `num_update`, the largest number of updates applied
to any weight so far, and returns the learning rate to use. Schedulers keep
state (`base_lr`, `count`) exactly as MXNet's do, so a pickled optimizer resumes
with the same rate.
"""
from __future__ import annotations

import logging
from math import cos, pi

__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler", "PolyScheduler", "CosineScheduler"]


class LRScheduler:
    """Base class of a learning rate scheduler.

    Parameters
    ----------
    base_lr : float, optional
        The initial learning rate.
    warmup_steps : int
        Number of warmup steps used before this scheduler starts decay.
    warmup_begin_lr : float
        If using warmup, the learning rate from which it starts warming up.
    warmup_mode : str
        'linear' increases the rate in equal increments; 'constant' keeps it at
        `warmup_begin_lr` for `warmup_steps`.
    """

    def __init__(self, base_lr: float = 0.01, warmup_steps: int = 0, warmup_begin_lr: float = 0,
                 warmup_mode: str = "linear"):
        self.base_lr = base_lr
        if not isinstance(warmup_steps, int):
            raise TypeError(f"warmup_steps must be an int, got {type(warmup_steps).__name__}")
        self.warmup_steps = warmup_steps
        self.warmup_final_lr = base_lr
        self.warmup_begin_lr = warmup_begin_lr
        if self.warmup_begin_lr > self.warmup_final_lr:
            raise ValueError("Base lr has to be higher than warmup_begin_lr")
        if self.warmup_steps < 0:
            raise ValueError("Warmup steps has to be positive or 0")
        if warmup_mode not in ("linear", "constant"):
            raise ValueError("Supports only linear and constant modes of warmup")
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update: int) -> float:
        """The learning rate during warmup (`num_update < warmup_steps`)."""
        if num_update >= self.warmup_steps:
            raise ValueError(f"get_warmup_lr: num_update {num_update} is past warmup_steps {self.warmup_steps}")
        if self.warmup_mode == "linear":
            increase = (self.warmup_final_lr - self.warmup_begin_lr) * float(num_update) / float(self.warmup_steps)
            return self.warmup_begin_lr + increase
        return self.warmup_begin_lr

    def __call__(self, num_update: int) -> float:
        """Return the learning rate after `num_update` updates."""
        raise NotImplementedError("must override this")


class FactorScheduler(LRScheduler):
    """Reduce the learning rate by a factor every `step` updates:
    ``base_lr * pow(factor, floor(num_update / step))``.

    Parameters
    ----------
    step : int
        Changes the learning rate every `step` updates.
    factor : float, optional
        The factor to change the learning rate by.
    stop_factor_lr : float, optional
        The rate never goes below this value.
    """

    def __init__(self, step: int, factor: float = 1, stop_factor_lr: float = 1e-8, base_lr: float = 0.01,
                 warmup_steps: int = 0, warmup_begin_lr: float = 0, warmup_mode: str = "linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if step < 1:
            raise ValueError("Schedule step must be greater or equal than 1 round")
        if factor > 1.0:
            raise ValueError("Factor must be no more than 1 to make lr reduce")
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while num_update > self.count + self.step:  # a loop, so resuming from a later update works
            self.count += self.step
            self.base_lr *= self.factor
            if self.base_lr < self.stop_factor_lr:
                self.base_lr = self.stop_factor_lr
                logging.info("Update[%d]: now learning rate arrived at %0.5e, will not change in the future",
                             num_update, self.base_lr)
            else:
                logging.info("Update[%d]: Change learning rate to %0.5e", num_update, self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Reduce the learning rate by `factor` at each of the given steps.

    Parameters
    ----------
    step : list of int
        Increasing update counts after which the rate changes.
    factor : float
        The factor to change the learning rate by.
    """

    def __init__(self, step: list, factor: float = 1, base_lr: float = 0.01, warmup_steps: int = 0,
                 warmup_begin_lr: float = 0, warmup_mode: str = "linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(step, list) or len(step) < 1:
            raise ValueError(f"step must be a non-empty list of int, got {step!r}")
        for i, s in enumerate(step):
            if i != 0 and s <= step[i - 1]:
                raise ValueError("Schedule step must be an increasing integer list")
            if s < 1:
                raise ValueError("Schedule step must be greater or equal than 1 round")
        if factor > 1.0:
            raise ValueError("Factor must be no more than 1 to make lr reduce")
        self.step = step
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind <= len(self.step) - 1:
            if num_update > self.step[self.cur_step_ind]:
                self.count = self.step[self.cur_step_ind]
                self.cur_step_ind += 1
                self.base_lr *= self.factor
                logging.info("Update[%d]: Change learning rate to %0.5e", num_update, self.base_lr)
            else:
                return self.base_lr
        return self.base_lr


class _DecayToFinal(LRScheduler):
    """After warmup, decay from `base_lr` to `final_lr` over `max_update` updates, then stay there;
    a subclass gives the decay's shape as `_factor` (1 at the start of the span, 0 at its end)."""

    def _set_span(self, max_update: int, final_lr: float) -> None:
        if not isinstance(max_update, int):
            raise TypeError(f"max_update must be an int, got {type(max_update).__name__}")
        if max_update < 1:
            raise ValueError("maximum number of updates must be strictly positive")
        self.base_lr_orig = self.base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = self.max_update - self.warmup_steps

    def _factor(self, step: int) -> float:
        raise NotImplementedError("must override this")

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * \
                self._factor(num_update - self.warmup_steps)
        return self.base_lr


class PolyScheduler(_DecayToFinal):
    """Polynomial decay after warmup:
    ``final_lr + (base_lr - final_lr) * (1 - nup / max_nup) ** pwr`` while ``nup <= max_update``.

    Parameters
    ----------
    max_update : int
        Number of updates after which the rate stays at `final_lr`.
    pwr : int
        Power of the decay term.
    final_lr : float
        Learning rate reached at `max_update`.
    """

    def __init__(self, max_update: int, base_lr: float = 0.01, pwr: float = 2, final_lr: float = 0,
                 warmup_steps: int = 0, warmup_begin_lr: float = 0, warmup_mode: str = "linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        self.power = pwr
        self._set_span(max_update, final_lr)

    def _factor(self, step: int) -> float:
        return pow(1 - float(step) / float(self.max_steps), self.power)


class CosineScheduler(_DecayToFinal):
    """Cosine decay after warmup:
    ``final_lr + (base_lr - final_lr) * (1 + cos(pi * nup / max_nup)) / 2`` while ``nup <= max_update``.

    Parameters
    ----------
    max_update : int
        Number of updates after which the rate stays at `final_lr`.
    final_lr : float
        Learning rate reached at `max_update`.
    """

    def __init__(self, max_update: int, base_lr: float = 0.01, final_lr: float = 0,
                 warmup_steps: int = 0, warmup_begin_lr: float = 0, warmup_mode: str = "linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        self._set_span(max_update, final_lr)

    def _factor(self, step: int) -> float:
        # (1 + cos) / 2 then the product: halving is exact, so the rate is MXNet's to the bit
        return (1 + cos(pi * step / self.max_steps)) / 2
