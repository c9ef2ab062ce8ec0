"""Write svm_ref.npz: SVMOutput's output and data gradient in MXNet 1.9.1 (L1 and L2,
two margins/coefficients, 3-D data so the class axis is the last of several).

Run with MXNet's interpreter from this directory:  /work/main/.mxvenv/bin/python gen_svm_ref.py
"""
import mxnet as mx
import numpy as np

CASES = [(False, 1.0, 1.0), (False, 0.5, 2.0), (True, 1.0, 1.0), (True, 0.5, 2.0)]


def main():
    rng = np.random.RandomState(1)
    out = {}
    for i, (linear, margin, coef) in enumerate(CASES):
        x = rng.uniform(-2, 2, (3, 4, 5)).astype(np.float32)
        label = rng.randint(0, 5, (3, 4)).astype(np.float32)
        sym = mx.sym.SVMOutput(data=mx.sym.var("X"), label=mx.sym.var("L"), use_linear=linear,
                               margin=margin, regularization_coefficient=coef)
        grad = mx.nd.zeros(x.shape)
        exe = sym.bind(mx.cpu(), args=[mx.nd.array(x), mx.nd.array(label)], args_grad={"X": grad})
        y = exe.forward(is_train=True)[0]
        exe.backward()
        out.update({f"{i}_x": x, f"{i}_label": label, f"{i}_out": y.asnumpy(), f"{i}_grad": grad.asnumpy()})
    np.savez_compressed("svm_ref.npz", **out)


if __name__ == "__main__":
    main()
