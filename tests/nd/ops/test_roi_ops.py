"""im2col / col2im, histogram, boolean_mask, ROIAlign, RROIAlign, PSROIPooling,
DeformablePSROIPooling, DeformableConvolution, Proposal and MultiProposal against MXNet 1.9.1
(tests/data/roi_ops_ref.npz from tests/data/gen_roi_ops_ref.py): outputs and input gradients eagerly and through the
Executor; then the settings MXNet refuses or implements differently."""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import autograd, nd
from hybridgraph.nd.errors import AttrError, DTypeError, ShapeError

REF = np.load(pathlib.Path(__file__).parent.parent.parent / "data" / "roi_ops_ref.npz")
META = json.loads(str(REF["meta"]))
IDS = [f"{i}-{m['op']}" for i, m in enumerate(META)]


def _tol(dtype) -> dict:
    return {"rtol": 1e-2, "atol": 2e-2} if np.dtype(dtype) == np.float16 else {"rtol": 1e-4, "atol": 1e-5}


def _call(ns, path: str, args, attrs: dict):
    fn = ns
    for part in path.split("."):
        fn = getattr(fn, part)
    return fn(*args, **attrs)


def _attrs(m: dict) -> dict:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in m["attrs"].items()}


@pytest.mark.parametrize("i", range(len(META)), ids=IDS)
def test_eager_matches_mxnet(i):
    m = META[i]
    xs = [nd.array(REF[f"{i}_in{j}"], dtype=REF[f"{i}_in{j}"].dtype) for j in range(m["n_in"])]
    for k in m["wrt"]:
        xs[k].attach_grad()
    with autograd.record():
        out = _call(nd, m["op"], xs, _attrs(m))
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    assert len(outs) == m["n_out"]
    for j, o in enumerate(outs):
        want = REF[f"{i}_out{j}"]
        assert o.dtype == want.dtype and o.shape == want.shape, (j, o.dtype, o.shape)
        np.testing.assert_allclose(o.asnumpy().astype(np.float64), want, **_tol(want.dtype))
    if m["wrt"]:
        outs[0].backward(nd.array(REF[f"{i}_head"], dtype=REF[f"{i}_head"].dtype))
        for k in m["wrt"]:
            want = REF[f"{i}_grad{k}"]
            np.testing.assert_allclose(xs[k].grad.asnumpy().astype(np.float64), want, **_tol(want.dtype))


_SYMBOLIC = [i for i, m in enumerate(META) if m["op"] not in ("histogram",) and m["wrt"]]


@pytest.mark.parametrize("i", _SYMBOLIC, ids=[IDS[i] for i in _SYMBOLIC])
def test_executor_matches_mxnet(i):
    m = META[i]
    names = [f"x{j}" for j in range(m["n_in"])]
    sym = _call(mx.sym, m["op"], [mx.sym.var(n) for n in names], _attrs(m))
    args = {n: nd.array(REF[f"{i}_in{j}"], dtype=REF[f"{i}_in{j}"].dtype) for j, n in enumerate(names)}
    grads = {names[k]: nd.zeros(args[names[k]].shape, dtype=args[names[k]].dtype) for k in m["wrt"]}
    exe = sym.bind(mx.cpu(), args, args_grad=grads, grad_req={n: ("write" if n in grads else "null") for n in names})
    out = exe.forward(is_train=True)[0]
    np.testing.assert_allclose(out.asnumpy().astype(np.float64), REF[f"{i}_out0"], **_tol(out.dtype))
    exe.backward(nd.array(REF[f"{i}_head"], dtype=REF[f"{i}_head"].dtype))
    for k in m["wrt"]:
        want = REF[f"{i}_grad{k}"]
        np.testing.assert_allclose(grads[names[k]].asnumpy().astype(np.float64), want, **_tol(want.dtype))


# -- im2col / col2im -----------------------------------------------------------------------------

@pytest.mark.parametrize("kernel, stride, dilate, pad", [((3,), (2,), (1,), (1,)), ((2, 3), (1, 2), (2, 1), (1, 0)),
                                                         ((2, 2, 2), (1, 1, 2), (1, 1, 1), (0, 1, 1))])
