"""Generate breadth_ops_ref.npz with real MXNet 1.9.1 (run with /work/main/.mxvenv/bin/python).

Values (and gradients) of cumsum, linalg_slogdet, multi_sum_sq, multi_lars and the aggregated SGD
operators (multi_mp_*, preloaded_multi_*), amp_multicast's dtypes aside, and Convolution_v1 on seeded
inputs; tests/nd/ops/test_breadth_ops.py replays
the same calls on hybridgraph.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import mxnet as mx

# the cases are shared with the test, which rebuilds the same inputs
sys.path.insert(0, str(Path(__file__).resolve().parent))
from breadth_ops_cases import SGD_CASES, inputs_for  # noqa: E402


def main() -> None:
    ref = {}
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    head = rng.standard_normal((3, 4)).astype(np.float32)
    ref["cumsum_x"], ref["cumsum_head"] = x, head
    ref["cumsum_none"] = mx.nd.cumsum(mx.nd.array(x)).asnumpy()
    ref["cumsum_ax0_f64"] = mx.nd.cumsum(mx.nd.array(x), axis=0, dtype="float64").asnumpy()
    xa = mx.nd.array(x)
    xa.attach_grad()
    with mx.autograd.record():
        y = mx.nd.cumsum(xa, axis=1)
    y.backward(mx.nd.array(head))
    ref["cumsum_ax1"], ref["cumsum_ax1_grad"] = y.asnumpy(), xa.grad.asnumpy()

    A = rng.standard_normal((2, 3, 3)).astype(np.float32)
    hs, hl = rng.standard_normal(2).astype(np.float32), rng.standard_normal(2).astype(np.float32)
    ref["slogdet_A"], ref["slogdet_hs"], ref["slogdet_hl"] = A, hs, hl
    Aa = mx.nd.array(A)
    Aa.attach_grad()
    with mx.autograd.record():
        s, logabs = mx.nd.linalg.slogdet(Aa)
    mx.autograd.backward([s, logabs], [mx.nd.array(hs), mx.nd.array(hl)])
    ref["slogdet_sign"], ref["slogdet_logabs"], ref["slogdet_grad"] = s.asnumpy(), logabs.asnumpy(), Aa.grad.asnumpy()
    one = mx.nd.linalg_slogdet(mx.nd.array(A[0]))
    ref["slogdet_one_sign"], ref["slogdet_one_logabs"] = one[0].asnumpy(), one[1].asnumpy()

    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((5,), (2, 3), (4, 1, 2))]
    for i, a in enumerate(arrays):
        ref[f"sumsq_in{i}"] = a
    ref["sumsq_f32"] = mx.nd.multi_sum_sq(*[mx.nd.array(a) for a in arrays], num_arrays=3).asnumpy()
    ref["sumsq_f16"] = mx.nd.multi_sum_sq(*[mx.nd.array(a, dtype="float16") for a in arrays],
                                          num_arrays=3).asnumpy()

    lrs = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    wsq = np.array([4.0, 0.0, 9.0, 1.0], np.float32)
    gsq = np.array([1.0, 1.0, 0.0, 2.5], np.float32)
    wds = np.array([0.01, 0.0, 0.1, 0.5], np.float32)
    ref["lars_in"] = np.stack([lrs, wsq, gsq, wds])
    ref["lars_out"] = mx.nd.multi_lars(*[mx.nd.array(v) for v in (lrs, wsq, gsq, wds)], eta=0.7, eps=1e-3,
                                       rescale_grad=0.5).asnumpy()

    for case in SGD_CASES:
        name, kwargs, arrays = inputs_for(case)
        nds = [mx.nd.array(a, dtype=a.dtype) for a in arrays]
        n = kwargs["num_weights"]
        stride = (len(nds) - 2 * case["pre"]) // n
        weights = [nds[stride * i] for i in range(n)]
        getattr(mx.nd, name)(*nds, out=weights, **kwargs)   # MXNet 1.9.1 needs out= here (no output dtype)
        outs = weights
        tag = case["tag"]
        for i in range(n):
            ref[f"{tag}_out{i}"] = outs[i].asnumpy()
        for j, a in enumerate(nds):
            ref[f"{tag}_in{j}_after"] = a.asnumpy()
    x = rng.standard_normal((2, 4, 7, 6)).astype(np.float32)
    w = rng.standard_normal((6, 2, 3, 3)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    ref["convv1_x"], ref["convv1_w"], ref["convv1_b"] = x, w, b
    xs = [mx.nd.array(v) for v in (x, w, b)]
    for v in xs:
        v.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Convolution_v1(*xs, kernel=(3, 3), stride=(2, 1), pad=(1, 1), num_filter=6, num_group=2)
    y.backward(mx.nd.array(np.cos(np.arange(y.size, dtype=np.float32)).reshape(y.shape)))
    ref["convv1_out"] = y.asnumpy()
    for k, v in zip("xwb", xs):
        ref[f"convv1_grad_{k}"] = v.grad.asnumpy()
    np.savez_compressed(Path(__file__).with_name("breadth_ops_ref.npz"), **ref)


if __name__ == "__main__":
    main()
