"""Write index_copy_ref.npz: MXNet 1.9.1's contrib.index_copy output and gradients, including a
repeated index. Run with MXNet's interpreter from this directory:
    /work/main/.mxvenv/bin/python gen_index_copy_ref.py
"""
import mxnet as mx
import numpy as np

INDICES = [[0, 3, 1], [2, 2, 4], [4]]


def main():
    rng = np.random.RandomState(1)
    out = {}
    for i, idx in enumerate(INDICES):
        old, new = rng.uniform(-1, 1, (5, 2, 3)), rng.uniform(-1, 1, (len(idx), 2, 3))
        o, n = mx.nd.array(old), mx.nd.array(new)
        o.attach_grad()
        n.attach_grad()
        with mx.autograd.record():
            res = mx.nd.contrib.index_copy(o, mx.nd.array(idx, dtype="int64"), n)
        head = rng.uniform(-1, 1, res.shape)
        res.backward(mx.nd.array(head))
        out.update({f"{i}_old": old, f"{i}_new": new, f"{i}_head": head, f"{i}_out": res.asnumpy(),
                    f"{i}_gold": o.grad.asnumpy(), f"{i}_gnew": n.grad.asnumpy()})
    np.savez_compressed("index_copy_ref.npz", **out)


if __name__ == "__main__":
    main()
