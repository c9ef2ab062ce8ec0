"""Write linalg_more_ref.npz: MXNet 1.9.1's outputs and input gradients (for random head
gradients) of linalg potrf (lower and upper), potri, trmm, gelqf, syevd, extractdiag,
makediag, extracttrian and maketrian, in float64, batched.

Run with MXNet's interpreter from this directory:
    /work/main/.mxvenv/bin/python gen_linalg_more_ref.py
"""
import json

import mxnet as mx
import numpy as np


def cases(rng):
    """(op name, inputs, attributes) of every case."""
    spd = rng.uniform(-1, 1, (2, 3, 3))
    spd = spd @ spd.transpose(0, 2, 1) + 3 * np.eye(3)
    tri = np.tril(rng.uniform(1, 2, (2, 3, 3))) + np.triu(rng.uniform(-1, 1, (2, 3, 3)), 1) * 0.3
    b = rng.uniform(-1, 1, (2, 3, 4))
    out = []
    for lower in (True, False):
        out.append(("potrf", [spd], {"lower": lower}))
        out.append(("potri", [tri if lower else tri.transpose(0, 2, 1)], {"lower": lower}))
        for transpose in (False, True):
            for right in (False, True):
                out.append(("trmm", [tri, b.transpose(0, 2, 1) if right else b],
                            {"lower": lower, "transpose": transpose, "rightside": right, "alpha": 1.5}))
    out.append(("gelqf", [rng.uniform(-1, 1, (2, 3, 5))], {}))
    out.append(("syevd", [spd], {}))
    for k in (-2, -1, 0, 1, 2):
        m = 4 - abs(k)
        out.append(("extractdiag", [rng.uniform(-1, 1, (2, 4, 4))], {"offset": k}))
        out.append(("makediag", [rng.uniform(-1, 1, (2, 3))], {"offset": k}))
        for lower in (True, False):
            out.append(("extracttrian", [rng.uniform(-1, 1, (2, 4, 4))], {"offset": k, "lower": lower}))
            out.append(("maketrian", [rng.uniform(-1, 1, (2, m * (m + 1) // 2))], {"offset": k, "lower": lower}))
    return out


def main():
    rng = np.random.RandomState(2)
    store, meta = {}, []
    for i, (name, inputs, attrs) in enumerate(cases(rng)):
        xs = [mx.nd.array(x, dtype="float64") for x in inputs]
        for x in xs:
            x.attach_grad()
        with mx.autograd.record():
            out = getattr(mx.nd.linalg, name)(*xs, **attrs)
        outs = out if isinstance(out, (list, tuple)) else [out]
        heads = [rng.uniform(-1, 1, o.shape) for o in outs]
        mx.autograd.backward(list(outs), head_grads=[mx.nd.array(h, dtype="float64") for h in heads])
        for j, x in enumerate(inputs):
            store[f"{i}_in{j}"] = x
            store[f"{i}_grad{j}"] = xs[j].grad.asnumpy()
        for j, (o, h) in enumerate(zip(outs, heads)):
            store[f"{i}_out{j}"] = o.asnumpy()
            store[f"{i}_head{j}"] = h
        meta.append({"op": name, "attrs": attrs, "inputs": len(inputs), "outputs": len(outs)})
    store["meta"] = np.array(json.dumps(meta))
    np.savez_compressed("linalg_more_ref.npz", **store)


if __name__ == "__main__":
    main()
