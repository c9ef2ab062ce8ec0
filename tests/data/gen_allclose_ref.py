"""Write allclose_ref.npz: inputs and MXNet 1.9.1's contrib.allclose results (float16/32/64,
differences around the tolerance, NaNs with and without equal_nan).

Run with MXNet's interpreter from this directory:  /work/main/.mxvenv/bin/python gen_allclose_ref.py
"""
import mxnet as mx
import numpy as np


def main():
    rng = np.random.RandomState(4)
    out = {}
    i = 0
    for dt in ("float16", "float32", "float64"):
        for scale in (1e-3, 1e-5, 1e-7):
            a = rng.randn(50).astype(dt)
            b = (a + rng.randn(50).astype(dt) * scale).astype(dt)
            res = mx.nd.contrib.allclose(mx.nd.array(a, dtype=dt), mx.nd.array(b, dtype=dt), rtol=1e-4, atol=1e-6)
            out.update({f"{i}_a": a, f"{i}_b": b, f"{i}_res": res.asnumpy()})
            i += 1
    np.savez_compressed("allclose_ref.npz", **out)


if __name__ == "__main__":
    main()
