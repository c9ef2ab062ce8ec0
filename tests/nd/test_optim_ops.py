"""Optimizer update operators against MXNet 1.9.1's results (tests/data/optim_ref.*,
recorded by tests/data/gen_optim_ref.py), plus in-place semantics and errors."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hybridgraph import nd
from hybridgraph.nd import autograd
from hybridgraph.nd.errors import AttrError, AutogradError, DTypeError, ShapeError
from hybridgraph.nd.registry import get_op

DATA = Path(__file__).resolve().parent.parent / "data"
REF = json.loads((DATA / "optim_ref.json").read_text())
with np.load(DATA / "optim_ref.npz") as _z:
    FLAT = {k: _z[k] for k in _z.files}
CASES = REF["cases"]
OPS = sorted({c["op"] for c in CASES})

# MXNet 1.9.1 defects we do not reproduce (see nd/ops/optim.py): (op, mutated input)
DEFECTS = {("mp_nag_mom_update", "mom"), ("mp_lamb_update_phase2", "weight32")}


def _parts(case):
    flat, out, off = FLAT[case["id"]], [], 0
    for shape, dtype in zip(case["shapes"], case["dtypes"]):
        n = int(np.prod(shape))
        out.append(flat[off:off + n].reshape(shape).astype(dtype))
        off += n
    return out


def _tol(dtype):
    return {"float16": 2e-3, "float32": 2e-6, "float64": 1e-12}[np.dtype(dtype).name]


def _run(case, arrays):
    fn = getattr(nd._internal, case["op"])
    inputs = [nd.NDArray(a.copy()) for a in arrays]
    if case["op"] == "_sparse_adagrad_update":  # MXNet only runs it in place
        return fn(*inputs, out=inputs[0], **case["attrs"]), inputs
    return fn(*inputs, **case["attrs"]), inputs


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_matches_mxnet(case):
    parts = _parts(case)
    k = len(case["inputs"])
    ins, want_out, want_after = parts[:k], parts[k], parts[k + 1:]
    out, inputs = _run(case, ins)
    got = out.asnumpy()
    assert got.dtype == want_out.dtype and got.shape == want_out.shape
    np.testing.assert_allclose(got, want_out, rtol=_tol(got.dtype), atol=_tol(got.dtype))
    for i, want in zip(case["mutated"], want_after):
        name = case["inputs"][i]
        if (case["op"], name) in DEFECTS:
            continue  # checked against the corrected formula below
        np.testing.assert_allclose(inputs[i].asnumpy(), want, rtol=_tol(want.dtype), atol=_tol(want.dtype),
                                   err_msg=f"state {name!r} after the update")
    if not case["mutated"] or case["op"] == "_sparse_adagrad_update":
        return
    # inputs that are not states are left alone (the weight is written only via out=)
    for i, a in enumerate(ins):
        if i not in case["mutated"]:
            np.testing.assert_array_equal(inputs[i].asnumpy(), a)


def test_every_reference_op_is_registered_and_covered():
    assert set(OPS) <= {n for n in dir(nd._internal)}
    assert len(OPS) == 18


# -- the defects we fix ------------------------------------------------------------------

def test_mp_nag_momentum_equals_nag_on_the_master_weight():
    rng = np.random.default_rng(0)
    w32 = rng.standard_normal((3, 4)).astype("float32")
    g16 = rng.standard_normal((3, 4)).astype("float16")
    mom = rng.standard_normal((3, 4)).astype("float32")
    attrs = dict(lr=0.1, momentum=0.9, wd=0.1, rescale_grad=0.5, clip_gradient=0.3)
    m1, m2 = nd.NDArray(mom.copy()), nd.NDArray(mom.copy())
    w32_nd = nd.NDArray(w32.copy())
    out = nd.mp_nag_mom_update(nd.NDArray(w32.astype("float16")), nd.NDArray(g16), m1, w32_nd, **attrs)
    ref = nd.nag_mom_update(nd.NDArray(w32.copy()), nd.NDArray(g16.astype("float32")), m2, **attrs)
    np.testing.assert_allclose(m1.asnumpy(), m2.asnumpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(w32_nd.asnumpy(), ref.asnumpy(), rtol=1e-6, atol=1e-7)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out.asnumpy(), ref.asnumpy().astype("float16"))


def test_nag_in_place_equals_out_of_place():
    """MXNet's NAGMomKernel writes the weight before computing the momentum's wd term,
    so with out=weight (how its optimizer calls it) that term uses the new weight.
    Here out=weight changes nothing: both follow the documented rule."""
    rng = np.random.default_rng(1)
    w, g = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    attrs = dict(lr=0.1, momentum=0.9, wd=0.01)
    w1, m1 = nd.array(w, dtype="float64"), nd.zeros((2, 3), dtype="float64")
    w2, m2 = nd.array(w, dtype="float64"), nd.zeros((2, 3), dtype="float64")
    for _ in range(2):
        nd.nag_mom_update(w1, nd.array(g, dtype="float64"), m1, out=w1, **attrs)
        w2 = nd.nag_mom_update(w2, nd.array(g, dtype="float64"), m2, **attrs)
    np.testing.assert_array_equal(w1.asnumpy(), w2.asnumpy())
    np.testing.assert_array_equal(m1.asnumpy(), m2.asnumpy())


def test_mp_lamb_phase2_advances_the_master_weight():
    w32 = np.array([[1.0, 2.0, -3.0]], "float32")
    g = np.array([[0.5, -1.0, 0.25]], "float32")
    w32_nd = nd.NDArray(w32.copy())
    out = nd.mp_lamb_update_phase2(nd.NDArray(w32.astype("float16")), nd.NDArray(g), nd.array([2.0]),
                                   nd.array([4.0]), w32_nd, lr=0.1)
    want = w32 - np.float32(0.1) * np.float32(0.5) * g
    np.testing.assert_allclose(w32_nd.asnumpy(), want, rtol=1e-6)
    np.testing.assert_array_equal(out.asnumpy(), want.astype("float16"))


# -- in-place semantics -------------------------------------------------------------------

def test_out_equal_weight_updates_the_weight_in_place():
    w = nd.array([1.0, 2.0, 3.0])
    g = nd.array([1.0, -1.0, 0.5])
    mom = nd.zeros((3,))
    res = nd.sgd_mom_update(w, g, mom, out=w, lr=0.5, momentum=0.9)
    assert res is w
    np.testing.assert_allclose(w.asnumpy(), [0.5, 2.5, 2.75])
    np.testing.assert_allclose(mom.asnumpy(), [-0.5, 0.5, -0.25])
    nd.sgd_update(w, g, out=w, lr=1.0)
    np.testing.assert_allclose(w.asnumpy(), [-0.5, 3.5, 2.25])


def test_without_out_the_weight_is_unchanged():
    w = nd.array([1.0, 2.0])
    mean, var = nd.zeros((2,)), nd.zeros((2,))
    new = nd.adam_update(w, nd.array([1.0, 1.0]), mean, var, lr=0.1)
    assert w.asnumpy().tolist() == [1.0, 2.0]
    assert new.asnumpy()[0] < 1.0
    assert mean.asnumpy().tolist() == pytest.approx([0.1, 0.1])


def test_repeated_adam_steps_match_numpy():
    """Several steps chain through the mutated states."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal(5)
    m, v = np.zeros(5), np.zeros(5)
    W, M, V = nd.array(w, dtype="float64"), nd.zeros((5,), dtype="float64"), nd.zeros((5,), dtype="float64")
    lr, b1, b2, eps, wd = (float(np.float32(x)) for x in (0.01, 0.9, 0.999, 1e-8, 0.01))
    for _ in range(4):
        g = rng.standard_normal(5)
        r = g + wd * w
        m = b1 * m + (1 - b1) * r
        v = b2 * v + (1 - b2) * r * r
        w = w - lr * m / (np.sqrt(v) + eps)
        nd.adam_update(W, nd.array(g, dtype="float64"), M, V, out=W, lr=0.01, wd=0.01)
    np.testing.assert_allclose(W.asnumpy(), w, rtol=1e-12)
    np.testing.assert_allclose(V.asnumpy(), v, rtol=1e-12)


