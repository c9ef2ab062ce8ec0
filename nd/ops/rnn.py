"""Recurrent operators: the fused `RNN` (vanilla relu/tanh, LSTM, GRU; stacked,
bidirectional, projected LSTM) with its hidden `_backward_RNN`. (The Concat
Gluon's RNN layers use to pack their weights, `_rnn_param_concat`, lives with
Concat in matrix_join.py.)

`parameters` is MXNet's flat vector: first every weight, for each layer and then
each direction, `i2h` (G*H, I), `h2h` (G*H, R) and, with `projection_size`,
`h2r` (P, H); then every bias, for each layer and direction, `i2h` (G*H,) and
`h2h` (G*H,). G is the gate count (1, LSTM 4 in order i f g o, GRU 3 in order
r z n), H `state_size`, R the recurrent size (P with projection, else H) and I
the layer's input size (the data's for layer 0, D*R above). GRU is cuDNN's
variant: the reset gate multiplies `h2h(h) + b_hn`.

Backward is back-propagation through time in the array module: `_backward_RNN`
reruns the forward keeping every step's intermediates, then walks back.
Deliberate differences from MXNet 1.9.1's CPU kernels (which its GPU/cuDNN
kernels do not have):

* `p` (dropout between layers) drops in training as documented; the MKLDNN CPU
  kernel of MXNet 1.9.1 silently ignores it.
* `use_sequence_length` masks each sequence at its length (outputs past it are
  zero, final states are taken at the last valid step, the reverse direction
  starts there), as cuDNN does; the CPU kernel ignores the lengths.
* `lstm_state_clip_min/max` clip the LSTM cell state after each step (with
  `lstm_state_clip_nan`, NaN becomes the lower bound), as cuDNN does; the CPU
  kernel ignores them. Projected LSTMs (`projection_size`) also get a backward,
  which MXNet's CPU kernel refuses.

The dropout masks a training forward draws are kept, keyed by its `output`
array, for `_backward_RNN` to reuse: the operator's outputs are exactly MXNet's
(1 to 3), so the masks cannot ride along as a hidden output.
"""
from __future__ import annotations

import weakref

import numpy as np

from .. import rng
from ..attrs import Attr
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import merge_shape, register

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}

_ATTRS = {
    "state_size": Attr("int", doc="size of the state for each layer"),
    "num_layers": Attr("int", doc="number of stacked layers"),
    "bidirectional": Attr("bool", False, "whether to use bidirectional recurrent layers"),
    "mode": Attr("str", doc="the type of RNN to compute", choices=tuple(sorted(_GATES))),
    "p": Attr("float", 0.0, "drop rate of the dropout on the outputs of each RNN layer, "
                            "except the last layer."),
    "state_outputs": Attr("bool", False, "Whether to have the states as symbol outputs."),
    "projection_size": Attr("int", None, "size of project size"),
    "lstm_state_clip_min": Attr("float", None, "Minimum clip value of LSTM states. This option "
                                               "must be used together with lstm_state_clip_max."),
    "lstm_state_clip_max": Attr("float", None, "Maximum clip value of LSTM states. This option "
                                               "must be used together with lstm_state_clip_min."),
    "lstm_state_clip_nan": Attr("bool", False, "Whether to stop NaN from propagating in state by "
                                               "clipping it to min/max. If clipping range is not "
                                               "specified, this option is ignored."),
    "use_sequence_length": Attr("bool", False, "If set to true, this layer takes in an extra input "
                                               "parameter `sequence_length` to specify variable "
                                               "length sequence"),
}


# ---------------------------------------------------------------------------
# structure: input/output names, sizes, the packed parameter layout


def _check(a) -> None:
    """Reject attribute combinations MXNet rejects, naming the attribute."""
    if a.state_size <= 0:
        raise AttrError(f"operator RNN: attribute 'state_size' must be positive, got {a.state_size}")
    if a.num_layers <= 0:
        raise AttrError(f"operator RNN: attribute 'num_layers' must be positive, got {a.num_layers}")
    if not 0.0 <= a.p <= 1.0:
        raise AttrError(f"operator RNN: attribute 'p' must be in [0, 1], got {a.p}")
    if a.projection_size is not None:
        if a.mode != "lstm":
            raise AttrError(f"operator RNN: attribute 'projection_size' is only supported for "
                            f"mode='lstm', got mode={a.mode!r}")
        if not 0 < a.projection_size < a.state_size:
            raise AttrError(f"operator RNN: attribute 'projection_size' must be in (0, state_size="
                            f"{a.state_size}), got {a.projection_size}")
    lo, hi = a.lstm_state_clip_min, a.lstm_state_clip_max
    if (lo is None) != (hi is None):
        raise AttrError("operator RNN: attributes 'lstm_state_clip_min' and 'lstm_state_clip_max' "
                        f"must be given together, got min={lo}, max={hi}")
    if lo is not None and lo > hi:
        raise AttrError(f"operator RNN: 'lstm_state_clip_min' ({lo}) must not exceed "
                        f"'lstm_state_clip_max' ({hi})")


