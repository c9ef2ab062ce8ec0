"""ONNX lowering of the fused RNN op (rnn.py): ONNX LSTM / GRU / RNN, one node per layer.

MXNet packs every weight and bias into one flat vector (layout in rnn.py's docstring) and
orders gates i f g o (LSTM) and r z n (GRU); ONNX takes W [D, G*H, I], R [D, G*H, H],
B [D, 2*G*H] with gates i o f c and z r h. The lowering slices the vector and permutes
the gate blocks with ONNX ops (constant-folded by runtimes when the vector is a weight).
MXNet's GRU is cuDNN's (reset applied after the recurrent product): linear_before_reset=1.
"""
from __future__ import annotations

from ..lowering import onnx_lowering
from . import rnn  # noqa: F401 - the op lowered here

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
# MXNet gate block -> its place in ONNX's order
_PERM = {"lstm": [0, 3, 1, 2], "gru": [1, 0, 2], "rnn_relu": [0], "rnn_tanh": [0]}
_ONNX_OP = {"lstm": "LSTM", "gru": "GRU", "rnn_relu": "RNN", "rnn_tanh": "RNN"}


def _block(g, flat: str, offset: int, rows: int, cols: int, mode: str) -> str:
    """The (rows*cols) slice of the flat vector at offset, gates permuted, as [1, rows, cols]."""
    piece = g.op("Slice", [flat, g.ints([offset]), g.ints([offset + rows * cols]), g.ints([0], "axes")])
    gates = _GATES[mode]
    if gates > 1:
        piece = g.reshape(piece, [gates, rows // gates, cols])
        piece = g.op("Gather", [piece, g.ints(_PERM[mode], "perm")], axis=0)
    return g.reshape(piece, [1, rows, cols])


@onnx_lowering("RNN", note="LSTM/GRU/vanilla, stacked and bidirectional; no projection or state clipping")
def _rnn(g, node):
    a = node.attrs
    mode = a.mode
    if a.projection_size:
        raise g.fail("LSTM with projection_size (ONNX's LSTM has no projection)",
                     "export an LSTM without projection, or split the projection into a Dense layer")
    if a.lstm_state_clip_min is not None or a.lstm_state_clip_max is not None:
        raise g.fail("lstm_state_clip_min/max (ONNX's clip bounds gate inputs, not the cell state)")
    seq, batch, in_size = g.in_shapes[0]
    layers, dirs, hidden = int(a.num_layers), 2 if a.bidirectional else 1, int(a.state_size)
    gates = _GATES[mode]
    flat = g.inputs[1]
    # offsets of every weight, then every bias, for each layer and direction
    offset, weights = 0, {}
    for layer in range(layers):
        isz = in_size if layer == 0 else dirs * hidden
        for d in range(dirs):
            weights[layer, d, "W"] = (offset, isz)
            offset += gates * hidden * isz
            weights[layer, d, "R"] = (offset, hidden)
            offset += gates * hidden * hidden
    for layer in range(layers):
        for d in range(dirs):
            weights[layer, d, "Wb"] = offset
            weights[layer, d, "Rb"] = offset + gates * hidden
            offset += 2 * gates * hidden
    names = node.op.input_names(a)
    state = g.inputs[names.index("state")]
    cell = g.inputs[names.index("state_cell")] if mode == "lstm" else None
    lengths = None
    if a.use_sequence_length:
        lengths = g.cast(g.inputs[names.index("sequence_length")], "int32")
    attrs = {"hidden_size": hidden, "direction": "bidirectional" if dirs == 2 else "forward"}
    if mode == "gru":
        attrs["linear_before_reset"] = 1
    if mode.startswith("rnn_"):
        attrs["activations"] = ["Relu" if mode == "rnn_relu" else "Tanh"] * dirs
    x, hs, cs = g.inputs[0], [], []
    for layer in range(layers):
        ws, rs, bs = [], [], []
        for d in range(dirs):
            woff, isz = weights[layer, d, "W"]
            ws.append(_block(g, flat, woff, gates * hidden, isz, mode))
            roff, _ = weights[layer, d, "R"]
            rs.append(_block(g, flat, roff, gates * hidden, hidden, mode))
            wb = _block(g, flat, weights[layer, d, "Wb"], gates * hidden, 1, mode)
            rb = _block(g, flat, weights[layer, d, "Rb"], gates * hidden, 1, mode)
            bs.append(g.reshape(g.op("Concat", [wb, rb], axis=1), [1, 2 * gates * hidden]))
        w, r, b = ([v[0]] if dirs == 1 else [g.op("Concat", v, axis=0)] for v in (ws, rs, bs))
        lo, hi = g.ints([layer * dirs]), g.ints([(layer + 1) * dirs])
        h0 = g.op("Slice", [state, lo, hi, g.ints([0], "axes")])
        ins = [x, *w, *r, *b, lengths or "", h0]
        if mode == "lstm":
            ins.append(g.op("Slice", [cell, lo, hi, g.ints([0], "axes")]))
        outs = g.op(_ONNX_OP[mode], ins, n_out=3 if mode == "lstm" else 2, **attrs)
        y = g.op("Transpose", [outs[0]], perm=[0, 2, 1, 3])  # (T, D, N, H) -> (T, N, D, H)
        x = g.reshape(y, [0, 0, -1])
        hs.append(outs[1])
        if mode == "lstm":
            cs.append(outs[2])
    result = [x]
    if a.state_outputs:
        result.append(hs[0] if layers == 1 else g.op("Concat", hs, axis=0))
        if mode == "lstm":
            result.append(cs[0] if layers == 1 else g.op("Concat", cs, axis=0))
    return result
