"""Per-thread state as in MXNet 1.9.1 (values checked against it): the default context,
attribute scope, name manager, autograd flags; `Context.default_ctx`, `AttrScope.current` and
`NameManager.current` are class properties a thread may assign without touching other threads."""
from __future__ import annotations

import threading

import pytest

import hybridgraph as mx
from hybridgraph.attribute import AttrScope
from hybridgraph.name import NameManager


def in_thread(fn):
    result, errors = [], []

    def target():
        try:
            result.append(fn())
        except Exception as e:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(e)

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if errors:
        raise errors[0]
    return result[0]


@pytest.fixture
def fresh_state():
    yield
    mx.Context.default_ctx = mx.cpu()
    AttrScope.current = AttrScope()
    NameManager.current = NameManager()


def test_scopes_of_the_main_thread_do_not_reach_a_new_thread(fresh_state):
    with mx.autograd.record(), mx.cpu(3), mx.AttrScope(a="1"):
        assert in_thread(lambda: (mx.autograd.is_recording(), mx.autograd.is_training())) == (False, False)
        assert in_thread(lambda: str(mx.context.current_context())) == "cpu(0)"
        assert in_thread(lambda: mx.sym.var("x").list_attr()) == {}
        assert mx.sym.var("x").list_attr() == {"a": "1"}


def test_class_properties_are_assigned_per_thread(fresh_state):
    mx.Context.default_ctx = mx.cpu(5)
    assert mx.context.current_context() == mx.cpu(5) and mx.Context.default_ctx == mx.cpu(5)
    assert in_thread(lambda: mx.Context.default_ctx) == mx.cpu(0)
    AttrScope.current = AttrScope(y="hi")
    assert mx.sym.var("v").list_attr() == {"y": "hi"}
    assert in_thread(lambda: AttrScope.current._attr) == {}
    with pytest.raises(TypeError, match="must be a Context"):
        mx.Context.default_ctx = "cpu"


def test_each_thread_counts_names_from_zero(fresh_state):
    def make():
        return mx.sym.FullyConnected(mx.sym.var("d"), num_hidden=2).name

    NameManager.current = NameManager()
    assert make() == "fullyconnected0"
    assert in_thread(make) == "fullyconnected0"
    with mx.name.Prefix("p_"):
        assert make() == "p_fullyconnected0"
        assert in_thread(make) == "fullyconnected0"  # a fresh manager there, not this Prefix
    assert make() == "fullyconnected1"
    assert NameManager.current() is NameManager.current  # the older call spelling still works


def test_blocks_and_executors_in_a_thread():
    def run():
        net = mx.gluon.nn.Dense(2)
        net.initialize()
        y = net(mx.nd.array([[1, 2, 3]]))
        a, b = mx.sym.var("a"), mx.sym.var("b")
        ex = (a + b).bind(mx.cpu(), args={"a": mx.nd.ones((2,)), "b": mx.nd.ones((2,))})
        return net.name, y.shape, ex.forward()[0].asnumpy().tolist()

    assert in_thread(run) == ("dense0", (1, 2), [2.0, 2.0])