def _input_names(a) -> tuple:
    names = ["data", "parameters", "state"]
    if a.mode == "lstm":
        names.append("state_cell")
    if a.use_sequence_length:
        names.append("sequence_length")
    return tuple(names)


def _output_names(a) -> tuple:
    if not a.state_outputs:
        return ("output",)
    return ("output", "state_output", "statecell_output") if a.mode == "lstm" else ("output", "state_output")


def _dirs(a) -> int:
    return 2 if a.bidirectional else 1


def _rec_size(a) -> int:
    """Size of the recurrent state h (the projection's when there is one)."""
    return a.projection_size or a.state_size


def _layer_inputs(a, input_size: int) -> list[int]:
    return [input_size if layer == 0 else _rec_size(a) * _dirs(a) for layer in range(a.num_layers)]


def param_size(a, input_size: int) -> int:
    """Length of the packed parameter vector (MXNet's GetRnnParamSize)."""
    gh, r, h = _GATES[a.mode] * a.state_size, _rec_size(a), a.state_size
    per_dir = [gh * (ni + r) + 2 * gh + (r * h if a.projection_size else 0)
               for ni in _layer_inputs(a, input_size)]
    return sum(per_dir) * _dirs(a)


def _unpack(a, params, input_size: int) -> list[dict]:
    """Views of the packed vector: one dict (wx, wh, wr, bx, bh) per layer and direction."""
    gh, r, h = _GATES[a.mode] * a.state_size, _rec_size(a), a.state_size
    units, off = [], 0

    def take(shape):
        nonlocal off
        n = int(np.prod(shape))
        view = params[off:off + n].reshape(shape)
        off += n
        return view

    for ni in _layer_inputs(a, input_size):
        for _ in range(_dirs(a)):
            unit = {"wx": take((gh, ni)), "wh": take((gh, r))}
            unit["wr"] = take((r, h)) if a.projection_size else None
            units.append(unit)
    for unit in units:
        unit["bx"] = take((gh,))
        unit["bh"] = take((gh,))
    return units


# ---------------------------------------------------------------------------
# shape and type rules


def _rnn_shape(a, data, params, state, *rest):
    """Everything follows from the data shape (T, N, I), as in MXNet's RNNShape."""
    _check(a)
    if data is None:
        return None
    if len(data) != 3:
        raise ShapeError(f"operator RNN: input 'data' must be rank-3 [sequence length, batch size, "
                         f"input size], got shape {tuple(data)}")
    t, n, i = data
    ld, h, r = a.num_layers * _dirs(a), a.state_size, _rec_size(a)
    want = [data, (param_size(a, i),) if i else None, (ld, n, r)]
    if a.mode == "lstm":
        want.append((ld, n, h))
    if a.use_sequence_length:
        want.append((n,))
    got = [data, params, state, *rest]
    ins = [_merge_in(name, g, w) for name, g, w in zip(_input_names(a), got, want)]
    n = ins[0][1]
    outs = [(t, n, _dirs(a) * r)]
    if a.state_outputs:
        outs.append((ld, n, r))
        if a.mode == "lstm":
            outs.append((ld, n, h))
    return ins, outs


def _merge_in(name: str, got, want):
    try:
        return merge_shape(got, want)
    except ShapeError:
        raise ShapeError(f"operator RNN: input {name!r} has shape {tuple(got)}, expected "
                         f"{tuple(want)}") from None


