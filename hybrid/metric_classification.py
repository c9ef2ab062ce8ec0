"""Classification metrics (MXNet 1.9.1's names and values): Accuracy,
TopKAccuracy, F1, MCC and Perplexity.
"""
from __future__ import annotations

import math
from typing import Any

import numpy

from .metric_base import EvalMetric, _host, alias, check_label_shapes


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
