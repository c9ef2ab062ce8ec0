"""The step-by-step first run of a compiled plan (symbol/plan/calibration.py) holds only live
values: on a deep conv net its peak traced memory stays near the compiled run's peak, far
below the naive total of every intermediate, for inference and for a training step."""
from __future__ import annotations

import tracemalloc
from collections.abc import Callable

import numpy as np
import pytest

from hybridgraph import symbol as S  # noqa: N812 - short like mx.sym
from hybridgraph.symbol.plan import compile_graph, compiled as compiled_mod
from hybridgraph.symbol.plan.calibration import dead_after

DEPTH = 12
SHAPE = (4, 8, 32, 32)


@pytest.fixture(autouse=True)
def _validate_every_plan(monkeypatch):
    """Every plan finalised in these tests is proven safe by the validator."""
    monkeypatch.setattr(compiled_mod, "VALIDATE", True)


def _conv_net():
    """DEPTH x (3x3 Convolution, BatchNorm, relu) on 8 channels, then a small classifier."""
    h = S.var("data")
    for i in range(DEPTH):
        h = S.Convolution(h, num_filter=8, kernel=(3, 3), pad=(1, 1), name=f"conv{i}")
        h = S.BatchNorm(h, name=f"bn{i}")
        h = S.Activation(h, act_type="relu", name=f"relu{i}")
    h = S.Pooling(h, global_pool=True, kernel=(1, 1), pool_type="avg", name="pool")
    return S.FullyConnected(h, num_hidden=10, name="fc")


def _compiled(for_training: bool):
    sym = _conv_net()
    names = sym.list_arguments() + sym.list_auxiliary_states()
    arg_shapes, _, aux_shapes = sym.infer_shape(data=SHAPE)
    rs = np.random.RandomState(0)
    vals = [rs.standard_normal(s).astype(np.float32) for s in arg_shapes]
    vals += [np.ones(s, np.float32) for s in aux_shapes]
    wrt = [n for n in sym.list_arguments() if n != "data"] if for_training else None
    cg = compile_graph(sym._outputs, names, for_training=for_training, passes=False, static_alloc=True,
                       wrt=wrt)
    return cg, vals


def _peak(fn: Callable[[], object]) -> int:
    """Peak bytes numpy allocated while `fn` ran, above what was allocated before."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_dead_after_lists_each_internal_entry_once_at_its_last_use():
    cg, vals = _compiled(for_training=True)
    cg.backward(cg.forward(vals, is_train=True)[1], [None])
    sched = cg.last_plan.sched
    dead = dead_after(sched)
    listed = [e for k in sorted(dead) for e in dead[k]]
    assert len(listed) == len(set(listed))
    hold = sched.external() | set(sched.outputs) | {g for g in sched.grads if g is not None}
    assert not hold & set(listed)
    for k, entries in dead.items():
        for e in entries:
            readers = [j for j, st in enumerate(sched.steps) if e in st.inputs or e in st.outputs]
            assert max(readers) == k
    internal = {o for st in sched.steps for o in st.outputs} - hold
    assert set(listed) == internal


def test_inference_calibration_peak_is_near_the_compiled_peak():
    cg, vals = _compiled(for_training=False)
    first = _peak(lambda: cg.forward(vals))
    plan = cg.last_plan
    assert plan.compiled
    steady = _peak(lambda: cg.forward(vals))
    naive = plan.memory_stats()["naive"]
    assert first < naive / 2, (first, naive)
    assert first <= 1.5 * steady + 2 ** 16, (first, steady)


def test_training_calibration_frees_saved_activations_during_the_backward():
    cg, vals = _compiled(for_training=True)

    def step() -> None:
        _, saved = cg.forward(vals, is_train=True)
        cg.backward(saved, [None])
    first = _peak(step)
    assert cg.last_plan.compiled
    steady = _peak(step)
    naive = cg.last_plan.memory_stats()["naive"]
    # the training graph's naive total is ~1.9x the peak (relu's gradient is one node,
    # _backward_relu, so there are few intermediates to drop); the inference test's is higher
    assert first < 0.6 * naive, (first, naive)
    assert first <= 1.5 * steady + 2 ** 16, (first, steady)


def test_step_by_step_results_match_the_compiled_ones():
    cg, vals = _compiled(for_training=True)
    results = []
    for _ in range(2):
        outs, saved = cg.forward(vals, is_train=True)
        grads = cg.backward(saved, [np.ones_like(outs[0])])
        results.append([np.array(a) for a in [outs[0]] + [g for g in grads if g is not None]])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
