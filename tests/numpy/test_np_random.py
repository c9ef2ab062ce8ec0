"""mx.np.random / npx.random: shapes and dtypes as MXNet 1.9.1 gives them, parameter errors,
reparameterisation gradients (checked by finite differences under a fixed seed), hybridized
sampling, constraint_check."""
from __future__ import annotations

import numpy as onp
import pytest

import hybridgraph as mx
from hybridgraph import autograd, gluon, np, npx


pytestmark = pytest.mark.usefixtures("np_mode")


@pytest.mark.parametrize("name,args", [
    ("normal", ()), ("uniform", ()), ("gamma", (1.0,)), ("logistic", ()), ("gumbel", ()), ("exponential", ()),
    ("rayleigh", ()), ("weibull", (1.0,)), ("pareto", (1.0,)), ("power", (1.0,)),
])
@pytest.mark.parametrize("size,want", [(None, ()), ((), ()), (6, (6,)), ((4, 0, 5), (4, 0, 5))])
def test_sample_shapes_and_dtype(name, args, size, want):
    out = getattr(np.random, name)(*args, size=size)
    assert out.shape == want and out.dtype == onp.float32


def test_array_parameters_broadcast_and_give_float32():
    assert np.random.gamma(np.ones((2,), dtype="float64")).dtype == onp.float32
    assert np.random.normal(np.zeros((3, 1)), np.ones((4,))).shape == (3, 4)
    assert np.random.beta(np.array([1.0]), np.array([1.0]), size=(2, 3)).shape == (2, 3)
    assert np.random.gamma(1, size=(2,), dtype="float64").dtype == onp.float64


@pytest.mark.parametrize("call", [
    lambda: np.random.gamma(1, 0), lambda: np.random.gamma(np.array(1.0), np.array(-1.0)),
    lambda: np.random.gamma(0, 1), lambda: np.random.exponential(-1), lambda: np.random.rayleigh(scale=-1),
    lambda: np.random.weibull(0), lambda: np.random.pareto(-1), lambda: np.random.lognormal(sigma=-1),
    lambda: npx.random.bernoulli(prob=np.array([1.5])), lambda: npx.random.bernoulli(prob=0.5, logit=0.1),
])
def test_invalid_parameters_raise_value_error(call):
    with pytest.raises(ValueError):
        call().asnumpy()


def _seeded(fn, *params):
    mx.random.seed(7)
    return fn(*params)


@pytest.mark.parametrize("name,p0", [("normal", (0.3, 1.2)), ("logistic", (0.3, 1.2)), ("gumbel", (0.3, 1.2)),
                                     ("exponential", (1.3,)), ("rayleigh", (1.3,)), ("weibull", (1.7,)),
                                     ("pareto", (1.7,))])
def test_reparameterised_gradients_match_finite_differences(name, p0):
    fn = getattr(np.random, name)
    rng = onp.random.default_rng(0)
    base = [onp.full((2, 3), v) + 0.1 * rng.random((2, 3)) for v in p0]
    params = [np.array(b, dtype="float64") for b in base]
    for p in params:
        p.attach_grad()
    head = rng.standard_normal((2, 3))
    mx.random.seed(7)
    with autograd.record():
        out = fn(*params, size=(2, 3))
    out.backward(np.array(head, dtype="float32"))
    eps = 1e-3
    for i, b in enumerate(base):
        d = rng.standard_normal(b.shape)

        def f(sign, i=i, d=d):
            moved = [np.array(x + sign * eps * d if j == i else x, dtype="float64") for j, x in enumerate(base)]
            return float((_seeded(lambda *a: fn(*a, size=(2, 3)), *moved).asnumpy().astype(onp.float64) * head).sum())
        numeric = (f(1) - f(-1)) / (2 * eps)
        analytic = float((params[i].grad.asnumpy() * d).sum())
        assert abs(analytic - numeric) < 2e-2 * max(1.0, abs(numeric)), (name, i, analytic, numeric)


def test_lognormal_gradient_is_the_sample():
    mean, sigma = np.zeros((3, 2)), np.ones((3, 2))
    mean.attach_grad()
    with autograd.record():
        out = np.random.lognormal(mean, sigma, (3, 2))
    out.backward()
    onp.testing.assert_allclose(mean.grad.asnumpy(), out.asnumpy(), rtol=1e-5)


def test_sampling_in_a_hybridized_block_draws_fresh_values_and_differentiates():
    class Net(gluon.HybridBlock):
        def hybrid_forward(self, F, loc, scale):
            return F.np.random.normal(loc=loc, scale=scale, size=(4, 3))
    net = Net()
    net.hybridize()
    loc, scale = np.zeros((3,)), np.ones((3,))
    loc.attach_grad()
    scale.attach_grad()
    with autograd.record():
        a = net(loc, scale)
    a.backward()
    b = net(loc, scale)
    assert a.shape == (4, 3) and not onp.allclose(a.asnumpy(), b.asnumpy())
    onp.testing.assert_allclose(loc.grad.asnumpy(), [4, 4, 4])
    onp.testing.assert_allclose(scale.grad.asnumpy(), a.asnumpy().sum(axis=0), rtol=1e-5)


def test_chisquare_follows_numpys_distribution():
    mx.random.seed(0)
    assert abs(float(np.random.chisquare(4.0, size=20000).mean()) - 4.0) < 0.15


def test_bernoulli_and_sample_n():
    out = npx.random.bernoulli(logit=np.zeros((2, 3)), dtype="int32")
    assert out.shape == (2, 3) and out.dtype == onp.int32 and set(onp.unique(out.asnumpy())) <= {0, 1}
    assert npx.random.bernoulli(prob=1.0, size=(4,)).asnumpy().tolist() == [1.0] * 4
    assert npx.random.normal_n(np.zeros((2,)), np.ones((2,)), batch_shape=(3,)).shape == (3, 2)
    assert npx.random.uniform_n(0.0, 1.0, batch_shape=6).shape == (6,)


def test_multivariate_normal_shapes_and_moments():
    mean, cov = np.array([1.0, -2.0]), np.array([[2.0, 0.5], [0.5, 1.0]])
    assert np.random.multivariate_normal(mean, np.broadcast_to(cov, (3, 2, 2)), (4,)).shape == (4, 3, 2)
    mx.random.seed(1)
    x = np.random.multivariate_normal(mean, cov, (20000,)).asnumpy()
    onp.testing.assert_allclose(x.mean(axis=0), [1.0, -2.0], atol=0.05)
    onp.testing.assert_allclose(onp.cov(x.T), [[2.0, 0.5], [0.5, 1.0]], atol=0.08)


@pytest.mark.parametrize("hybridize", [False, True])
def test_constraint_check(hybridize):
    class Net(gluon.HybridBlock):
        def hybrid_forward(self, F, x, ok):
            return x * F.npx.constraint_check(ok, "condition violated")
    net = Net()
    if hybridize:
        net.hybridize()
    x = np.ones((2, 3))
    onp.testing.assert_array_equal(net(x, np.ones((2, 3), dtype="bool")).asnumpy(), x.asnumpy())
    with pytest.raises(ValueError, match="condition violated"):
        net(x, np.zeros((2, 3), dtype="bool")).asnumpy()
