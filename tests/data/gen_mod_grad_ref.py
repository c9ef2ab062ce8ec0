"""Write mod_grad_ref.npz: MXNet 1.9.1's gradients of broadcast_mod, `x % s` and `s % x` for
float32, float64 and int32 (integer mod has zero gradients in MXNet), and of an int32 graph
whose float head gradient the Executor casts to the output's dtype.

Run with MXNet's interpreter from this directory:  /work/main/.mxvenv/bin/python gen_mod_grad_ref.py
"""
import mxnet as mx
import numpy as np

OPS = {"broadcast": mx.nd.broadcast_mod, "scalar": lambda x, y: x % 2.5,
       "rscalar": lambda x, y: 7.5 % x}


def main():
    rng = np.random.RandomState(0)
    out = {}
    for dt in ("float32", "float64", "int32"):
        a, b = rng.uniform(1, 9, (3, 4)), rng.uniform(1, 4, (1, 4))
        for name, fn in OPS.items():
            x, y = mx.nd.array(a, dtype=dt), mx.nd.array(b, dtype=dt)
            x.attach_grad()
            y.attach_grad()
            with mx.autograd.record():
                res = fn(x, y)
            head = rng.uniform(-2, 2, res.shape)
            res.backward(mx.nd.array(head, dtype=dt))
            key = f"{dt}_{name}"
            out.update({key + "_a": a, key + "_b": b, key + "_head": head, key + "_out": res.asnumpy(),
                        key + "_ga": x.grad.asnumpy(), key + "_gb": y.grad.asnumpy()})
    # executor: int32 output, float32 head gradient 0.99999999 -> 1.0f -> 1 after the cast
    sym = mx.sym.broadcast_mod(mx.sym.cast(mx.sym.var("a"), dtype="int32"),
                               mx.sym.cast(mx.sym.var("b"), dtype="int32"))
    g1, g2 = mx.nd.empty((2,)), mx.nd.empty((2,))
    exe = sym.bind(mx.cpu(), args={"a": mx.nd.array([5.0, 7.0]), "b": mx.nd.array([3.0, 2.0])}, args_grad=[g1, g2])
    exe.forward(is_train=True)
    exe.backward([mx.nd.array(np.array([0.99999999, 2.5]))])
    out.update({"exe_ga": g1.asnumpy(), "exe_gb": g2.asnumpy()})
    np.savez_compressed("mod_grad_ref.npz", **out)


if __name__ == "__main__":
    main()
