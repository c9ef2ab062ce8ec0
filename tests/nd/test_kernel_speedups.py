"""Kernels the compiled plans call with `out=` buffers: FullyConnected, Activation, the split
FullyConnected backward, the optimizer updates (in place on the weight) and the generated
code of fused elementwise programs. Each fast path is checked against the plain one, and
the allocations the fast paths promise to avoid are measured with tracemalloc."""
from __future__ import annotations

import json
import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from hybridgraph import nd
from hybridgraph import symbol as S  # noqa: N812
from hybridgraph.nd.dispatch import invoke, parse_cached, run_eager
from hybridgraph.nd.errors import ShapeError
from hybridgraph.nd.ops import fused, optim
from hybridgraph.nd.registry import get_op
from hybridgraph.symbol.plan import compile_graph
from tests.nd.specs.nn import _fc_case, fc_data_grad_ref, fc_ref, fc_weight_grad_ref
from tests.op_specs import arr

R = np.random.default_rng(11)


def _attrs(name: str, **given):
    return parse_cached(get_op(name), given)


# -- FullyConnected ----------------------------------------------------------------------------

@pytest.mark.parametrize("flatten", [True, False])
@pytest.mark.parametrize("dshape", [(4, 6), (2, 3, 6), (5,)])
@pytest.mark.parametrize("bias_shape", [None, (3,), (3, 1)])
def test_fc_out_buffer_matches_allocating_kernel(flatten, dshape, bias_shape):
    op = get_op("FullyConnected")
    a = _attrs("FullyConnected", num_hidden=3, flatten=flatten, no_bias=bias_shape is None)
    data = R.standard_normal(dshape).astype(np.float32)
    k = int(np.prod(dshape[1:])) if flatten else dshape[-1]
    ins = [data, R.standard_normal((3, k)).astype(np.float32)]
    if bias_shape:
        ins.append(R.standard_normal(bias_shape).astype(np.float32))
    want = fc_ref(*ins, num_hidden=3, flatten=flatten)
    (plain,) = op.forward(np, a, *ins)
    np.testing.assert_allclose(plain, want, rtol=1e-5, atol=1e-6)
    # a finite sentinel: BLAS may compute 0 * C on the buffer it overwrites (beta = 0), which
    # some OpenBLAS kernels flag as invalid for NaN (seen once in a full run), though unread
    buf = np.full(want.shape, 12345.0, np.float32)
    (got,) = op.forward(np, a, *ins, out=(buf,))
    assert got is buf
    np.testing.assert_allclose(buf, want, rtol=1e-5, atol=1e-6)
    wide = np.full(want.shape[:-1] + (2 * want.shape[-1],), 12345.0, np.float32)
    strided = wide[..., ::2]                       # not contiguous: written through a copy
    op.forward(np, a, *ins, out=(strided,))
    np.testing.assert_allclose(strided, want, rtol=1e-5, atol=1e-6)


def test_fc_out_of_another_dtype_falls_back_to_matmul():
    op = get_op("FullyConnected")
    a = _attrs("FullyConnected", num_hidden=2, no_bias=True)
    x, w = R.standard_normal((3, 4)).astype(np.float32), R.standard_normal((2, 4)).astype(np.float32)
    buf = np.empty((3, 2), np.float64)
    op.forward(np, a, x, w, out=(buf,))
    np.testing.assert_allclose(buf, x @ w.T, rtol=1e-5)


def test_fc_eager_errors_still_name_the_input():
    x = nd.array(R.standard_normal((2, 3)))
    with pytest.raises(ShapeError, match="weight"):
        nd.FullyConnected(x, nd.array(R.standard_normal((4, 2))), nd.array(np.zeros(4)), num_hidden=4)
    with pytest.raises(ShapeError, match="bias"):
        nd.FullyConnected(x, nd.array(R.standard_normal((4, 3))), nd.array(np.zeros(5)), num_hidden=4)


def test_fc_with_out_allocates_nothing_of_the_output_size():
    op = get_op("FullyConnected")
    a = _attrs("FullyConnected", num_hidden=512)
    x, w = np.ones((256, 64), np.float32), np.ones((512, 64), np.float32)
    b, buf = np.ones(512, np.float32), np.empty((256, 512), np.float32)
    op.forward(np, a, x, w, b, out=(buf,))
    assert _peak_bytes(lambda: op.forward(np, a, x, w, b, out=(buf,))) < buf.nbytes // 4