@given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple),
       lr=st.floats(0.01, 1.0), momentum=st.floats(0.0, 0.99), wd=st.floats(0.0, 0.1),
       clip=st.sampled_from([-1.0, 0.0, 0.5]), rescale=st.floats(0.1, 2.0))
def test_sgd_mom_matches_formula(shape, lr, momentum, wd, clip, rescale):
    rng = np.random.default_rng(len(shape))
    w, g, mom = (rng.standard_normal(shape) for _ in range(3))
    f32 = [float(np.float32(x)) for x in (lr, momentum, wd, clip, rescale)]
    lr_, mo_, wd_, clip_, rs_ = f32
    r = g * rs_
    if clip_ >= 0:
        r = np.clip(r, -clip_, clip_)
    want_mom = mo_ * mom - lr_ * wd_ * w - lr_ * r
    MOM = nd.array(mom, dtype="float64")
    out = nd.sgd_mom_update(nd.array(w, dtype="float64"), nd.array(g, dtype="float64"), MOM, lr=lr,
                            momentum=momentum, wd=wd, clip_gradient=clip, rescale_grad=rescale)
    assert out.shape == shape
    np.testing.assert_allclose(MOM.asnumpy(), want_mom, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out.asnumpy(), w + want_mom, rtol=1e-12, atol=1e-15)


