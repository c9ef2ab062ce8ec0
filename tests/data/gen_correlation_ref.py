"""Write correlation_ref.npz: MXNet 1.9.1's Correlation outputs and input gradients (random
head gradients) over kernel sizes, displacements, strides, padding and both comparisons.

Run with MXNet's interpreter from this directory:  /work/main/.mxvenv/bin/python gen_correlation_ref.py
"""
import json

import mxnet as mx
import numpy as np

# (shape, kernel_size, max_displacement, stride1, stride2, pad_size, is_multiply)
CASES = [((1, 3, 6, 7), 1, 3, 1, 1, 3, False), ((2, 1, 7, 7), 1, 3, 1, 1, 3, True),
         ((1, 1, 7, 7), 1, 4, 1, 2, 4, True), ((2, 2, 4, 4), 3, 1, 1, 1, 2, True),
         ((2, 1, 4, 4), 3, 1, 2, 1, 2, True), ((2, 1, 4, 4), 3, 1, 2, 1, 2, False),
         ((2, 1, 6, 4), 3, 1, 2, 1, 2, False), ((2, 1, 11, 11), 5, 1, 1, 1, 2, False),
         ((1, 2, 7, 8), 3, 2, 2, 1, 0, True)]


def main():
    rng = np.random.RandomState(7)
    store, meta = {}, []
    for i, (shape, k, md, s1, s2, pad, mul) in enumerate(CASES):
        a, b = rng.uniform(0, 1, shape).astype("float32"), rng.uniform(0, 1, shape).astype("float32")
        x, y = mx.nd.array(a), mx.nd.array(b)
        x.attach_grad()
        y.attach_grad()
        attrs = {"kernel_size": k, "max_displacement": md, "stride1": s1, "stride2": s2,
                 "pad_size": pad, "is_multiply": mul}
        with mx.autograd.record():
            out = mx.nd.Correlation(x, y, **attrs)
        head = rng.uniform(-1, 1, out.shape).astype("float32")
        out.backward(mx.nd.array(head))
        store.update({f"{i}_a": a, f"{i}_b": b, f"{i}_head": head, f"{i}_out": out.asnumpy(),
                      f"{i}_ga": x.grad.asnumpy(), f"{i}_gb": y.grad.asnumpy()})
        meta.append(attrs)
    store["meta"] = np.array(json.dumps(meta))
    np.savez_compressed("correlation_ref.npz", **store)


if __name__ == "__main__":
    main()
