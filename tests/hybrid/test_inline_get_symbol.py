"""autograd.get_symbol on a hybridized block's recorded call: MXNet 1.9.1 inlines graphs
of at most `inline_limit` operators (default 2, never with static_alloc) into the
record, one node per operator; a larger block would be a `_CachedOp` node, which
hybridgraph refuses clearly."""
import json

import numpy as np
import pytest

import hybridgraph as mx


def _net(n):
    net = mx.gluon.nn.HybridSequential()
    with net.name_scope():
        for _ in range(n):
            net.add(mx.gluon.nn.Dense(4, activation=None))
    net.initialize()
    return net


def _record(net, x):
    with mx.autograd.record():
        return net(x)


def test_inlined_graph_has_one_node_per_operator_and_computes_the_output():
    net = _net(3)
    net.hybridize(inline_limit=3)
    x = mx.nd.array(np.random.RandomState(0).randn(2, 5))
    y = _record(net, x)
    sym = mx.autograd.get_symbol(y)
    nodes = json.loads(sym.tojson())["nodes"]
    # MXNet 1.9.1: the data, then per layer weight, bias and its FullyConnected node
    assert [n["op"] for n in nodes] == ["null", "null", "null", "FullyConnected"] + \
        ["null", "null", "FullyConnected"] * 2
    assert all(n["name"].startswith("node_") for n in nodes if n["op"] != "null")
    # binding the variables to the recorded arrays gives the recorded output
    layers = [net[i] for i in range(3)]
    args = sym.list_arguments()
    values = [x] + [p for d in layers for p in (d.weight.data(), d.bias.data())]
    assert len(args) == len(values)
    out = sym.eval(ctx=mx.cpu(), **dict(zip(args, values)))[0]
    np.testing.assert_allclose(out.asnumpy(), y.asnumpy(), rtol=1e-5)
    y.backward()                                   # the record still differentiates


def test_default_limit_inlines_a_single_layer():
    net = _net(1)
    net.hybridize()
    y = _record(net, mx.nd.ones((2, 5)))
    ops = [n["op"] for n in json.loads(mx.autograd.get_symbol(y).tojson())["nodes"]]
    assert ops.count("FullyConnected") == 1


@pytest.mark.parametrize("flags", [dict(inline_limit=2), dict(inline_limit=3, static_alloc=True)])
def test_a_larger_block_is_one_cachedop_node(flags):
    net = _net(3)
    net.hybridize(**flags)
    x = mx.nd.array(np.random.RandomState(2).randn(2, 5))
    y = _record(net, x)
    sym = mx.autograd.get_symbol(y)
    nodes = json.loads(sym.tojson())["nodes"]
    # MXNet 1.9.1 writes the node with neither attributes nor subgraph
    assert nodes[-1] == {"op": "_CachedOp", "name": nodes[-1]["name"], "inputs": [[i, 0, 0] for i in range(7)]}
    assert sym.list_outputs() == [nodes[-1]["name"] + "_" + net[2].name + "_fwd_output"]
    values = [x] + [p for i in range(3) for p in (net[i].weight.data(), net[i].bias.data())]
    args = dict(zip(sym.list_arguments(), values))
    np.testing.assert_allclose(sym.eval(ctx=mx.cpu(), **args)[0].asnumpy(), y.asnumpy(), rtol=1e-5)
    # its gradient replays the graph: the same as the block's own
    ex = sym.bind(mx.cpu(), args={k: v.copy() for k, v in args.items()},
                  args_grad={k: mx.nd.zeros(v.shape) for k, v in args.items()})
    ex.forward(is_train=True)
    head = mx.nd.array(np.random.RandomState(3).randn(*y.shape))
    ex.backward(head)
    y.backward(head)
    w0 = sym.list_arguments()[1]                   # the arguments follow `values`
    np.testing.assert_allclose(ex.grad_dict[w0].asnumpy(), net[0].weight.grad().asnumpy(), rtol=1e-5)


def test_a_cachedop_node_read_from_json_is_refused_clearly():
    net = _net(3)
    net.hybridize(inline_limit=0)
    y = _record(net, mx.nd.ones((2, 5)))
    with pytest.raises(mx.base.MXNetError, match="_CachedOp: this node holds no graph"):
        mx.sym.load_json(mx.autograd.get_symbol(y).tojson())
