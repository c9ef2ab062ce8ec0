"""gluon.loss.CTCLoss (MXNet 1.9.1): the CTCLoss operator behind MXNet's layouts and weighting.

Kept apart from loss.py, which re-exports it as `gluon.loss.CTCLoss`.
"""
from __future__ import annotations

from typing import Any

from .loss import Loss, _apply_weighting


class CTCLoss(Loss):
    r"""Connectionist Temporal Classification Loss.

    Parameters
    ----------
    layout : str, default 'NTC'
        Layout of prediction tensor. 'N', 'T', 'C' stands for batch size,
        sequence length, and alphabet_size respectively.
    label_layout : str, default 'NT'
        Layout of the labels. 'N', 'T' stands for batch size, and sequence
        length respectively.
    weight : float or None
        Global scalar weight for loss.

    Inputs:
        - **pred**: unnormalized prediction tensor (before softmax), `(batch, seq, alphabet)`
          for 'NTC'. The last channel, `alphabet_size - 1`, is the blank label.
        - **label**: zero-based label tensor, padded with -1; `(batch, label_seq)` for 'NT'.
        - **pred_lengths**: optional `(batch_size,)` lengths of each prediction sequence.
        - **label_lengths**: optional `(batch_size,)` lengths of each label sequence.
        - **sample_weight**: optional per-sample weights.

    Outputs:
        - **loss**: output loss has shape `(batch_size,)`.
    """

    def __init__(self, layout: str = "NTC", label_layout: str = "NT", weight: float | None = None,
                 **kwargs: Any):
        assert layout in ["NTC", "TNC"], \
            f"Only 'NTC' and 'TNC' layouts for pred are supported. Got: {layout}"
        assert label_layout in ["NT", "TN"], \
            f"Only 'NT' and 'TN' layouts for label are supported. Got: {label_layout}"
        self._layout = layout
        self._label_layout = label_layout
        super().__init__(weight, label_layout.find("N"), **kwargs)

    def hybrid_forward(self, F, pred, label, pred_lengths=None, label_lengths=None, sample_weight=None):
        if self._layout == "NTC":
            pred = F.swapaxes(pred, 0, 1)
        if self._batch_axis == 1:
            label = F.swapaxes(label, 0, 1)
        loss = F.CTCLoss(pred, label, pred_lengths, label_lengths,
                         use_data_lengths=pred_lengths is not None,
                         use_label_lengths=label_lengths is not None,
                         blank_label="last")
        return _apply_weighting(F, loss, self._weight, sample_weight)
