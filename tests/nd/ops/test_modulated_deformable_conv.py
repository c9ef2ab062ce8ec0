"""contrib.ModulatedDeformableConvolution against MXNet 1.9.1 (tests/data/modulated_deformable_conv_ref.npz
from tests/data/gen_modulated_deformable_conv_ref.py: MXNet's forward, and finite differences of it for the
gradients, which MXNet computes on GPU only): eagerly and through the Executor; then the shape rules."""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import autograd, nd
from hybridgraph.nd.errors import ShapeError

REF = np.load(pathlib.Path(__file__).parent.parent.parent / "data" / "modulated_deformable_conv_ref.npz")
META = json.loads(str(REF["meta"]))
NAMES = ("data", "offset", "mask", "weight", "bias")


def _attrs(i: int) -> dict:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in META[i].items()}


def _inputs(i: int) -> list:
    return [nd.array(REF[f"{i}_in{k}"], dtype="float64") for k in range(len(NAMES) - META[i].get("no_bias", False))]


@pytest.mark.parametrize("i", range(len(META)))
def test_eager_matches_mxnet(i):
    xs = _inputs(i)
    for x in xs:
        x.attach_grad()
    with autograd.record():
        out = nd.contrib.ModulatedDeformableConvolution(*xs, **_attrs(i))
    np.testing.assert_allclose(out.asnumpy(), REF[f"{i}_out"], rtol=1e-12, atol=1e-12)
    out.backward(nd.array(REF[f"{i}_head"], dtype="float64"))
    for k, x in enumerate(xs):
        np.testing.assert_allclose(x.grad.asnumpy(), REF[f"{i}_grad{k}"], rtol=1e-6, atol=1e-7, err_msg=NAMES[k])


@pytest.mark.parametrize("i", range(len(META)))
def test_executor_matches_mxnet_in_float32(i):
    xs = _inputs(i)
    names = list(NAMES[:len(xs)])
    sym = mx.sym.contrib.ModulatedDeformableConvolution(*[mx.sym.var(n) for n in names], **_attrs(i))
    args = {n: x.astype("float32") for n, x in zip(names, xs)}
    grads = {n: nd.zeros(x.shape) for n, x in args.items()}
    exe = sym.bind(mx.cpu(), args, args_grad=grads)
    out = exe.forward(is_train=True)[0]
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.asnumpy(), REF[f"{i}_out"], rtol=1e-4, atol=1e-4)
    exe.backward(nd.array(REF[f"{i}_head"]))
    for k, n in enumerate(names):
        np.testing.assert_allclose(grads[n].asnumpy(), REF[f"{i}_grad{k}"], rtol=1e-3, atol=1e-3, err_msg=n)


def test_zero_offsets_and_unit_mask_give_a_convolution():
    rng = np.random.default_rng(3)
    x, w, b = (nd.array(rng.standard_normal(s)) for s in ((2, 4, 6, 7), (6, 2, 3, 3), (6,)))
    kw = {"kernel": (3, 3), "stride": (2, 1), "dilate": (1, 2), "pad": (1, 2), "num_filter": 6, "num_group": 2}
    ref = nd.Convolution(x, w, b, **kw)
    off, mask = nd.zeros((2, 2 * 9 * 2, *ref.shape[2:])), nd.ones((2, 9 * 2, *ref.shape[2:]))
    got = nd.contrib.ModulatedDeformableConvolution(x, off, mask, w, b, num_deformable_group=2, **kw)
    np.testing.assert_allclose(got.asnumpy(), ref.asnumpy(), rtol=1e-4, atol=1e-4)
    half = nd.contrib.ModulatedDeformableConvolution(x, off, mask * 0.5, w, b, num_deformable_group=2, **kw)
    np.testing.assert_allclose((half - b.reshape((1, 6, 1, 1))).asnumpy(),
                               0.5 * (ref - b.reshape((1, 6, 1, 1))).asnumpy(), rtol=1e-4, atol=1e-4)


def test_symbol_arguments_and_shapes_are_mxnets():
    sym = mx.sym.contrib.ModulatedDeformableConvolution(mx.sym.var("d"), mx.sym.var("o"), mx.sym.var("m"),
                                                        kernel=(3, 3), num_filter=4, name="mdc")
    assert sym.list_arguments() == ["d", "o", "m", "mdc_weight", "mdc_bias"]
    args, outs, _ = sym.infer_shape(d=(1, 2, 5, 5), o=(1, 18, 3, 3), m=(1, 9, 3, 3))
    assert args[3:] == [(4, 2, 3, 3), (4,)] and outs == [(1, 4, 3, 3)]
    anon = mx.sym.contrib.ModulatedDeformableConvolution(mx.sym.var("d"), mx.sym.var("o"), mx.sym.var("m"),
                                                         kernel=(3, 3), num_filter=4, no_bias=True)
    assert anon.list_arguments()[3].startswith("modulateddeformableconvolution")


@pytest.mark.parametrize("shape, kw, match", [
    ((3, 2, 4, 4), {"num_filter": 2, "im2col_step": 2}, "im2col_step"),      # MXNet: batchsize must ... divide
    ((1, 2, 4, 4), {"num_filter": 3, "num_deformable_group": 2}, "num_filter"),
])
def test_refuses_what_mxnet_refuses(shape, kw, match):
    dg = kw.get("num_deformable_group", 1)
    n, f = shape[0], kw["num_filter"]
    with pytest.raises(ShapeError, match=match):
        nd.contrib.ModulatedDeformableConvolution(nd.ones(shape), nd.zeros((n, 8 * dg, 3, 3)),
                                                  nd.ones((n, 4 * dg, 3, 3)), nd.ones((f, 2, 2, 2)), nd.ones((f,)),
                                                  kernel=(2, 2), **kw)
    with pytest.raises(ShapeError, match="mask must have shape"):
        nd.contrib.ModulatedDeformableConvolution(nd.ones((1, 2, 4, 4)), nd.zeros((1, 8, 3, 3)), nd.ones((1, 8, 3, 3)),
                                                  nd.ones((2, 2, 2, 2)), kernel=(2, 2), num_filter=2, no_bias=True)
