"""Writes hawkesll_ref.npz with real MXNet 1.9.1 (.mxvenv): contrib.hawkesll outputs and the
gradients of sum(output * head) w.r.t. lda, alpha and beta on random ragged batches (float64
and float32, some events at the end of the batch invalid, a non-zero starting state).
tests/nd/test_hawkesll.py compares.

    /work/main/.mxvenv/bin/python tests/data/gen_hawkesll_ref.py
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hawkesll_ref.npz")


def cases():
    rng = np.random.RandomState(7)
    for c, (n, t, k, dtype) in enumerate([(3, 6, 2, "float64"), (2, 9, 3, "float64"), (4, 5, 1, "float32"),
                                          (1, 4, 4, "float32")]):
        lags = rng.uniform(0.1, 2.0, (n, t))
        yield c, {
            "lda": rng.uniform(0.5, 2.0, (n, k)), "alpha": rng.uniform(0.1, 0.8, (k,)),
            "beta": rng.uniform(0.5, 3.0, (k,)), "state": rng.uniform(0.0, 1.5, (n, k)), "lags": lags,
            "marks": rng.randint(0, k, (n, t)).astype(np.int32),
            "valid_length": rng.randint(1, t + 1, (n,)).astype(float),
            "max_time": lags.sum(axis=1) + rng.uniform(0.0, 3.0, (n,)),
            "head": rng.standard_normal((n,)),
        }, dtype


def main():
    import mxnet as mx

    out = {}
    for c, inp, dtype in cases():
        args = [mx.nd.array(inp[name], dtype="int32" if name == "marks" else dtype)
                for name in ("lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time")]
        for x in args[:3]:
            x.attach_grad()
        with mx.autograd.record():
            ll, state = mx.nd.contrib.hawkesll(*args)
        ll.backward(mx.nd.array(inp["head"], dtype=dtype))
        for name, v in inp.items():
            out[f"{c}_in_{name}"] = v
        out[f"{c}_dtype"] = np.array(dtype)
        out[f"{c}_ll"], out[f"{c}_state"] = ll.asnumpy(), state.asnumpy()
        for name, x in zip(("lda", "alpha", "beta"), args[:3]):
            out[f"{c}_grad_{name}"] = x.grad.asnumpy()
    np.savez(OUT, **out)


if __name__ == "__main__":
    main()
