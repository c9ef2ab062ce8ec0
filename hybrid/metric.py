"""Online evaluation metrics (`mx.metric`), with MXNet 1.9.1's names and values.

Metrics accumulate over `update(labels, preds)` calls (lists of NDArrays, or
single arrays) and report `get() -> (name, value)`. Every metric keeps a local
and a global accumulator (`reset_local` clears only the local one). Inputs may
also be numpy arrays. Computation happens on the host, in the inputs' dtypes,
as MXNet's Python metrics do.
"""
from __future__ import annotations

import json
import math
import numbers
import warnings
from collections import OrderedDict
from typing import Any
from collections.abc import Callable

import numpy

from nd.ndarray import NDArray

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "MCC", "Perplexity", "MAE",
           "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood", "PearsonCorrelation", "PCC", "Loss", "Torch",
           "Caffe", "CustomMetric", "np", "create", "register", "alias", "check_label_shapes"]

_ARRAY_TYPES = (NDArray, numpy.ndarray)


def _host(x: Any) -> numpy.ndarray:
    """A numpy view of an NDArray (or array-like)."""
    return x.asnumpy() if hasattr(x, "asnumpy") else numpy.asarray(x)


def check_label_shapes(labels: Any, preds: Any, wrap: bool = False, shape: bool = False) -> tuple:
    """Check that labels and predictions have the same length (or shape, with `shape`).

    Parameters
    ----------
    labels : list of NDArray
        The labels of the data.
    preds : list of NDArray
        Predicted values.
    wrap : bool
        If True, wrap single arrays into lists.
    shape : bool
        If True, compare shapes; otherwise only lengths.
    """
    if not shape:
        label_shape, pred_shape = len(labels), len(preds)
    else:
        label_shape, pred_shape = labels.shape, preds.shape
    if label_shape != pred_shape:
        raise ValueError(f"Shape of labels {label_shape} does not match shape of predictions {pred_shape}")
    if wrap:
        if isinstance(labels, _ARRAY_TYPES):
            labels = [labels]
        if isinstance(preds, _ARRAY_TYPES):
            preds = [preds]
    return labels, preds


# -- registry -----------------------------------------------------------------------------

_REGISTRY: dict[str, type] = {}


def register(klass: type, name: str | None = None) -> type:
    """Register a metric class under its lower-cased name (or `name`)."""
    if not issubclass(klass, EvalMetric):
        raise TypeError(f"Can only register subclass of EvalMetric, got {klass!r}")
    name = (klass.__name__ if name is None else name).lower()
    if name in _REGISTRY:
        old = _REGISTRY[name]
        warnings.warn(f"New metric {klass.__module__}.{klass.__name__} registered with name {name} is overriding "
                      f"existing metric {old.__module__}.{old.__name__}", UserWarning, stacklevel=2)
    _REGISTRY[name] = klass
    return klass


def alias(*aliases: str) -> Callable[[type], type]:
    """Register a metric class under extra names (`@alias('acc')`)."""
    def reg(klass: type) -> type:
        for name in aliases:
            register(klass, name)
        return klass
    return reg


def _create(*args: Any, **kwargs: Any) -> "EvalMetric":
    if args:
        name, args = args[0], args[1:]
    else:
        name = kwargs.pop("metric")
    if isinstance(name, EvalMetric):
        if args or kwargs:
            raise ValueError("metric is already an instance. Additional arguments are invalid")
        return name
    if isinstance(name, dict):
        return _create(**name)
    if not isinstance(name, str):
        raise TypeError(f"metric must be of string type, got {type(name).__name__}")
    if name.startswith("["):
        name, kwargs = json.loads(name)
        return _create(name, **kwargs)
    if name.startswith("{"):
        return _create(**json.loads(name))
    name = name.lower()
    if name not in _REGISTRY:
        raise ValueError(f"{name} is not registered. Please register with metric.register first")
    return _REGISTRY[name](*args, **kwargs)