def _rnn_type(a, *dtypes):
    """data, parameters and states share one float dtype; sequence_length may differ."""
    n_same = len(dtypes) - (1 if a.use_sequence_length else 0)
    dt = None
    for name, d in zip(_input_names(a), dtypes[:n_same]):
        if d is None:
            continue
        if dt is None:
            dt = d
        elif d != dt:
            raise DTypeError(f"operator RNN: input {name!r} has dtype {np.dtype(d).name}, expected "
                             f"{np.dtype(dt).name} like the other inputs")
    if dt is None:
        return None
    ins = [dt] * n_same + list(dtypes[n_same:])
    return ins, [dt] * len(_output_names(a))


# ---------------------------------------------------------------------------
# the recurrences: one step forward, one step back, per mode


def _sigmoid(xp, x):
    return 0.5 * (xp.tanh(0.5 * x) + 1.0)


class _Cell:
    """The maths of one mode; `step` returns (new h, new c, cache), `back` walks one step back."""

    def __init__(self, a):
        self.mode = a.mode
        self.clip = None
        if a.mode == "lstm" and a.lstm_state_clip_min is not None:
            self.clip = (a.lstm_state_clip_min, a.lstm_state_clip_max, a.lstm_state_clip_nan)

    # forward ---------------------------------------------------------------
    def step(self, xp, xw, h, c, u):
        hw = h @ u["wh"].T + u["bh"]
        if self.mode == "rnn_tanh":
            h_new = xp.tanh(xw + hw)
            return h_new, None, (h, h_new)
        if self.mode == "rnn_relu":
            h_new = xp.maximum(xw + hw, 0)
            return h_new, None, (h, h_new)
        if self.mode == "gru":
            return self._gru_step(xp, xw, hw, h)
        return self._lstm_step(xp, xw + hw, h, c, u)

    @staticmethod
    def _gru_step(xp, xw, hw, h):
        xr, xz, xn = xp.split(xw, 3, axis=-1)
        hr, hz, hn = xp.split(hw, 3, axis=-1)
        r = _sigmoid(xp, xr + hr)
        z = _sigmoid(xp, xz + hz)
        n = xp.tanh(xn + r * hn)
        h_new = (1 - z) * n + z * h
        return h_new, None, (h, r, z, n, hn)

    def _lstm_step(self, xp, g, h, c, u):
        gi, gf, gg, go = xp.split(g, 4, axis=-1)
        i, f, o = _sigmoid(xp, gi), _sigmoid(xp, gf), _sigmoid(xp, go)
        gt = xp.tanh(gg)
        c_raw = f * c + i * gt
        c_new = self._clip(xp, c_raw)
        hc = o * xp.tanh(c_new)
        h_new = hc @ u["wr"].T if u["wr"] is not None else hc
        return h_new, c_new, (h, c, i, f, gt, o, c_raw, c_new, hc)

    def _clip(self, xp, c):
        if self.clip is None:
            return c
        lo, hi, stop_nan = self.clip
        if stop_nan:  # fmax/fmin drop NaN in favour of the bound
            return xp.fmin(xp.fmax(c, c.dtype.type(lo)), c.dtype.type(hi))
        return xp.clip(c, lo, hi)

    # backward --------------------------------------------------------------
    def back(self, xp, dh, dc, cache, u, grads):
        """From d(new h), d(new c): returns (d xw, d h, d c) and accumulates dWh, dbh, dWr."""
        if self.mode in ("rnn_tanh", "rnn_relu"):
            h, h_new = cache
            da = dh * (1 - h_new * h_new) if self.mode == "rnn_tanh" else dh * (h_new > 0)
            return da, self._h2h_back(da, h, u, grads), None
        if self.mode == "gru":
            return self._gru_back(xp, dh, cache, u, grads)
        return self._lstm_back(xp, dh, dc, cache, u, grads)

    @staticmethod
    def _h2h_back(dhw, h, u, grads):
        grads["wh"] += dhw.T @ h
        grads["bh"] += dhw.sum(axis=0)
        return dhw @ u["wh"]

    def _gru_back(self, xp, dh, cache, u, grads):
        h, r, z, n, hn = cache
        dn = dh * (1 - z)
        dz = dh * (h - n)
        dan = dn * (1 - n * n)
        dar = dan * hn * r * (1 - r)
        daz = dz * z * (1 - z)
        dxw = xp.concatenate([dar, daz, dan], axis=-1)
        dhw = xp.concatenate([dar, daz, dan * r], axis=-1)
        return dxw, dh * z + self._h2h_back(dhw, h, u, grads), None

    def _lstm_back(self, xp, dh, dc, cache, u, grads):
        h, c, i, f, gt, o, c_raw, c_new, hc = cache
        if u["wr"] is not None:
            grads["wr"] += dh.T @ hc
            dh = dh @ u["wr"]
        tc = xp.tanh(c_new)
        dc = dc + dh * o * (1 - tc * tc)
        if self.clip is not None:
            lo, hi, _ = self.clip
            dc = dc * ((c_raw >= lo) & (c_raw <= hi))
        dg = xp.concatenate([dc * gt * i * (1 - i), dc * c * f * (1 - f),
                             dc * i * (1 - gt * gt), dh * tc * o * (1 - o)], axis=-1)
        return dg, self._h2h_back(dg, h, u, grads), dc * f


