"""Normalization operators (nd/ops/norm.py): semantics beyond the generic spec table.

BatchNorm's training/inference behaviour and moving-statistics updates, hidden
outputs, shape/type inference in both directions, attribute variants against
numpy references, float64 finite-difference gradients and the errors MXNet
raises for invalid inputs.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from hybridgraph import nd
from hybridgraph.nd import autograd
from hybridgraph.nd.dispatch import invoke
from hybridgraph.nd.errors import AttrError, AutogradError, DTypeError, MXNetError, ShapeError
from hybridgraph.nd.registry import get_op
from tests.nd.specs.norm import (ref_batch_norm, ref_group_norm, ref_instance_norm, ref_l2_normalization,
                                 ref_layer_norm, ref_lrn, ref_moments)
from tests.op_specs import arr, shapes

RNG = np.random.default_rng(7)


def _a(x, dtype="float64"):
    return nd.array(np.asarray(x), dtype=dtype)


def _randn(*shape):
    return RNG.standard_normal(shape)


def _bn_inputs(shape=(4, 3, 2), axis=1, dtype="float64"):
    c = shape[axis]
    return [_a(_randn(*shape), dtype), _a(RNG.uniform(0.5, 2, c), dtype), _a(_randn(c), dtype),
            _a(_randn(c), dtype), _a(RNG.uniform(0.5, 2, c), dtype)]


def _all_outputs(name, inputs, attrs, is_train=False):
    """Every output of an op, hidden ones included, straight from the kernel."""
    op = get_op(name)
    a = op.parse_attrs(attrs)
    return op.compute(np, a, [x.asnumpy() for x in inputs], is_train), op, a


# ---------------------------------------------------------------------------
# BatchNorm


def test_batchnorm_updates_moving_stats_only_in_backward():
    data, gamma, beta, mm, mv = _bn_inputs()
    mm0, mv0 = mm.asnumpy().copy(), mv.asnumpy().copy()
    data.attach_grad()
    with autograd.record():
        out = nd.BatchNorm(data, gamma, beta, mm, mv, fix_gamma=False, momentum=0.75)
    np.testing.assert_array_equal(mm.asnumpy(), mm0)  # forward leaves them alone
    np.testing.assert_array_equal(mv.asnumpy(), mv0)
    out.backward()
    x = data.asnumpy()
    np.testing.assert_allclose(mm.asnumpy(), 0.75 * mm0 + 0.25 * x.mean(axis=(0, 2)), rtol=1e-7)
    np.testing.assert_allclose(mv.asnumpy(), 0.75 * mv0 + 0.25 * x.var(axis=(0, 2)), rtol=1e-7)


def test_batchnorm_train_forward_without_backward_keeps_moving_stats():
    data, gamma, beta, mm, mv = _bn_inputs()
    before = mm.asnumpy().copy(), mv.asnumpy().copy()
    with autograd.train_mode():
        out = nd.BatchNorm(data, gamma, beta, mm, mv)
    np.testing.assert_allclose(out.asnumpy(), ref_batch_norm(*[x.asnumpy() for x in (data, gamma, beta, mm, mv)]))
    np.testing.assert_array_equal(mm.asnumpy(), before[0])
    np.testing.assert_array_equal(mv.asnumpy(), before[1])


def test_batchnorm_use_global_stats_uses_and_keeps_moving_stats_in_training():
    data, gamma, beta, mm, mv = _bn_inputs()
    before = mm.asnumpy().copy(), mv.asnumpy().copy()
    data.attach_grad()
    gamma.attach_grad()
    with autograd.record():
        out = nd.BatchNorm(data, gamma, beta, mm, mv, fix_gamma=False, use_global_stats=True)
    out.backward()
    np_in = [x.asnumpy() for x in (data, gamma, beta, mm, mv)]
    np.testing.assert_allclose(out.asnumpy(), ref_batch_norm(*np_in, fix_gamma=False, use_global_stats=True))
    np.testing.assert_array_equal(mm.asnumpy(), before[0])
    np.testing.assert_array_equal(mv.asnumpy(), before[1])
    invstd = 1 / np.sqrt(before[1] + 1e-3)
    np.testing.assert_allclose(data.grad.asnumpy(), np.broadcast_to((invstd * np_in[1])[:, None], (4, 3, 2)))


def test_batchnorm_inference_outputs_moving_mean_and_inverse_std():
    data, gamma, beta, mm, mv = _bn_inputs()
    out, mean, invstd = nd.BatchNorm(data, gamma, beta, mm, mv, output_mean_var=True, eps=0.01)
    np.testing.assert_allclose(mean.asnumpy(), mm.asnumpy())
    np.testing.assert_allclose(invstd.asnumpy(), 1 / np.sqrt(mv.asnumpy() + 0.01))
    np_in = [x.asnumpy() for x in (data, gamma, beta, mm, mv)]
    np.testing.assert_allclose(out.asnumpy(), ref_batch_norm(*np_in, eps=0.01, is_train=False))


def test_batchnorm_backward_ignores_heads_of_mean_and_var():
    data, gamma, beta, mm, mv = _bn_inputs()
    grads = []
    for extra_heads in (False, True):
        data.attach_grad()
        with autograd.record():
            outs = nd.BatchNorm(data, gamma, beta, mm.copy(), mv.copy(), fix_gamma=False, output_mean_var=True)
        np.testing.assert_allclose(outs[1].asnumpy(), data.asnumpy().mean(axis=(0, 2)))
        np.testing.assert_allclose(outs[2].asnumpy(), 1 / np.sqrt(data.asnumpy().var(axis=(0, 2)) + 1e-3))
        head = _a(np.linspace(-1, 1, 24).reshape(4, 3, 2))
        if extra_heads:
            autograd.backward(outs, [head, _a(np.ones(3) * 5), _a(np.ones(3) * -3)])
        else:
            autograd.backward([outs[0]], [head])
        grads.append(data.grad.asnumpy().copy())
    np.testing.assert_allclose(grads[0], grads[1])


def test_batchnorm_fix_gamma_ignores_gamma_and_zeroes_its_gradient():
    data, gamma, beta, mm, mv = _bn_inputs()
    g0 = gamma.asnumpy().copy()
    gamma.attach_grad()
    beta.attach_grad()
    with autograd.record():
        out = nd.BatchNorm(data, gamma, beta, mm, mv)  # fix_gamma defaults to True
    out.backward()
    np_in = [x.asnumpy() for x in (data, gamma, beta, mm, mv)]
    np.testing.assert_allclose(out.asnumpy(), ref_batch_norm(*np_in, fix_gamma=True))
    np.testing.assert_array_equal(gamma.grad.asnumpy(), np.zeros(3))
    np.testing.assert_allclose(beta.grad.asnumpy(), np.full(3, 8.0))
    np.testing.assert_array_equal(gamma.asnumpy(), g0)  # treated as 1, not overwritten


def test_batchnorm_record_in_predict_mode_then_backward():
    """A predict-mode forward differentiated by a predict-mode backward: the inference
    gradient, moving statistics untouched. (As in MXNet, the backward's own train_mode
    picks the formula; checked against MXNet 1.9.1 for a train-mode backward too.)"""
    data, gamma, beta, mm, mv = _bn_inputs()
    before = mv.asnumpy().copy()
    data.attach_grad()
    with autograd.record(train_mode=False):
        out = nd.BatchNorm(data, gamma, beta, mm, mv, fix_gamma=False)
    out.backward(train_mode=False)
    invstd = 1 / np.sqrt(before + 1e-3)
    want = np.broadcast_to((invstd * gamma.asnumpy())[:, None], (4, 3, 2))
    np.testing.assert_allclose(data.grad.asnumpy(), want)
    np.testing.assert_allclose(mv.asnumpy(), before)


def test_batchnorm_float16_keeps_parameters_in_float32():
    data = _a(_randn(2, 3, 4), "float16")
    params = [_a(np.ones(3), "float32") for _ in range(4)]
    outs, op, a = _all_outputs("BatchNorm", [data, *params], {"output_mean_var": True}, is_train=True)
    assert [o.dtype for o in outs] == [np.float16, np.float32, np.float32]
    in_t, out_t = op.infer_type(a, np.dtype("float16"), None, None, None, None)
    assert in_t == [np.float16] + [np.float32] * 4 and out_t == [np.float16, np.float32, np.float32]
    with pytest.raises(DTypeError, match="gamma"):
        op.infer_type(a, np.dtype("float16"), np.dtype("float16"), None, None, None)
    with pytest.raises(DTypeError, match="floating point"):
        op.infer_type(a, np.dtype("int32"), None, None, None, None)


def test_batchnorm_shape_inference_both_directions():
    op = get_op("BatchNorm")
    a = op.parse_attrs({"axis": "-1"})
    ins, outs = op.infer_shape(a, (2, 5, 3), None, None, None, None)
    assert ins == [(2, 5, 3)] + [(3,)] * 4 and outs == [(2, 5, 3), (3,), (3,)]
    ins, outs = op.infer_shape(op.parse_attrs({}), (2, 0, 5), (3,), None, None, None)
    assert ins[0] == (2, 3, 5) and outs[0] == (2, 3, 5)
    assert op.infer_shape(op.parse_attrs({}), None, (3,), None, None, None) is None
    with pytest.raises(ShapeError, match="moving_var"):
        op.infer_shape(op.parse_attrs({}), (2, 3), None, None, None, (4,))
    with pytest.raises(ShapeError, match="axis 2 is out of range"):
        op.infer_shape(op.parse_attrs({"axis": 2}), (2, 3), None, None, None, None)
    with pytest.raises(ShapeError, match="axis -3"):
        nd.BatchNorm(*_bn_inputs((2, 3), axis=1), axis=-3)


def test_batchnorm_aliases_and_attribute_schema():
    assert get_op("_npx_batch_norm") is get_op("BatchNorm")
    assert get_op("_npx_layer_norm") is get_op("LayerNorm")
    a = get_op("BatchNorm").parse_attrs({})
    assert (a.eps, a.momentum, a.fix_gamma, a.use_global_stats, a.output_mean_var, a.axis, a.cudnn_off,
            a.min_calib_range, a.max_calib_range) == (1e-3, 0.9, True, False, False, 1, False, None, None)
    op = get_op("BatchNorm")
    assert op.aux == ("moving_mean", "moving_var") and op.learnable == ("gamma", "beta", "moving_mean", "moving_var")
    assert op.num_visible_outputs(a) == 1 and op.output_names(a) == ("output", "mean", "var")
    assert get_op("_backward_BatchNorm").mutate_inputs == (5, 6)
    with pytest.raises(AttrError, match="fix_gamma"):
        op.parse_attrs({"fix_gamma": "maybe"})


def test_batchnorm_zero_eps_and_constant_channel_is_finite():
    """MXNet guards var == 0 with eps == 0 by using an inverse std of 0."""
    data = _a(np.ones((3, 2, 2)))
    ones, zeros = _a(np.ones(2)), _a(np.zeros(2))
    data.attach_grad()
    with autograd.record():
        out = nd.BatchNorm(data, ones, zeros, zeros.copy(), ones.copy(), eps=0.0, fix_gamma=False)
    out.backward()
    assert np.isfinite(out.asnumpy()).all() and np.isfinite(data.grad.asnumpy()).all()


# ---------------------------------------------------------------------------
# LayerNorm, InstanceNorm, GroupNorm


@pytest.mark.parametrize("axis", [-1, 0, 1, -2])
def test_layernorm_hidden_outputs_and_axis(axis):
    data = _a(_randn(3, 4, 2))
    c = data.shape[axis]
    gamma, beta = _a(_randn(c)), _a(_randn(c))
    out, mean, std = nd.LayerNorm(data, gamma, beta, axis=axis, output_mean_var=True)
    want = ref_layer_norm(data.asnumpy(), gamma.asnumpy(), beta.asnumpy(), axis=axis, output_mean_var=True)
    for got, w in zip((out, mean, std), want):
        assert got.shape == w.shape
        np.testing.assert_allclose(got.asnumpy(), w, rtol=1e-10)


def test_layernorm_float32_and_float16():
    for dtype, rtol in (("float32", 1e-5), ("float16", 2e-3)):
        data = _a(_randn(2, 6), dtype)
        out = nd.LayerNorm(data, _a(np.ones(6), dtype), _a(np.zeros(6), dtype))
        assert out.dtype == np.dtype(dtype)
        want = ref_layer_norm(data.asnumpy().astype(np.float64), np.ones(6), np.zeros(6))
        np.testing.assert_allclose(out.asnumpy(), want, rtol=rtol, atol=rtol)


def test_groupnorm_gamma_is_per_group():
    data = _a(_randn(2, 6, 3))
    gamma, beta = _a([1.0, 2.0, 3.0]), _a([0.0, 1.0, -1.0])
    outs = nd.GroupNorm(data, gamma, beta, num_groups=3, output_mean_var=True)
    want = ref_group_norm(data.asnumpy(), gamma.asnumpy(), beta.asnumpy(), num_groups=3, output_mean_var=True)
    for got, w in zip(outs, want):
        np.testing.assert_allclose(got.asnumpy(), w, rtol=1e-10)
    assert outs[1].shape == (2, 3)
    with pytest.raises(ShapeError, match="'gamma' has shape"):
        nd.GroupNorm(data, _a(np.ones(6)), _a(np.ones(6)), num_groups=3)
    with pytest.raises(ShapeError, match="divisible"):
        nd.GroupNorm(data, _a(np.ones(4)), _a(np.ones(4)), num_groups=4)
    with pytest.raises(ShapeError, match="at least 3"):
        nd.GroupNorm(_a(_randn(2, 6)), gamma, beta, num_groups=3)
    with pytest.raises(AttrError, match="num_groups"):
        nd.GroupNorm(data, gamma, beta, num_groups=0)
    op = get_op("GroupNorm")
    ins, _ = op.infer_shape(op.parse_attrs({"num_groups": 2}), (2, 4, 3), None, None)
    assert ins[1] == (2,)


def test_instancenorm_hidden_outputs_and_rank_check():
    data = _a(_randn(2, 3, 4, 2))
    gamma, beta = _a(_randn(3)), _a(_randn(3))
    (out, mean, var), op, a = _all_outputs("InstanceNorm", [data, gamma, beta], {"eps": 0.01})
    x = data.asnumpy()
    np.testing.assert_allclose(out, ref_instance_norm(x, gamma.asnumpy(), beta.asnumpy(), eps=0.01), rtol=1e-10)
    np.testing.assert_allclose(mean, x.mean(axis=(2, 3)))
    np.testing.assert_allclose(var, x.var(axis=(2, 3)))
    assert op.num_visible_outputs(a) == 1
    with pytest.raises(ShapeError, match="at least 3"):
        nd.InstanceNorm(_a(_randn(2, 3)), gamma, beta)


def test_norm_ops_reject_integer_data():
    x = nd.array(np.ones((2, 3, 4)), dtype="int32")
    p = nd.array(np.ones(3), dtype="int32")
    with pytest.raises(DTypeError, match="floating point"):
        nd.InstanceNorm(x, p, p)
    with pytest.raises(DTypeError, match="floating point"):
        nd.L2Normalization(x)
    with pytest.raises(DTypeError, match="LayerNorm"):
        get_op("LayerNorm").infer_type(get_op("LayerNorm").parse_attrs({}), np.dtype("int32"), None, None)


# ---------------------------------------------------------------------------
# L2Normalization, LRN, moments


@pytest.mark.parametrize("mode,norm_shape", [("instance", (2,)), ("channel", (2, 1, 4, 2)), ("spatial", (2, 3))])
def test_l2normalization_modes(mode, norm_shape):
    data = _a(_randn(2, 3, 4, 2))
    (out, norm), op, a = _all_outputs("L2Normalization", [data], {"mode": mode})
    np.testing.assert_allclose(out, ref_l2_normalization(data.asnumpy(), mode=mode), rtol=1e-10)
    assert norm.shape == norm_shape == op.infer_shape(a, (2, 3, 4, 2))[1][1]


def test_l2normalization_errors_and_1d():
    np.testing.assert_allclose(nd.L2Normalization(_a([3.0, -4.0, 0.0])).asnumpy(), [1, -1, 0])
    np.testing.assert_allclose(nd.L2Normalization(_a([[3.0, -4.0, 0.0]])).asnumpy(), [[0.6, -0.8, 0]])
    with pytest.raises(ShapeError, match="at least 3"):
        nd.L2Normalization(_a(_randn(2, 3)), mode="channel")
    with pytest.raises(AttrError, match="mode"):
        nd.L2Normalization(_a(_randn(2, 3)), mode="batch")


def test_lrn_window_and_errors():
    x = np.arange(1, 8, dtype=np.float64).reshape(1, 7, 1, 1)
    out = nd.LRN(_a(x), nsize=5, alpha=0.1, beta=0.5, knorm=1.0).asnumpy()
    sq = np.pad(x.ravel() ** 2, 2)
    window = np.array([sq[i:i + 5].sum() for i in range(7)])
    np.testing.assert_allclose(out.ravel(), x.ravel() / np.sqrt(1 + np.float32(0.1) / 5 * window), rtol=1e-7)
    with pytest.raises(AttrError, match="odd"):
        nd.LRN(_a(x), nsize=4)
    with pytest.raises(AttrError, match="nsize"):
        nd.LRN(_a(x))  # required


def test_moments_attributes_and_errors():
    x = _a(_randn(2, 3, 4))
    mean, var = nd.moments(x, axes=(0, -1), keepdims=True)
    assert mean.shape == var.shape == (1, 3, 1)
    for got, w in zip((mean, var), ref_moments(x.asnumpy(), axes=(0, -1), keepdims=True)):
        np.testing.assert_allclose(got.asnumpy(), w, rtol=1e-10)
    for bad, match in (({}, "empty axes"), ({"axes": ()}, "empty axes"), ({"axes": (0, 0)}, "duplicates"),
                       ({"axes": (3,)}, "out of range")):
        with pytest.raises(MXNetError, match=match):
            nd.moments(x, **bad)
    assert get_op("moments").output_names(get_op("moments").parse_attrs({"axes": (0,)})) == ("output0", "output1")


def test_moments_integer_data_truncates_like_mxnet():
    x = nd.array(np.array([[1, 2, 4], [4, 5, 7], [-1, -2, -4]]), dtype="int32")
    mean, var = nd.moments(x, axes=(1,))
    assert mean.dtype == np.int32
    np.testing.assert_array_equal(mean.asnumpy(), [2, 5, -2])  # MXNet 1.9.1: [2 5] for the first two rows
    np.testing.assert_array_equal(var.asnumpy(), [1, 1, 1])


# ---------------------------------------------------------------------------
# gradients (float64 finite differences) and shape inference on every output


def _fd_check(name, inputs, attrs, wrt, is_train=False, eps=1e-6, rtol=1e-6):
    """Directional derivative of sum(out_i * head_i) over visible outputs vs autograd."""
    op = get_op(name)
    xs = [_a(x) for x in inputs]
    for i in wrt:
        xs[i].attach_grad()
    with autograd.record(train_mode=is_train):
        outs = invoke(op, xs, dict(attrs))
    outs = outs if isinstance(outs, list) else [outs]
    heads = [RNG.standard_normal(o.shape) for o in outs]
    autograd.backward(outs, [_a(h) for h in heads], train_mode=is_train)
    dirs = {i: RNG.standard_normal(np.shape(inputs[i])) for i in wrt}
    analytic = sum(float((xs[i].grad.asnumpy() * d).sum()) for i, d in dirs.items())

    def loss(sign):
        moved = [np.asarray(x, dtype=np.float64) + sign * eps * dirs[i] if i in dirs else x
                 for i, x in enumerate(inputs)]
        scope = autograd.train_mode() if is_train else autograd.predict_mode()
        with scope:
            o = invoke(op, [_a(x) for x in moved], dict(attrs))
        o = o if isinstance(o, list) else [o]
        return sum(float((oo.asnumpy() * h).sum()) for oo, h in zip(o, heads))

    numeric = (loss(1) - loss(-1)) / (2 * eps)
    assert abs(analytic - numeric) <= rtol * max(1.0, abs(numeric)), (name, attrs, analytic, numeric)


GRAD_CASES = [
    ("BatchNorm", [(4, 3, 2), (3,), (3,), (3,), (3,)], {"fix_gamma": False}, True),
    ("BatchNorm", [(5, 4), (4,), (4,), (4,), (4,)], {"fix_gamma": False, "axis": -1, "momentum": 0.5}, True),
    ("BatchNorm", [(2, 3, 2, 2), (2,), (2,), (2,), (2,)], {"fix_gamma": False, "axis": 2}, False),
    ("BatchNorm", [(4, 3, 2), (3,), (3,), (3,), (3,)], {"fix_gamma": False, "use_global_stats": True}, True),
    ("LayerNorm", [(3, 4, 2), (4,), (4,)], {"axis": 1}, True),
    ("LayerNorm", [(2, 5), (5,), (5,)], {"output_mean_var": False, "eps": 0.01}, True),
    ("InstanceNorm", [(2, 3, 4), (3,), (3,)], {}, True),
    ("InstanceNorm", [(2, 2, 2, 3, 2), (2,), (2,)], {"eps": 0.1}, True),
    ("GroupNorm", [(2, 6, 3), (3,), (3,)], {"num_groups": 3, "eps": 1e-3}, True),
    ("GroupNorm", [(3, 4, 2, 2), (1,), (1,)], {"eps": 1e-3}, True),
    ("L2Normalization", [(2, 3, 4)], {"mode": "instance"}, True),
    ("L2Normalization", [(2, 3, 4)], {"mode": "channel"}, True),
    ("L2Normalization", [(2, 3, 2, 2)], {"mode": "spatial"}, True),
    ("LRN", [(2, 5, 2, 2)], {"nsize": 3, "alpha": 0.5, "beta": 0.6, "knorm": 1.0}, True),
    ("LRN", [(1, 4, 3)], {"nsize": 5, "alpha": 0.2}, True),
    ("moments", [(2, 3, 4)], {"axes": (1,)}, True),
    ("moments", [(2, 3, 4)], {"axes": (0, 2), "keepdims": True}, True),
]


@pytest.mark.parametrize("name,shapes_,attrs,is_train", GRAD_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(GRAD_CASES)])
def test_finite_difference_gradient(name, shapes_, attrs, is_train):
    inputs = [RNG.standard_normal(s) for s in shapes_]
    if name == "BatchNorm":
        inputs[4] = RNG.uniform(0.5, 2.0, shapes_[4])
        wrt = (0, 1, 2)
    else:
        wrt = tuple(range(len(inputs)))
    _fd_check(name, inputs, attrs, wrt, is_train=is_train)


@pytest.mark.parametrize("name,shapes_,attrs,is_train", GRAD_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(GRAD_CASES)])
def test_infer_shape_matches_every_output(name, shapes_, attrs, is_train):
    inputs = [_a(RNG.uniform(0.5, 2.0, s)) for s in shapes_]
    outs, op, a = _all_outputs(name, inputs, {**attrs, "output_mean_var": True} if "output_mean_var" in
                               op_attr_names(name) else attrs, is_train)
    in_shapes, out_shapes = op.infer_shape(a, *shapes_)
    assert [tuple(s) for s in in_shapes] == [tuple(s) for s in shapes_]
    assert [tuple(s) for s in out_shapes] == [o.shape for o in outs]
    in_types, out_types = op.infer_type(a, *[np.dtype("float64")] * len(shapes_))
    assert list(out_types) == [o.dtype for o in outs]


def op_attr_names(name):
    return set(get_op(name).schema.attrs)


@given(data=st.data())
def test_batchnorm_matches_reference_hypothesis(data):
    shape = data.draw(shapes(min_dims=2, max_dims=4, max_side=4))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    c = shape[axis]
    inputs = [data.draw(arr(shape)), data.draw(arr((c,))), data.draw(arr((c,))), data.draw(arr((c,))),
              data.draw(arr((c,), 0.5, 2.0))]
    attrs = {"axis": axis, "fix_gamma": data.draw(st.booleans()), "use_global_stats": data.draw(st.booleans()),
             "eps": data.draw(st.sampled_from([1e-3, 1e-5]))}
    is_train = data.draw(st.booleans())
    scope = autograd.train_mode() if is_train else autograd.predict_mode()
    with scope:
        out, mean, invstd = nd.BatchNorm(*[_a(x) for x in inputs], output_mean_var=True, **attrs)
    want = ref_batch_norm(*inputs, output_mean_var=True, is_train=is_train, **attrs)
    for got, w in zip((out, mean, invstd), want):
        np.testing.assert_allclose(got.asnumpy(), w, rtol=1e-9, atol=1e-9)


def test_lrn_matches_reference_float32():
    x = RNG.standard_normal((2, 6, 3, 3)).astype(np.float32)
    out = nd.LRN(nd.array(x), nsize=3).asnumpy()
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, ref_lrn(x.astype(np.float64), nsize=3), rtol=1e-5)


def test_second_order_gradient_is_a_clear_error():
    x = _a(_randn(2, 3, 4))
    x.attach_grad()
    with autograd.record():
        y = nd.L2Normalization(x)
        (gx,) = [autograd.grad(y, [x], create_graph=True)[0]]
    with pytest.raises(AutogradError, match="_backward_L2Normalization"):
        gx.backward()


def test_batchnorm_train_mode_backward_after_predict_forward_matches_mxnet():
    """Values recorded from MXNet 1.9.1: record(train_mode=False), then backward() (train)."""
    x = np.linspace(-2, 3, 24).reshape(2, 3, 4).astype(np.float32)
    xs = [nd.array(v) for v in (x, [2.0, 3, 4], [0.0, 0, 0], [0.1, 0.2, -0.3], [1.5, 0.5, 2.0])]
    head = nd.array(np.cos(np.arange(24)).reshape(2, 3, 4))
    xs[0].attach_grad()
    xs[1].attach_grad()
    with autograd.record(train_mode=False):
        y = nd.BatchNorm(*xs, fix_gamma=False)
    y.backward(head)
    np.testing.assert_allclose(xs[0].grad.asnumpy().ravel()[:6],
                               [1.1876578, 0.45660025, -1.0853786, -2.0027769, -2.8776064, 0.960205], rtol=1e-5)
    np.testing.assert_allclose(xs[1].grad.asnumpy(), [-0.53512144, 0.82885456, -4.215902], rtol=1e-5)
    np.testing.assert_allclose(xs[3].asnumpy(), [0.1, 0.2, -0.3], rtol=1e-6)
    np.testing.assert_allclose(xs[4].asnumpy(), [1.5, 0.5, 2.0], rtol=1e-6)


def test_batchnorm_mean_output_does_not_alias_moving_mean():
    data, gamma, beta, mm, mv = _bn_inputs()
    _, mean, _ = nd.BatchNorm(data, gamma, beta, mm, mv, output_mean_var=True)
    mm[:] = 42.0
    assert not np.any(mean.asnumpy() == 42.0)
