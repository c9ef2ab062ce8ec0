"""CTCLoss (MXNet 1.9.1's `CTCLoss`, aliases `ctc_loss`, `_contrib_CTCLoss`, `_contrib_ctc_loss`):
Connectionist Temporal Classification loss of unnormalised activations.

data (seq_len, batch, alphabet) holds activations; the loss applies a softmax over the
alphabet itself. `label` (batch, max_label_len) holds label indices, padded with 0
(`blank_label="first"`, blank = channel 0) or -1 (`"last"`, blank = the last channel) unless
`label_lengths` gives the lengths. `data_lengths` limits each sequence's time steps.

As MXNet (warp-ctc's CPU kernel), the forward pass computes the gradient with respect to the
activations and keeps it as a hidden second output; the backward pass scales it by the head
gradient of each sample. A label that cannot fit its sequence (length plus repeated
neighbours longer than the data) gives loss 0 and zero gradient, as MXNet. Steps past a
sequence's `data_lengths` get zero gradient.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..backend import to_numpy
from ..errors import DTypeError, ShapeError
from ..registry import register


def _ctc_inputs(a):
    return ("data", "label") + (("data_lengths",) if a.use_data_lengths else ()) + \
        (("label_lengths",) if a.use_label_lengths else ())


def _ctc_shape(a, dshape, lshape, *lengths):
    if dshape is None or lshape is None:
        return None
    if len(dshape) != 3:
        raise ShapeError(f"operator CTCLoss: input 'data' must be 3-D (sequence_length, batch_size, "
                         f"alphabet_size), got {tuple(dshape)}")
    if len(lshape) != 2:
        raise ShapeError(f"operator CTCLoss: input 'label' must be 2-D (batch_size, "
                         f"label_sequence_length), got {tuple(lshape)}")
    if dshape[1] != lshape[0]:
        raise ShapeError(f"operator CTCLoss: the batch size of 'data' {tuple(dshape)} and 'label' "
                         f"{tuple(lshape)} must be the same")
    if dshape[0] < lshape[1]:
        raise ShapeError(f"operator CTCLoss: the max number of labels ({lshape[1]}) cannot exceed "
                         f"the maximum sequence length of the data ({dshape[0]})")
    names = _ctc_inputs(a)[2:]
    for name, got in zip(names, lengths):
        want = (dshape[1],)
        if got is not None and tuple(got) != want:
            raise ShapeError(f"operator CTCLoss: input {name!r} must be a vector of the batch size "
                             f"{want}, got {tuple(got)}")
    return [dshape, lshape] + [(dshape[1],)] * len(names), [(dshape[1],), dshape]


def _ctc_type(a, dt, lt, *others):
    if dt is None:
        return None
    if dt != np.dtype("float32"):
        raise DTypeError(f"operator CTCLoss: input 'data' must be float32 (as MXNet 1.9.1's kernel), "
                         f"got {dt}")
    return [dt, lt if lt is not None else dt] + [t if t is not None else dt for t in others], [dt, dt]


_CTC_ATTRS = {
    "use_data_lengths": Attr("bool", False, "Whether the data lengths are given by `data_lengths`; "
                             "if false, every sequence has the full length."),
    "use_label_lengths": Attr("bool", False, "Whether the label lengths are given by `label_lengths`; "
                              "if false, they end at the first padding value (0 for blank_label="
                              "'first', -1 for 'last')."),
    "blank_label": Attr("str", "first", "The channel reserved for blank: 'first' (0) or 'last' "
                        "(alphabet_size - 1).", choices=("first", "last")),
}


def _label_lists(a, labels, label_lengths) -> list:
    """Each sample's label sequence (ints) without padding."""
    labels = np.asarray(labels)
    if label_lengths is not None:
        lens = np.asarray(label_lengths).astype(np.int64)
    else:
        pad = 0 if a.blank_label == "first" else -1
        is_pad = labels == pad
        lens = np.where(is_pad.any(axis=1), is_pad.argmax(axis=1), labels.shape[1])
    return [labels[b, :max(int(n), 0)].astype(np.int64) for b, n in enumerate(lens)]


def _shift(x, k: int):
    """x shifted right by k states along the last axis, -inf filled."""
    out = np.full_like(x, -np.inf)
    out[..., k:] = x[..., :x.shape[-1] - k]
    return out


def _unshift(x, k: int):
    """x shifted left by k states along the last axis, -inf filled."""
    out = np.full_like(x, -np.inf)
    out[..., :x.shape[-1] - k] = x[..., k:]
    return out


