"""Reference numbers for the kvstore tests, written by real MXNet 1.9.1.

Run with MXNet's interpreter: `/path/to/mxvenv/bin/python tests/data/gen_kvstore_ref.py`.
Writes tests/data/kvstore_ref.npz:

- ``2bit_t{T}_step{S}``: what a ``device`` store with 2-bit compression (threshold T)
  returns after the S-th push of the gradients ``grad_step{S}_dev{D}`` from two
  contexts (residuals carried over pushes);
- ``sgd_mom_step{S}``: the stored weight of a ``local`` store with an SGD
  optimizer (momentum 0.9, wd 0.01, rescale 0.5) after the S-th push of
  ``grad_step{S}_dev0 + grad_step{S}_dev1``.
"""
from pathlib import Path

import mxnet as mx
import numpy as np

SHAPE = (5, 7)  # 35 values: two full 16-value blocks and a partial one
STEPS = 4


def main() -> None:
    rng = np.random.RandomState(7)
    out = {}
    grads = [[rng.uniform(-1, 1, SHAPE).astype(np.float32) for _ in range(2)] for _ in range(STEPS)]
    for s in range(STEPS):
        for d in range(2):
            out[f"grad_step{s}_dev{d}"] = grads[s][d]
    for threshold in (0.5, 0.3):
        kv = mx.kv.create("device")
        kv.set_gradient_compression({"type": "2bit", "threshold": threshold})
        kv.init(3, mx.nd.zeros(SHAPE))
        for s in range(STEPS):
            kv.push(3, [mx.nd.array(grads[s][d], ctx=mx.cpu(d)) for d in range(2)])
            res = mx.nd.zeros(SHAPE)
            kv.pull(3, out=res)
            out[f"2bit_t{threshold}_step{s}"] = res.asnumpy()
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5))
    kv.init(0, mx.nd.ones(SHAPE))
    for s in range(STEPS):
        kv.push(0, [mx.nd.array(grads[s][d], ctx=mx.cpu(d)) for d in range(2)])
        res = mx.nd.zeros(SHAPE)
        kv.pull(0, out=res)
        out[f"sgd_mom_step{s}"] = res.asnumpy()
    np.savez_compressed(Path(__file__).with_name("kvstore_ref.npz"), **out)


if __name__ == "__main__":
    main()
