"""Regression, likelihood and correlation metrics (MXNet 1.9.1's names and
values): MAE, MSE, RMSE, CrossEntropy, NegativeLogLikelihood,
PearsonCorrelation and PCC.
"""
from __future__ import annotations

from typing import Any

import numpy

from .metric_base import EvalMetric, _host, _scalar, alias, check_label_shapes


# -- regression -----------------------------------------------------------------------------------

def _as_columns(label: Any, pred: Any) -> tuple:
    label, pred = _host(label), _host(pred)
    if label.ndim == 1:
        label = label.reshape(label.shape[0], 1)
    if pred.ndim == 1:
        pred = pred.reshape(pred.shape[0], 1)
    return label, pred


class _BatchErrorMetric(EvalMetric):
    """A regression metric: one error value per (label, pred) pair (as columns), averaged over pairs."""

    @staticmethod
    def _batch_error(label: Any, pred: Any) -> Any:
        raise NotImplementedError

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _as_columns(label, pred)
            self._add(self._batch_error(label, pred), 1)


class MAE(_BatchErrorMetric):
    """Mean absolute error, averaged over batches.

    Parameters
    ----------
    name : str
        Name of this metric instance for display.
    """

    def __init__(self, name: str = "mae", output_names: list | None = None, label_names: list | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    @staticmethod
    def _batch_error(label: Any, pred: Any) -> Any:
        return numpy.abs(label - pred).mean()


class MSE(_BatchErrorMetric):
    """Mean squared error, averaged over batches.

    Parameters
    ----------
    name : str
        Name of this metric instance for display.
    """

    def __init__(self, name: str = "mse", output_names: list | None = None, label_names: list | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    @staticmethod
    def _batch_error(label: Any, pred: Any) -> Any:
        return ((label - pred) ** 2.0).mean()


class RMSE(_BatchErrorMetric):
    """Root mean squared error, averaged over batches.

    Parameters
    ----------
    name : str
        Name of this metric instance for display.
    """

    def __init__(self, name: str = "rmse", output_names: list | None = None, label_names: list | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    @staticmethod
    def _batch_error(label: Any, pred: Any) -> Any:
        return numpy.sqrt(((label - pred) ** 2.0).mean())


def _label_log_prob(label: Any, pred: Any, eps: float) -> tuple:
    """Sum of ``-log(p[label] + eps)`` over the batch, and the batch size."""
    label, pred = _host(label).ravel(), _host(pred)
    if label.shape[0] != pred.shape[0]:
        raise AssertionError(f"{label.shape[0]} labels vs {pred.shape[0]} predictions")
    prob = pred[numpy.arange(label.shape[0], dtype=numpy.int64), numpy.int64(label)]
    return (-numpy.log(prob + eps)).sum(), label.shape[0]


@alias("ce")
class CrossEntropy(EvalMetric):
    """Cross entropy of the label's predicted probability, averaged over samples.

    Parameters
    ----------
    eps : float
        Added to the probability before the log.
    name : str
        Name of this metric instance for display.
    """

    def __init__(self, eps: float = 1e-12, name: str = "cross-entropy", output_names: list | None = None,
                 label_names: list | None = None):
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names, has_global_stats=True)
        self.eps = eps

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self._add(*_label_log_prob(label, pred, self.eps))


@alias("nll_loss")
class NegativeLogLikelihood(CrossEntropy):
    """Negative log-likelihood of the label's predicted probability, averaged over samples
    (the same quantity as CrossEntropy under MXNet's other name).

    Parameters
    ----------
    eps : float
        Added to the probability before the log.
    name : str
        Name of this metric instance for display.
    """

    def __init__(self, eps: float = 1e-12, name: str = "nll-loss", output_names: list | None = None,
                 label_names: list | None = None):
        super().__init__(eps, name, output_names, label_names)


@alias("pearsonr")
class PearsonCorrelation(EvalMetric):
    """Pearson correlation of predictions and labels.

    Parameters
    ----------
    name : str
        Name of this metric instance for display.
    average : str, default 'macro'
        'macro': average the correlation of each batch; 'micro': one over all batches.
    """

    def __init__(self, name: str = "pearsonr", output_names: list | None = None, label_names: list | None = None,
                 average: str = "macro"):
        self.average = average
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)
        if self.average == "micro":
            self.reset_micro()

    def reset_micro(self) -> None:
        self._sse_p = 0
        self._mean_p = 0
        self._sse_l = 0
        self._mean_l = 0
        self._pred_nums = 0
        self._label_nums = 0
        self._conv = 0

    def reset(self) -> None:
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0
        if self.average == "micro":
            self.reset_micro()

    def update_variance(self, new_values: numpy.ndarray, *aggregate: Any) -> tuple:
        """Welford's running count, mean and sum of squared deviations."""
        count, mean, m_2 = aggregate
        count += len(new_values)
        delta = new_values - mean
        mean += numpy.sum(delta / count)
        delta_2 = new_values - mean
        m_2 += numpy.sum(delta * delta_2)
        return count, mean, m_2

    def update_cov(self, label: numpy.ndarray, pred: numpy.ndarray) -> None:
        self._conv = self._conv + numpy.sum((label - self._mean_l) * (pred - self._mean_p))

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            check_label_shapes(label, pred, False, True)
            label = _host(label).ravel().astype(numpy.float64)
            pred = _host(pred).ravel().astype(numpy.float64)
            if self.average == "macro":
                self._add(numpy.corrcoef(pred, label)[0, 1], 1)
            else:
                self.global_num_inst += 1
                self.num_inst += 1
                self._label_nums, self._mean_l, self._sse_l = self.update_variance(
                    label, self._label_nums, self._mean_l, self._sse_l)
                self.update_cov(label, pred)
                self._pred_nums, self._mean_p, self._sse_p = self.update_variance(
                    pred, self._pred_nums, self._mean_p, self._sse_p)

    def get(self) -> tuple:
        if self.num_inst == 0:
            return (self.name, float("nan"))
        if self.average == "macro":
            return (self.name, _scalar(self.sum_metric / self.num_inst))
        n = self._label_nums
        pearsonr = self._conv / ((n - 1) * numpy.sqrt(self._sse_p / (n - 1)) * numpy.sqrt(self._sse_l / (n - 1)))
        return (self.name, _scalar(pearsonr))


class PCC(EvalMetric):
    """The multiclass Pearson correlation coefficient (the K-class generalisation of MCC),
    computed from the confusion matrix.

    Parameters
    ----------
    name : str
        Name of this metric instance for display.
    """

    def __init__(self, name: str = "pcc", output_names: list | None = None, label_names: list | None = None,
                 has_global_stats: bool = True):
        self.k = 2
        super().__init__(name=name, output_names=output_names, label_names=label_names,
                         has_global_stats=has_global_stats)

    def _grow(self, inc: int) -> None:
        self.lcm = numpy.pad(self.lcm, ((0, inc), (0, inc)), "constant", constant_values=0)
        self.gcm = numpy.pad(self.gcm, ((0, inc), (0, inc)), "constant", constant_values=0)
        self.k += inc

    @staticmethod
    def _calc_mcc(cmat: numpy.ndarray) -> float:
        n = cmat.sum()
        x = cmat.sum(axis=1)
        y = cmat.sum(axis=0)
        cov_xx = numpy.sum(x * (n - x))
        cov_yy = numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float("nan")
        i = cmat.diagonal()
        cov_xy = numpy.sum(i * n - x * y)
        return cov_xy / (cov_xx * cov_yy) ** 0.5

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = _host(label).astype("int32", copy=False)
            pred = _host(pred)
            pred = pred.argmax(axis=1) if pred.shape != label.shape else pred.astype("int32", copy=False)
            n = max(pred.max(), label.max())
            if n >= self.k:
                self._grow(n + 1 - self.k)
            bcm = numpy.zeros((self.k, self.k))
            for i, j in zip(pred, label):
                bcm[i, j] += 1
            self.lcm += bcm
            self.gcm += bcm
        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self) -> float:
        return self._calc_mcc(self.lcm) * self.num_inst

    @property
    def global_sum_metric(self) -> float:
        return self._calc_mcc(self.gcm) * self.global_num_inst

    def reset(self) -> None:
        self.global_num_inst = 0.0
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self) -> None:
        self.num_inst = 0.0
        self.lcm = numpy.zeros((self.k, self.k))