# ---------------------------------------------------------------------------
# running a whole stack


def _valid_steps(xp, a, lengths, t_len: int, n: int, dtype):
    """(T, N, 1) 1/0 mask of the steps inside each sequence, or None without lengths."""
    if not a.use_sequence_length:
        return None
    lens = lengths.astype(np.int64)
    if bool((lens < 1).any()) or bool((lens > t_len).any()):
        raise ShapeError(f"operator RNN: sequence_length values must be in [1, {t_len}], got "
                         f"{lens.tolist()}")
    return (xp.arange(t_len)[:, None] < lens[None, :]).astype(dtype)[:, :, None]


def _run_direction(xp, cell, u, x, h, c, valid, reverse: bool, keep: bool):
    """One layer in one direction over the sequence; returns (y, h, c, step caches)."""
    t_len = x.shape[0]
    xw = x @ u["wx"].T + u["bx"]
    ys = [None] * t_len
    caches = [None] * t_len
    for t in (range(t_len - 1, -1, -1) if reverse else range(t_len)):
        h_new, c_new, cache = cell.step(xp, xw[t], h, c, u)
        if valid is not None:  # padded steps keep the state and output zeros
            m = valid[t]
            h_new = m * h_new + (1 - m) * h
            c_new = None if c is None else m * c_new + (1 - m) * c
            ys[t] = m * h_new
        else:
            ys[t] = h_new
        h, c = h_new, c_new
        if keep:
            caches[t] = cache
    return xp.stack(ys), h, c, caches


def _forward_stack(xp, a, data, params, h0, c0, lengths, masks, keep: bool):
    """Run every layer; returns (out, hy, cy, per-layer records for the backward)."""
    _check(a)
    t_len, n, i_size = data.shape
    units = _unpack(a, params, i_size)
    cell = _Cell(a)
    valid = _valid_steps(xp, a, lengths, t_len, n, data.dtype)
    d = _dirs(a)
    x, hys, cys, records = data, [], [], []
    for layer in range(a.num_layers):
        ys, rec = [], []
        for k in range(d):
            idx = layer * d + k
            c_init = None if c0 is None else c0[idx]
            y, h, c, caches = _run_direction(xp, cell, units[idx], x, h0[idx], c_init, valid,
                                             reverse=k == 1, keep=keep)
            ys.append(y)
            hys.append(h)
            cys.append(c)
            rec.append(caches)
        records.append((x, rec))
        x = ys[0] if d == 1 else xp.concatenate(ys, axis=-1)
        if masks is not None and layer < a.num_layers - 1:
            x = x * masks[layer]
    cy = xp.stack(cys) if a.mode == "lstm" else None
    return x, xp.stack(hys), cy, (units, cell, valid, records)


def _back_direction(xp, cell, u, caches, dy, dh, dc, valid, reverse: bool, grads):
    """Walk one direction back; returns (d xw over all steps, dh0, dc0)."""
    t_len = dy.shape[0]
    dxw = [None] * t_len
    for t in (range(t_len) if reverse else range(t_len - 1, -1, -1)):
        if valid is not None:
            m = valid[t]
            dh_new, dh_keep = m * (dh + dy[t]), (1 - m) * dh
            dc_new, dc_keep = (None, None) if dc is None else (m * dc, (1 - m) * dc)
        else:
            dh_new, dh_keep, dc_new, dc_keep = dh + dy[t], 0, dc, 0
        dxw[t], dh_prev, dc_prev = cell.back(xp, dh_new, dc_new, caches[t], u, grads)
        dh = dh_prev + dh_keep
        dc = None if dc_prev is None else dc_prev + dc_keep
    return xp.stack(dxw), dh, dc


