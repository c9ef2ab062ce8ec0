"""Metric checks shared by the Estimator and its handlers."""
from __future__ import annotations

from typing import Any

from ...loss import SoftmaxCrossEntropyLoss
from ...metric import Accuracy, CompositeEvalMetric, EvalMetric


def check_metrics(metrics: Any) -> list:
    """A list of EvalMetric from one metric, a composite (flattened), a list or None."""
    if isinstance(metrics, CompositeEvalMetric):
        return [m for metric in metrics.metrics for m in check_metrics(metric)]
    if isinstance(metrics, EvalMetric):
        return [metrics]
    metrics = metrics or []
    if not all(isinstance(m, EvalMetric) for m in metrics):
        raise ValueError(f"metrics must be a Metric or a list of Metric, refer to mxnet.metric.EvalMetric: {metrics}")
    return list(metrics)


def check_handler_metric_ref(handler: Any, known_metrics: set) -> None:
    """Every metric a handler refers to (attributes whose name contains 'metric', as MXNet
    checks) must be one of the estimator's own metric objects."""
    for attribute in dir(handler):
        if "metric" not in attribute:
            continue
        reference = getattr(handler, attribute)
        if not reference:
            continue
        for metric in reference if isinstance(reference, list) else [reference]:
            if metric not in known_metrics:
                raise ValueError(f"Event handler {type(handler).__name__} refers to a metric instance {metric} "
                                 "outside of the known training and validation metrics. Please use the metrics "
                                 "from estimator.train_metrics and estimator.val_metrics instead.")


def suggest_metric_for_loss(loss: Any) -> Any:
    """Accuracy for a softmax cross-entropy loss, else None."""
    return Accuracy() if isinstance(loss, SoftmaxCrossEntropyLoss) else None
