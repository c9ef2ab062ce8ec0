"""Write modulated_deformable_conv_ref.npz: MXNet 1.9.1's ModulatedDeformableConvolution outputs
(float64) and the gradients of sum(out * head) for data, offset, mask, weight and bias; and the
output of gluon.contrib.cnn.ModulatedDeformableConvolution with set parameters (keys layer_*).

MXNet 1.9.1 computes this operator's backward on GPU only (its CPU col2im stops with "only
implemented in GPU"), so the gradients are central finite differences of MXNet's own CPU
forward. The forward is linear in data, mask, weight and bias, and bilinear within a pixel
cell in the offsets; offsets are kept 0.15 away from whole pixels (where the cells, the -1
border and the H / W border lie), so the differences are exact up to rounding.

Run with MXNet's interpreter from this directory:
    /work/main/.mxvenv/bin/python gen_modulated_deformable_conv_ref.py
"""
import json

import mxnet as mx
import numpy as np

# (data shape, attrs): the border cases come from offsets of -2 .. +1 pixels around padded taps
CASES = [((2, 4, 5, 5), {"kernel": (3, 3), "pad": (1, 1), "num_filter": 4, "num_deformable_group": 2}),
         ((1, 4, 5, 6), {"kernel": (3, 2), "stride": (2, 1), "dilate": (1, 2), "pad": (1, 0), "num_filter": 4,
                         "num_group": 2, "no_bias": True}),
         ((3, 2, 4, 4), {"kernel": (2, 2), "num_filter": 2, "num_deformable_group": 2, "im2col_step": 1})]
EPS = 1e-5


def _forward(attrs, arrays):
    return mx.nd.contrib.ModulatedDeformableConvolution(*[mx.nd.array(a, dtype="float64") for a in arrays],
                                                        **attrs).asnumpy()


def _grads(attrs, arrays, head):
    grads = []
    for k, a in enumerate(arrays):
        g = np.zeros_like(a)
        for idx in np.ndindex(*a.shape):
            vals = []
            for sign in (1, -1):
                moved = [x.copy() for x in arrays]
                moved[k][idx] += sign * EPS
                vals.append((_forward(attrs, moved) * head).sum())
            g[idx] = (vals[0] - vals[1]) / (2 * EPS)
        grads.append(g)
    return grads


def _layer(rng):
    """The Gluon layer (offsets from a non-zero offset convolution, mask 2 * sigmoid), hybridized."""
    from mxnet.gluon.contrib.cnn import ModulatedDeformableConvolution
    net = ModulatedDeformableConvolution(4, kernel_size=3, padding=1, num_deformable_group=2, activation="relu",
                                         prefix="m_")
    net.initialize()
    x = rng.uniform(-1, 1, (2, 4, 5, 6))
    net(mx.nd.array(x))
    store = {"layer_x": x}
    for name, p in net.collect_params().items():
        value = rng.uniform(-0.4, 0.4, p.shape)
        p.set_data(mx.nd.array(value))
        store[f"layer_{name}"] = value
    net.hybridize()
    store["layer_out"] = net(mx.nd.array(x)).asnumpy()
    return store


def main():
    rng = np.random.RandomState(11)
    store, meta = {}, []
    for i, (shape, attrs) in enumerate(CASES):
        sym = mx.sym.contrib.ModulatedDeformableConvolution(
            mx.sym.var("data"), mx.sym.var("offset"), mx.sym.var("mask"), **attrs)
        kk, dg = attrs["kernel"][0] * attrs["kernel"][1], attrs.get("num_deformable_group", 1)
        (oshape,) = mx.sym.Convolution(mx.sym.var("data"), kernel=attrs["kernel"], stride=attrs.get("stride", ()),
                                       dilate=attrs.get("dilate", ()), pad=attrs.get("pad", ()),
                                       num_filter=1).infer_shape(data=shape)[1]
        n, _, oh, ow = oshape
        offset = (rng.randint(-2, 2, (n, 2 * kk * dg, oh, ow)) + rng.uniform(0.15, 0.85, (n, 2 * kk * dg, oh, ow)))
        mask = rng.uniform(-0.5, 1.5, (n, kk * dg, oh, ow))
        arg_shapes = sym.infer_shape(data=shape, offset=offset.shape, mask=mask.shape)[0]
        arrays = [rng.uniform(-1, 1, shape), offset, mask] + [rng.uniform(-1, 1, s) for s in arg_shapes[3:]]
        out = _forward(attrs, arrays)
        head = rng.uniform(-1, 1, out.shape)
        store.update({f"{i}_in{k}": a for k, a in enumerate(arrays)})
        store.update({f"{i}_grad{k}": g for k, g in enumerate(_grads(attrs, arrays, head))})
        store.update({f"{i}_out": out, f"{i}_head": head})
        meta.append(attrs)
    store["meta"] = np.array(json.dumps(meta))
    store.update(_layer(np.random.RandomState(5)))
    np.savez_compressed("modulated_deformable_conv_ref.npz", **store)


if __name__ == "__main__":
    main()