def _extended_labels(labels: list, blank: int):
    """(ext (B, S), state count per sample, skip (B, S)): labels with blanks between and
    around; skip[b, s] when the transition s-2 -> s is allowed (a non-blank differing from
    the label two states back)."""
    s_max = 2 * max((len(x) for x in labels), default=0) + 1
    ext = np.full((len(labels), s_max), blank, dtype=np.int64)
    for b, lab in enumerate(labels):   # over samples: fill each label row
        ext[b, 1:2 * len(lab):2] = lab
    n_states = np.array([2 * len(x) + 1 for x in labels], dtype=np.int64)
    skip = np.zeros(ext.shape, dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    skip &= np.arange(s_max)[None, :] < n_states[:, None]
    return ext, n_states, skip


def _ctc_batch(logp, labels: list, steps, blank: int):
    """(loss (B,), gradient (T, B, A)) from log-softmax `logp` (T, B, A), float64, for
    samples of `steps` time steps; forward-backward in log space, vectorised over samples."""
    t_max, batch, alphabet = logp.shape
    ext, n_states, skip = _extended_labels(labels, blank)
    s_max = ext.shape[1]
    rows = np.arange(batch)
    valid = np.arange(s_max)[None, :] < n_states[:, None]
    emit = np.where(valid[None], np.take_along_axis(logp, np.broadcast_to(ext, (t_max,) + ext.shape), 2),
                    -np.inf)                                          # (T, B, S)
    repeats = np.array([int(np.sum(x[1:] == x[:-1])) for x in labels])
    feasible = (np.array([len(x) for x in labels]) + repeats <= steps) & (steps > 0)
    alpha = np.full((t_max, batch, s_max), -np.inf)
    alpha[0, :, :2] = emit[0, :, :2]
    for t in range(1, t_max):   # over time steps, vectorised over samples and states
        prev = alpha[t - 1]
        two = np.where(skip, _shift(prev, 2), -np.inf)
        alpha[t] = np.logaddexp(np.logaddexp(prev, _shift(prev, 1)), two) + emit[t]
    skip_next = np.zeros_like(skip)
    skip_next[:, :-2] = skip[:, 2:]
    last = steps - 1
    final = (np.arange(s_max)[None, :] >= n_states[:, None] - 2) & valid
    beta = np.full((t_max, batch, s_max), -np.inf)
    for t in range(t_max - 1, -1, -1):
        if t + 1 < t_max:
            nxt = beta[t + 1]
            two = np.where(skip_next, _unshift(nxt, 2), -np.inf)
            beta[t] = np.logaddexp(np.logaddexp(nxt, _unshift(nxt, 1)), two) + emit[t]
        beta[t] = np.where((t == last)[:, None], np.where(final, emit[t], -np.inf), beta[t])
    t_end = np.clip(last, 0, t_max - 1)
    end_alpha = alpha[t_end, rows]
    log_like = np.logaddexp(end_alpha[rows, n_states - 1], end_alpha[rows, np.maximum(n_states - 2, 0)])
    log_like = np.where(n_states > 1, log_like, end_alpha[rows, 0])
    occupancy = alpha + beta
    per_char = np.full(logp.shape, -np.inf)
    for s in range(s_max):      # over label states: one channel per sample each time
        per_char[:, rows, ext[:, s]] = np.logaddexp(per_char[:, rows, ext[:, s]], occupancy[:, :, s])
    prob = np.exp(logp)
    with np.errstate(invalid="ignore", over="ignore"):
        grad = prob - np.exp(per_char - logp - log_like[None, :, None])
    # warp-ctc's rule: a character with no path (or a log-sum of exactly 0) gets the plain softmax
    plain = (per_char == 0.0) | np.isneginf(per_char) | np.isneginf(logp)
    grad = np.where(plain, prob, grad)
    inside = (np.arange(t_max)[:, None] < steps[None, :]) & feasible[None, :]
    return np.where(feasible, -log_like, 0.0), np.where(inside[..., None], grad, 0.0)


@register("CTCLoss", aliases=("ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"), inputs=_ctc_inputs,
          arguments=("data", "label", "data_lengths", "label_lengths"), outputs=("output0", "output1"),
          num_visible_outputs=1, attrs=dict(_CTC_ATTRS),
          infer_shape=_ctc_shape, infer_type=_ctc_type, fluent=False)
def CTCLoss(xp, a, data, label, *lengths):  # noqa: N802
    """Connectionist Temporal Classification loss, one value per sample (batch,)."""
    if data.dtype != np.float32:
        raise DTypeError(f"operator CTCLoss: input 'data' must be float32, got {data.dtype}")
    host = to_numpy(data).astype(np.float64)
    lengths = [to_numpy(v) for v in lengths]
    t_max, batch, alphabet = host.shape
    data_len = lengths[0] if a.use_data_lengths else None
    label_len = lengths[-1] if a.use_label_lengths else None
    steps = np.full(batch, t_max, dtype=np.int64) if data_len is None else \
        np.clip(data_len.astype(np.int64), 0, t_max)
    host_labels = to_numpy(label)
    with np.errstate(invalid="ignore"):   # steps past a sequence's length may hold anything
        shifted = host - host.max(axis=2, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(axis=2, keepdims=True))
    inside = np.arange(t_max)[:, None, None] < steps[None, :, None]
    logp = np.where(inside, logp, 0.0)
    blank = 0 if a.blank_label == "first" else alphabet - 1
    labels = _label_lists(a, host_labels, label_len)
    for b, lab in enumerate(labels):
        if lab.size and (lab.min() < 0 or lab.max() >= alphabet):
            raise ShapeError(f"operator CTCLoss: sample {b} has label values {lab.tolist()}; expected "
                             f"values in [0, {alphabet}) before the padding (blank_label="
                             f"{a.blank_label!r})")
    loss, grad = _ctc_batch(logp, labels, steps, blank)
    return xp.asarray(loss.astype(np.float32)), xp.asarray(grad.astype(np.float32))


@CTCLoss.def_gradient
def _(F, a, inputs, outputs, ograds):
    scale = F.reshape(ograds[0], shape=(1, -1, 1))
    return [F.broadcast_mul(outputs[1], scale)] + [None] * (len(inputs) - 1)