def _backward_stack(xp, a, state, dout, dhy, dcy, masks):
    """Back-propagation through time over a recorded forward (`state` from _forward_stack)."""
    units, cell, valid, records = state
    d, r = _dirs(a), _rec_size(a)
    grads = [{k: xp.zeros_like(v) for k, v in u.items() if v is not None} for u in units]
    dh0 = [None] * len(units)
    dc0 = [None] * len(units)
    dy = dout
    for layer in range(a.num_layers - 1, -1, -1):
        if masks is not None and layer < a.num_layers - 1:
            dy = dy * masks[layer]
        x, rec = records[layer]
        dx = xp.zeros_like(x)
        for k in range(d):
            idx = layer * d + k
            u, g = units[idx], grads[idx]
            dh = xp.zeros_like(dy[0, :, :r]) if dhy is None else dhy[idx]
            if a.mode != "lstm":
                dc = None
            else:   # the cell state has state_size columns (dh has the projection's)
                dc = xp.zeros(dh.shape[:-1] + (a.state_size,), dh.dtype) if dcy is None else dcy[idx]
            dxw, dh0[idx], dc0[idx] = _back_direction(xp, cell, u, rec[k], dy[:, :, k * r:(k + 1) * r],
                                                      dh, dc, valid, reverse=k == 1, grads=g)
            flat = dxw.reshape(-1, dxw.shape[-1])
            g["wx"] += flat.T @ x.reshape(-1, x.shape[-1])
            g["bx"] += flat.sum(axis=0)
            dx = dx + dxw @ u["wx"]
        dy = dx
    return dy, _pack_grads(xp, a, grads), xp.stack(dh0), (xp.stack(dc0) if a.mode == "lstm" else None)


def _pack_grads(xp, a, grads: list[dict]):
    """The gradient dicts in the packed parameter order."""
    parts = []
    for g in grads:
        parts += [g["wx"].ravel(), g["wh"].ravel()]
        if a.projection_size:
            parts.append(g["wr"].ravel())
    for g in grads:
        parts += [g["bx"], g["bh"]]
    return xp.concatenate(parts)


# ---------------------------------------------------------------------------
# dropout masks between layers: drawn by the forward, reused by the backward

# id(output array) -> masks; an entry lives as long as that output array
_MASKS: dict[int, list] = {}


def _remember_masks(out, masks: list) -> None:
    key = id(out)
    _MASKS[key] = masks
    try:
        weakref.finalize(out, _MASKS.pop, key, None)
    except TypeError:  # arrays without weak references: keep a bounded history
        while len(_MASKS) > 64:
            _MASKS.pop(next(iter(_MASKS)))


def _draw_masks(xp, a, data, is_train: bool):
    """Inverted-dropout masks for the outputs of every layer but the last (training only)."""
    if not is_train or a.p == 0 or a.num_layers == 1:
        return None
    t_len, n, _ = data.shape
    shape = (t_len, n, _dirs(a) * _rec_size(a))
    keep = 1.0 - a.p
    gen = rng.generator(xp)
    if keep == 0:
        return [xp.zeros(shape, dtype=data.dtype) for _ in range(a.num_layers - 1)]
    return [((gen.random(shape) < keep) * (1.0 / keep)).astype(data.dtype)
            for _ in range(a.num_layers - 1)]


# ---------------------------------------------------------------------------
# the operators


def _split_inputs(a, arrays):
    """(data, parameters, state, state_cell or None, sequence_length or None)."""
    arrays = list(arrays)
    data, params, h0 = arrays[:3]
    rest = arrays[3:]
    c0 = rest.pop(0) if a.mode == "lstm" else None
    lengths = rest.pop(0) if a.use_sequence_length else None
    return data, params, h0, c0, lengths


def _check_arrays(a, data, params, h0, c0, lengths) -> None:
    shapes = [data.shape, params.shape, h0.shape] + ([c0.shape] if c0 is not None else []) \
        + ([lengths.shape] if lengths is not None else [])
    res = _rnn_shape(a, *shapes)
    for name, got, want in zip(_input_names(a), shapes, res[0]):
        if tuple(got) != tuple(want):
            raise ShapeError(f"operator RNN: input {name!r} has shape {tuple(got)}, expected {tuple(want)}")


