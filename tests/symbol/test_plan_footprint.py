"""What an inference plan of a small conv net keeps between calls: its activation arena and
its constants (BatchNorm-folded weights, Winograd transforms), in bytes the plan holds,
not RSS. Guards the memory work of issue 19: no weight copy that no layer reads, no folded
copy that costs more memory than its saved pass, an arena near the planner's lower bound."""
from __future__ import annotations

import numpy as np

from hybridgraph import symbol as S  # noqa: N812
from hybridgraph.symbol.passes import apply_passes
from hybridgraph.symbol.passes.fold_batchnorm import KEEP_UNFOLDED_BYTES
from hybridgraph.symbol.plan.compiled import compile_graph
from hybridgraph.symbol.plan.plan_cache import arena_bytes, constant_bytes

from .passes.graphs import heads_of, ops_of

RNG = np.random.default_rng(19)
F32 = 4
X_SHAPE = (2, 32, 16, 16)


def _net():
    """c1: 3x3 32->32 + BN + relu (Winograd F(4x4): its folded weight only passes through);
    c2: 3x3 stride 4 32->512 + BN (im2col: a small weight, folded and kept);
    c3: 1x1 512->512 + BN + relu (a 1 MiB weight over a 64 KiB output: BatchNorm stays)."""
    x = S.var("x")
    y = S.Activation(S.BatchNorm(S.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=32, name="c1"),
                                 name="bn1"), act_type="relu", name="r1")
    y = S.BatchNorm(S.Convolution(y, kernel=(3, 3), stride=(4, 4), pad=(1, 1), num_filter=512, name="c2"),
                    name="bn2")
    y = S.BatchNorm(S.Convolution(y, kernel=(1, 1), num_filter=512, no_bias=True, name="c3"), name="bn3")
    return S.Activation(y, act_type="relu", name="r3")


def _params(sym):
    shapes, _, aux = sym.infer_shape(x=X_SHAPE)
    names = sym.list_arguments() + sym.list_auxiliary_states()
    return {n: (np.abs(RNG.standard_normal(s)) + 0.5 if ("var" in n or "gamma" in n)
                else RNG.standard_normal(s) * 0.1).astype(np.float32)
            for n, s in zip(names, shapes + aux) if n != "x"}


def _plan(sym, params, x, **kw):
    cg = compile_graph(sym._outputs, ["x", *params], for_training=False, params=params, **kw)
    cg.run([x, *params.values()])                          # calibrating run
    plan, outs, _ = cg.run([x, *params.values()])          # the compiled plan, its arena made
    return plan, outs[0]


def test_the_plan_keeps_no_weight_copy_that_no_layer_reads():
    sym = _net()
    params = _params(sym)
    x = RNG.standard_normal(X_SHAPE).astype(np.float32)
    plan, out = _plan(sym, params, x)
    steps = {st.name: st for st in plan.sched.steps}
    assert steps["r1"].op.name == "_fused_convolution" and steps["r1"].attrs.winograd
    assert "bn3" in steps and steps["bn3"].op.name == "BatchNorm"       # c3's 1 MiB weight is not copied
    names = set(plan.sched.names[e] for e in plan.sched.constants)
    assert not any(n.startswith("c3_weight") for n in names), names
    u = 36 * 32 * 32 * F32                                  # c1's Winograd transform
    kept = 512 * 32 * 9 * F32 + (32 + 512) * F32            # c2's folded weight, the folded biases
    # c1's folded weight (36 KiB) is a broadcast placeholder: it holds no memory
    assert constant_bytes(plan) <= u + kept + 64, (constant_bytes(plan), u + kept)
    # the convolutions' temporaries are lent arena memory; the arena (activations and those
    # temporaries, packed by liveness) is the planner's lower bound -- the most bytes live at
    # one step -- within 10%
    memory = plan.memory
    lent = {plan.sched.steps[k].name for k in memory.scratch}
    assert {"r1", "c2"} <= lent, lent
    assert arena_bytes(plan) == memory.stats.arena <= 1.1 * memory.stats.lower_bound, memory.stats.as_dict()
    # the same values as the unoptimised plan (Winograd's error bound: winograd4.ERROR_BOUND),
    # also on the next call, whose temporaries reuse memory other values held meanwhile
    ref_plan, ref = _plan(sym, params, x, disable=("fold_batchnorm", "fuse_conv_epilogue"))
    assert constant_bytes(ref_plan) == 0
    assert np.abs(out - ref).max() <= 1e-4 * np.abs(ref).max()
    x2 = RNG.standard_normal(X_SHAPE).astype(np.float32) * 3
    cg = compile_graph(sym._outputs, ["x", *params], for_training=False, params=params)
    ref_cg = compile_graph(sym._outputs, ["x", *params], for_training=False, params=params,
                           disable=("fold_batchnorm", "fuse_conv_epilogue"))
    for xi in (x, x2, x, x2):
        got = cg.run([xi, *params.values()])[1][0].copy()
        want = ref_cg.run([xi, *params.values()])[1][0]
        assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()