# -- declarations, inference and errors ---------------------------------------------------

@pytest.mark.parametrize("op, mutated", [
    ("sgd_update", ()), ("sgd_mom_update", (2,)), ("mp_sgd_update", (2,)), ("mp_sgd_mom_update", (2, 3)),
    ("nag_mom_update", (2,)), ("mp_nag_mom_update", (2, 3)), ("adam_update", (2, 3)),
    ("rmsprop_update", (2,)), ("rmspropalex_update", (2, 3, 4)), ("_sparse_adagrad_update", (2,)),
    ("ftrl_update", (2, 3)), ("signsgd_update", ()), ("signum_update", (2,)), ("ftml_update", (2, 3, 4)),
    ("lamb_update_phase1", (2, 3)), ("lamb_update_phase2", ()), ("mp_lamb_update_phase1", (2, 3)),
    ("mp_lamb_update_phase2", (4,))])
def test_declaration(op, mutated):
    d = get_op(op)
    assert d.mutate_inputs == mutated
    assert d.gradient is None and not d.differentiable
    assert not d.fluent and not hasattr(nd.NDArray, op)


def test_attribute_defaults_and_required():
    a = get_op("adam_update").parse_attrs({"lr": "0.1"})
    assert (a.beta1, a.beta2, a.epsilon, a.wd, a.rescale_grad, a.clip_gradient, a.lazy_update) == \
        (0.9, 0.999, 1e-8, 0.0, 1.0, -1.0, True)
    with pytest.raises(AttrError, match="lr"):
        get_op("sgd_update").parse_attrs({})
    with pytest.raises(AttrError, match="wd"):
        get_op("lamb_update_phase1").parse_attrs({"t": "1"})
    assert get_op("ftml_update").parse_attrs({"lr": "1", "t": "2"}).clip_grad == -1.0


def test_infer_shape_and_type():
    op = get_op("adam_update")
    a = op.parse_attrs({"lr": "0.1"})
    ins, outs = op.infer_shape(a, None, (2, 3), None, None)
    assert ins == [(2, 3)] * 4 and outs == [(2, 3)]
    with pytest.raises(ShapeError, match="'var'"):
        op.infer_shape(a, (2, 3), (2, 3), (2, 3), (3, 2))
    op2 = get_op("lamb_update_phase2")
    a2 = op2.parse_attrs({"lr": "0.1"})
    assert op2.infer_shape(a2, (2, 3), None, None, None) == ([(2, 3), (2, 3), (1,), (1,)], [(2, 3)])
    with pytest.raises(ShapeError, match="'r1'"):
        op2.infer_shape(a2, (2, 3), None, (2,), None)
    f16, f32 = np.dtype("float16"), np.dtype("float32")
    mp = get_op("mp_sgd_mom_update")
    assert mp.infer_type(a, f16, None, None, None) == ([f16, f16, f32, f32], [f16])
    assert get_op("mp_lamb_update_phase1").infer_type(a, f16, None, None, None, None)[1] == [f32]
    with pytest.raises(DTypeError, match="float32"):
        mp.infer_type(a, f16, f16, f16, f32)
    with pytest.raises(DTypeError, match="floating point"):
        get_op("sgd_update").infer_type(a, np.dtype("int32"), None)


def test_eager_errors():
    w = nd.array([1.0, 2.0])
    with pytest.raises(DTypeError, match="floating point"):
        nd.sgd_update(w.astype("int32"), w.astype("int32"), lr=0.1)
    with pytest.raises(ShapeError, match="'grad'"):
        nd.sgd_update(w, nd.array([1.0, 2.0, 3.0]), lr=0.1)
    with pytest.raises(DTypeError, match="'mom' must be float32"):
        nd.mp_sgd_mom_update(w.astype("float16"), w.astype("float16"), w.astype("float16"), w, lr=0.1)
    with pytest.raises(ShapeError, match="'r2' must have shape"):
        nd.lamb_update_phase2(w, w, nd.array([1.0]), nd.array([1.0, 2.0]), lr=0.1)
    with pytest.raises(AttrError, match="'wd' must be 0"):
        nd._internal._sparse_adagrad_update(w, w, nd.zeros((2,)), lr=0.1, wd=0.1)


def test_not_differentiable():
    w = nd.array([1.0, 2.0])
    w.attach_grad()
    with autograd.record():
        y = nd.sgd_update(w, nd.array([1.0, 1.0]), lr=0.1)
    with pytest.raises(AutogradError, match="sgd_update"):
        y.backward()