def test_im2col_times_weight_is_convolution(kernel, stride, dilate, pad):
    """MXNet 1.9.1 computes 2-d only (its 1-d / 3-d kernels fail at run time); these are correct too."""
    rng = np.random.default_rng(0)
    shape = (2, 3) + (7, 6, 5)[:len(kernel)]
    x, w = nd.array(rng.standard_normal(shape)), nd.array(rng.standard_normal((4, 3) + kernel))
    kw = {"kernel": kernel, "stride": stride, "dilate": dilate, "pad": pad}
    col = nd.im2col(x, **kw)
    conv = nd.Convolution(x, w, num_filter=4, no_bias=True, **kw)
    got = np.einsum("fk,nkp->nfp", w.asnumpy().reshape(4, -1), col.asnumpy()).reshape(conv.shape)
    np.testing.assert_allclose(got, conv.asnumpy(), rtol=1e-4, atol=1e-4)
    back = nd.col2im(col, output_size=shape[2:], **kw)
    ones = nd.col2im(nd.ones_like(col), output_size=shape[2:], **kw)
    np.testing.assert_allclose(back.asnumpy(), (ones * x).asnumpy(), rtol=1e-5, atol=1e-5)


def test_col2im_refuses_a_column_count_that_does_not_match():
    with pytest.raises(ShapeError, match="output size does not match"):
        nd.col2im(nd.ones((1, 9, 7)), output_size=(5, 5), kernel=(3, 3))


# -- histogram -----------------------------------------------------------------------------------

def test_histogram_forms():
    x = nd.array([0, 1, 2, 2, 3, 4, 5, -1, 5.0000001, 2.5])
    counts, edges = nd.histogram(x, bins=5, range=(0, 5))
    assert counts.dtype == np.int64 and counts.asnumpy().tolist() == [1, 1, 3, 1, 3]
    assert edges.asnumpy().tolist() == [0, 1, 2, 3, 4, 5]
    counts, _ = nd.histogram(x, bins=nd.array([0, 2.1, 3]))
    assert counts.asnumpy().tolist() == [4, 2]
    with pytest.warns(UserWarning, match="range is not specified"):
        counts, edges = nd.histogram(x, bins=3)          # numpy's own bins, as MXNet's wrapper
    np.testing.assert_array_equal(counts.asnumpy(), np.histogram(x.asnumpy(), 3)[0])
    with pytest.raises(ValueError, match="null range"):
        mx.sym.histogram(a=mx.sym.var("a"), bins=3)
    with pytest.raises(AttrError, match="both or neither"):
        nd._internal._histogram(x, bin_cnt=3)
    sym = mx.sym.histogram(a=mx.sym.var("a"), bins=3, range=(0, 5))
    assert sym.list_outputs() == ["_histogram0_output0", "_histogram0_output1"]


# -- boolean_mask --------------------------------------------------------------------------------

def test_boolean_mask_empty_output_and_axis():
    data = nd.array([[1, 2, 3], [4, 5, 6]])
    data.attach_grad()
    with mx.np_shape(True):
        with autograd.record():
            out = nd.contrib.boolean_mask(data, nd.array([0, 0]))
        out.backward()
    assert out.shape == (0, 3)
    assert not data.grad.asnumpy().any()
    with pytest.raises(mx.base.MXNetError, match="only axis=0"):
        nd.contrib.boolean_mask(data, nd.array([1, 0, 1]), axis=1)
    with pytest.raises(ShapeError, match="index has 3 entries"):
        nd.contrib.boolean_mask(data, nd.array([1, 0, 1]))


def test_boolean_mask_hybridized_gradient():
    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x, i):
            return F.contrib.boolean_mask(x, i) * 2

    net = Net()
    net.hybridize()
    x = nd.array(np.arange(12.0).reshape(4, 3))
    x.attach_grad()
    with autograd.record():
        y = net(x, nd.array([0, 1, 1, 0]))
    y.backward()
    np.testing.assert_array_equal(y.asnumpy(), 2 * x.asnumpy()[1:3])
    np.testing.assert_array_equal(x.grad.asnumpy(), np.array([[0] * 3, [2] * 3, [2] * 3, [0] * 3]))


# -- ROIAlign / PSROIPooling / DeformableConvolution ---------------------------------------------