# -- the split FullyConnected backward -----------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(st.data())
def test_split_backward_out_buffers_match(data):
    inputs, attrs = _fc_case(data.draw)
    g = data.draw(arr(fc_ref(*inputs[:2], num_hidden=attrs["num_hidden"], flatten=attrs["flatten"]).shape))
    full = get_op("_backward_FullyConnected")
    a = _attrs("_backward_FullyConnected", **attrs)
    want = full.forward(np, a, g, *inputs)
    bufs = tuple(np.full(w.shape, np.nan) for w in want)
    got = full.forward(np, a, g, *inputs, out=bufs)
    assert all(x is y for x, y in zip(got, bufs))
    for x, w in zip(bufs, want):
        np.testing.assert_allclose(x, w, rtol=1e-12, atol=1e-12)
    ref = (fc_data_grad_ref(g, inputs[0], inputs[1], attrs["num_hidden"], attrs["flatten"]),)
    ref += fc_weight_grad_ref(g, inputs[0], *inputs[2:], **attrs) if not attrs["no_bias"] else \
        (fc_weight_grad_ref(g, inputs[0], **attrs),)
    for x, w in zip(want, ref):
        np.testing.assert_allclose(x, w, rtol=1e-10, atol=1e-12)


def _mlp(train: bool):
    x = S.var("data")
    h = S.Activation(S.FullyConnected(x, num_hidden=8, name="fc1"), act_type="relu", name="a1")
    out = S.FullyConnected(h, num_hidden=3, name="fc2")
    return S.SoftmaxOutput(out, S.var("label"), name="sm") if train else out


def _step_ops(plan) -> list[str]:
    return [st.op.name for st in plan.sched.steps]


def test_unwanted_data_gradient_is_not_computed():
    """The first layer's data gradient is its own node, dropped when only parameters are wanted;
    a hidden layer keeps MXNet's single backward node (its output gradient dies there)."""
    sym = _mlp(train=True)
    names = sym.list_arguments()
    shapes = {"data": (4, 5), "label": (4,)}
    params = [n for n in names if n not in shapes]
    cg = compile_graph(sym._outputs, names, for_training=True, wrt=params)
    vals = [R.standard_normal(shapes.get(n) or _param_shape(sym, n, shapes)).astype(np.float32)
            if n != "label" else np.arange(4, dtype=np.float32) % 3 for n in names]
    _, saved = cg.forward(vals, is_train=True)
    grads = cg.backward(saved, [None])
    ops = _step_ops(cg.last_plan)
    assert "_backward_FullyConnected_data" not in ops
    assert ops.count("_backward_FullyConnected") == 1 and ops.count("_backward_FullyConnected_weight") == 1
    # the same gradients as eager autograd
    xs = {n: nd.array(v) for n, v in zip(names, vals)}
    for n in params:
        xs[n].attach_grad()
    with nd.autograd.record():
        h = nd.Activation(nd.FullyConnected(xs["data"], xs["fc1_weight"], xs["fc1_bias"], num_hidden=8),
                          act_type="relu")
        out = nd.SoftmaxOutput(nd.FullyConnected(h, xs["fc2_weight"], xs["fc2_bias"], num_hidden=3), xs["label"])
    out.backward()
    for n, g in zip(names, grads):
        if n in params:
            np.testing.assert_allclose(g, xs[n].grad.asnumpy(), rtol=1e-5, atol=1e-6)
        else:
            assert g is None
    cg_all = compile_graph(sym._outputs, names, for_training=True, wrt=["data"] + params)
    _, saved = cg_all.forward(vals, is_train=True)
    assert cg_all.backward(saved, [None])[names.index("data")].shape == (4, 5)
    assert "_backward_FullyConnected_data" in _step_ops(cg_all.last_plan)


def _param_shape(sym, name, shapes):
    arg_shapes, _, _ = sym.infer_shape(**shapes)
    return dict(zip(sym.list_arguments(), arg_shapes))[name]


# -- Activation ------------------------------------------------------------------------------------

ACTS = ["relu", "sigmoid", "tanh", "softrelu", "softsign"]


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_out_and_in_place_match(act, dtype):
    op = get_op("Activation")
    a = _attrs("Activation", act_type=act)
    x = (R.standard_normal((7, 9)) * 30).astype(dtype)     # large |x|: no overflow warnings either
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (want,) = op.forward(np, a, x)
        buf = np.empty_like(x)
        (got,) = op.forward(np, a, x, out=(buf,))
        assert got is buf
        np.testing.assert_array_equal(buf, want)
        y = x.copy()
        op.forward(np, a, y, out=(y,))
    np.testing.assert_array_equal(y, want)
    assert want.dtype == x.dtype
    assert op.inplace == ((0, 0),) and op.writes_out


