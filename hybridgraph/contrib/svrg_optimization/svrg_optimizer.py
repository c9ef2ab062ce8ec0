"""The two optimizers behind SVRGModule (MXNet 1.9.1's `svrg_optimizer`), registered in
`mx.optimizer` under their lower-cased class names as MXNet does."""
from __future__ import annotations

from typing import Any

from ...gluon import optimizer as opt

# keyword arguments the Optimizer base class takes; the rest go to the wrapped optimizer only
_BASE_PARAMS = ("rescale_grad", "param_idx2name", "wd", "clip_gradient", "learning_rate", "lr_scheduler", "sym",
                "begin_num_update", "multi_precision", "param_dict")


@opt.register
class _AssignmentOptimizer(opt.Optimizer):
    """Writes the pushed value into the weight (``weight[:] = grad``): how SVRGModule stores the
    full gradients in a kvstore. Needs no state."""

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:  # noqa: ARG002 - Optimizer API
        weight[:] = grad


@opt.register
class _SVRGOptimizer(opt.Optimizer):
    """Dispatches by parameter name: names containing ``full`` go to `_AssignmentOptimizer`, the
    others to `default_optimizer` (a name, created with all of `kwargs`, or an Optimizer)."""

    def __init__(self, default_optimizer: Any, **kwargs: Any):
        super().__init__(**self._check_params(**kwargs))
        if isinstance(default_optimizer, str):
            self.default_opt = opt.create(default_optimizer, **kwargs)
        else:
            self.default_opt = default_optimizer
        self.aux_opt = opt.create(_AssignmentOptimizer.__name__)

    @staticmethod
    def _check_params(**kwargs: Any) -> dict:
        """The subset of `kwargs` that the Optimizer base class accepts."""
        return {k: v for k, v in kwargs.items() if k in _BASE_PARAMS}

    def _check_index(self, index: Any) -> str:
        """The parameter name of `index` (an int index, or already a name: kvstore string keys)."""
        if index in self.idx2name.values():
            return index
        if index not in self.idx2name:
            raise KeyError(f"_SVRGOptimizer: no parameter name for index {index!r} in param_idx2name "
                           f"({sorted(self.idx2name.items())[:8]}...)")
        return self.idx2name[index]

    def _target(self, index: Any) -> opt.Optimizer:
        return self.aux_opt if "full" in self._check_index(index) else self.default_opt

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        self._target(index).update(index, weight, grad, state)

    def create_state(self, index: Any, weight: Any) -> Any:
        return self._target(index).create_state(index, weight)
