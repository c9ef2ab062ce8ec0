"""nn operators (nd/ops/nn.py): MXNet semantics beyond the goldens, edge cases,
shape inference, random ops, second-order gradients and the MXNet defects we fix."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from hybridgraph import nd
from hybridgraph.nd import autograd, rng
from hybridgraph.nd.dispatch import invoke
from hybridgraph.nd.errors import AttrError, DTypeError, ShapeError
from hybridgraph.nd.registry import get_op
from tests.nd.specs.nn import so_backward_ref, softmax_ref

R = np.random.default_rng(7)


def _call(name, *inputs, **attrs):
    xs = [nd.array(x, dtype=x.dtype) for x in inputs]
    return invoke(get_op(name), xs, attrs)


def _grads(name, inputs, attrs, head=None, train=True):
    """(outputs, input gradients) of one recorded call, as numpy."""
    xs = [nd.array(x, dtype=x.dtype) for x in inputs]
    for x in xs:
        x.attach_grad()
    with autograd.record(train_mode=train):
        out = invoke(get_op(name), xs, attrs)
    outs = out if isinstance(out, list) else [out]
    h = head if head is not None else np.ones(outs[0].shape)
    autograd.backward([outs[0]], [nd.array(h, dtype=outs[0].dtype)])
    return [o.asnumpy() for o in outs], [x.grad.asnumpy() for x in xs]


def _fd(name, inputs, attrs, wrt=0, eps=1e-6):
    """Directional finite difference of sum(out * head) and the analytic one, in float64."""
    head = R.standard_normal(_call(name, *inputs, **attrs).shape)
    direction = R.standard_normal(inputs[wrt].shape)

    def loss(sign):
        moved = list(inputs)
        moved[wrt] = inputs[wrt] + sign * eps * direction
        return float((_call(name, *moved, **attrs).asnumpy() * head).sum())
    _, grads = _grads(name, inputs, attrs, head)
    return float((grads[wrt] * direction).sum()), (loss(1) - loss(-1)) / (2 * eps)


# -- FullyConnected ------------------------------------------------------------

def test_fc_shape_inference_is_bidirectional():
    op = get_op("FullyConnected")
    a = op.parse_attrs({"num_hidden": 4})
    assert op.infer_shape(a, (2, 3, 5), None, None) == ([(2, 3, 5), (4, 15), (4,)], [(2, 4)])
    assert op.infer_shape(a, (0, 3, 5), None, None)[1] == [(0, 4)]
    assert op.infer_shape(a, (2, 15), None, (4, 1))[0][2] == (4, 1)
    b = op.parse_attrs({"num_hidden": 4, "flatten": False, "no_bias": True})
    assert op.infer_shape(b, (2, 3, 5), None) == ([(2, 3, 5), (4, 5)], [(2, 3, 4)])
    assert op.infer_shape(b, (2, 3, 0), (4, 7))[0][0] == (2, 3, 7)   # data filled from weight
    assert op.infer_shape(a, None, (4, 15), None) is None
    with pytest.raises(ShapeError, match="weight"):
        op.infer_shape(a, (2, 15), (4, 14), None)
    with pytest.raises(AttrError, match="num_hidden"):
        op.infer_shape(op.parse_attrs({"num_hidden": 0}), (2, 3), None, None)
    assert op.input_names(b) == ("data", "weight") and op.learnable == ("weight", "bias")


def test_fc_flatten_1d_and_kernel_errors():
    x, w, b = R.standard_normal(5), R.standard_normal((4, 1)), R.standard_normal(4)
    out = _call("FullyConnected", x, w, b, num_hidden=4).asnumpy()   # MXNet: (5,) is 5 rows of 1
    np.testing.assert_allclose(out, x[:, None] @ w.T + b)
    with pytest.raises(ShapeError, match="weight"):
        _call("FullyConnected", R.standard_normal((2, 3)), R.standard_normal((4, 2)), b, num_hidden=4)


@given(st.booleans(), st.booleans())
def test_fc_second_order_gradient(flatten, no_bias):
    """d/dW of <dL/dx, r> (L = sum(y*y)) through the backward op, against finite differences."""
    x, w = R.standard_normal((2, 3, 2)), R.standard_normal((3, 6 if flatten else 2))
    b, r = R.standard_normal(3), R.standard_normal((2, 3, 2))
    attrs = {"num_hidden": 3, "flatten": flatten, "no_bias": no_bias}

    def grad_dot_r(wv, create=False):
        xs = [nd.array(v, dtype=np.float64) for v in [x, wv] + ([] if no_bias else [b])]
        for v in xs[:2]:
            v.attach_grad()
        with autograd.record():
            y = invoke(get_op("FullyConnected"), xs, attrs)
            gx = autograd.grad((y * y).sum(), [xs[0]], create_graph=create)[0]
            z = (gx * nd.array(r, dtype=np.float64)).sum()
        return xs[1], z
    wvar, z = grad_dot_r(w, create=True)
    z.backward()
    d, eps = R.standard_normal(w.shape), 1e-6
    numeric = (grad_dot_r(w + eps * d)[1].asscalar() - grad_dot_r(w - eps * d)[1].asscalar()) / (2 * eps)
    assert float((wvar.grad.asnumpy() * d).sum()) == pytest.approx(numeric, rel=1e-5, abs=1e-8)


# -- activations -----------------------------------------------------------------

def test_selu_gradient_is_the_true_derivative():
    """MXNet 1.9.1 computes lambda*(y+alpha) for x<0 (formats.md section 3); we differentiate."""
    x = R.standard_normal((3, 5)) - 0.5
    analytic, numeric = _fd("LeakyReLU", [x], {"act_type": "selu"})
    assert analytic == pytest.approx(numeric, rel=1e-6)


@pytest.mark.parametrize("act", ["leaky", "elu", "gelu"])
def test_leaky_family_gradients(act):
    x = R.standard_normal((4, 3))
    analytic, numeric = _fd("LeakyReLU", [x], {"act_type": act, "slope": -0.3})
    assert analytic == pytest.approx(numeric, rel=1e-6)


def test_prelu_gamma_shapes_and_gradient():
    op = get_op("LeakyReLU")
    a = op.parse_attrs({"act_type": "prelu"})
    assert op.infer_shape(a, (2, 5, 3), None) == ([(2, 5, 3), (5,)], [(2, 5, 3)])
    assert op.infer_shape(a, (2, 5, 3), (1,))[0][1] == (1,)
    with pytest.raises(ShapeError, match="gamma"):
        op.infer_shape(a, (2, 5, 3), (3,))
    x, g = R.standard_normal((2, 3, 4)), R.uniform(0.1, 0.9, 3)
    for wrt in (0, 1):
        analytic, numeric = _fd("LeakyReLU", [x, g], {"act_type": "prelu"}, wrt=wrt)
        assert analytic == pytest.approx(numeric, rel=1e-6)


def test_rrelu_training_draws_slopes_and_inference_uses_their_mean():
    x = -np.abs(R.standard_normal((50, 40))) - 0.1
    outs, grads = _grads("LeakyReLU", [x], {"act_type": "rrelu", "lower_bound": 0.1, "upper_bound": 0.3})
    out, mask = outs
    assert mask.shape == x.shape and 0.1 <= mask.min() and mask.max() <= 0.3 and mask.std() > 0.03
    np.testing.assert_allclose(out, mask * x)
    np.testing.assert_allclose(grads[0], mask)
    with autograd.predict_mode():
        out, mask = _call("LeakyReLU", x, act_type="rrelu", lower_bound=0.1, upper_bound=0.3)
    np.testing.assert_allclose(out.asnumpy(), 0.2 * x)


def test_leaky_rejects_integer_data_and_bad_act_type():
    with pytest.raises(DTypeError):
        _call("LeakyReLU", np.array([1, -2], dtype=np.int32))
    with pytest.raises(AttrError, match="act_type"):
        _call("Activation", R.standard_normal(3), act_type="swish")


def test_softrelu_is_stable_for_large_inputs():
    x = np.array([-800.0, -30.0, 0.0, 30.0, 800.0], dtype=np.float32)
    np.testing.assert_allclose(_call("Activation", x, act_type="softrelu").asnumpy(),
                               [0, math.log1p(math.exp(-30)), math.log(2), 30, 800], rtol=1e-6)


# -- softmax family ----------------------------------------------------------------

def test_softmax_length_mask_shape_and_dtype_rules():
    x = R.standard_normal((2, 5, 3)).astype(np.float32)
    length = np.array([[0, 2, 5], [1, 4, 3]], dtype=np.int32)
    out = _call("softmax", x, length, axis=1, use_length=True).asnumpy()
    np.testing.assert_allclose(out, softmax_ref(x.astype(np.float64), 1, length=length), rtol=1e-6, atol=1e-7)
    assert (out[0, :, 0] == 0).all()   # a zero length gives an all-zero row, as MXNet
    op = get_op("softmax")
    a = op.parse_attrs({"axis": 1, "use_length": True})
    assert op.input_names(a) == ("data", "length")
    assert op.infer_shape(a, (2, 5, 3), None) == ([(2, 5, 3), (2, 3)], [(2, 5, 3)])
    with pytest.raises(DTypeError, match="length"):
        _call("softmax", x, length.astype(np.float32), axis=1, use_length=True)
    with pytest.raises(AttrError, match="use_length"):
        _call("log_softmax", x, use_length=True)
    with pytest.raises(AttrError, match="axis"):
        _call("softmax", x, axis=3)


def test_softmax_dtype_output_and_input_gradient_dtype():
    x = R.standard_normal((3, 4)).astype(np.float32)
    outs, grads = _grads("softmax", [x], {"dtype": "float64", "temperature": 0.7, "axis": 0},
                         head=R.standard_normal((3, 4)))
    assert outs[0].dtype == np.float64 and grads[0].dtype == np.float32
    assert _call("log_softmax", x.astype(np.float16), dtype="float32").dtype == np.float32


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_family_second_order(name):
    x, r = R.standard_normal((3, 4)), R.standard_normal((3, 4))
    head = R.standard_normal((3, 4))

    def grad_dot(xv, create=False):
        v = nd.array(xv, dtype=np.float64)
        v.attach_grad()
        with autograd.record():
            y = invoke(get_op(name), [v], {"axis": 0, "temperature": 1.5})
            g = autograd.grad(y, [v], head_grads=nd.array(head, dtype=np.float64), create_graph=create)[0]
            z = (g * nd.array(r, dtype=np.float64)).sum()
        return v, z
    v, z = grad_dot(x, True)
    z.backward()
    d, eps = R.standard_normal(x.shape), 1e-6
    numeric = (grad_dot(x + eps * d)[1].asscalar() - grad_dot(x - eps * d)[1].asscalar()) / (2 * eps)
    assert float((v.grad.asnumpy() * d).sum()) == pytest.approx(numeric, rel=1e-5, abs=1e-8)


def test_softmax_activation_instance_gradient_is_the_true_derivative():
    """MXNet 1.9.1's instance-mode backward on >2-D data runs along axis 1 while the
    forward runs along the last axis (an undocumented defect the golden reproduces)."""
    x = R.standard_normal((2, 3, 2, 2))
    np.testing.assert_allclose(_call("SoftmaxActivation", x).asnumpy(), softmax_ref(x, -1))
    analytic, numeric = _fd("SoftmaxActivation", [x], {"mode": "instance"})
    assert analytic == pytest.approx(numeric, rel=1e-6)
    with pytest.raises(ShapeError, match="channel"):
        _call("SoftmaxActivation", R.standard_normal((2, 3)), mode="channel")


# -- SoftmaxOutput -------------------------------------------------------------------

SO_CASES = [
    ((4, 5), (4,), {}),
    ((2, 3, 4), (2, 3), {}),                                         # default mode flattens rows
    ((2, 3, 4), (2, 4), {"multi_output": True}),                     # null: / spatial size (MXNet)
    ((2, 3, 4), (2, 1, 4), {"multi_output": True, "normalization": "batch", "grad_scale": 3.0}),
    ((2, 3, 4), (2, 4), {"multi_output": True, "use_ignore": True, "ignore_label": 1.0,
                         "normalization": "valid", "smooth_alpha": 0.2}),
    ((2, 3, 4), (2, 3), {"preserve_shape": True, "normalization": "batch"}),
    ((6, 5), (6,), {"smooth_alpha": 0.3, "use_ignore": True, "ignore_label": 2.0, "normalization": "valid"}),
    ((4, 5), (4,), {"out_grad": True, "grad_scale": 2.0}),
]


@pytest.mark.parametrize("dshape,lshape,attrs", SO_CASES)
def test_softmax_output_gradient_formula(dshape, lshape, attrs):
    """Checked against MXNet 1.9.1 except two defects fixed here: out_grad=True multiplies
    by the head gradient (MXNet multiplies by the output) and smooth_alpha also smooths
    multi_output (MXNet ignores it there)."""
    x = R.standard_normal(dshape).astype(np.float32)
    k = dshape[1] if attrs.get("multi_output") else dshape[-1]
    label = R.integers(0, min(k, 3), lshape).astype(np.float32)
    head = R.standard_normal(dshape).astype(np.float32)
    outs, grads = _grads("SoftmaxOutput", [x, label], attrs, head=head)
    want = so_backward_ref(head.astype(np.float64), outs[0].astype(np.float64), label, **attrs)
    np.testing.assert_allclose(grads[0], want, rtol=1e-5, atol=1e-7)
    op = get_op("SoftmaxOutput")
    assert op.infer_shape(op.parse_attrs(attrs), dshape, None)[0][1] in (lshape, (lshape[0], int(np.prod(lshape[1:]))))


def test_softmax_output_probability_labels_and_label_shape_errors():
    x, p = R.standard_normal((3, 4)), R.uniform(0, 1, (3, 4))
    outs, grads = _grads("SoftmaxOutput", [x, p], {"grad_scale": 2.0, "normalization": "batch"},
                         head=R.standard_normal((3, 4)))
    np.testing.assert_allclose(grads[0], 2 * (outs[0] - p))   # no normalization with probabilities
    op = get_op("SoftmaxOutput")
    with pytest.raises(ShapeError, match="label"):
        op.infer_shape(op.parse_attrs({"multi_output": True}), (2, 3, 4), (2, 12))
    with pytest.raises(ShapeError, match="label"):
        op.infer_shape(op.parse_attrs({}), (2, 3, 4), (2, 4))
    assert get_op("Softmax") is op and op.loss


# -- regression outputs, MakeLoss, softmax_cross_entropy ----------------------------------

@pytest.mark.parametrize("name,fwd,sign", [("LinearRegressionOutput", lambda v: v, False),
                                           ("LogisticRegressionOutput", lambda v: 1 / (1 + np.exp(-v)), False),
                                           ("MAERegressionOutput", lambda v: v, True)])
def test_regression_outputs(name, fwd, sign):
    x, label = R.standard_normal((4, 1)), R.standard_normal(4)
    outs, grads = _grads(name, [x, label], {"grad_scale": 0.5}, head=np.full((4, 1), 9.0))
    diff = outs[0] - label[:, None]
    np.testing.assert_allclose(outs[0], fwd(x))
    np.testing.assert_allclose(grads[0], 0.5 * (np.where(diff > 0, 1, -1) if sign else diff))
    op = get_op(name)
    assert op.infer_shape(op.parse_attrs({}), (4, 1), None)[0][1] == (4,)
    assert op.infer_shape(op.parse_attrs({}), (4, 3, 2), (4, 6))[0][1] == (4, 6)
    with pytest.raises(ShapeError, match="label"):
        op.infer_shape(op.parse_attrs({}), (4, 3), (4,))
    x3, l3 = R.standard_normal((2, 3)), R.standard_normal((2, 3))
    _, grads = _grads(name, [x3, l3], {})
    assert np.abs(grads[0]).max() <= 1 / 3 + 1e-12 or not sign   # scaled by 1 / elements per row


@pytest.mark.parametrize("attrs,norm", [({}, 1), ({"normalization": "batch"}, 4),
                                        ({"normalization": "valid", "valid_thresh": 0.5}, None)])
def test_make_loss_ignores_head_and_normalizes(attrs, norm):
    x = R.standard_normal((4, 3))
    outs, grads = _grads("MakeLoss", [x], dict(attrs, grad_scale=3.0), head=np.full((4, 3), 7.0))
    norm = norm or max(int((x > 0.5).sum()), 1)
    np.testing.assert_allclose(outs[0], x)
    np.testing.assert_allclose(grads[0], np.full(x.shape, 3.0 / norm))
    _, grads = _grads("make_loss", [x], {}, head=np.full((4, 3), 7.0))
    np.testing.assert_allclose(grads[0], np.ones(x.shape))


def test_softmax_cross_entropy_value_gradient_and_shapes():
    x, label = R.standard_normal((3, 4)), np.array([0.0, 3.0, 1.0])
    outs, grads = _grads("softmax_cross_entropy", [x, label], {}, head=np.array([2.0]))
    p = softmax_ref(x, 1)
    assert outs[0].shape == (1,)
    np.testing.assert_allclose(outs[0], [-np.log(p[np.arange(3), label.astype(int)]).sum()])
    np.testing.assert_allclose(grads[0], 2 * (p - np.eye(4)[label.astype(int)]))
    with pytest.raises(ShapeError, match="2-D"):
        _call("softmax_cross_entropy", R.standard_normal((2, 3, 4)), np.zeros(2))


# -- smooth_l1, hard_sigmoid, div_sqrt_dim ---------------------------------------------------

def test_smooth_l1_hard_sigmoid_div_sqrt_dim_values():
    x = np.array([-2, -0.5, 0.1, 0.9, 3], dtype=np.float32)
    np.testing.assert_allclose(_call("smooth_l1", x, scalar=2.0).asnumpy(), [1.875, 0.375, 0.02, 0.775, 2.875])
    np.testing.assert_allclose(_call("smooth_l1", x).asnumpy(), [1.5, 0.125, 0.005, 0.405, 2.5], rtol=1e-6)
    h = np.array([-2.5, -1, 0, 2.5, 3], dtype=np.float32)
    _, grads = _grads("hard_sigmoid", [h], {})
    np.testing.assert_allclose(grads[0], [0, 0.2, 0.2, 0, 0], rtol=1e-6)   # 0 at the clip edges
    outs, grads = _grads("_contrib_div_sqrt_dim", [R.standard_normal((2, 4))], {})
    np.testing.assert_allclose(grads[0], np.full((2, 4), 0.5))


# -- Dropout ------------------------------------------------------------------------------

def test_dropout_training_statistics_mask_and_gradient():
    rng.seed(11)
    x = R.standard_normal((200, 50)).astype(np.float32)
    xs = nd.array(x)
    xs.attach_grad()
    with autograd.record():
        y = nd.Dropout(xs, p=0.3)
    assert isinstance(y, nd.NDArray)   # the mask output is hidden
    y.backward(nd.ones_like(y) * 3)
    out = y.asnumpy()
    kept = out != 0
    assert abs(1 - kept.mean() - 0.3) < 0.02
    np.testing.assert_allclose(out[kept], x[kept] / 0.7, rtol=1e-6)
    np.testing.assert_allclose(xs.grad.asnumpy(), np.where(kept, 3 / 0.7, 0), rtol=1e-6)


def test_dropout_axes_modes_seed_and_edge_probabilities():
    x = np.ones((4, 6, 5), dtype=np.float16)
    op = get_op("Dropout")
    a = op.parse_attrs({"axes": (1,)})
    assert op.infer_shape(a, (4, 6, 5)) == ([(4, 6, 5)], [(4, 6, 5), (4, 1, 5)])
    with autograd.train_mode():
        out = _call("Dropout", x, p=0.5, axes=(1,)).asnumpy()
        assert out.dtype == np.float16 and (out == out[:, :1, :]).all()
        assert np.isnan(_call("Dropout", x, p=1.0).asnumpy()).all()   # MXNet 1.9.1: 0 * 1/0
        rng.seed(5)
        first = _call("Dropout", x, p=0.5).asnumpy()
        rng.seed(5)
        np.testing.assert_array_equal(first, _call("Dropout", x, p=0.5).asnumpy())
    np.testing.assert_array_equal(_call("Dropout", x, p=0.5).asnumpy(), x)   # inference: identity
    assert set(np.unique(_call("Dropout", x, p=0.5, mode="always").asnumpy())) <= {0, 2}
    with pytest.raises(AttrError, match="'p'"):
        _call("Dropout", x, p=1.5)
    assert op.is_random and op.train_aware and op.num_visible_outputs(a) == 1


def test_prelu_gamma_of_the_data_rank_broadcasts():
    # MXNet 1.9.1: a gamma with the data's rank broadcasts elementwise (values from the real thing)
    x = nd.array([[-1, 2, -3, 4], [1, -2, 3, -4], [-1, -1, -1, -1]])
    full = nd.LeakyReLU(x, gamma=nd.arange(12).reshape((3, 4)), act_type="prelu")
    assert full.asnumpy().tolist() == [[0, 2, -6, 4], [1, -10, 3, -28], [-8, -9, -10, -11]]
    g = nd.array([1, 2, 3]).reshape((3, 1))
    g.attach_grad()
    with autograd.record():
        y = nd.LeakyReLU(x, gamma=g, act_type="prelu")
    y.backward()
    assert y.asnumpy()[2].tolist() == [-3, -3, -3, -3]
    assert g.grad.asnumpy().ravel().tolist() == [-4, -6, -4]
    with pytest.raises(ShapeError, match="broadcasts"):
        nd.LeakyReLU(x, gamma=nd.ones((2, 4)), act_type="prelu")


def test_prelu_matrix_gamma_lines_up_with_leading_axes():
    # MXNet 1.9.1: gamma (N, C) on (N, C, H, W) data scales each (n, c) plane
    x = -nd.ones((3, 4, 2, 2))
    gamma = nd.array([[1, 2, 3, 4]] * 3)
    out = nd.LeakyReLU(x, gamma=gamma, act_type="prelu").asnumpy()
    assert out[:, :, 1, 1].tolist() == [[-1, -2, -3, -4]] * 3
