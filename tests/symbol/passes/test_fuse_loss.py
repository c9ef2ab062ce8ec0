"""fuse_loss: Gluon's softmax cross-entropy chain runs as one `_sparse_softmax_ce` node in plans,
with the chain's outputs and gradients, and only where the chain's intermediates are private."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridgraph import gluon
from hybridgraph import symbol as S  # noqa: N812
from hybridgraph.symbol.passes import apply_passes
from hybridgraph.symbol.plan.compiled import compile_graph

from .graphs import heads_of, ops_of

CHAIN = {"log_softmax", "pick", "_mul_scalar", "mean"}


def _loss_symbol(**kw):
    return gluon.loss.SoftmaxCrossEntropyLoss(**kw)(S.var("pred"), S.var("label"))


def _fused_ops(sym, shapes):
    heads = apply_passes(heads_of(sym), ["fuse_loss"], lint=True, for_training=True, shapes=shapes)
    return ops_of(heads)


def _step(sym, pred, label, fuse: bool):
    """(loss, d loss / d pred) of a compiled training plan, with or without the pass."""
    cg = compile_graph(heads_of(sym), ["pred", "label"], for_training=True, wrt=["pred"],
                       disable=() if fuse else ("fuse_loss",))
    outs, saved = cg.forward([pred, label], is_train=True, record=True)
    head = np.random.default_rng(3).standard_normal(outs[0].shape).astype(pred.dtype)
    grads = cg.backward(saved, [head])
    return outs[0], grads[0], cg


def test_the_gluon_loss_becomes_one_node():
    ops = _fused_ops(_loss_symbol(), {"pred": (4, 5), "label": (4,)})
    assert ops == ["_sparse_softmax_ce"]


def test_a_weighted_loss_fuses_the_pick_and_keeps_the_weighting():
    ops = _fused_ops(_loss_symbol(weight=0.5), {"pred": (4, 5), "label": (4,)})
    assert ops[0] == "_sparse_softmax_ce" and "pick" not in ops and "log_softmax" not in ops
    assert "mean" in ops                     # the mean reads the weighted loss, not the chain


def test_shared_intermediates_are_left_alone():
    pred, label = S.var("pred"), S.var("label")
    logp = S.log_softmax(pred, axis=-1)
    loss = S.mean(-S.pick(logp, label, axis=-1, keepdims=True), axis=0, exclude=True)
    heads = heads_of(S.Group([loss, logp]))  # the log-probabilities are an output too
    ops = ops_of(apply_passes(heads, ["fuse_loss"], lint=True, for_training=True))
    assert "_sparse_softmax_ce" not in ops and "log_softmax" in ops


@pytest.mark.parametrize("change", ["wrap", "temperature", "scalar", "axes"])
def test_other_chains_are_left_alone(change):
    pred, label = S.var("pred"), S.var("label")
    logp = S.log_softmax(pred, axis=-1, **({"temperature": 2.0} if change == "temperature" else {}))
    picked = S.pick(logp, label, axis=0 if change == "axes" else -1, keepdims=True,
                    **({"mode": "wrap"} if change == "wrap" else {}))
    loss = S.mean(picked * (-2.0 if change == "scalar" else -1.0), axis=0, exclude=True)
    ops = ops_of(apply_passes(heads_of(loss), ["fuse_loss"], lint=True, for_training=True,
                              shapes={"pred": (4, 4), "label": (4,)}))
    assert "_sparse_softmax_ce" not in ops


@settings(deadline=None, max_examples=25)
@given(batch=st.integers(1, 6), classes=st.integers(2, 7), seed=st.integers(0, 2 ** 16),
       dtype=st.sampled_from(["float32", "float64"]), out_of_range=st.booleans())
def test_fused_plan_equals_the_chain(batch, classes, seed, dtype, out_of_range):
    """Property: loss and gradient of the fused plan are the chain's (labels outside the
    classes are clipped, as pick does)."""
    rng = np.random.default_rng(seed)
    pred = (rng.standard_normal((batch, classes)) * 3).astype(dtype)
    label = rng.integers(-1 if out_of_range else 0, classes + (2 if out_of_range else 0), batch).astype(dtype)
    sym = _loss_symbol()
    loss_c, grad_c, _ = _step(sym, pred, label, fuse=False)
    loss_f, grad_f, cg = _step(sym, pred, label, fuse=True)
    assert "_sparse_softmax_ce" in [s.op.name for s in cg.last_plan.sched.steps if s.op is not None]
    tol = 1e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(loss_f, loss_c, rtol=tol, atol=tol)
    np.testing.assert_allclose(grad_f, grad_c, rtol=tol, atol=tol)


def test_channel_axis_and_batch_axis_one():
    """A (batch, classes, positions) prediction with the classes on axis 1 and the batch on 1 too."""
    rng = np.random.default_rng(0)
    pred = rng.standard_normal((3, 4, 5)).astype("float32")
    label = rng.integers(0, 4, (3, 5)).astype("float32")
    sym = _loss_symbol(axis=1, batch_axis=0)
    assert _fused_ops(sym, {"pred": pred.shape, "label": label.shape}) == ["_sparse_softmax_ce"]
    loss_c, grad_c, _ = _step(sym, pred, label, fuse=False)
    loss_f, grad_f, _ = _step(sym, pred, label, fuse=True)
    np.testing.assert_allclose(loss_f, loss_c, rtol=1e-6)
    np.testing.assert_allclose(grad_f, grad_c, rtol=1e-6, atol=1e-7)
