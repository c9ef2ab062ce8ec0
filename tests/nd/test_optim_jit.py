"""The compiled momentum-SGD and Adam updates (nd/ops/optim_jit.py, the optional [jit] extra)
give numpy's bits (any NaN for a NaN), the reference: `sgd_mom_update`, `multi_sgd_mom_update` and `adam_update`,
with and without weight decay, in place or into another buffer, float32 and float64, through NaN, infinities
and signed zeros; numpy's path where it does not apply (clipping, strided or
Fortran-ordered arrays)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridgraph.nd.ops import optim_jit
from hybridgraph.nd.registry import get_op

pytest.importorskip("numba", reason="the optional [jit] extra (numba) is not installed")

SGD_MOM, MULTI, ADAM = get_op("sgd_mom_update"), get_op("multi_sgd_mom_update"), get_op("adam_update")
SPECIAL = [np.nan, 0.0, -0.0, np.inf, -np.inf, 1e-40, -1e-40, 3e38]


@pytest.fixture(autouse=True)
def _compiled_kernels_on(monkeypatch):
    """On even where the suite runs with HYBRIDGRAPH_JIT=0 (the comparisons switch per call)."""
    monkeypatch.setenv("HYBRIDGRAPH_JIT", "1")


def _arrays(rng, shape, dtype, special: bool) -> tuple:
    w, g, mom = (rng.standard_normal(shape).astype(dtype) for _ in range(3))
    if special:
        for a in (w, g, mom):
            flat = a.reshape(-1)
            idx = rng.integers(0, flat.size, max(1, flat.size // 8))
            flat[idx] = rng.choice(SPECIAL, idx.size)
    return w, g, mom


def _run(op, jit: bool, attrs: dict, arrays: list, into: str) -> list:
    """The op on copies of `arrays`: (new weights..., momenta...) as bytes."""
    arrays = [a.copy() for a in arrays]
    weights = arrays[0::3]
    out = tuple(weights) if into == "weight" else tuple(np.full_like(w, 7) for w in weights) if into == "buffer" \
        else None
    with pytest.MonkeyPatch.context() as mp, np.errstate(all="ignore"):
        mp.setenv("HYBRIDGRAPH_JIT", "1" if jit else "0")
        res = op.forward(np, op.parse_attrs(attrs), *arrays, out=out)
    if out is not None:
        assert all(r is o for r, o in zip(res, out))
    return [*res, *arrays[2::3]]


def _same_bits(got: list, want: list) -> bool:
    """Bitwise equal arrays, except that any NaN equals any NaN: the compiled loops may commute
    an addition (LLVM treats NaN payloads as unspecified), and x86 returns the first operand's
    NaN, so NaN + -NaN may come out with either sign."""
    for a, b in zip(got, want, strict=True):
        nan = np.isnan(a)
        if not np.array_equal(nan, np.isnan(b)) or a[~nan].tobytes() != b[~nan].tobytes():
            return False
    return True


@settings(deadline=None, max_examples=40)
@given(shape=st.sampled_from([(7,), (33, 5), (256, 3, 3), (1,)]), dtype=st.sampled_from([np.float32, np.float64]),
       wd=st.sampled_from([0.0, 1e-4, 0.3]), lr=st.floats(1e-4, 1.0), momentum=st.sampled_from([0.0, 0.9, 0.99]),
       rescale=st.sampled_from([1.0, 1 / 64, 3.0]), into=st.sampled_from(["weight", "buffer", "none"]),
       special=st.booleans(), seed=st.integers(0, 2**16))
def test_sgd_mom_update_gives_numpys_bits(shape, dtype, wd, lr, momentum, rescale, into, special, seed):  # noqa: PLR0913
    arrays = list(_arrays(np.random.default_rng(seed), shape, dtype, special))
    attrs = {"lr": lr, "wd": wd, "momentum": momentum, "rescale_grad": rescale}
    assert _same_bits(_run(SGD_MOM, True, attrs, arrays, into), _run(SGD_MOM, False, attrs, arrays, into))


@settings(deadline=None, max_examples=30)
@given(n=st.integers(1, 4), dtype=st.sampled_from([np.float32, np.float64]), into=st.sampled_from(["weight", "buffer",
       "none"]), special=st.booleans(), seed=st.integers(0, 2**16))
def test_multi_sgd_mom_update_gives_numpys_bits(n, dtype, into, special, seed):
    rng = np.random.default_rng(seed)
    arrays = [a for i in range(n) for a in _arrays(rng, (3 + 5 * i, 4), dtype, special)]
    attrs = {"lrs": tuple(rng.uniform(1e-3, 0.5, n)), "wds": tuple(rng.choice([0.0, 1e-4, 0.1], n)),
             "momentum": 0.9, "rescale_grad": 1 / 32, "num_weights": n}
    assert _same_bits(_run(MULTI, True, attrs, arrays, into), _run(MULTI, False, attrs, arrays, into))


def _adam(jit: bool, attrs: dict, arrays: list, into: str) -> list:
    w, g, mean, var = (a.copy() for a in arrays)
    out = (w,) if into == "weight" else (np.full_like(w, 7),) if into == "buffer" else None
    with pytest.MonkeyPatch.context() as mp, np.errstate(all="ignore"):
        mp.setenv("HYBRIDGRAPH_JIT", "1" if jit else "0")
        res = ADAM.forward(np, ADAM.parse_attrs(attrs), w, g, mean, var, out=out)[0]
    return [res, mean, var]


@settings(deadline=None, max_examples=40)
@given(shape=st.sampled_from([(7,), (33, 5), (64, 3, 3)]), dtype=st.sampled_from([np.float32, np.float64]),
       wd=st.sampled_from([0.0, 1e-4, 0.3]), lr=st.floats(1e-5, 0.1), beta1=st.sampled_from([0.9, 0.5]),
       beta2=st.sampled_from([0.999, 0.9]), eps=st.sampled_from([1e-8, 1e-3]), rescale=st.sampled_from([1.0, 1 / 64]),
       into=st.sampled_from(["weight", "buffer", "none"]), special=st.booleans(), seed=st.integers(0, 2**16))
def test_adam_update_gives_numpys_bits(shape, dtype, wd, lr, beta1, beta2, eps, rescale, into, special, seed):  # noqa: PLR0913
    rng = np.random.default_rng(seed)
    w, g, mean = _arrays(rng, shape, dtype, special)
    var = np.abs(rng.standard_normal(shape)).astype(dtype)
    attrs = {"lr": lr, "wd": wd, "beta1": beta1, "beta2": beta2, "epsilon": eps, "rescale_grad": rescale}
    arrays = [w, g, mean, var]
    assert _same_bits(_adam(True, attrs, arrays, into), _adam(False, attrs, arrays, into))


def test_the_compiled_adam_runs_in_place_only(monkeypatch):
    calls = []
    real = optim_jit.adam
    monkeypatch.setattr(optim_jit, "adam", lambda *a: (calls.append(True), real(*a))[1])
    w, g, mean = _arrays(np.random.default_rng(2), (16, 8), np.float32, False)
    var = np.ones_like(w)
    a = ADAM.parse_attrs({"lr": 0.01})
    ADAM.forward(np, a, w, g, mean, var, out=(w,))
    ADAM.forward(np, a, w, g, mean, var)                          # a new array: numpy's path
    ADAM.forward(np, ADAM.parse_attrs({"lr": 0.01, "clip_gradient": 1.0}), w, g, mean, var, out=(w,))
    assert calls == [True]


def test_the_compiled_pass_runs_and_writes_in_place(monkeypatch):
    calls = []
    real = optim_jit.sgd_mom
    monkeypatch.setattr(optim_jit, "sgd_mom", lambda *a: (calls.append(a[4] is a[1]), real(*a))[1])
    w, g, mom = _arrays(np.random.default_rng(0), (64, 9), np.float32, False)
    want_mom = mom * np.float32(0.9) - g * (np.float32(0.1) * np.float32(0.5))
    SGD_MOM.forward(np, SGD_MOM.parse_attrs({"lr": 0.1, "momentum": 0.9, "rescale_grad": 0.5}), w, g, mom, out=(w,))
    assert calls == [True]
    np.testing.assert_array_equal(mom, want_mom)


@pytest.mark.parametrize("case", ["clip", "strided", "one strided", "fortran"])
def test_numpys_path_where_it_does_not_apply(case, monkeypatch):
    monkeypatch.setattr(optim_jit, "sgd_mom", lambda *a: pytest.fail("the compiled pass ran"))
    rng = np.random.default_rng(1)
    w, g, mom = _arrays(rng, (16, 8), np.float32, False)
    attrs = {"lr": 0.1, "momentum": 0.9}
    if case == "clip":
        attrs["clip_gradient"] = 0.5
    elif case == "strided":
        w, g, mom = (np.repeat(a, 2, axis=1)[:, ::2] for a in (w, g, mom))
    elif case == "one strided":
        mom = np.repeat(mom, 2, axis=1)[:, ::2]
    else:
        w, g, mom = (np.asfortranarray(a) for a in (w, g, mom))
    assert not optim_jit.applies(w, g, mom, w) or case == "clip"
    w0, mom0 = w.copy(), mom.copy()
    new = SGD_MOM.forward(np, SGD_MOM.parse_attrs(attrs), w, g, mom)[0]
    assert not np.array_equal(new, w0) and not np.array_equal(mom, mom0)
