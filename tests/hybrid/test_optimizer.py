"""Optimizers and lr schedulers against MXNet 1.9.1 (tests/data/optimizer_ref.npz)."""
from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph.gluon import lr_scheduler, optimizer as opt
from hybridgraph.gluon.parameter import Parameter

REF = np.load(Path(__file__).resolve().parent.parent / "data" / "optimizer_ref.npz")
CONFIGS = json.loads(str(REF["configs"]))
SCHEDULERS = json.loads(str(REF["schedulers"]))
TOL = {"float16": (2e-3, 2e-3), "float32": (2e-5, 2e-6), "float64": (1e-10, 1e-12)}


def _make(name: str, kwargs: dict) -> opt.Optimizer:
    kw = dict(kwargs)
    if "lr_scheduler" in kw:
        kind, skw = kw["lr_scheduler"]
        kw["lr_scheduler"] = {"factor": lr_scheduler.FactorScheduler}[kind](**skw)
    return opt.create(name, **kw)


@pytest.mark.parametrize(("case", "name", "kwargs", "dtype"), CONFIGS, ids=[c[0] for c in CONFIGS])
def test_matches_mxnet(case, name, kwargs, dtype):
    o = _make(name, kwargs)
    weight = nd.array(REF[f"{case}/w0"], dtype=dtype)
    state = o.create_state_multi_precision(0, weight)
    rtol, atol = TOL[dtype]
    for step, g in enumerate(REF[f"{case}/grads"]):
        o.update_multi_precision(0, weight, nd.array(g, dtype=dtype), state)
        assert weight.dtype == np.dtype(dtype)
        np.testing.assert_allclose(weight.asnumpy(), REF[f"{case}/steps"][step], rtol=rtol, atol=atol,
                                   err_msg=f"{case} step {step}")


@pytest.mark.parametrize(("case", "cls", "kwargs"), SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_scheduler_matches_mxnet(case, cls, kwargs):
    sched = getattr(lr_scheduler, cls)(**kwargs)
    got = [sched(i) for i in range(20)]
    np.testing.assert_allclose(got, REF[f"sched/{case}"], rtol=1e-12)


def test_scheduler_argument_errors():
    with pytest.raises(ValueError, match="Base lr has to be higher"):
        lr_scheduler.FactorScheduler(step=1, base_lr=0.1, warmup_begin_lr=1.0)
    with pytest.raises(ValueError, match="greater or equal than 1"):
        lr_scheduler.FactorScheduler(step=0)
    with pytest.raises(ValueError, match="increasing"):
        lr_scheduler.MultiFactorScheduler(step=[3, 2])
    with pytest.raises(ValueError, match="linear and constant"):
        lr_scheduler.PolyScheduler(10, warmup_mode="exp")
    with pytest.raises(NotImplementedError):
        lr_scheduler.LRScheduler()(1)


def test_registry_and_create():
    assert isinstance(opt.create("SGD"), opt.SGD)
    assert isinstance(opt.Optimizer.create_optimizer("adam", learning_rate=0.1), opt.Adam)
    with pytest.raises(ValueError, match="Cannot find optimizer nope"):
        opt.create("nope")

    @opt.register
    class MyOpt(opt.Optimizer):
        def update(self, index, weight, grad, state):
            weight[:] -= grad

    try:
        assert isinstance(opt.create("myopt"), MyOpt)
        with pytest.warns(UserWarning, match="overriding"):
            opt.register(MyOpt)
    finally:
        del opt.Optimizer.opt_registry["myopt"]


def test_defaults_match_mxnet():
    assert opt.SGD().learning_rate == 0.01
    assert opt.Adam().learning_rate == 0.001
    assert opt.Adamax().learning_rate == 0.002
    assert opt.Ftrl().learning_rate == 0.1
    assert opt.SGD().aggregate_num == 4
    assert opt.LAMB().aggregate_num == 45
    assert opt.Adam().aggregate_num == 0


def test_learning_rate_and_scheduler():
    o = opt.SGD(learning_rate=0.5)
    o.set_learning_rate(0.25)
    assert o.learning_rate == 0.25
    sched = lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=1.0)
    o = opt.SGD(lr_scheduler=sched)
    assert o.learning_rate == 1.0
    with pytest.raises(UserWarning, match="LRScheduler of the optimizer has already been defined"):
        o.set_learning_rate(0.1)
    o2 = opt.SGD(learning_rate=0.3, lr_scheduler=lr_scheduler.FactorScheduler(step=1, base_lr=1.0))
    assert o2.lr_scheduler.base_lr == 0.3


def test_lr_wd_mult_sources():
    p = Parameter("fc_weight", shape=(2,), lr_mult=2.0, wd_mult=0.5)
    o = opt.SGD(learning_rate=0.1, wd=0.2, param_dict={0: p},
                param_idx2name={1: "fc_bias", 2: "fc_weight", 3: "bn_gamma"})
    assert o._get_lr(0) == pytest.approx(0.2) and o._get_wd(0) == pytest.approx(0.1)
    assert o._get_wd(1) == 0.0 and o._get_wd(2) == pytest.approx(0.2) and o._get_wd(3) == pytest.approx(0.2)
    o.set_lr_mult({2: 3.0, "fc_bias": 0.5})
    assert o._get_lr(2) == pytest.approx(0.3) and o._get_lr(1) == pytest.approx(0.05)
    o.set_wd_mult({"fc_weight": 0.0})
    assert o._get_wd(2) == 0.0
    p.lr_mult = 4.0  # param_dict is live: a changed mult takes effect
    assert o._get_lr(0) == pytest.approx(0.4)


