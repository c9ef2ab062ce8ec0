"""`group2ctx` / Module's `group2ctxs`: variables of an `AttrScope(ctx_group=...)` get their
arrays and gradients on the group's context, as MXNet 1.9.1 places them (test_module's
test_module_ctx_group); placing a group on another device is refused clearly."""
from __future__ import annotations

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph.module.executor_group import DataParallelExecutorGroup, ExecutorGroup

SHAPE = (2, 5)


def _graph():
    with mx.AttrScope(ctx_group="dev1"):
        a = mx.sym.Variable("a") * 2
    with mx.AttrScope(ctx_group="dev2"):
        b = mx.sym.Variable("b")
        return a + b


def test_simple_bind_places_group_variables():
    exe = _graph().simple_bind(mx.cpu(0), group2ctx={"dev1": mx.cpu(1), "dev2": mx.cpu(2)}, a=SHAPE, b=SHAPE)
    assert exe.arg_dict["a"].context == mx.cpu(1) and exe.grad_dict["a"].context == mx.cpu(1)
    assert exe.arg_dict["b"].context == mx.cpu(2) and exe.grad_dict["b"].context == mx.cpu(2)
    exe.arg_dict["a"][:] = 3
    exe.arg_dict["b"][:] = 1
    out = exe.forward(is_train=True)[0]
    exe.backward(mx.nd.ones(SHAPE))
    np.testing.assert_array_equal(out.asnumpy(), 7)
    np.testing.assert_array_equal(exe.grad_dict["a"].asnumpy(), 2)
    # bind checks each array against its own group's context
    args = {"a": mx.nd.ones(SHAPE, ctx=mx.cpu(1)), "b": mx.nd.ones(SHAPE, ctx=mx.cpu(2))}
    exe = _graph().bind(mx.cpu(0), args, group2ctx={"dev1": mx.cpu(1), "dev2": mx.cpu(2)})
    assert exe.forward()[0].asnumpy()[0, 0] == 3
    with pytest.raises(mx.base.MXNetError, match="'b' lives on cpu\\(2\\) but the executor places it on cpu\\(0\\)"):
        _graph().bind(mx.cpu(0), args, group2ctx={"dev1": mx.cpu(1)})


@pytest.mark.parametrize("ctxs, group2ctxs, expect", [
    ([mx.cpu(0)], {"dev1": mx.cpu(1), "dev2": mx.cpu(2)}, [mx.cpu(1), mx.cpu(2)]),
    ([mx.cpu(0), mx.cpu(1)], [{"dev1": mx.cpu(2), "dev2": mx.cpu(3)}, {"dev1": mx.cpu(4), "dev2": mx.cpu(5)}], None),
    ([mx.cpu(0), mx.cpu(1)], {"dev1": [mx.cpu(2)], "dev2": [mx.cpu(3), mx.cpu(4)]}, None),
])
def test_module_group2ctxs_forms(ctxs, group2ctxs, expect):
    mod = mx.mod.Module(_graph(), context=ctxs, data_names=["a", "b"], label_names=None, group2ctxs=group2ctxs)
    mod.bind(data_shapes=[("a", SHAPE), ("b", SHAPE)], inputs_need_grad=True)
    mod.init_params()
    mod.forward(mx.io.DataBatch(data=[mx.nd.ones(SHAPE), mx.nd.ones(SHAPE)]), is_train=True)
    mod.backward([mx.nd.ones(SHAPE)])
    grads = mod.get_input_grads()
    np.testing.assert_array_equal(grads[0].asnumpy(), 2)
    np.testing.assert_array_equal(grads[1].asnumpy(), 1)
    if expect is not None:
        assert [g.context for g in grads] == expect
    if isinstance(group2ctxs, dict) and len(ctxs) == 2:   # the per-device dicts MXNet derives
        assert mod._exec_group.group2ctxs == [{"dev1": mx.cpu(2), "dev2": mx.cpu(3)},
                                              {"dev1": mx.cpu(2), "dev2": mx.cpu(4)}]


def test_group2ctxs_errors_and_other_devices():
    with pytest.raises(ValueError, match="3 contexts for 2 devices"):
        mx.mod.Module(_graph(), context=[mx.cpu(0), mx.cpu(1)], data_names=["a", "b"], label_names=None,
                      group2ctxs={"dev1": [mx.cpu(1)] * 3}).bind(data_shapes=[("a", SHAPE), ("b", SHAPE)])
    with pytest.raises(NotImplementedError, match="model parallelism across devices is not supported"):
        _graph().simple_bind(mx.cpu(0), group2ctx={"dev1": mx.gpu(0)}, a=SHAPE, b=SHAPE)
    assert DataParallelExecutorGroup is ExecutorGroup


def test_variable_outside_a_group_takes_its_readers_group():
    """MXNet's placement: data3, made outside any AttrScope, is read by an op of 'dev2', so bind
    expects (and simple_bind allocates) it on dev2's context (test_model_parallel's chain)."""
    data1, data3 = mx.sym.Variable("data1"), mx.sym.Variable("data3")
    with mx.AttrScope(ctx_group="dev1"):
        net = data1 * 3
    with mx.AttrScope(ctx_group="dev2"):
        net = net + data3
    exe = net.simple_bind(mx.cpu(0), group2ctx={"dev1": mx.cpu(0), "dev2": mx.cpu(1)}, data1=SHAPE, data3=SHAPE)
    assert exe.arg_dict["data1"].context == mx.cpu(0) and exe.arg_dict["data3"].context == mx.cpu(1)
    args = [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE, ctx=mx.cpu(1)) * 2]
    grads = [mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE, ctx=mx.cpu(1))]
    exe = net.bind(mx.cpu(0), args, args_grad=grads, group2ctx={"dev1": mx.cpu(0), "dev2": mx.cpu(1)})
    np.testing.assert_array_equal(exe.forward(is_train=True)[0].asnumpy(), 5)
    exe.backward(mx.nd.ones(SHAPE))
    np.testing.assert_array_equal(grads[0].asnumpy(), 3)
    np.testing.assert_array_equal(grads[1].asnumpy(), 1)
