"""Losses for training neural networks (`mx.gluon.loss`).

Every loss is a HybridBlock written with `F` operators only, following
MXNet 1.9.1's formulas operator for operator, so it runs eagerly, traced
and exported alike and gives MXNet's numbers. Each takes an optional
`sample_weight` broadcastable to the loss, and a global scalar `weight`.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from hybridgraph import nd

from .hybrid_block import HybridBlock

__all__ = ["Loss", "L2Loss", "L1Loss",
           "SigmoidBinaryCrossEntropyLoss", "SigmoidBCELoss",
           "SoftmaxCrossEntropyLoss", "SoftmaxCELoss",
           "KLDivLoss", "CTCLoss", "HuberLoss", "HingeLoss", "SquaredHingeLoss", "LogisticLoss",
           "TripletLoss", "PoissonNLLLoss", "CosineEmbeddingLoss", "SDMLLoss"]


def _apply_weighting(F, loss, weight: float | None = None, sample_weight=None):
    """Multiply `loss` by the per-sample weights (broadcast) and the global scalar weight.

    Parameters
    ----------
    loss : NDArray or Symbol
        The loss to be weighted.
    weight : float or None
        Global scalar weight for loss.
    sample_weight : NDArray or Symbol or None
        Per sample weighting, broadcastable to the shape of `loss`
        (e.g. `(64, 1)` for a loss of shape `(64, 10)`).
    """
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        assert isinstance(weight, numbers.Number), "weight must be a number"
        loss = loss * weight
    return loss


def _reshape_like(F, x, y):
    """Reshape `x` to the shape of `y` (a Reshape eagerly, `reshape_like` in a graph)."""
    if F is nd:
        return x.reshape(y.shape)
    return F.reshape_like(x, y)


class Loss(HybridBlock):
    """Base class for losses.

    Parameters
    ----------
    weight : float or None
        Global scalar weight for loss.
    batch_axis : int, default 0
        The axis that represents mini-batch.
    """

    def __init__(self, weight: float | None, batch_axis: int, **kwargs: Any):
        super().__init__(**kwargs)
        self._weight = weight
        self._batch_axis = batch_axis

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(batch_axis={self._batch_axis}, w={self._weight})"

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError

    def _batch_mean(self, F, loss):
        return F.mean(loss, axis=self._batch_axis, exclude=True)

    def _weighted_batch_mean(self, F, loss, sample_weight):
        """The common tail of most losses: weighting, then the mean over all but the batch axis."""
        return self._batch_mean(F, _apply_weighting(F, loss, self._weight, sample_weight))


class L2Loss(Loss):
    r"""Mean squared error: ``L = 1/2 * (label - pred)^2``, averaged over all but the batch axis.

    Parameters
    ----------
    weight : float, default 1.0
        Global scalar weight for loss.
    batch_axis : int, default 0
        The axis that represents mini-batch.

    Inputs:
        - **pred**: prediction tensor with arbitrary shape.
        - **label**: target tensor with the same size as pred.
        - **sample_weight**: element-wise weighting tensor, broadcastable to pred.

    Outputs:
        - **loss**: loss tensor with shape (batch_size,).
    """

    def __init__(self, weight: float = 1.0, batch_axis: int = 0, **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.square(label - pred)
        loss = _apply_weighting(F, loss, self._weight / 2, sample_weight)
        return self._batch_mean(F, loss)


class L1Loss(Loss):
    r"""Mean absolute error: ``L = |label - pred|``, averaged over all but the batch axis.

    Parameters
    ----------
    weight : float or None
        Global scalar weight for loss.
    batch_axis : int, default 0
        The axis that represents mini-batch.

    Inputs:
        - **pred**: prediction tensor with arbitrary shape.
        - **label**: target tensor with the same size as pred.
        - **sample_weight**: element-wise weighting tensor, broadcastable to pred.

    Outputs:
        - **loss**: loss tensor with shape (batch_size,).
    """

    def __init__(self, weight: float | None = None, batch_axis: int = 0, **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.abs(label - pred)
        return self._weighted_batch_mean(F, loss, sample_weight)


class SigmoidBinaryCrossEntropyLoss(Loss):
    r"""Binary cross-entropy on sigmoid outputs (alias: SigmoidBCELoss).

    With ``from_sigmoid=False`` (default) the sigmoid is fused into the loss
    with the log-sum-exp trick:
    ``L = relu(pred) - pred * label + softrelu(-|pred|)``; with a
    `pos_weight`, positive labels are weighted by it. With
    ``from_sigmoid=True``,
    ``L = -(log(pred + eps) * label * pos_weight + log(1 - pred + eps) * (1 - label))``.

    Parameters
    ----------
    from_sigmoid : bool, default False
        Whether the input is already the output of a sigmoid.
    weight : float or None
        Global scalar weight for loss.
    batch_axis : int, default 0
        The axis that represents mini-batch.

    Inputs:
        - **pred**: prediction tensor with arbitrary shape.
        - **label**: target tensor with values in `[0, 1]` and the size of pred.
        - **sample_weight**: element-wise weighting tensor, broadcastable to pred.
        - **pos_weight**: weighting of positive examples, broadcastable to pred
          (e.g. `(1, 10)` for pred `(64, 10)`).

    Outputs:
        - **loss**: loss tensor with shape (batch_size,).
    """

    def __init__(self, from_sigmoid: bool = False, weight: float | None = None, batch_axis: int = 0,
                 **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def hybrid_forward(self, F, pred, label, sample_weight=None, pos_weight=None):
        label = _reshape_like(F, label, pred)
        if not self._from_sigmoid:
            if pos_weight is None:
                loss = F.relu(pred) - pred * label + F.Activation(-F.abs(pred), act_type="softrelu")
            else:
                log_weight = 1 + F.broadcast_mul(pos_weight - 1, label)
                loss = pred - pred * label + log_weight * (
                    F.Activation(-F.abs(pred), act_type="softrelu") + F.relu(-pred))
        else:
            eps = 1e-12
            if pos_weight is None:
                loss = -(F.log(pred + eps) * label + F.log(1. - pred + eps) * (1. - label))
            else:
                loss = -(F.broadcast_mul(F.log(pred + eps) * label, pos_weight)
                         + F.log(1. - pred + eps) * (1. - label))
        return self._weighted_batch_mean(F, loss, sample_weight)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class SoftmaxCrossEntropyLoss(Loss):
    r"""Softmax cross-entropy loss (alias: SoftmaxCELoss).

    With ``sparse_label=True`` (default) `label` holds class indices and
    ``L = -log_softmax(pred)[label]``; otherwise `label` is a distribution of
    pred's shape and ``L = -sum(label * log_softmax(pred), axis)``.

    Parameters
    ----------
    axis : int, default -1
        The axis to sum over when computing softmax and entropy.
    sparse_label : bool, default True
        Whether label is an integer array instead of probability distribution.
    from_logits : bool, default False
        Whether input is already a log probability (from log_softmax).
    weight : float or None
        Global scalar weight for loss.
    batch_axis : int, default 0
        The axis that represents mini-batch.

    Inputs:
        - **pred**: the prediction tensor.
        - **label**: class indices (pred's shape without `axis`) or a distribution (pred's shape).
        - **sample_weight**: element-wise weighting tensor, broadcastable to label.

    Outputs:
        - **loss**: loss tensor with shape (batch_size,).
    """

    def __init__(self, axis: int = -1, sparse_label: bool = True, from_logits: bool = False,
                 weight: float | None = None, batch_axis: int = 0, **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self._axis = axis
        self._sparse_label = sparse_label
        self._from_logits = from_logits

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if F is nd and self._sparse_label and not self._from_logits:
            # eagerly, the same values from one fused kernel (nd/ops/loss_fused.py)
            if self._weight is None and sample_weight is None:
                return F._internal._sparse_softmax_ce(pred, label, axis=self._axis, batch_axis=self._batch_axis)
            loss = F._internal._sparse_softmax_ce(pred, label, axis=self._axis)
            loss = _apply_weighting(F, loss, self._weight, sample_weight)
            return loss.mean(axis=self._batch_axis, exclude=True)
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        if self._sparse_label:
            loss = -F.pick(pred, label, axis=self._axis, keepdims=True)
        else:
            label = _reshape_like(F, label, pred)
            loss = -(pred * label).sum(axis=self._axis, keepdims=True)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return loss.mean(axis=self._batch_axis, exclude=True)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    r"""Kullback-Leibler divergence loss: ``L = label * (log(label + 1e-12) - pred)``, summed per sample.

    With ``from_logits=False`` `pred` first goes through `log_softmax` along `axis`.

    Parameters
    ----------
    from_logits : bool, default True
        Whether the input is a log probability instead of unnormalized numbers.
    axis : int, default -1
        The axis of the softmax (only used when `from_logits` is False).
    weight : float or None
        Global scalar weight for loss.
    batch_axis : int, default 0
        The axis that represents mini-batch.

    Inputs:
        - **pred**: prediction tensor with arbitrary shape.
        - **label**: target distribution with the same size as pred.
        - **sample_weight**: element-wise weighting tensor, broadcastable to pred.

    Outputs:
        - **loss**: loss tensor with shape (batch_size,).
    """

    def __init__(self, from_logits: bool = True, axis: int = -1, weight: float | None = None, batch_axis: int = 0,
                 **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        loss = label * (F.log(label + 1e-12) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.sum(loss, axis=self._batch_axis, exclude=True)


class HuberLoss(Loss):
    r"""Smoothed L1 loss: ``0.5 / rho * d^2`` if ``d = |label - pred| <= rho``, else ``d - rho / 2``.

    Parameters
    ----------
    rho : float, default 1
        Threshold between the quadratic and the linear part.
    weight : float or None
        Global scalar weight for loss.
    batch_axis : int, default 0
        The axis that represents mini-batch.

    Inputs:
        - **pred**: prediction tensor with arbitrary shape.
        - **label**: target tensor with the same size as pred.
        - **sample_weight**: element-wise weighting tensor, broadcastable to pred.

    Outputs:
        - **loss**: loss tensor with shape (batch_size,).
    """

    def __init__(self, rho: float = 1, weight: float | None = None, batch_axis: int = 0, **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.abs(label - pred)
        loss = F.where(loss > self._rho, loss - 0.5 * self._rho, (0.5 / self._rho) * F.square(loss))
        return self._weighted_batch_mean(F, loss, sample_weight)


_MARGIN_LOSS_DOC = """

    Parameters
    ----------
    margin : float, default 1
        The margin in hinge loss.
    weight : float or None
        Global scalar weight for loss.
    batch_axis : int, default 0
        The axis that represents mini-batch.

    Inputs:
        - **pred**: prediction tensor with arbitrary shape.
        - **label**: truth tensor with values -1 or 1, the size of pred.
        - **sample_weight**: element-wise weighting tensor, broadcastable to pred.

    Outputs:
        - **loss**: loss tensor with shape (batch_size,).
    """


class _MarginLoss(Loss):
    """``max(0, margin - pred * label)`` (squared when `_squared`), weighted and averaged per sample."""

    _squared = False

    def __init__(self, margin: float = 1, weight: float | None = None, batch_axis: int = 0, **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.relu(self._margin - pred * label)
        if self._squared:
            loss = F.square(loss)
        return self._weighted_batch_mean(F, loss, sample_weight)


class HingeLoss(_MarginLoss):
    __doc__ = (r"""Hinge loss used in SVMs: ``L = max(0, margin - pred * label)`` with labels -1 or 1."""
               + _MARGIN_LOSS_DOC)


class SquaredHingeLoss(_MarginLoss):
    __doc__ = (r"""Soft-margin loss used in SVMs: ``L = max(0, margin - pred * label)^2`` with labels -1 or 1."""
               + _MARGIN_LOSS_DOC)

    _squared = True


class LogisticLoss(Loss):
    r"""Logistic loss for binary labels: ``L = log(1 + exp(-pred * label))``.

    Parameters
    ----------
    weight : float or None
        Global scalar weight for loss.
    batch_axis : int, default 0
        The axis that represents mini-batch.
    label_format : str, default 'signed'
        'signed' for labels -1/1, 'binary' for labels 0/1.

    Inputs:
        - **pred**: prediction tensor with arbitrary shape.
        - **label**: truth tensor (-1/1 or 0/1), the size of pred.
        - **sample_weight**: element-wise weighting tensor, broadcastable to pred.

    Outputs:
        - **loss**: loss tensor with shape (batch_size,).
    """

    def __init__(self, weight: float | None = None, batch_axis: int = 0, label_format: str = "signed",
                 **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self._label_format = label_format
        if self._label_format not in ["signed", "binary"]:
            raise ValueError(f"label_format can only be signed or binary, recieved {label_format}.")

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        if self._label_format == "signed":
            label = (label + 1.0) / 2.0  # labels -1/1 become 0/1
        loss = F.relu(pred) - pred * label + F.Activation(-F.abs(pred), act_type="softrelu")
        return self._weighted_batch_mean(F, loss, sample_weight)


class TripletLoss(Loss):
    r"""Triplet loss: ``L = max(|pos - pred|^2 - |neg - pred|^2 + margin, 0)`` per sample.

    Parameters
    ----------
    margin : float, default 1
        Margin of separation between correct and incorrect pair.
    weight : float or None
        Global scalar weight for loss.
    batch_axis : int, default 0
        The axis that represents mini-batch.

    Inputs:
        - **pred**: prediction tensor with arbitrary shape.
        - **positive**: positive example tensor, the size of pred.
        - **negative**: negative example tensor, the size of pred.

    Outputs:
        - **loss**: loss tensor with shape (batch_size,).
    """

    def __init__(self, margin: float = 1, weight: float | None = None, batch_axis: int = 0, **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, positive, negative):
        positive = _reshape_like(F, positive, pred)
        negative = _reshape_like(F, negative, pred)
        loss = F.sum(F.square(positive - pred) - F.square(negative - pred), axis=self._batch_axis, exclude=True)
        loss = F.relu(loss + self._margin)
        return _apply_weighting(F, loss, self._weight, None)


class PoissonNLLLoss(Loss):
    r"""Negative log likelihood of a Poisson target, averaged to one number.

    ``L = exp(pred) - target * pred`` with ``from_logits=True`` (default),
    ``L = pred - target * log(pred + epsilon)`` otherwise; ``compute_full``
    adds Stirling's approximation of ``log(target!)`` where ``target > 1``.

    Parameters
    ----------
    weight : float or None
        Global scalar weight for loss.
    from_logits : bool, default True
        Whether `pred` is already ``log(rate)``.
    batch_axis : int, default 0
        The axis that represents mini-batch.
    compute_full : bool, default False
        Whether to add the Stirling factor
        ``target * log(target) - target + 0.5 * log(2 * pi * target)``.

    Inputs:
        - **pred**: predicted value.
        - **target**: Poisson-distributed counts, the size of pred.
        - **sample_weight**: element-wise weighting tensor, broadcastable to pred.
        - **epsilon**: float, default 1e-08, avoids ``log(0)`` when `from_logits` is False.

    Outputs:
        - **loss**: the mean of the loss, shape `(1,)`.
    """

    def __init__(self, weight: float | None = None, from_logits: bool = True, batch_axis: int = 0,
                 compute_full: bool = False, **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._compute_full = compute_full

    def hybrid_forward(self, F, pred, target, sample_weight=None, epsilon=1e-08):
        target = _reshape_like(F, target, pred)
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            stirling_factor = target * F.log(target) - target + 0.5 * F.log(2 * target * np.pi)
            target_gt_1 = target > 1
            stirling_factor = stirling_factor * target_gt_1
            loss = loss + stirling_factor
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss)


class CosineEmbeddingLoss(Loss):
    r"""Cosine embedding loss for pairs labelled 1 (similar) or -1 (dissimilar).

    ``L = 1 - cos_sim(input1, input2)`` where ``label == 1`` and
    ``L = max(0, cos_sim(input1, input2) - margin)`` where ``label == -1``.

    Parameters
    ----------
    weight : float or None
        Global scalar weight for loss.
    batch_axis : int, default 0
        The axis that represents mini-batch.
    margin : float, default 0
        Margin of separation between correct and incorrect pair.

    Inputs:
        - **input1**: a tensor with arbitrary shape.
        - **input2**: another tensor with the shape of input1.
        - **label**: a 1-D tensor of 1 or -1, one per pair.
        - **sample_weight**: element-wise weighting tensor, broadcastable to the loss.

    Outputs:
        - **loss**: the loss tensor with shape (batch_size, 1).
    """

    def __init__(self, weight: float | None = None, batch_axis: int = 0, margin: float = 0, **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, input1, input2, label, sample_weight=None):
        input1 = _reshape_like(F, input1, input2)
        label = label.reshape((-1, 1))
        cos_sim = self._cosine_similarity(F, input1, input2)
        y_1 = label == 1
        y_minus_1 = label == -1
        cos_sim_a = (1 - cos_sim) * y_1
        z_array = F.array([0]) if F is nd else F.zeros((1, 1))
        # MXNet also passes axis=1 here, which broadcast_maximum ignores; our attribute schema rejects it.
        cos_sim_b = F.broadcast_maximum(z_array, y_minus_1 * (cos_sim - self._margin))
        loss = cos_sim_a + cos_sim_b
        return _apply_weighting(F, loss, self._weight, sample_weight)

    @staticmethod
    def _cosine_similarity(F, x, y, axis: int = -1):
        x_norm = F.norm(x, axis=axis).reshape((-1, 1))
        y_norm = F.norm(y, axis=axis).reshape((-1, 1))
        x_dot_y = F.sum(x * y, axis=axis).reshape((-1, 1))
        eps_arr = F.array([1e-12]) if F is nd else F.full((1, 1), 1e-12)
        return x_dot_y / F.broadcast_maximum(x_norm * y_norm, eps_arr)


class SDMLLoss(Loss):
    r"""Batchwise Smoothed Deep Metric Learning loss (Bonadiman et al., 2019).

    `x1[i]` and `x2[i]` form a positive pair and every other row of the batch
    is a negative; the loss is the KL divergence between the softmax of the
    negative squared distances and the smoothed identity labels.

    Parameters
    ----------
    smoothing_parameter : float, default 0.3
        Probability mass spread over the other samples of the batch (< 1).
    weight : float, default 1.0
        Global scalar weight for loss.
    batch_axis : int, default 0
        The axis that represents mini-batch.

    Inputs:
        - **x1**: minibatch of vectors, `(batch_size, vector_dim)`.
        - **x2**: minibatch of vectors, `(batch_size, vector_dim)`, aligned with x1.

    Outputs:
        - **loss**: loss tensor with shape (batch_size,).
    """

    def __init__(self, smoothing_parameter: float = 0.3, weight: float = 1., batch_axis: int = 0,
                 **kwargs: Any):
        super().__init__(weight, batch_axis, **kwargs)
        self.kl_loss = KLDivLoss(from_logits=True)
        self.smoothing_parameter = smoothing_parameter

    @staticmethod
    def _compute_distances(x1, x2):
        assert x1.shape == x2.shape
        batch_size, dim = x1.shape
        x1_ = x1.expand_dims(1).broadcast_to([batch_size, batch_size, dim])
        x2_ = x2.expand_dims(0).broadcast_to([batch_size, batch_size, dim])
        squared_diffs = (x1_ - x2_) ** 2
        return squared_diffs.sum(axis=2)

    def _compute_labels(self, F, batch_size: int):
        gold = F.eye(batch_size)
        return gold * (1 - self.smoothing_parameter) + (1 - gold) * self.smoothing_parameter / (batch_size - 1)

    def hybrid_forward(self, F, x1, x2):
        batch_size = x1.shape[0]
        labels = self._compute_labels(F, batch_size)
        distances = self._compute_distances(x1, x2)
        log_probabilities = F.log_softmax(-distances, axis=1)
        if F is nd:
            labels = labels.as_in_context(distances.context)
        return self.kl_loss(log_probabilities, labels)


from .loss_ctc import CTCLoss  # noqa: E402  (it subclasses Loss, defined above)
