"""Write higher_order_ref.npz: MXNet 1.9.1's first, second and third derivatives, through
`autograd.grad(create_graph=True)`, of the cases in higher_order_cases.py (the ops its
test_higher_order_grad.py differentiates twice, the softmax family, FullyConnected, dot,
batch_dot and the binary arithmetic ops).

Keys per case k: `k_in<i>` inputs, `k_h<order>_<j>` head gradients, `k_g<order>_<i>` results,
`k_err<order>` MXNet's message where it refuses an order.

Run with MXNet's interpreter from this directory:  /work/main/.mxvenv/bin/python gen_higher_order_ref.py
"""
import mxnet as mx
import numpy as np

from higher_order_cases import CASES, make_heads, run_case, unpack


def main():
    rng = np.random.RandomState(0)
    out = {}
    for key, case in CASES.items():
        fn, inputs, orders, wrt = unpack(case)
        arrays = [rng.uniform(lo, hi, shape) for shape, lo, hi in inputs]
        heads = make_heads(mx.nd, fn, arrays, orders, wrt, rng)
        out.update({f"{key}_in{i}": a for i, a in enumerate(arrays)})
        out.update({f"{key}_h{o}_{j}": h for o, hs in enumerate(heads, 1) for j, h in enumerate(hs)})
        out.update({f"{key}_{k}": v for k, v in run_case(mx, fn, arrays, heads, wrt).items()})
    np.savez_compressed("higher_order_ref.npz", **out)


if __name__ == "__main__":
    main()