def test_activation_runs_in_place_in_compiled_plans():
    sym = _mlp(train=False)
    cg = compile_graph(sym._outputs, sym.list_arguments(), for_training=False)
    vals = [R.standard_normal(s).astype(np.float32)
            for s in sym.infer_shape(data=(4, 5))[0]]
    for _ in range(2):
        out = cg.forward(vals)[0][0]
    plan = cg.last_plan
    act = next(o for st in plan.sched.steps if st.op.name == "Activation" for o in st.outputs)
    assert act in plan.memory.inplace
    h = np.maximum(vals[0] @ vals[1].T + vals[2], 0)
    np.testing.assert_allclose(out, h @ vals[3].T + vals[4], rtol=1e-5, atol=1e-6)


# -- optimizer updates ---------------------------------------------------------------------------------

UPDATES = {
    "sgd_update": (2, {"lr": 0.1}),
    "sgd_mom_update": (3, {"lr": 0.1, "momentum": 0.9}),
    "nag_mom_update": (3, {"lr": 0.1, "momentum": 0.9}),
    "adam_update": (4, {"lr": 0.01}),
    "rmsprop_update": (3, {"lr": 0.01}),
    "signum_update": (3, {"lr": 0.01, "momentum": 0.9}),
}
VARIANTS = [{}, {"wd": 0.01}, {"rescale_grad": 0.5}, {"clip_gradient": 0.3}, {"wd": 0.02, "rescale_grad": 2.0,
                                                                              "clip_gradient": 0.5}]


def _update_inputs(name: str, n: int, dtype) -> list:
    ins = [R.standard_normal((4, 5)).astype(dtype) for _ in range(n)]
    if name in ("adam_update", "rmsprop_update"):
        ins[-1] = np.abs(ins[-1])       # a running mean of squares
    return ins


