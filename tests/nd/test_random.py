"""Random sampling: `nd.random` front end, the `_random_*` / `_sample_*` operators,
seeding (nd.rng) and their MXNet 1.9.1 semantics."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hybridgraph import nd
from hybridgraph.nd import autograd, rng
from hybridgraph.nd import random as rnd
from hybridgraph.nd.errors import AttrError, DTypeError, ShapeError
from hybridgraph.nd.registry import all_ops, get_op

DRAWS = {
    "uniform": lambda **kw: rnd.uniform(-1, 3, **kw),
    "normal": lambda **kw: rnd.normal(2, 0.5, **kw),
    "gamma": lambda **kw: rnd.gamma(2.0, 1.5, **kw),
    "exponential": lambda **kw: rnd.exponential(0.5, **kw),
    "poisson": lambda **kw: rnd.poisson(3.0, **kw),
    "negative_binomial": lambda **kw: rnd.negative_binomial(3, 0.4, **kw),
    "generalized_negative_binomial": lambda **kw: rnd.generalized_negative_binomial(2.0, 0.5, **kw),
    "randint": lambda **kw: rnd.randint(-5, 5, **kw),
}
# (mean, variance) of each DRAWS entry
MOMENTS = {
    "uniform": (1.0, 16 / 12), "normal": (2.0, 0.25), "gamma": (3.0, 4.5), "exponential": (0.5, 0.25),
    "poisson": (3.0, 3.0), "negative_binomial": (3 * 0.6 / 0.4, 3 * 0.6 / 0.16),
    "generalized_negative_binomial": (2.0, 2.0 + 0.5 * 4.0), "randint": (-0.5, (10 ** 2 - 1) / 12),
}


@pytest.fixture(autouse=True)
def _fresh_seed():
    rnd.seed(1234)
    yield


# -- seeding ----------------------------------------------------------------------------

@pytest.mark.parametrize("dist", sorted(DRAWS))
def test_seed_makes_draws_reproducible(dist):
    rnd.seed(7)
    a = DRAWS[dist](shape=(4, 3)).asnumpy()
    b = DRAWS[dist](shape=(4, 3)).asnumpy()
    rnd.seed(7)
    np.testing.assert_array_equal(DRAWS[dist](shape=(4, 3)).asnumpy(), a)
    np.testing.assert_array_equal(DRAWS[dist](shape=(4, 3)).asnumpy(), b)
    rnd.seed(8)
    if dist not in ("poisson", "negative_binomial", "generalized_negative_binomial", "randint"):
        assert not np.array_equal(DRAWS[dist](shape=(4, 3)).asnumpy(), a)


def test_seed_per_context_matches_device_zero_and_validates():
    rnd.seed(11)
    a = rnd.normal(shape=(5,)).asnumpy()
    rnd.seed(11, ctx=nd.cpu(0))
    np.testing.assert_array_equal(rnd.normal(shape=(5,)).asnumpy(), a)
    rnd.seed(11, ctx="cpu(0)")
    np.testing.assert_array_equal(rnd.normal(shape=(5,)).asnumpy(), a)
    with pytest.raises(ValueError, match="seed_state must be int"):
        rnd.seed(1.5)
    with pytest.raises(TypeError, match="ctx"):
        rnd.seed(1, ctx=3)


def test_seed_accepts_negative_and_huge_values_modulo_2_32():
    rnd.seed(-1)
    a = rnd.uniform(shape=(3,)).asnumpy()
    rnd.seed(2 ** 32 - 1)
    np.testing.assert_array_equal(rnd.uniform(shape=(3,)).asnumpy(), a)


def test_every_random_op_draws_from_the_seeded_generator():
    """Multinomial, shuffle, the _like and _sample_ forms all follow the seed."""
    def draws():
        x = nd.array([[0.2, 0.8], [0.5, 0.5]])
        return [rnd.multinomial(x, shape=3).asnumpy(), rnd.shuffle(nd.arange(8)).asnumpy(),
                rnd.normal_like(nd.zeros((3,))).asnumpy(),
                rnd.uniform(nd.zeros((2,)), nd.ones((2,)), shape=2).asnumpy()]
    rnd.seed(3)
    first = draws()
    rnd.seed(3)
    for a, b in zip(first, draws()):
        np.testing.assert_array_equal(a, b)


def test_mx_random_alias():
    import hybridgraph as mx
    mx.random.seed(5)
    a = mx.nd.random.uniform(shape=(2,)).asnumpy()
    mx.random.seed(5)
    np.testing.assert_array_equal(mx.random.uniform(shape=(2,)).asnumpy(), a)


# -- distributions ----------------------------------------------------------------------

@pytest.mark.parametrize("dist", sorted(MOMENTS))
def test_moments(dist):
    mean, var = MOMENTS[dist]
    x = DRAWS[dist](shape=(40000,)).asnumpy().astype(np.float64)
    se = np.sqrt(var / x.size)
    assert abs(x.mean() - mean) < 6 * se, (x.mean(), mean)
    assert abs(x.var() / var - 1) < 0.1, (x.var(), var)


def test_supports():
    u = rnd.uniform(-1, 3, shape=(1000,)).asnumpy()
    assert u.min() >= -1 and u.max() < 3
    r = rnd.randint(-5, 5, shape=(2000,)).asnumpy()
    assert r.min() == -5 and r.max() == 4
    for d in ("gamma", "exponential", "poisson", "negative_binomial", "generalized_negative_binomial"):
        assert DRAWS[d](shape=(500,)).asnumpy().min() >= 0
    for d in ("poisson", "negative_binomial", "generalized_negative_binomial"):
        x = DRAWS[d](shape=(100,)).asnumpy()
        np.testing.assert_array_equal(x, np.round(x))


def test_edge_parameters_match_mxnet():
    assert rnd.poisson(0.0, shape=(5,)).asnumpy().tolist() == [0.0] * 5
    assert rnd.negative_binomial(2, 1.0, shape=(5,)).asnumpy().tolist() == [0.0] * 5
    assert rnd.negative_binomial(0, 0.5, shape=(5,)).asnumpy().tolist() == [0.0] * 5
    x = rnd.generalized_negative_binomial(4.0, 0.0, shape=(20000,)).asnumpy()  # alpha = 0 is Poisson(mu)
    assert abs(x.var() / 4.0 - 1) < 0.1
    assert rnd.uniform(2, 2, shape=(3,)).asnumpy().tolist() == [2.0] * 3


# -- shapes, dtypes, contexts, out= --------------------------------------------------------

def test_default_shape_dtype_and_context():
    x = rnd.uniform()
    assert x.shape == (1,) and x.dtype == np.float32 and x.context == nd.cpu()
    assert rnd.normal(shape=3).shape == (3,)
    assert rnd.randint(0, 3, shape=(2, 2)).dtype == np.int32
    assert rnd.randint(0, 3, shape=(2,), dtype="int64").dtype == np.int64
    assert rnd.poisson(2, shape=(2,)).dtype == np.float32
    assert rnd.randn(2, 3).shape == (2, 3) and rnd.randn().shape == (1,)
    assert rnd.randn(4, loc=10.0, scale=0.01).asnumpy().min() > 9


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from(["float16", "float32", "float64"]),
       dist=st.sampled_from(sorted(set(DRAWS) - {"randint"})))
def test_shape_dtype_and_inferred_shape(shape, dtype, dist):
    x = DRAWS[dist](shape=shape, dtype=dtype)
    assert x.shape == shape and x.dtype == np.dtype(dtype)
    op = get_op(f"_random_{dist}")
    a = op.parse_attrs({"shape": shape, "dtype": dtype})
    assert op.infer_shape(a) == ([], [shape])
    assert op.infer_type(a) == ([], [np.dtype(dtype)])


def test_out_gives_shape_and_dtype():
    out = nd.zeros((2, 3), dtype="float64")
    res = rnd.normal(5.0, 0.1, out=out)
    assert res is out and out.dtype == np.float64 and abs(out.asnumpy().mean() - 5) < 0.5
    out16 = nd.zeros((4,), dtype="float16")
    rnd.uniform(out=out16)
    assert out16.asnumpy().max() < 1 and out16.asnumpy().max() > 0


def test_ctx_argument():
    assert rnd.uniform(shape=(2,), ctx=nd.cpu(0)).context == nd.cpu(0)
    with nd.cpu(0):
        assert rnd.normal(shape=(2,)).context == nd.cpu(0)


# -- NDArray parameters: the _sample_ operators ---------------------------------------------

def test_array_parameters_draw_per_entry():
    low, high = nd.array([0.0, 10.0, 20.0]), nd.array([1.0, 11.0, 21.0])
    x = rnd.uniform(low, high, shape=(2, 1000)).asnumpy()
    assert x.shape == (3, 2, 1000)
    for i in range(3):
        assert x[i].min() >= 10 * i and x[i].max() < 10 * i + 1
    assert rnd.normal(nd.zeros((2, 2)), nd.ones((2, 2))).shape == (2, 2)
    assert rnd.poisson(nd.array([1.0, 2.0]), shape=3, dtype="float64").dtype == np.float64
    assert rnd.exponential(nd.array([1.0]), shape=2).shape == (1, 2)
    means = rnd.gamma(nd.array([1.0, 5.0]), nd.array([2.0, 1.0]), shape=20000).asnumpy().mean(axis=1)
    np.testing.assert_allclose(means, [2.0, 5.0], rtol=0.05)
    means = rnd.negative_binomial(nd.array([3.0]), nd.array([0.4]), shape=20000).asnumpy().mean()
    assert abs(means - 4.5) < 0.2
    means = rnd.generalized_negative_binomial(nd.array([2.0]), nd.array([0.5]), shape=20000).asnumpy().mean()
    assert abs(means - 2.0) < 0.1


def test_array_parameter_errors():
    with pytest.raises(ValueError, match="same type"):
        rnd.uniform(nd.zeros((2,)), 1.0)
    with pytest.raises(ValueError, match="same type"):
        rnd.uniform(0.0, nd.ones((2,)))
    with pytest.raises(ValueError, match="NDArray or numbers"):
        rnd.uniform("a", "b")
    with pytest.raises(ShapeError, match="'high'"):
        rnd.uniform(nd.zeros((2,)), nd.ones((3,)))
    with pytest.raises(ValueError, match="scale parameter in gaussian has to be positive"):
        rnd.normal(nd.zeros((2,)), nd.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="randint"):
        rnd.randint(nd.zeros((1,)), 3)


def test_sample_op_inference():
    op = get_op("_sample_uniform")
    a = op.parse_attrs({"shape": (4,)})
    assert op.infer_shape(a, (2, 3), None) == ([(2, 3), (2, 3)], [(2, 3, 4)])
    f64 = np.dtype("float64")
    assert op.infer_type(a, f64, None) == ([f64, f64], [np.dtype("float32")])  # dtype None: float32, as MXNet


# -- parameter errors ---------------------------------------------------------------------

@pytest.mark.parametrize("call, match", [
    (lambda: rnd.normal(0, 0), "scale parameter in gaussian has to be positive"),
    (lambda: rnd.gamma(0, 1), "alpha parameter in gamma distribution has to be positive"),
    (lambda: rnd.gamma(1, -1), "beta parameter in gamma distribution has to be positive"),
    (lambda: nd._internal._random_exponential(lam=0, shape=(2,)), "lambda parameter in exponential"),
    (lambda: rnd.poisson(-1), "lambda parameter in poisson distribution has to be non-negative"),
    (lambda: rnd.negative_binomial(2, 1.5), r"p parameter .* \(0, 1\]"),
    (lambda: rnd.negative_binomial(-1, 0.5), "k parameter"),
    (lambda: rnd.generalized_negative_binomial(-1, 1), "mu parameter"),
    (lambda: rnd.generalized_negative_binomial(1, -1), "alpha parameter"),
    (lambda: rnd.uniform(2, 1), "low must be less or equal to high"),
    (lambda: rnd.randint(5, 5), "high must be greater than low"),
    (lambda: rnd.randint(0, 2 ** 40), "does not fit dtype int32"),
    (lambda: rnd.uniform(shape=(2,), dtype="int32"), "expected one of"),
    (lambda: rnd.randint(0, 3, dtype="float32"), "expected one of"),
])
def test_invalid_parameters(call, match):
    with pytest.raises(AttrError, match=match):
        call()


def test_missing_shape_is_a_clear_error():
    with pytest.raises(ShapeError, match="'shape' is required"):
        nd._internal._random_uniform()


# -- multinomial -----------------------------------------------------------------------------

def test_multinomial_shapes_and_dtypes():
    assert rnd.multinomial(nd.array([0.2, 0.8])).shape == (1,)
    assert rnd.multinomial(nd.array([0.2, 0.8]), shape=2).shape == (2,)
    assert rnd.multinomial(nd.array([[0.2, 0.8], [0.5, 0.5]])).shape == (2,)
    s, p = rnd.multinomial(nd.array([[0.2, 0.8], [0.5, 0.5]], dtype="float64"), shape=(3,), get_prob=True)
    assert s.shape == p.shape == (2, 3) and s.dtype == np.int32 and p.dtype == np.float64
    assert rnd.multinomial(nd.array([[0.2, 0.8]]), dtype="float32").dtype == np.float32
    op = get_op("_sample_multinomial")
    a = op.parse_attrs({"shape": (3,), "get_prob": True})
    assert op.infer_shape(a, (2, 4)) == ([(2, 4)], [(2, 3), (2, 3)])
    assert op.output_names(a) == ("output0", "output1")


def test_multinomial_frequencies_and_log_prob():
    probs = np.array([[0.1, 0.2, 0.7], [0.5, 0.0, 0.5]])
    s, lp = rnd.multinomial(nd.array(probs), shape=20000, get_prob=True)
    s, lp = s.asnumpy(), lp.asnumpy()
    for r in range(2):
        freq = np.bincount(s[r], minlength=3) / s.shape[1]
        np.testing.assert_allclose(freq, probs[r], atol=0.015)
        np.testing.assert_allclose(lp[r], np.log(probs[r][s[r]]).astype(np.float32), rtol=1e-6)
    assert (s[1] != 1).all()  # zero probability is never drawn


def test_multinomial_unnormalised_rows_never_index_past_the_end():
    s = rnd.multinomial(nd.array([[0.0, 0.1]]), shape=50).asnumpy()
    assert s.max() <= 1  # MXNet 1.9.1 returns 2 here (out of range); we clamp to the last class


def test_multinomial_log_prob_gradient():
    x = nd.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])
    x.attach_grad()
    with autograd.record():
        s, p = rnd.multinomial(x, shape=6, get_prob=True)
    p.backward(nd.ones_like(p) * 2)
    counts = np.stack([np.bincount(r, minlength=3) for r in s.asnumpy()])
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * counts / x.asnumpy(), rtol=1e-6)
    with autograd.record():
        s = rnd.multinomial(x, shape=6)
    s.backward()
    assert not x.grad.asnumpy().any()


def test_multinomial_rejects_negative_probabilities():
    with pytest.raises(ValueError, match="probabilities"):
        rnd.multinomial(nd.array([[-0.5, 1.5]]))


# -- shuffle, _like ------------------------------------------------------------------------

def test_shuffle_permutes_rows_only():
    x = nd.arange(12).reshape((6, 2)).astype("int32")
    y = rnd.shuffle(x).asnumpy()
    assert y.dtype == np.int32
    assert sorted(map(tuple, y.tolist())) == sorted(map(tuple, x.asnumpy().tolist()))
    assert (y[:, 1] - y[:, 0] == 1).all()
    assert x.asnumpy()[:, 0].tolist() == [0, 2, 4, 6, 8, 10]  # the input is untouched
    with pytest.raises(ShapeError, match="at least 1 dimension"):
        rnd.shuffle(nd.array(3.0))


def test_like_variants():
    x = nd.zeros((3, 2), dtype="float64")
    y = rnd.uniform_like(x, low=5, high=6)
    assert y.shape == (3, 2) and y.dtype == np.float64 and 5 <= y.asnumpy().min()
    assert rnd.normal_like(x, loc=1.0).shape == (3, 2)
    assert rnd.poisson_like(x, lam=2.0).dtype == np.float64
    with pytest.raises(DTypeError, match="floating point"):
        rnd.gamma_like(nd.zeros((2,), dtype="int32"))


# -- declarations ----------------------------------------------------------------------------

def test_declarations_and_aliases():
    random_ops = [n for n in all_ops() if n.startswith(("_random_", "_sample_")) or n == "_shuffle"]
    assert len(random_ops) >= 23
    for n in random_ops:
        assert get_op(n).is_random, n
    for alias, name in [("uniform", "_random_uniform"), ("random_uniform", "_random_uniform"),
                        ("normal", "_random_normal"), ("random_normal", "_random_normal"),
                        ("random_randint", "_random_randint"), ("sample_multinomial", "_sample_multinomial"),
                        ("shuffle", "_shuffle"), ("sample_normal", "_sample_normal"),
                        ("random_gamma", "_random_gamma"), ("random_poisson", "_random_poisson")]:
        assert get_op(alias).name == name
    a = get_op("_random_uniform").parse_attrs({})
    assert (a.low, a.high, a.shape, a.ctx, a.dtype) == (0.0, 1.0, None, None, None)
    assert get_op("_random_negative_binomial").parse_attrs({}).k == 1


def test_random_ops_have_zero_gradient():
    mu = nd.array([0.0, 1.0])
    mu.attach_grad()
    with autograd.record():
        y = nd._internal._sample_normal(mu, nd.ones((2,)), shape=(3,))
    y.backward()
    assert mu.grad.asnumpy().tolist() == [0.0, 0.0]


def test_rng_generator_is_per_device_and_reseeded():
    g1 = rng.generator(nd.cpu())
    assert rng.generator(np) is g1
    rnd.seed(1)
    assert rng.generator(nd.cpu()) is not g1
