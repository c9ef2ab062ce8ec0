"""`mx.optimizer.contrib` (MXNet 1.9.1): GroupAdaGrad, AdaGrad with one learning-rate history per
row of a 2-D weight (for embeddings). Weight decay is not supported, as in MXNet."""
from __future__ import annotations

from typing import Any

from hybridgraph import nd

from .optimizer_base import Optimizer, register

__all__ = ["GroupAdaGrad"]


@register
class GroupAdaGrad(Optimizer):
    """grad = clip(grad * rescale_grad, clip_gradient); history += mean(grad^2, axis=1);
    weight -= lr * grad / sqrt(history + eps). `eps` also avoids a division by 0."""

    def __init__(self, eps: float = 1e-5, **kwargs: Any):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index: Any, weight: Any) -> Any:
        if len(weight.shape) != 2:
            raise AssertionError(f"GroupAdaGrad updates 2-D weights (one history per row), got shape {weight.shape}")
        return nd.zeros((weight.shape[0], 1), weight.context, stype=weight.stype)

    def update(self, index: Any, weight: Any, grad: Any, state: Any) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        if wd != 0:
            raise AssertionError("Weight decay is not supported for GroupAdaGrad")
        kwargs = {"epsilon": self.float_stable_eps, "rescale_grad": self.rescale_grad}
        if self.clip_gradient is not None:
            kwargs["clip_gradient"] = self.clip_gradient
        nd.contrib.group_adagrad_update(weight, grad, state, out=weight, lr=lr, **kwargs)
