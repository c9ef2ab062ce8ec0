"""Online evaluation metrics (`mx.metric`), with MXNet 1.9.1's names and values.

Metrics accumulate over `update(labels, preds)` calls (lists of NDArrays, or
single arrays) and report `get() -> (name, value)`. Every metric keeps a local
and a global accumulator (`reset_local` clears only the local one). Inputs may
also be numpy arrays. Computation happens on the host, in the inputs' dtypes,
as MXNet's Python metrics do.

This module is the `mx.metric` namespace; the classes live in metric_base.py
(base class, registry, composite, loss and custom metrics),
metric_classification.py and metric_regression.py. Each metric is registered
under its class name here, after the aliases its module registers.
"""
from __future__ import annotations

from .metric_base import (CompositeEvalMetric, CustomMetric, EvalMetric, Loss, Caffe, Torch, alias,
                          check_label_shapes, create, np, register)
from .metric_classification import F1, MCC, Accuracy, Perplexity, TopKAccuracy
from .metric_regression import MAE, MSE, PCC, RMSE, CrossEntropy, NegativeLogLikelihood, PearsonCorrelation

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "MCC", "Perplexity", "MAE",
           "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood", "PearsonCorrelation", "PCC", "Loss", "Torch",
           "Caffe", "CustomMetric", "np", "create", "register", "alias", "check_label_shapes"]


for _cls in (CompositeEvalMetric, Accuracy, TopKAccuracy, F1, MCC, Perplexity, MAE, MSE, RMSE, CrossEntropy,
             NegativeLogLikelihood, PearsonCorrelation, PCC, Loss, Torch, Caffe, CustomMetric):
    register(_cls)
del _cls
