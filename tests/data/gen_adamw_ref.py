"""Writes adamw_ref.npz with real MXNet 1.9.1 (.mxvenv): the new weights and states of
nd.contrib.adamw_update / mp_adamw_update / multi_adamw_update / multi_mp_adamw_update on
random float32 / float16 inputs, with clipping, and a skipped step (rescale_grad = inf).
tests/nd/test_adamw.py runs `run(mx)` under hybridgraph and compares.

    /work/main/.mxvenv/bin/python tests/data/gen_adamw_ref.py
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "adamw_ref.npz")


def run(mx):
    rng = np.random.RandomState(3)
    out = {}
    kw = {"beta1": 0.8, "beta2": 0.99, "epsilon": 1e-6, "clip_gradient": 0.7}
    for case, scale in (("plain", 3.0), ("skip", np.inf)):
        shapes = [(3, 4), (5,)]
        ws = [rng.uniform(-1, 1, s).astype("float32") for s in shapes]
        gs = [rng.uniform(-1, 1, s).astype("float32") for s in shapes]
        ms = [rng.uniform(-1, 1, s).astype("float32") for s in shapes]
        vs = [rng.uniform(0, 1, s).astype("float32") for s in shapes]
        lrs, wds, etas = [0.1, 0.2], [0.01, 0.0], [0.9, 1.0]
        rescale = mx.nd.array([scale])

        def nd_(xs, dtype="float32"):
            return [mx.nd.array(x, dtype=dtype) for x in xs]
        w, g, m, v = nd_(ws), nd_(gs), nd_(ms), nd_(vs)
        mx.nd.contrib.adamw_update(w[0], g[0], m[0], v[0], rescale, lr=lrs[0], wd=wds[0], eta=etas[0], out=w[0],
                                   **kw)
        out[f"{case}_single"] = np.concatenate([x.asnumpy().ravel() for x in (w[0], m[0], v[0])])
        w, g, m, v = nd_(ws, "float16"), nd_(gs, "float16"), nd_(ms), nd_(vs)
        w32 = nd_(ws)
        mx.nd.contrib.mp_adamw_update(w[0], g[0], m[0], v[0], w32[0], rescale, lr=lrs[0], wd=wds[0], eta=etas[0],
                                      out=w[0], **kw)
        out[f"{case}_mp"] = np.concatenate([x.asnumpy().astype("float32").ravel() for x in (w[0], m[0], v[0],
                                                                                              w32[0])])
        w, g, m, v = nd_(ws), nd_(gs), nd_(ms), nd_(vs)
        mx.nd.contrib.multi_adamw_update(w, g, m, v, rescale, lrs=lrs, wds=wds, etas=etas, out=w, **kw)
        out[f"{case}_multi"] = np.concatenate([x.asnumpy().ravel() for x in w + m + v])
        w, g, m, v = nd_(ws, "float16"), nd_(gs, "float16"), nd_(ms), nd_(vs)
        w32 = nd_(ws)
        mx.nd.contrib.multi_mp_adamw_update(w, g, m, v, w32, rescale, lrs=lrs, wds=wds, etas=etas, out=w, **kw)
        out[f"{case}_multi_mp"] = np.concatenate([x.asnumpy().astype("float32").ravel() for x in w + m + v + w32])
    return out


if __name__ == "__main__":
    import mxnet

    np.savez(OUT, **run(mxnet))