def test_roialign_negative_batch_index_gives_zeros():
    """MXNet documents the ROI as ignored with a zero output; its CPU kernel writes one 0 at flat
    position n (inside another ROI's output) and leaves the ROI's own output unset, a defect:
    hybridgraph zeroes the ROI's output and leaves the others alone."""
    data = nd.array(np.arange(32.0).reshape(1, 2, 4, 4))
    rois = nd.array([[0, 0, 0, 3, 3], [-1, 0, 0, 3, 3]])
    out = nd.contrib.ROIAlign(data, rois, pooled_size=(2, 2), spatial_scale=1.0).asnumpy()
    assert not out[1].any()
    np.testing.assert_allclose(out[0], nd.contrib.ROIAlign(data, rois[:1], pooled_size=(2, 2),
                                                           spatial_scale=1.0).asnumpy()[0])


def test_roi_ops_refuse_bad_settings():
    data = nd.ones((1, 4, 5, 5))
    with pytest.raises(AttrError, match="spatial_scale"):
        nd.contrib.ROIAlign(data, nd.array([[0, 0, 0, 2, 2]]), pooled_size=(2, 2), spatial_scale=1.5)
    with pytest.raises(ShapeError, match="divisible"):
        nd.contrib.ROIAlign(data, nd.array([[0, 0, 0, 2, 2]]), pooled_size=(3, 3), spatial_scale=1.0,
                            position_sensitive=True)
    with pytest.raises(ShapeError, match="fewer than output_dim"):
        nd.contrib.PSROIPooling(data, nd.array([[0, 0, 0, 2, 2]]), spatial_scale=1.0, output_dim=2, pooled_size=2)
    with pytest.raises(DTypeError, match="one dtype"):
        nd.contrib.ROIAlign(data, nd.array([[0, 0, 0, 2, 2]], dtype="float64"), pooled_size=(2, 2),
                            spatial_scale=1.0)


def test_deformable_convolution_with_zero_offsets_is_convolution():
    rng = np.random.default_rng(1)
    x, w, b = (nd.array(rng.standard_normal(s)) for s in ((2, 4, 6, 7), (6, 2, 3, 3), (6,)))
    kw = {"kernel": (3, 3), "stride": (2, 1), "dilate": (1, 2), "pad": (1, 2), "num_filter": 6, "num_group": 2}
    ref = nd.Convolution(x, w, b, **kw)
    off = nd.zeros((2, 2 * 9 * 2, *ref.shape[2:]))
    got = nd.contrib.DeformableConvolution(x, off, w, b, num_deformable_group=2, **kw)
    np.testing.assert_allclose(got.asnumpy(), ref.asnumpy(), rtol=1e-4, atol=1e-4)
    with pytest.raises(NotImplementedError, match="2-d deformable convolution only"):
        nd.contrib.DeformableConvolution(nd.ones((1, 1, 3, 3, 3)), nd.zeros((1, 54, 1, 1, 1)), nd.ones((1, 1, 3, 3, 3)),
                                         kernel=(3, 3, 3), num_filter=1, no_bias=True)
    sym = mx.sym.contrib.DeformableConvolution(mx.sym.var("d"), mx.sym.var("o"), kernel=(3, 3), num_filter=4,
                                               name="dc")
    assert sym.list_arguments() == ["d", "o", "dc_weight", "dc_bias"]
    assert sym.infer_shape(d=(1, 2, 5, 5), o=(1, 18, 3, 3))[0][2:] == [(4, 2, 3, 3), (4,)]


# -- Proposal -------------------------------------------------------------------------------------

def test_proposal_refusals_and_outputs():
    cls, bbox, info = nd.ones((2, 6, 2, 2)), nd.zeros((2, 12, 2, 2)), nd.array([[32, 32, 1]] * 2)
    with pytest.raises(ShapeError, match="MultiProposal"):
        nd.contrib.Proposal(cls, bbox, info, scales=(2,), ratios=(1, 2, 4))
    with pytest.raises(DTypeError, match="float32"):
        nd.contrib.MultiProposal(cls.astype("float64"), bbox.astype("float64"), info.astype("float64"),
                                 scales=(2,), ratios=(1, 2, 4))
    rois = nd.contrib.MultiProposal(cls, bbox, info, scales=(2,), ratios=(1, 2, 4), feature_stride=16,
                                    rpn_post_nms_top_n=7, rpn_min_size=1)
    assert rois.shape == (14, 5)
    np.testing.assert_array_equal(rois.asnumpy()[:, 0], [0] * 7 + [1] * 7)
    sym = mx.sym.contrib.Proposal(*(mx.sym.var(n) for n in "cbi"), name="rpn")
    assert sym.list_outputs() == ["rpn_output"]
