"""How the Estimator runs one batch (override `fit_batch` / `evaluate_batch` to customise)."""
from __future__ import annotations

from typing import Any

from hybridgraph.nd import autograd

from ...utils import split_and_load

__all__ = ["BatchProcessor"]


class BatchProcessor:
    """Splits a (data, label) batch over the estimator's contexts and runs the net and loss."""

    def __init__(self):
        pass

    def _get_data_and_label(self, batch: Any, ctx: list, batch_axis: int = 0) -> tuple[list, list]:
        data = split_and_load(batch[0], ctx_list=ctx, batch_axis=batch_axis)
        label = split_and_load(batch[1], ctx_list=ctx, batch_axis=batch_axis)
        return data, label

    def evaluate_batch(self, estimator: Any, val_batch: Any, batch_axis: int = 0) -> tuple:
        """(data, label, pred, loss) of one validation batch, with `estimator.val_net`."""
        data, label = self._get_data_and_label(val_batch, estimator.context, batch_axis)
        pred = [estimator.val_net(x) for x in data]
        loss = [estimator.val_loss(y_hat, y) for y_hat, y in zip(pred, label)]
        return data, label, pred, loss

    def fit_batch(self, estimator: Any, train_batch: Any, batch_axis: int = 0) -> tuple:
        """(data, label, pred, loss) of one training batch, gradients computed (not applied)."""
        data, label = self._get_data_and_label(train_batch, estimator.context, batch_axis)
        with autograd.record():
            pred = [estimator.net(x) for x in data]
            loss = [estimator.loss(y_hat, y) for y_hat, y in zip(pred, label)]
        for part in loss:
            part.backward()
        return data, label, pred, loss
