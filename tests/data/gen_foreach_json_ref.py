"""Write tests/data/foreach_json_ref.json with MXNet 1.9.1 (run: /work/main/.mxvenv/bin/python THIS).

For each case: the JSON MXNet writes for a symbolic `contrib.foreach` graph (a `_foreach`
node holding its body in `subgraphs`), and the executor's outputs and input gradients
(head gradient: ones) for the inputs given. tests/symbol/test_foreach_node.py checks that
hybridgraph writes the same text, loads MXNet's, and computes the same numbers.
"""
from __future__ import annotations

import json
import os
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import mxnet as mx  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def simple():
    d, s, w = mx.sym.var("data"), mx.sym.var("s"), mx.sym.var("w")

    def body(x, st):
        o = x * 2 + st[0] * w
        return o, [o + 1]
    out, st = mx.sym.contrib.foreach(body, d, [s])
    return mx.sym.Group([out, st[0]]), {"data": (4, 3), "s": (3,), "w": (3,)}


def passthrough():
    """A state returned unchanged (MXNet inserts identity) and an outer expression."""
    d, s, w = mx.sym.var("data"), mx.sym.var("s"), mx.sym.var("w")
    ww = mx.sym.exp(w)

    def body(x, st):
        return [x * ww, x + 1], [st[0]]
    out, st = mx.sym.contrib.foreach(body, d, [s])
    return mx.sym.Group(out + st), {"data": (3, 2), "s": (2,), "w": (2,)}


def nested():
    d, s = mx.sym.var("data"), mx.sym.var("s")

    def inner(x, st):
        o = x * 2 + st[0]
        return o, [o]

    def outer(x, st):
        o, _ = mx.sym.contrib.foreach(inner, x, st)
        return o * 3, [mx.sym.sum(o, axis=0)]
    out, st = mx.sym.contrib.foreach(outer, d, [s])
    return mx.sym.Group([out, st[0]]), {"data": (2, 3, 4), "s": (4,)}


def main() -> None:
    rng = np.random.default_rng(0)
    cases = {}
    for fn in (simple, passthrough, nested):
        mx.AttrScope._subgraph_names.clear()
        with mx.name.NameManager():
            sym, shapes = fn()
        args = {k: rng.uniform(-1, 1, s).astype(np.float32) for k, s in shapes.items()}
        grads = {k: mx.nd.zeros(s) for k, s in shapes.items()}
        ex = sym.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in args.items()}, args_grad=grads)
        outs = ex.forward(is_train=True)
        ex.backward([mx.nd.ones(o.shape) for o in outs])
        cases[fn.__name__] = {
            "json": sym.tojson(),
            "args": {k: v.tolist() for k, v in args.items()},
            "outputs": [o.asnumpy().tolist() for o in outs],
            "grads": {k: g.asnumpy().tolist() for k, g in grads.items()},
        }
    with open(os.path.join(HERE, "foreach_json_ref.json"), "w") as f:
        json.dump(cases, f)


if __name__ == "__main__":
    main()
