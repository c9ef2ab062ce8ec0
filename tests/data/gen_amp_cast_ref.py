"""Write amp_cast_ref.json: MXNet 1.9.1's amp_cast outputs and input gradients (head gradient 2)
for float32/float16/int32 inputs. (float64 input crashes MXNet's MKLDNN path: not recorded.)

Run with MXNet's interpreter from this directory:  /work/main/.mxvenv/bin/python gen_amp_cast_ref.py
"""
import json

import mxnet as mx

CASES = [("float32", "float16"), ("float16", "float32"), ("int32", "float16"), ("float32", "int32")]


def main():
    out = []
    for dt_in, dt in CASES:
        x = mx.nd.array([1.5, -2.25, 65519.0, 3.0, 2.5], dtype=dt_in)
        x.attach_grad()
        with mx.autograd.record():
            y = mx.nd.amp_cast(x, dtype=dt)
        y.backward(mx.nd.ones(y.shape, dtype=y.dtype) * 2)
        out.append({"in": dt_in, "dtype": dt, "x": x.asnumpy().tolist(), "out_dtype": y.dtype.__name__,
                    "out": y.asnumpy().tolist(), "grad_dtype": x.grad.dtype.__name__,
                    "grad": x.grad.asnumpy().tolist()})
    with open("amp_cast_ref.json", "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