@pytest.mark.parametrize(("name", "gamma_decays"), [("SGD", True), ("LAMB", True), ("LARS", False)])
def test_default_wd_mult_by_name_ending(name, gamma_decays):
    # MXNet 1.9.1: biases (and betas) get no weight decay; LARS also exempts gammas
    o = opt.create(name, param_idx2name={0: "fc_weight", 1: "fc_bias", 2: "bn_gamma", 3: "bn_beta"})
    o.set_wd_mult({"fc_bias": 2.0})
    want = {"fc_bias": 2.0, "bn_beta": 0.0} if gamma_decays else {"fc_bias": 2.0, "bn_beta": 0.0, "bn_gamma": 0.0}
    assert o.wd_mult == want


def test_symbol_attribute_mults():
    from hybridgraph import symbol as sym

    w = sym.Variable("w", lr_mult=3, wd_mult=0.5)
    net = sym.FullyConnected(sym.Variable("x"), w, num_hidden=2, no_bias=True, name="fc")
    o = opt.LARS(sym=net, param_idx2name={0: "w"})
    assert o.lr_mult == {"w": 3.0} and o.wd_mult == {"w": 0.5}


def test_num_update_counts():
    o = opt.SGD(begin_num_update=5)
    u = opt.get_updater(o)
    w, g = nd.ones((2,)), nd.ones((2,))
    u(0, g, w)
    u(0, g, w)
    u(1, g, w)
    assert o._index_update_count == {0: 7, 1: 6} and o.num_update == 7


def test_updater_aggregates_lists_and_states_round_trip():
    o = opt.SGD(learning_rate=0.1, momentum=0.9)
    u = opt.get_updater(o)
    ws = [nd.ones((3,)) * i for i in range(6)]
    gs = [nd.ones((3,)) for _ in range(6)]
    u(list(range(6)), gs, ws)
    np.testing.assert_allclose(ws[2].asnumpy(), 2 - 0.1)
    blob = u.get_states(dump_optimizer=True)
    u2 = opt.get_updater(opt.SGD())
    u2.set_states(blob)
    assert isinstance(u2.optimizer, opt.SGD) and u2.optimizer.momentum == 0.9
    np.testing.assert_allclose(u2.states[3].asnumpy(), -0.1)
    assert u2.states_synced == dict.fromkeys(range(6), False)
    u2(list(range(6)), gs, ws)  # syncs states, then updates
    np.testing.assert_allclose(u2.states[3].asnumpy(), -0.19, rtol=1e-6)
    plain = opt.get_updater(opt.SGD(momentum=0.9))
    plain.set_states(u.get_states())
    assert set(plain.states) == set(range(6))


def test_optimizer_pickle_drops_param_dict():
    p = Parameter("w", shape=(1,))
    o = opt.Adam(param_dict={0: p})
    o2 = pickle.loads(pickle.dumps(o))
    assert o2.param_dict == {} and o2.beta1 == 0.9


def test_states_loader_refuses_other_globals():
    class Evil:
        def __reduce__(self):
            return (print, ("boom",))
    with pytest.raises(pickle.UnpicklingError, match="refusing"):
        opt.loads_states(pickle.dumps({0: Evil()}))


def test_float16_without_multi_precision_warns():
    with pytest.warns(UserWarning, match="multi_precision=True"):
        opt.SGD(momentum=0.9).create_state_multi_precision(0, nd.ones((2,), dtype="float16"))


def test_update_keeps_weight_a_variable():
    w = nd.ones((2,))
    w.attach_grad()
    leaf = w._ag
    o = opt.SGD(learning_rate=0.1, momentum=0.9)
    o.update(0, w, nd.ones((2,)), o.create_state(0, w))
    assert w._ag is leaf
    np.testing.assert_allclose(w.asnumpy(), 0.9)


def test_update_count_of_repeated_and_mixed_indices():
    o = opt.SGD(begin_num_update=2)
    o._update_count([0, 0, 1])       # a repeated index counts once per occurrence, as in MXNet's loop
    assert o._index_update_count == {0: 4, 1: 3} and o.num_update == 4
    o._update_count(1)
    o._update_count([])
    assert o._index_update_count == {0: 4, 1: 4} and o.num_update == 4


def test_multipliers_of_mixed_index_sources():
    """Indices in param_dict and indices found by name or index table, in one call."""
    p = Parameter("fc_weight", shape=(2,), lr_mult=2.0, wd_mult=0.5)
    o = opt.SGD(learning_rate=0.1, wd=0.2, param_dict={0: p}, param_idx2name={1: "fc_bias", 2: "x"})
    o.set_lr_mult({2: 3.0, "fc_bias": 0.5})
    assert o._get_lrs([0, 1, 2, 3]) == pytest.approx([0.2, 0.05, 0.3, 0.1])
    assert o._get_wds([0, 1, 2]) == pytest.approx([0.1, 0.0, 0.0])
    assert o._get_lrs([0]) == [0.1 * 2.0]
    p.lr_mult = 5
    assert o._get_lrs([0, 0]) == [0.1 * 5, 0.1 * 5]
