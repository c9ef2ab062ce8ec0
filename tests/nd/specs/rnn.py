"""Specs for nd/ops/rnn.py: RNN (with a plain numpy reference written step by step,
independent of the kernel), its hidden backward, and _rnn_param_concat."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def param_size(mode: str, h: int, layers: int, dirs: int, i: int, proj: int | None = None) -> int:
    g, r = GATES[mode], proj or h
    return sum(dirs * (g * h * (ni + r) + 2 * g * h + (r * h if proj else 0))
               for ni in [i] + [r * dirs] * (layers - 1))


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def _unpack(params, mode, h, layers, dirs, i, proj):
    """Per (layer, direction): dict of numpy views of the packed vector."""
    g, r = GATES[mode], proj or h
    units, off = [], 0
    for layer in range(layers):
        ni = i if layer == 0 else r * dirs
        for _ in range(dirs):
            u = {}
            for key, shape in (("wx", (g * h, ni)), ("wh", (g * h, r))) + ((("wr", (r, h)),) if proj else ()):
                n = int(np.prod(shape))
                u[key] = params[off:off + n].reshape(shape)
                off += n
            units.append(u)
    for u in units:
        u["bx"], u["bh"] = params[off:off + g * h], params[off + g * h:off + 2 * g * h]
        off += 2 * g * h
    return units


def _cell(mode, u, x, h, c, clip):
    """One time step for one batch row (plain formulas from MXNet's documentation)."""
    a = u["wx"] @ x + u["bx"]
    b = u["wh"] @ h + u["bh"]
    if mode == "rnn_tanh":
        return np.tanh(a + b), None
    if mode == "rnn_relu":
        return np.maximum(a + b, 0), None
    if mode == "gru":
        n_h = len(h)
        r = _sig(a[:n_h] + b[:n_h])
        z = _sig(a[n_h:2 * n_h] + b[n_h:2 * n_h])
        n = np.tanh(a[2 * n_h:] + r * b[2 * n_h:])
        return (1 - z) * n + z * h, None
    n_c = len(c)
    s = a + b
    i_g, f_g, o_g = _sig(s[:n_c]), _sig(s[n_c:2 * n_c]), _sig(s[3 * n_c:])
    c = f_g * c + i_g * np.tanh(s[2 * n_c:3 * n_c])
    if clip is not None:
        c = np.clip(c, *clip)
    h_new = o_g * np.tanh(c)
    return (u["wr"] @ h_new if "wr" in u else h_new), c


def rnn_ref(data, parameters, state, *rest, mode, state_size, num_layers, bidirectional=False,
            state_outputs=False, projection_size=None, lstm_state_clip_min=None,
            lstm_state_clip_max=None, use_sequence_length=False, **_):
    """A slow, obvious RNN: loops over layers, directions, batch rows and valid time steps."""
    rest = list(rest)
    state_cell = rest.pop(0) if mode == "lstm" else None
    sequence_length = rest.pop(0) if use_sequence_length else None
    t_len, n, i = data.shape
    dirs = 2 if bidirectional else 1
    r = projection_size or state_size
    units = _unpack(parameters, mode, state_size, num_layers, dirs, i, projection_size)
    clip = None if lstm_state_clip_min is None else (lstm_state_clip_min, lstm_state_clip_max)
    lens = [t_len] * n if sequence_length is None else [int(v) for v in sequence_length]
    x = data
    hy = np.zeros((num_layers * dirs, n, r))
    cy = np.zeros((num_layers * dirs, n, state_size))
    for layer in range(num_layers):
        y = np.zeros((t_len, n, dirs * r))
        for d in range(dirs):
            idx = layer * dirs + d
            for b in range(n):
                h = state[idx, b]
                c = None if state_cell is None else state_cell[idx, b]
                steps = range(lens[b] - 1, -1, -1) if d == 1 else range(lens[b])
                for t in steps:
                    h, c = _cell(mode, units[idx], x[t, b], h, c, clip)
                    y[t, b, d * r:(d + 1) * r] = h
                hy[idx, b] = h
                if c is not None:
                    cy[idx, b] = c
        x = y
    outs = [x.astype(data.dtype)]
    if state_outputs:
        outs.append(hy.astype(data.dtype))
        if mode == "lstm":
            outs.append(cy.astype(data.dtype))
    return tuple(outs)


def rnn_case(draw, *, clip: bool | None = None):
    """Random small RNN call: modes, stacks, directions, projection, clipping, lengths."""
    mode = draw(st.sampled_from(sorted(GATES)))
    h = draw(st.integers(2, 4))
    layers = draw(st.integers(1, 2))
    bidir = draw(st.booleans())
    t_len, n, i = draw(st.integers(1, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 4))
    attrs = {"mode": mode, "state_size": h, "num_layers": layers, "bidirectional": bidir,
             "state_outputs": draw(st.booleans())}
    proj = None
    if mode == "lstm" and draw(st.booleans()):
        proj = attrs["projection_size"] = draw(st.integers(1, h - 1))
    if mode == "lstm" and (draw(st.booleans()) if clip is None else clip):
        attrs["lstm_state_clip_min"], attrs["lstm_state_clip_max"] = -0.35, 0.4
    dirs = 2 if bidir else 1
    r = proj or h
    lo = 0.05 if mode == "rnn_relu" else -1.0  # relu: positive values keep away from the kink
    inputs = [draw(arr((t_len, n, i), lo, 1)),
              draw(arr((param_size(mode, h, layers, dirs, i, proj),), lo * 0.8, 0.8)),
              draw(arr((layers * dirs, n, r), lo * 0.5, 0.5))]
    if mode == "lstm":
        inputs.append(draw(arr((layers * dirs, n, h), -0.5, 0.5)))
    if draw(st.booleans()):
        attrs["use_sequence_length"] = True
        inputs.append(np.array(draw(st.lists(st.integers(1, t_len), min_size=n, max_size=n)), np.int32))
    return inputs, attrs


def _smooth_case(draw):
    """rnn_case without clipping (finite differences across a clip bound are not smooth)."""
    return rnn_case(draw, clip=False)


def _backward_case(draw):
    inputs, attrs = _smooth_case(draw)
    outs = rnn_ref(*inputs, **attrs)
    heads = [draw(arr(o.shape, -1, 1)) for o in outs]
    return inputs + [outs[0]] + heads, attrs


def _backward_ref(*arrays, **attrs):
    """Gradients of sum(outputs * heads) by central differences of the numpy reference."""
    n_in = 3 + (attrs["mode"] == "lstm") + bool(attrs.get("use_sequence_length"))
    inputs, heads = list(arrays[:n_in]), arrays[n_in + 1:]

    def loss(xs):
        return sum(float((o * hd).sum()) for o, hd in zip(rnn_ref(*xs, **attrs), heads))
    grads = []
    for k in range(3 + (attrs["mode"] == "lstm")):
        g = np.zeros_like(inputs[k])
        for idx in np.ndindex(g.shape):
            for sign in (1, -1):
                moved = [x.copy() for x in inputs]
                moved[k][idx] += sign * 1e-6
                g[idx] += sign * loss(moved) / 2e-6
        grads.append(g)
    return tuple(grads)


def _param_concat_case(draw):
    n = draw(st.integers(1, 4))
    return [draw(arr((draw(st.integers(1, 5)),))) for _ in range(n)], {"dim": 0, "num_args": n}


SPECS = [
    OpSpec("RNN", case=_smooth_case, ref=rnn_ref, grad_inputs=None, rtol=1e-6, atol=1e-8,
           fd_rtol=1e-4),
    OpSpec("_backward_RNN", case=_backward_case, ref=_backward_ref, rtol=1e-4, atol=1e-6,
           nondiff="hidden backward operator: no second-order rule (its own check is against "
                   "finite differences of the numpy reference)"),
    OpSpec("_rnn_param_concat", case=_param_concat_case,
           ref=lambda *xs, dim, num_args: np.concatenate(xs, axis=dim)),
]
