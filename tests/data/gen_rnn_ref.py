"""Write tests/data/rnn_ref.npz: MXNet 1.9.1's RNN operator on configurations the
per-operator goldens do not cover (projection, deeper stacks, float64). State
clipping is left out: MXNet 1.9.1's CPU kernel ignores lstm_state_clip_min/max.

Run with the MXNet virtualenv: /work/mxvenv/bin/python tests/data/gen_rnn_ref.py
Each case stores `<id>/in:<name>`, `<id>/head<k>`, `<id>/out<k>`, `<id>/grad:<name>`;
the attributes are in CASES below (imported by tests/nd/test_rnn_ops.py).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

CASES = {
    "lstm_proj": dict(mode="lstm", state_size=5, num_layers=2, projection_size=3, bidirectional=True),
    "tanh_deep": dict(mode="rnn_tanh", state_size=3, num_layers=3, bidirectional=True),
    "gru_bi2": dict(mode="gru", state_size=4, num_layers=2, bidirectional=True),
    "relu_f64": dict(mode="rnn_relu", state_size=3, num_layers=1, dtype="float64"),
}
T, N, C = 4, 3, 5


def _param_size(c: dict) -> int:
    g = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}[c["mode"]]
    h, d, p = c["state_size"], 2 if c.get("bidirectional") else 1, c.get("projection_size")
    r = p or h
    total = 0
    for layer in range(c["num_layers"]):
        ni = C if layer == 0 else r * d
        total += d * (g * h * (ni + r) + 2 * g * h + (r * h if p else 0))
    return total


def main() -> None:
    import mxnet as mx
    rs = np.random.RandomState(7)
    out = {}
    for cid, c in CASES.items():
        c = dict(c)
        dtype = c.pop("dtype", "float32")
        ld = c["num_layers"] * (2 if c.get("bidirectional") else 1)
        r = c.get("projection_size") or c["state_size"]
        arrays = {"data": rs.uniform(-1, 1, (T, N, C)),
                  "parameters": rs.uniform(-0.6, 0.6, (_param_size(c),)),
                  "state": rs.uniform(-0.5, 0.5, (ld, N, r))}
        if c["mode"] == "lstm":
            arrays["state_cell"] = rs.uniform(-0.5, 0.5, (ld, N, c["state_size"]))
        xs = {k: mx.nd.array(v, dtype=dtype) for k, v in arrays.items()}
        # MXNet 1.9.1's CPU kernel has no backward for projected LSTMs: forward only
        with_grad = not c.get("projection_size")
        if with_grad:
            for x in xs.values():
                x.attach_grad()
            with mx.autograd.record(train_mode=True):
                res = mx.nd.RNN(*xs.values(), state_outputs=True, **c)
        else:
            res = mx.nd.RNN(*xs.values(), state_outputs=True, **c)
        heads = [mx.nd.array(rs.standard_normal(o.shape), dtype=dtype) for o in res]
        if with_grad:
            mx.autograd.backward(list(res), heads)
        for k, v in xs.items():
            out[f"{cid}/in:{k}"] = v.asnumpy()
            if with_grad:
                out[f"{cid}/grad:{k}"] = v.grad.asnumpy()
        for j, (o, h) in enumerate(zip(res, heads)):
            out[f"{cid}/out{j}"] = o.asnumpy()
            out[f"{cid}/head{j}"] = h.asnumpy()
    np.savez_compressed(Path(__file__).with_name("rnn_ref.npz"), **out)


if __name__ == "__main__":
    main()