@pytest.mark.parametrize("name", sorted(UPDATES))
@pytest.mark.parametrize("variant", range(len(VARIANTS)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_update_into_the_weight_matches_a_new_weight(name, variant, dtype):
    """out=weight (the fast path: run_eager hands the weight to the kernel) gives bit for bit
    what the allocating call gives, and updates the states identically."""
    n, attrs = UPDATES[name]
    attrs = {**attrs, **VARIANTS[variant]}
    ins = _update_inputs(name, n, dtype)
    fn = getattr(nd, name)
    a = [nd.array(x, dtype=dtype) for x in ins]
    b = [nd.array(x, dtype=dtype) for x in ins]
    new = fn(*a, **attrs)
    held = b[0]._data
    res = fn(*b, out=b[0], **attrs)
    assert res is b[0] and b[0]._data is held
    np.testing.assert_array_equal(b[0].asnumpy(), new.asnumpy())
    for x, y in zip(a[1:], b[1:]):
        np.testing.assert_array_equal(x.asnumpy(), y.asnumpy())
    np.testing.assert_array_equal(a[0].asnumpy(), ins[0])     # without out the weight is untouched


def test_sgd_mom_update_in_place_allocates_at_most_one_scratch_buffer():
    w, g, m = (np.ones((512, 512), np.float32) for _ in range(3))
    W, G, M = nd.array(w), nd.array(g), nd.array(m)
    nd.sgd_mom_update(W, G, M, out=W, lr=0.1, momentum=0.9, wd=0.01)
    peak = _peak_bytes(lambda: nd.sgd_mom_update(W, G, M, out=W, lr=0.1, momentum=0.9, wd=0.01))
    assert peak <= w.nbytes * 1.1


def test_update_out_of_another_array_is_copied_into():
    w, g, m = (R.standard_normal((3, 4)).astype(np.float32) for _ in range(3))
    want = nd.sgd_mom_update(nd.array(w), nd.array(g), nd.array(m), lr=0.1, momentum=0.9).asnumpy()
    dst = nd.zeros((3, 4))
    nd.sgd_mom_update(nd.array(w), nd.array(g), nd.array(m), out=dst, lr=0.1, momentum=0.9)
    np.testing.assert_array_equal(dst.asnumpy(), want)
    op = get_op("rmsprop_update")                    # an allocating kernel given out=
    buf = np.empty_like(w)
    ins = [w, g, np.abs(m)]
    (got,) = op.forward(np, _attrs("rmsprop_update", lr=0.1), *[x.copy() for x in ins], out=(buf,))
    assert got is buf
    np.testing.assert_array_equal(buf, op.forward(np, _attrs("rmsprop_update", lr=0.1), *ins)[0])


def test_converted_attributes_are_cached_per_attrs_object():
    a = _attrs("sgd_update", lr=0.1, wd=0.5)
    p = optim._params(a, ())
    assert optim._params(a, ()) is p
    assert p.lr == float(np.float32(0.1)) and p.get("wd") == float(np.float32(0.5))
    assert p.get("missing", 3) == 3


def test_update_in_place_is_not_used_while_recording():
    w = nd.array(R.standard_normal((2, 3)))
    g = nd.array(R.standard_normal((2, 3)))
    before = w.asnumpy()
    with nd.autograd.record():
        nd.sgd_update(w, g, out=w, lr=0.5)
    np.testing.assert_allclose(w.asnumpy(), before - np.float32(0.5) * g.asnumpy(), rtol=1e-6)
    y = nd.array(np.array([-1.0, 2.0]))
    assert run_eager(get_op("relu"), _attrs("relu"), [y], y) is y
    np.testing.assert_array_equal(y.asnumpy(), [0.0, 2.0])


# -- fused elementwise programs ------------------------------------------------------------------------

PROGRAMS = [
    ([("elemwise_mul", {}, [0, 1]), ("_plus_scalar", {"scalar": "0.5"}, [2]), ("exp", {}, [0]),
      ("elemwise_add", {}, [3, 4])], 2),
    ([("sigmoid", {}, [0]), ("negative", {}, [0]), ("elemwise_mul", {}, [1, 2]), ("elemwise_mul", {}, [3, 1]),
      ("broadcast_add", {}, [4, 0])], 2),
    ([("_greater_scalar", {"scalar": "0"}, [0]), ("elemwise_mul", {}, [1, 2]), ("gamma", {}, [0]),
      ("elemwise_sub", {}, [3, 4])], 2),
]


@pytest.mark.parametrize("k", range(len(PROGRAMS)))
def test_generated_fused_code_matches_the_step_by_step_schedule(k):
    steps, num_args = PROGRAMS[k]
    text = fused.encode_program(steps)
    prog = fused.parse_program(text, num_args)
    assert fused.parse_program(text, num_args).run is prog.run      # compiled once per program
    arrays = [np.abs(R.standard_normal((6, 5))).astype(np.float32) + 0.5 for _ in range(num_args)]
    want = fused.run_schedule(np, prog, arrays, np.empty((6, 5), np.float32))
    got = prog.run(np, np.empty((6, 5), np.float32), *arrays)
    np.testing.assert_array_equal(got, want)
    node = invoke(get_op("_fused_elemwise"), [nd.array(x) for x in arrays],
                  {"program": text, "num_args": num_args})
    np.testing.assert_array_equal(node.asnumpy(), want)
    source, _ = fused.schedule_source(prog)
    assert source.startswith("def run(xp, out, r0, r1):")
    assert ("out=(out,)" in source) == any(d == fused.OUT for d in prog.dests)


def test_generated_fused_code_handles_a_program_of_one_unary_step():
    text = json.dumps([["exp", {}, [0]]])
    prog = fused.parse_program(text, 1)
    x = R.standard_normal(7).astype(np.float32)
    np.testing.assert_array_equal(prog.run(np, np.empty(7, np.float32), x), np.exp(x))


# -- helpers -----------------------------------------------------------------------------------------

def _peak_bytes(fn) -> int:
    """Peak bytes numpy allocated while `fn` ran (numpy reports its buffers to tracemalloc)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_clip_single_pass_keeps_mxnets_nested_test(dtype):
    # MXNet: x > a_max ? a_max : (x < a_min ? a_min : x); NaN stays NaN; crossed bounds differ
    # from np.clip, so they keep the nested form (values checked against MXNet 1.9.1)
    x = nd.array([np.nan, -10, 0.5, 10, np.inf, -np.inf], dtype=dtype)
    np.testing.assert_array_equal(nd.clip(x, 0, 6).asnumpy(), np.array([np.nan, 0, 0.5, 6, 6, 0], dtype))
    np.testing.assert_array_equal(nd.clip(x, 5, 3).asnumpy(), np.array([np.nan, 5, 5, 3, 3, 5], dtype))
    out = nd.zeros((6,), dtype=dtype)
    nd.clip(x, 0, 6, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.array([np.nan, 0, 0.5, 6, 6, 0], dtype))
    ints = nd.array([-3, 0, 2, 9], dtype="int32")
    np.testing.assert_array_equal(nd.clip(ints, -1.5, 2.5).asnumpy(), [-1, 0, 2, 2])
