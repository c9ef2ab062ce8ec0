"""Write sampling_ref.npz: MXNet 1.9.1's outputs and input gradients (random head gradients)
of GridGenerator (affine, warp; float32 only in MXNet), BilinearSampler and SpatialTransformer
(float32 and float64), including grid points outside the input.

Run with MXNet's interpreter from this directory:  /work/main/.mxvenv/bin/python gen_sampling_ref.py
"""
import json

import mxnet as mx
import numpy as np


def cases(rng):
    out = []
    for dt in ("float32", "float64"):
        if dt == "float32":
            out.append(("GridGenerator", [rng.uniform(-1, 1, (2, 6))],
                        {"transform_type": "affine", "target_shape": [4, 5]}, dt))
            out.append(("GridGenerator", [rng.uniform(-2, 2, (2, 2, 3, 4))], {"transform_type": "warp"}, dt))
        data = rng.uniform(-1, 1, (2, 3, 5, 6))
        out.append(("BilinearSampler", [data, rng.uniform(-1.3, 1.3, (2, 2, 4, 3))], {}, dt))
        loc = np.tile(np.array([[0.8, 0.1, 0.05, -0.1, 0.9, 0.1]]), (2, 1)) + rng.uniform(-0.2, 0.2, (2, 6))
        out.append(("SpatialTransformer", [data, loc], {"target_shape": [4, 4], "transform_type": "affine",
                                                        "sampler_type": "bilinear"}, dt))
    return out


def main():
    rng = np.random.RandomState(5)
    store, meta = {}, []
    for i, (name, inputs, attrs, dt) in enumerate(cases(rng)):
        xs = [mx.nd.array(x, dtype=dt) for x in inputs]
        for x in xs:
            x.attach_grad()
        with mx.autograd.record():
            out = getattr(mx.nd, name)(*xs, **attrs)
        head = rng.uniform(-1, 1, out.shape)
        out.backward(mx.nd.array(head, dtype=dt))
        store[f"{i}_out"], store[f"{i}_head"] = out.asnumpy(), head.astype(dt)
        for j, x in enumerate(inputs):
            store[f"{i}_in{j}"] = x.astype(dt)
            store[f"{i}_grad{j}"] = xs[j].grad.asnumpy()
        meta.append({"op": name, "attrs": attrs, "inputs": len(inputs), "dtype": dt})
    store["meta"] = np.array(json.dumps(meta))
    np.savez_compressed("sampling_ref.npz", **store)


if __name__ == "__main__":
    main()