def _compute_dtype(dtype):
    """float16 runs in float32 (as MXNet's kernels accumulate)."""
    return np.dtype(np.float32) if np.dtype(dtype) == np.float16 else np.dtype(dtype)


def _as_compute(xp, arrays, dtype):
    return [None if x is None else x.astype(dtype, copy=False) for x in arrays]


@register("RNN", inputs=_input_names, outputs=_output_names, attrs=dict(_ATTRS), train_aware=True,
          is_random=lambda a: a.p > 0 and a.num_layers > 1, infer_shape=_rnn_shape,
          infer_type=_rnn_type, hint="rnn")
def rnn(xp, a, *arrays, is_train=False):
    """Applies recurrent layers (vanilla RNN with relu/tanh, LSTM, GRU) to TNC input data.

    Multi-layer and bidirectional; `parameters` is the packed vector described in
    this module's docstring; `p` drops the outputs of every layer but the last in
    training.
    """
    data, params, h0, c0, lengths = _split_inputs(a, arrays)
    _check_arrays(a, data, params, h0, c0, lengths)
    ct = _compute_dtype(data.dtype)
    data_c, params_c, h0_c, c0_c = _as_compute(xp, (data, params, h0, c0), ct)
    masks = _draw_masks(xp, a, data_c, is_train)
    out, hy, cy, _ = _forward_stack(xp, a, data_c, params_c, h0_c, c0_c, lengths, masks, keep=False)
    out = out.astype(data.dtype, copy=False)
    if masks is not None:
        _remember_masks(out, masks)
    if not a.state_outputs:
        return (out,)
    states = (hy.astype(data.dtype, copy=False),)
    if a.mode == "lstm":
        states += (cy.astype(data.dtype, copy=False),)
    return (out, *states)


def _forward_attrs(a) -> dict:
    return {k: v for k, v in a.given.items() if not (k.startswith("__") and k.endswith("__"))}


@rnn.def_gradient
def _rnn_gradient(F, a, inputs, outputs, ograds):  # noqa: N803
    res = F._backward_RNN(*inputs, outputs[0], *ograds, **_forward_attrs(a))
    n = 4 if a.mode == "lstm" else 3
    grads = [res[i] for i in range(n)]
    return grads + ([None] if a.use_sequence_length else [])


def _backward_input_names(a) -> tuple:
    heads = ["d_" + o for o in _output_names(a)]
    return _input_names(a) + ("output",) + tuple(heads)


def _backward_output_names(a) -> tuple:
    return tuple(n + "_grad" for n in _input_names(a) if n != "sequence_length")


def _backward_shape(a, *shapes):
    n_in = len(_input_names(a))
    res = _rnn_shape(a, *shapes[:n_in])
    if res is None:
        return None
    ins, outs = res
    return ins + outs[:1] + outs, ins[:len(_backward_output_names(a))]


def _backward_type(a, *dtypes):
    n_in = len(_input_names(a))
    res = _rnn_type(a, *dtypes[:n_in])
    if res is None:
        return None
    ins, outs = res
    return ins + outs[:1] + outs, ins[:len(_backward_output_names(a))]


@register("_backward_RNN", inputs=_backward_input_names, outputs=_backward_output_names,
          attrs=dict(_ATTRS), infer_shape=_backward_shape, infer_type=_backward_type)
def backward_rnn(xp, a, *arrays):
    """RNN's gradient: (d data, d parameters, d state[, d state_cell]) by back-propagation
    through time, reusing the dropout masks the forward drew for `output`."""
    n_in = len(_input_names(a))
    data, params, h0, c0, lengths = _split_inputs(a, arrays[:n_in])
    out, heads = arrays[n_in], list(arrays[n_in + 1:])
    dout = heads[0]
    dhy = heads[1] if a.state_outputs else None
    dcy = heads[2] if a.state_outputs and a.mode == "lstm" else None
    masks = _MASKS.get(id(out))
    ct = _compute_dtype(data.dtype)
    data_c, params_c, h0_c, c0_c, dout, dhy, dcy = _as_compute(
        xp, (data, params, h0, c0, dout, dhy, dcy), ct)
    *_, state = _forward_stack(xp, a, data_c, params_c, h0_c, c0_c, lengths, masks, keep=True)
    grads = _backward_stack(xp, a, state, dout, dhy, dcy, masks)
    return tuple(g.astype(data.dtype, copy=False) for g in grads if g is not None)