def _fc_bn(num_hidden: int, in_units: int):
    x = S.var("x")
    heads = heads_of(S.BatchNorm(S.FullyConnected(x, num_hidden=num_hidden, name="fc"), name="bn"))
    params = {"fc_weight": RNG.standard_normal((num_hidden, in_units)).astype(np.float32),
              "fc_bias": RNG.standard_normal(num_hidden).astype(np.float32),
              "bn_gamma": np.ones(num_hidden, np.float32), "bn_beta": np.zeros(num_hidden, np.float32),
              "bn_moving_mean": np.zeros(num_hidden, np.float32), "bn_moving_var": np.ones(num_hidden, np.float32)}
    return heads, params


def _folded_ops(heads, params, shapes):
    out = apply_passes(heads, ["fold_batchnorm"], lint=True, for_training=False, params=params,
                       frozen=list(params), shapes=shapes)
    return ops_of(out)


def test_a_large_weight_folds_only_when_its_output_is_larger():
    num_hidden = 512
    in_units = KEEP_UNFOLDED_BYTES // (F32 * num_hidden) + 1      # just over the threshold
    heads, params = _fc_bn(num_hidden, in_units)
    assert _folded_ops(heads, params, {"x": (4, in_units)}) == ["FullyConnected", "BatchNorm"]
    assert _folded_ops(heads, params, {"x": (in_units + 1, in_units)}) == ["FullyConnected"]
    small_heads, small = _fc_bn(8, 16)                                # below the threshold: always
    assert _folded_ops(small_heads, small, {"x": (1, 16)}) == ["FullyConnected"]


def test_a_winograd_convolution_folds_whatever_its_weight_size():
    """ResNet-18's 256-channel 3x3 layers at 14x14: 2.25 MiB of weight over 1.5 MiB of output,
    folded anyway -- the plan keeps the transform, not the folded weight."""
    x = S.var("x")
    heads = heads_of(S.BatchNorm(S.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=256, name="c"),
                                 name="bn"))
    params = {"c_weight": np.zeros((256, 256, 3, 3), np.float32), "c_bias": np.zeros(256, np.float32),
              "bn_gamma": np.ones(256, np.float32), "bn_beta": np.zeros(256, np.float32),
              "bn_moving_mean": np.zeros(256, np.float32), "bn_moving_var": np.ones(256, np.float32)}
    assert _folded_ops(heads, params, {"x": (8, 256, 14, 14)}) == ["Convolution"]
    assert _folded_ops(heads, params, {"x": (8, 256, 14, 14)[:1] + (256, 3, 3)}) == \
        ["Convolution", "BatchNorm"]            # 1x1 output: no Winograd, the weight stays unfolded


def test_scratch_take_carves_a_lent_buffer_and_records_what_it_allocates():
    from hybridgraph.nd.ops import scratch
    specs = [((3, 5), np.float32), ((7,), np.float64)]
    with scratch.recording() as rec:
        a, b = scratch.take(np, None, specs)
    assert a.shape == (3, 5) and b.dtype == np.float64 and rec.nbytes == 64 + 7 * 8
    buf = np.empty(rec.nbytes, np.uint8)
    a, b = scratch.take(np, buf, specs)
    assert np.shares_memory(a, buf) and np.shares_memory(b, buf) and not np.shares_memory(a, b)
    assert b.ctypes.data - buf.ctypes.data == 64                   # aligned to a cache line
    small = np.empty(rec.nbytes - 1, np.uint8)                      # too small: new arrays
    assert not any(np.shares_memory(t, small) for t in scratch.take(np, small, specs))


def test_pooling_reduces_through_lent_scratch_and_equals_eager():
    """2-D pooling reduces one dim, then the other: the half-reduced array is the kernel's
    scratch, lent by the plan; results are the eager kernel's, call after call."""
    from hybridgraph import nd
    x = S.var("x")
    sym = S.Group([S.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type=t, name=t)
                   for t in ("max", "avg", "sum")])
    cg = compile_graph(sym._outputs, ["x"], for_training=False)
    for i in range(4):
        xi = RNG.standard_normal((2, 3, 11, 9)).astype(np.float32)
        plan, outs, _ = cg.run([xi])
        for t, got in zip(("max", "avg", "sum"), outs):
            want = nd.Pooling(nd.array(xi), kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type=t).asnumpy()
            assert np.array_equal(got, want), (t, i)
    assert len(plan.memory.scratch) == 3