def create(metric: Any, *args: Any, **kwargs: Any) -> "EvalMetric":
    """Create a metric from a name (``'acc'``, ``'ce'``, ``'top_k_accuracy'``, ...), an
    `EvalMetric`, a list of those (a `CompositeEvalMetric`), or a function
    ``feval(label, pred)`` on numpy arrays (a `CustomMetric`).

    Examples
    --------
    >>> metric = mx.metric.create(['acc', 'rmse'])
    """
    if callable(metric) and not isinstance(metric, EvalMetric):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    return _create(metric, *args, **kwargs)


# -- base ----------------------------------------------------------------------------------

class EvalMetric:
    """Base class for all evaluation metrics.

    Parameters
    ----------
    name : str
        Name of this metric instance for display.
    output_names : list of str, or None
        Names of predictions used by `update_dict`; all when None.
    label_names : list of str, or None
        Names of labels used by `update_dict`; all when None.
    """

    def __init__(self, name: str, output_names: list | None = None, label_names: list | None = None,
                 **kwargs: Any):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self) -> str:
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self) -> dict:
        """The configuration, from which `metric.create(**config)` rebuilds the metric."""
        config = self._kwargs.copy()
        config.update({"metric": self.__class__.__name__, "name": self.name, "output_names": self.output_names,
                       "label_names": self.label_names})
        return config

    def update_dict(self, label: dict, pred: dict) -> None:
        """Update with name -> array mappings, selected by `label_names` / `output_names`."""
        pred = [pred[name] for name in self.output_names] if self.output_names is not None else list(pred.values())
        label = [label[name] for name in self.label_names] if self.label_names is not None \
            else list(label.values())
        self.update(label, pred)

    def update(self, labels: Any, preds: Any) -> None:
        """Update the internal evaluation result with a batch."""
        raise NotImplementedError()

    def reset(self) -> None:
        """Reset the local and global results."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self) -> None:
        """Reset the local results only."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self) -> tuple:
        """The current result: ``(name, value)``; the value is nan before any update."""
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, _scalar(self.sum_metric / self.num_inst))

    def get_global(self) -> tuple:
        """The result over all updates since the last `reset`."""
        if self._has_global_stats:
            if self.global_num_inst == 0:
                return (self.name, float("nan"))
            return (self.name, _scalar(self.global_sum_metric / self.global_num_inst))
        return self.get()

    def get_name_value(self) -> list:
        """The result as a list of ``(name, value)`` pairs."""
        return _zip_name_value(*self.get())

    def get_global_name_value(self) -> list:
        """The global result as a list of ``(name, value)`` pairs."""
        if self._has_global_stats:
            return _zip_name_value(*self.get_global())
        return self.get_name_value()

    def _add(self, value: Any, count: Any) -> None:
        """Add to the local and global accumulators."""
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += count
        self.global_num_inst += count


def _scalar(x: Any) -> Any:
    """A numpy scalar as the Python number it holds (prints as `0.5`, not `np.float64(0.5)`)."""
    return x.item() if isinstance(x, numpy.generic) else x


def _zip_name_value(name: Any, value: Any) -> list:
    if not isinstance(name, list):
        name = [name]
    if not isinstance(value, list):
        value = [value]
    return list(zip(name, value))


