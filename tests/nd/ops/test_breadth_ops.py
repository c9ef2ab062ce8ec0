"""cumsum, linalg_slogdet, multi_sum_sq, multi_lars, reset_arrays and the aggregated SGD operators
(multi_mp_*, preloaded_multi_*) against values recorded from real MXNet 1.9.1
(tests/data/gen_breadth_ops_ref.py)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import hybridgraph as mx

DATA = Path(__file__).parents[2] / "data"
sys.path.insert(0, str(DATA))
from breadth_ops_cases import SGD_CASES, inputs_for  # noqa: E402

REF = np.load(DATA / "breadth_ops_ref.npz")


def test_cumsum_matches_mxnet():
    x = mx.nd.array(REF["cumsum_x"])
    np.testing.assert_allclose(mx.nd.cumsum(x).asnumpy(), REF["cumsum_none"], rtol=1e-6)
    r = mx.nd.cumsum(x, axis=0, dtype="float64")
    assert r.dtype == np.float64
    np.testing.assert_allclose(r.asnumpy(), REF["cumsum_ax0_f64"], rtol=1e-6)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.cumsum(x, axis=1)
    y.backward(mx.nd.array(REF["cumsum_head"]))
    np.testing.assert_allclose(y.asnumpy(), REF["cumsum_ax1"], rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), REF["cumsum_ax1_grad"], rtol=1e-5, atol=1e-6)


def test_cumsum_json_is_mxnets():
    js = mx.sym.cumsum(mx.sym.var("a"), axis=1).tojson()
    assert '"op": "_np_cumsum"' in js and '"name": "cumsum' in js


def test_linalg_slogdet_matches_mxnet():
    A = mx.nd.array(REF["slogdet_A"])
    A.attach_grad()
    with mx.autograd.record():
        s, logabs = mx.nd.linalg.slogdet(A)
    mx.nd.autograd.backward([s, logabs], [mx.nd.array(REF["slogdet_hs"]), mx.nd.array(REF["slogdet_hl"])])
    np.testing.assert_array_equal(s.asnumpy(), REF["slogdet_sign"])
    np.testing.assert_allclose(logabs.asnumpy(), REF["slogdet_logabs"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(A.grad.asnumpy(), REF["slogdet_grad"], rtol=1e-4, atol=1e-5)
    one = mx.nd.linalg_slogdet(mx.nd.array(REF["slogdet_A"][0]))
    assert one[0].shape == (1,) and one[1].shape == (1,)      # MXNet's (1,) for one matrix
    np.testing.assert_allclose(one[1].asnumpy(), REF["slogdet_one_logabs"], rtol=1e-5)
    np.testing.assert_array_equal(one[0].asnumpy(), REF["slogdet_one_sign"])


def test_linalg_slogdet_symbol_and_singular():
    s = mx.sym.linalg.slogdet(mx.sym.var("a"))
    assert s.list_outputs() == ["slogdet0_output0", "slogdet0_output1"]
    assert '"op": "_linalg_slogdet"' in s.tojson()
    sign, logabs = mx.nd.linalg.slogdet(mx.nd.array([[1.0, 2.0], [2.0, 4.0]]))
    assert sign.asscalar() == 0 and logabs.asscalar() == -np.inf


@pytest.mark.parametrize("dtype,key", [("float32", "sumsq_f32"), ("float16", "sumsq_f16")])
def test_multi_sum_sq_matches_mxnet(dtype, key):
    arrays = [mx.nd.array(REF[f"sumsq_in{i}"], dtype=dtype) for i in range(3)]
    out = mx.nd.multi_sum_sq(*arrays, num_arrays=3)
    assert out.dtype == np.float32 and out.shape == (3,)
    np.testing.assert_allclose(out.asnumpy(), REF[key], rtol=1e-5)


def test_multi_lars_matches_mxnet():
    lrs, wsq, gsq, wds = (mx.nd.array(v) for v in REF["lars_in"])
    out = mx.nd.multi_lars(lrs, wsq, gsq, wds, eta=0.7, eps=1e-3, rescale_grad=0.5)
    np.testing.assert_allclose(out.asnumpy(), REF["lars_out"], rtol=1e-6)


def test_reset_arrays_zeroes_in_place():
    a, b = mx.nd.ones((2, 3)), mx.nd.full((4,), 7, dtype="int32")
    mx.nd.reset_arrays(a, b, num_arrays=2)
    assert not a.asnumpy().any() and not b.asnumpy().any()
    with pytest.raises(mx.MXNetError):
        mx.nd.reset_arrays(a, num_arrays=2)


@pytest.mark.parametrize("case", SGD_CASES, ids=[c["tag"] for c in SGD_CASES])
@pytest.mark.parametrize("use_out", [True, False])
def test_aggregated_sgd_matches_mxnet(case, use_out):
    name, kwargs, arrays = inputs_for(case)
    nds = [mx.nd.array(a, dtype=a.dtype) for a in arrays]
    n = kwargs["num_weights"]
    stride = (len(nds) - 2 * case["pre"]) // n
    weights = [nds[stride * i] for i in range(n)]
    outs = getattr(mx.nd, name)(*nds, out=weights if use_out else None, **kwargs)
    outs = outs if isinstance(outs, list | tuple) else [outs]
    tol = {"rtol": 1e-3, "atol": 1e-3} if case["mp"] else {"rtol": 1e-6, "atol": 1e-7}
    for i in range(n):
        np.testing.assert_allclose(outs[i].asnumpy(), REF[f"{case['tag']}_out{i}"], **tol)
    for j, a in enumerate(nds):
        if use_out or j % stride or j >= stride * n:          # the weights change only through out=
            np.testing.assert_allclose(a.asnumpy(), REF[f"{case['tag']}_in{j}_after"], **tol)


def test_aggregated_sgd_symbol_slots():
    s = mx.sym.preloaded_multi_mp_sgd_mom_update(*[mx.sym.var(f"v{i}") for i in range(6)], num_weights=1)
    assert s.list_arguments() == ["v0", "v1", "v2", "v3", "v4", "v5"]
    args, outs, _ = s.infer_type(v0="float16")
    assert [np.dtype(t).name for t in args] == ["float16", "float16", "float32", "float32", "float32", "float32"]
    assert np.dtype(outs[0]).name == "float16"


# dtypes real MXNet 1.9.1 gives (checked with it): float16/float32 inputs go to float32 when any input
# is float32, else to the first input's dtype; to float16 with cast_narrow; other dtypes pass through
@pytest.mark.parametrize("dtypes,narrow,want", [
    (("float16", "float32"), False, ("float32", "float32")),
    (("float16", "float32"), True, ("float16", "float16")),
    (("float16", "float64", "float32"), False, ("float32", "float64", "float32")),
    (("float16", "int32"), False, ("float16", "int32")),
    (("int32", "float16"), False, ("int32", "int32")),
])
def test_amp_multicast_dtypes_as_mxnet(dtypes, narrow, want):
    xs = [mx.nd.array([1.5, -2.0], dtype=d) for d in dtypes]
    outs = mx.nd.amp_multicast(*xs, num_outputs=len(xs), cast_narrow=narrow)
    assert [np.dtype(o.dtype).name for o in outs] == list(want)
    sym = mx.sym.amp_multicast(*[mx.sym.var(f"v{i}") for i in range(len(xs))], num_outputs=len(xs), cast_narrow=narrow)
    _, out_types, _ = sym.infer_type(**{f"v{i}": d for i, d in enumerate(dtypes)})
    assert [np.dtype(t).name for t in out_types] == list(want)


def test_amp_multicast_gradient_is_cast_back():
    x = mx.nd.array([[1, 2], [3, 4]], dtype="float16")
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.amp_multicast(x, mx.nd.ones((2, 2)), num_outputs=2)
    y[0].backward(mx.nd.full((2, 2), 3.0))
    assert y[0].dtype == np.float32 and x.grad.dtype == np.float16
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full((2, 2), 3.0))
    with pytest.raises(mx.MXNetError):
        mx.nd.amp_multicast(x, num_outputs=2)


def test_convolution_v1_matches_mxnet():
    xs = [mx.nd.array(REF[f"convv1_{k}"]) for k in "xwb"]
    for v in xs:
        v.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Convolution_v1(*xs, kernel=(3, 3), stride=(2, 1), pad=(1, 1), num_filter=6, num_group=2)
    y.backward(mx.nd.array(np.cos(np.arange(y.size, dtype=np.float32)).reshape(y.shape)))
    np.testing.assert_allclose(y.asnumpy(), REF["convv1_out"], rtol=1e-5, atol=1e-5)
    for k, v in zip("xwb", xs):
        np.testing.assert_allclose(v.grad.asnumpy(), REF[f"convv1_grad_{k}"], rtol=1e-4, atol=1e-4)


def test_convolution_v1_names_and_dims_as_mxnet():
    s = mx.sym.Convolution_v1(mx.sym.var("x"), kernel=(3, 3), num_filter=2, name="c")
    assert s.list_arguments() == ["x", "c_weight", "c_bias"]
    assert '"op": "Convolution_v1"' in s.tojson()
    with pytest.raises(mx.MXNetError, match="2-D and 3-D"):
        mx.nd.Convolution_v1(mx.nd.ones((1, 1, 5)), mx.nd.ones((1, 1, 3)), kernel=(3,), num_filter=1, no_bias=True)
    with pytest.raises(mx.MXNetError):
        mx.nd.Convolution_v1(mx.nd.ones((1, 1, 5, 5)), mx.nd.ones((1, 1, 3, 3)), kernel=(3, 3), num_filter=1,
                             no_bias=True, layout="NCW")