@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Manages several evaluation metrics.

    Parameters
    ----------
    metrics : list of EvalMetric
        The child metrics.
    name : str
        Name of this metric instance for display.
    """

    def __init__(self, metrics: list | None = None, name: str = "composite", output_names: list | None = None,
                 label_names: list | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)
        self.metrics = [create(i) for i in (metrics or [])]

    def add(self, metric: Any) -> None:
        """Add a child metric."""
        self.metrics.append(create(metric))

    def get_metric(self, index: int) -> EvalMetric:
        """The child metric at `index`."""
        try:
            return self.metrics[index]
        except IndexError:
            return ValueError(f"Metric index {index} is out of range 0 and {len(self.metrics)}")

    def update_dict(self, labels: dict, preds: dict) -> None:
        if self.label_names is not None:
            labels = OrderedDict([i for i in labels.items() if i[0] in self.label_names])
        if self.output_names is not None:
            preds = OrderedDict([i for i in preds.items() if i[0] in self.output_names])
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels: Any, preds: Any) -> None:
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self) -> None:
        for metric in getattr(self, "metrics", ()):
            metric.reset()

    def reset_local(self) -> None:
        for metric in getattr(self, "metrics", ()):
            metric.reset_local()

    def _collect(self, getter: str) -> tuple:
        names, values = [], []
        for metric in self.metrics:
            name, value = getattr(metric, getter)()
            names.extend([name] if isinstance(name, str) else name)
            values.extend([value] if isinstance(value, numbers.Number) else value)
        return (names, values)

    def get(self) -> tuple:
        return self._collect("get")

    def get_global(self) -> tuple:
        return self._collect("get_global")

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"metrics": [i.get_config() for i in self.metrics]})
        return config


# -- classification -----------------------------------------------------------------------------

@alias("acc")
class Accuracy(EvalMetric):
    """Classification accuracy: the fraction of predictions equal to the label.

    Predictions with a different shape than the labels are reduced by argmax
    over `axis` first.

    Parameters
    ----------
    axis : int, default=1
        The axis of class scores.
    name : str
        Name of this metric instance for display.
    """

    def __init__(self, axis: int = 1, name: str = "accuracy", output_names: list | None = None,
                 label_names: list | None = None):
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.axis = axis

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred_label in zip(labels, preds):
            pred_label = _host(pred_label)
            label = _host(label)
            if pred_label.shape != label.shape:
                pred_label = numpy.argmax(pred_label, axis=self.axis)
            pred_label = pred_label.astype("int32").flat
            label = label.astype("int32").flat
            check_label_shapes(label, pred_label)
            self._add((pred_label == label).sum(), len(pred_label))


@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """Top-k accuracy: a prediction is right when the label is among its k best classes.

    Parameters
    ----------
    top_k : int
        How many top classes count (more than 1; use Accuracy for 1).
    name : str
        Name of this metric instance for display (``_<top_k>`` is appended).
    """

    def __init__(self, top_k: int = 1, name: str = "top_k_accuracy", output_names: list | None = None,
                 label_names: list | None = None):
        super().__init__(name, top_k=top_k, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.top_k = top_k
        if self.top_k <= 1:
            raise AssertionError("Please use Accuracy if top_k is no more than 1")
        self.name += f"_{self.top_k}"

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred_label in zip(labels, preds):
            if len(pred_label.shape) > 2:
                raise AssertionError("Predictions should be no more than 2 dims")
            pred_label = numpy.argpartition(_host(pred_label).astype("float32"), -self.top_k)
            label = _host(label).astype("int32")
            check_label_shapes(label, pred_label)
            num_samples = pred_label.shape[0]
            if pred_label.ndim == 1:
                self.sum_metric += (pred_label.flat == label.flat).sum()
            else:
                num_classes = pred_label.shape[1]
                for j in range(min(num_classes, self.top_k)):
                    num_correct = (pred_label[:, num_classes - 1 - j].flat == label.flat).sum()
                    self.sum_metric += num_correct
                    self.global_sum_metric += num_correct
            self.num_inst += num_samples
            self.global_num_inst += num_samples


class _BinaryClassificationMetrics:
    """Confusion-matrix counts of a binary classifier (local and global)."""

    def __init__(self):
        self.reset_stats()

    def update_binary_stats(self, label: Any, pred: Any) -> None:
        pred = _host(pred)
        label = _host(label).astype("int32")
        pred_label = numpy.argmax(pred, axis=1)
        check_label_shapes(label, pred)
        if len(numpy.unique(label)) > 2:
            raise ValueError(f"{self.__class__.__name__} currently only supports binary classification.")
        pred_true = pred_label == 1
        pred_false = 1 - pred_true
        label_true = label == 1
        label_false = 1 - label_true
        counts = {"true_positives": (pred_true * label_true).sum(), "false_positives": (pred_true * label_false).sum(),
                  "false_negatives": (pred_false * label_true).sum(),
                  "true_negatives": (pred_false * label_false).sum()}
        for key, n in counts.items():
            setattr(self, key, getattr(self, key) + n)
            setattr(self, "global_" + key, getattr(self, "global_" + key) + n)

    @staticmethod
    def _ratio(a: Any, b: Any) -> float:
        return float(a) / (a + b) if a + b > 0 else 0.

    @staticmethod
    def _f(p: float, r: float) -> float:
        return 2 * p * r / (p + r) if p + r > 0 else 0.

    @property
    def precision(self) -> float:
        return self._ratio(self.true_positives, self.false_positives)

    @property
    def global_precision(self) -> float:
        return self._ratio(self.global_true_positives, self.global_false_positives)

    @property
    def recall(self) -> float:
        return self._ratio(self.true_positives, self.false_negatives)

    @property
    def global_recall(self) -> float:
        return self._ratio(self.global_true_positives, self.global_false_negatives)

    @property
    def fscore(self) -> float:
        return self._f(self.precision, self.recall)

    @property
    def global_fscore(self) -> float:
        return self._f(self.global_precision, self.global_recall)

    def matthewscc(self, use_global: bool = False) -> float:
        """Matthews correlation coefficient of the counts."""
        pre = "global_" if use_global else ""
        if not (self.global_total_examples if use_global else self.total_examples):
            return 0.
        true_pos = float(getattr(self, pre + "true_positives"))
        false_pos = float(getattr(self, pre + "false_positives"))
        false_neg = float(getattr(self, pre + "false_negatives"))
        true_neg = float(getattr(self, pre + "true_negatives"))
        terms = [(true_pos + false_pos), (true_pos + false_neg), (true_neg + false_pos), (true_neg + false_neg)]
        denom = 1.
        for t in terms:
            if t != 0.:
                denom *= t
        return ((true_pos * true_neg) - (false_pos * false_neg)) / math.sqrt(denom)

    @property
    def total_examples(self) -> Any:
        return self.false_negatives + self.false_positives + self.true_negatives + self.true_positives

    @property
    def global_total_examples(self) -> Any:
        return self.global_false_negatives + self.global_false_positives + self.global_true_negatives + \
            self.global_true_positives

    def local_reset_stats(self) -> None:
        self.false_positives = self.false_negatives = self.true_positives = self.true_negatives = 0

    def reset_stats(self) -> None:
        self.local_reset_stats()
        self.global_false_positives = self.global_false_negatives = 0
        self.global_true_positives = self.global_true_negatives = 0


class F1(EvalMetric):
    """The F1 score of a binary classifier (predictions are class scores, shape (n, 2)).

    Parameters
    ----------
    name : str
        Name of this metric instance for display.
    average : str, default 'macro'
        'macro': average the F1 of each batch; 'micro': one F1 over all batches.
    """

    def __init__(self, name: str = "f1", output_names: list | None = None, label_names: list | None = None,
                 average: str = "macro"):
        self.average = average
        self.metrics = _BinaryClassificationMetrics()
        EvalMetric.__init__(self, name=name, output_names=output_names, label_names=label_names,
                            has_global_stats=True)

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self.metrics.update_binary_stats(label, pred)
        if self.average == "macro":
            self.sum_metric += self.metrics.fscore
            self.global_sum_metric += self.metrics.global_fscore
            self.num_inst += 1
            self.global_num_inst += 1
            self.metrics.reset_stats()
        else:
            self.sum_metric = self.metrics.fscore * self.metrics.total_examples
            self.global_sum_metric = self.metrics.global_fscore * self.metrics.global_total_examples
            self.num_inst = self.metrics.total_examples
            self.global_num_inst = self.metrics.global_total_examples

    def reset(self) -> None:
        self.sum_metric = 0.
        self.num_inst = 0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0
        self.metrics.reset_stats()

    def reset_local(self) -> None:
        self.sum_metric = 0.
        self.num_inst = 0
        self.metrics.local_reset_stats()


class MCC(EvalMetric):
    """The Matthews correlation coefficient of a binary classifier.

    Parameters
    ----------
    name : str
        Name of this metric instance for display.
    average : str, default 'macro'
        'macro': average the MCC of each batch; 'micro': one MCC over all batches.
    """

    def __init__(self, name: str = "mcc", output_names: list | None = None, label_names: list | None = None,
                 average: str = "macro"):
        self._average = average
        self._metrics = _BinaryClassificationMetrics()
        EvalMetric.__init__(self, name=name, output_names=output_names, label_names=label_names,
                            has_global_stats=True)

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self._metrics.update_binary_stats(label, pred)
        if self._average == "macro":
            self.sum_metric += self._metrics.matthewscc()
            self.global_sum_metric += self._metrics.matthewscc(use_global=True)
            self.num_inst += 1
            self.global_num_inst += 1
            self._metrics.reset_stats()
        else:
            self.sum_metric = self._metrics.matthewscc() * self._metrics.total_examples
            self.global_sum_metric = self._metrics.matthewscc(use_global=True) * self._metrics.global_total_examples
            self.num_inst = self._metrics.total_examples
            self.global_num_inst = self._metrics.global_total_examples

    def reset(self) -> None:
        self.sum_metric = 0.
        self.num_inst = 0.
        self.global_sum_metric = 0.
        self.global_num_inst = 0.
        self._metrics.reset_stats()

    def reset_local(self) -> None:
        self.sum_metric = 0.
        self.num_inst = 0.
        self._metrics.local_reset_stats()


class Perplexity(EvalMetric):
    """Perplexity: ``exp(mean negative log-likelihood)`` of the label's probability.

    Parameters
    ----------
    ignore_label : int or None
        Label positions with this value are not counted.
    axis : int, default -1
        The axis of class probabilities.
    name : str
        Name of this metric instance for display.
    """

    def __init__(self, ignore_label: Any, axis: int = -1, name: str = "perplexity",
                 output_names: list | None = None, label_names: list | None = None):
        super().__init__(name, ignore_label=ignore_label, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels: Any, preds: Any) -> None:
        if len(labels) != len(preds):
            raise AssertionError(f"{len(labels)} labels vs {len(preds)} predictions")
        loss = 0.
        num = 0
        for label, pred in zip(labels, preds):
            label, pred = _host(label), _host(pred)
            if label.size != pred.size / pred.shape[-1]:
                raise AssertionError(f"shape mismatch: {label.shape} vs. {pred.shape}")
            label = label.reshape((label.size,))
            classes = numpy.moveaxis(pred, self.axis, -1).reshape(-1, pred.shape[self.axis])
            index = numpy.clip(label.astype("int32"), 0, classes.shape[1] - 1)  # nd.pick's mode='clip'
            picked = classes[numpy.arange(classes.shape[0]), index]
            if self.ignore_label is not None:
                ignore = (label == self.ignore_label).astype(picked.dtype)
                num -= float(ignore.sum())
                picked = picked * (1 - ignore) + ignore
            loss -= float(numpy.log(numpy.maximum(picked.dtype.type(1e-10), picked)).sum(dtype=picked.dtype))
            num += picked.size
        self._add(loss, num)

    def get(self) -> tuple:
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.sum_metric / self.num_inst))

    def get_global(self) -> tuple:
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.global_sum_metric / self.global_num_inst))


# -- regression -----------------------------------------------------------------------------------

def _as_columns(label: Any, pred: Any) -> tuple:
    label, pred = _host(label), _host(pred)
    if label.ndim == 1:
        label = label.reshape(label.shape[0], 1)
    if pred.ndim == 1:
        pred = pred.reshape(pred.shape[0], 1)
    return label, pred


class MAE(EvalMetric):
    """Mean absolute error, averaged over batches.

    Parameters
    ----------
    name : str
        Name of this metric instance for display.
    """

    def __init__(self, name: str = "mae", output_names: list | None = None, label_names: list | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _as_columns(label, pred)
            self._add(numpy.abs(label - pred).mean(), 1)


class MSE(EvalMetric):
    """Mean squared error, averaged over batches.

    Parameters
    ----------
    name : str
        Name of this metric instance for display.
    """

    def __init__(self, name: str = "mse", output_names: list | None = None, label_names: list | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _as_columns(label, pred)
            self._add(((label - pred) ** 2.0).mean(), 1)


class RMSE(EvalMetric):
    """Root mean squared error, averaged over batches.

    Parameters
    ----------
    name : str
        Name of this metric instance for display.
    """

    def __init__(self, name: str = "rmse", output_names: list | None = None, label_names: list | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _as_columns(label, pred)
            self._add(numpy.sqrt(((label - pred) ** 2.0).mean()), 1)


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
class NegativeLogLikelihood(EvalMetric):
    """Negative log-likelihood of the label's predicted probability, averaged over samples.

    Parameters
    ----------
    eps : float
        Added to the probability before the log.
    name : str
        Name of this metric instance for display.
    """

    def __init__(self, eps: float = 1e-12, name: str = "nll-loss", output_names: list | None = None,
                 label_names: list | None = None):
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names, has_global_stats=True)
        self.eps = eps

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self._add(*_label_log_prob(label, pred, self.eps))


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


# -- losses and custom metrics ------------------------------------------------------------------------

class Loss(EvalMetric):
    """Dummy metric that averages the given loss values (the labels are ignored).

    Parameters
    ----------
    name : str
        Name of this metric instance for display.
    """

    def __init__(self, name: str = "loss", output_names: list | None = None, label_names: list | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names, has_global_stats=True)

    def update(self, _: Any, preds: Any) -> None:
        if isinstance(preds, _ARRAY_TYPES):
            preds = [preds]
        for pred in preds:
            pred = _host(pred)
            self._add(pred.sum(dtype=pred.dtype if pred.dtype.kind == "f" else None).item(), pred.size)


class Torch(Loss):
    """Dummy metric for torch criterions."""

    def __init__(self, name: str = "torch", output_names: list | None = None, label_names: list | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names)


class Caffe(Loss):
    """Dummy metric for caffe criterions."""

    def __init__(self, name: str = "caffe", output_names: list | None = None, label_names: list | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names)


class CustomMetric(EvalMetric):
    """A metric computed by `feval(label, pred)` on numpy arrays, returning either a
    value (one instance) or a ``(sum_metric, num_inst)`` tuple.

    Parameters
    ----------
    feval : callable(label, pred)
        The evaluation function.
    name : str, optional
        The metric's name (default: the function's name, ``custom(<lambda>)`` for lambdas).
    allow_extra_outputs : bool, optional
        Allow more predictions than labels (e.g. RNN states).
    """

    def __init__(self, feval: Callable, name: str | None = None, allow_extra_outputs: bool = False,
                 output_names: list | None = None, label_names: list | None = None):
        if name is None:
            name = feval.__name__
            if name.find("<") != -1:
                name = f"custom({name})"
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels: Any, preds: Any) -> None:
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        for pred, label in zip(preds, labels):
            reval = self._feval(_host(label), _host(pred))
            if isinstance(reval, tuple):
                self._add(*reval)
            else:
                self._add(reval, 1)

    def get_config(self) -> dict:
        raise NotImplementedError("CustomMetric cannot be serialized")


def np(numpy_feval: Callable, name: str | None = None, allow_extra_outputs: bool = False) -> CustomMetric:
    """A `CustomMetric` from a function of numpy arrays ``(label, pred) -> float``."""
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)


for _cls in (CompositeEvalMetric, Accuracy, TopKAccuracy, F1, MCC, Perplexity, MAE, MSE, RMSE, CrossEntropy,
             NegativeLogLikelihood, PearsonCorrelation, PCC, Loss, Torch, Caffe, CustomMetric):
    register(_cls)
del _cls
