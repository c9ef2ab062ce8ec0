"""MXNet 1.x's Symbol tutorial, every example in order, on hybridgraph.

    python examples/symbol_tutorial.py
    python examples/symbol_tutorial.py --quick     # the same (the tutorial is already small)

The code follows "Symbol - Neural network graphs and auto-differentiation"
(docs/tutorials/basic/symbol.md in Apache MXNet 1.x) line by line; the only
change is the import line. Where the tutorial shows a notebook value, this
script prints it, so the output can be read next to what MXNet prints (run
the same file with `import mxnet as mx` under MXNet 1.9.1 to compare).
`mx.viz.plot_network` pictures are summarised by their node and edge counts;
pass --out to keep them as DOT/PDF files.
"""
# ruff: noqa: UP031  (the tutorial's %-formatting is kept verbatim)
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import hybridgraph as mx  # noqa: E402  (MXNet scripts only change this line)


def section(title: str) -> None:
    print(f"\n## {title}")


def show_plot(dot, out_dir: str | None, name: str) -> None:
    """What a notebook would draw: the graph's size, and its DOT file when --out is given."""
    lines = dot.source.splitlines()
    edges = sum("->" in line for line in lines)
    nodes = sum(line.strip().split(" ")[0].strip('"').isidentifier() and "[" in line and "->" not in line
                for line in lines)
    print(f"plot_network: {nodes} nodes, {edges} edges")
    if out_dir:
        print("  saved to", dot.save(filename=name + ".gv", directory=out_dir))


def basic_symbol_composition(out_dir):
    section("Basic Symbol Composition: basic operators")
    a = mx.sym.Variable('a')
    b = mx.sym.Variable('b')
    c = a + b
    print((a, b, c))

    # elemental wise multiplication
    d = a * b
    # matrix multiplication
    e = mx.sym.dot(a, b)
    # reshape
    f = mx.sym.reshape(d + e, shape=(1, 4))
    # broadcast
    g = mx.sym.broadcast_to(f, shape=(2, 4))
    # plot
    show_plot(mx.viz.plot_network(symbol=g), out_dir, "broadcast")
    return c


def basic_neural_networks(out_dir):
    section("Basic Neural Networks")
    net = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data=net, name='fc1', num_hidden=128)
    net = mx.sym.Activation(data=net, name='relu1', act_type="relu")
    net = mx.sym.FullyConnected(data=net, name='fc2', num_hidden=10)
    net = mx.sym.SoftmaxOutput(data=net, name='out')
    show_plot(mx.viz.plot_network(net, shape={'data': (100, 200)}), out_dir, "mlp")
    print(net.list_arguments())

    net = mx.symbol.Variable('data')
    w = mx.symbol.Variable('myweight')
    net = mx.symbol.FullyConnected(data=net, weight=w, name='fc1', num_hidden=128)
    print(net.list_arguments())


def more_complicated_composition():
    section("More Complicated Composition")
    lhs = mx.symbol.Variable('data1')
    rhs = mx.symbol.Variable('data2')
    net = mx.symbol.FullyConnected(data=lhs + rhs, name='fc1', num_hidden=128)
    print(net.list_arguments())

    data = mx.symbol.Variable('data')
    net1 = mx.symbol.FullyConnected(data=data, name='fc1', num_hidden=10)
    print(net1.list_arguments())
    net2 = mx.symbol.Variable('data2')
    net2 = mx.symbol.FullyConnected(data=net2, name='fc2', num_hidden=10)
    composed = net2(data2=net1, name='composed')
    print(composed.list_arguments())

    data = mx.sym.Variable("data")
    net = data
    n_layer = 2
    for i in range(n_layer):
        with mx.name.Prefix("layer%d_" % (i + 1)):
            net = mx.sym.FullyConnected(data=net, name="fc", num_hidden=100)
    print(net.list_arguments())


def ConvFactory(data, num_filter, kernel, stride=(1, 1), pad=(0, 0), name=None, suffix=''):  # noqa: N802
    conv = mx.sym.Convolution(data=data, num_filter=num_filter, kernel=kernel,
                              stride=stride, pad=pad, name='conv_%s%s' % (name, suffix))
    bn = mx.sym.BatchNorm(data=conv, name='bn_%s%s' % (name, suffix))
    act = mx.sym.Activation(data=bn, act_type='relu', name='relu_%s%s' % (name, suffix))
    return act


def InceptionFactoryA(data, num_1x1, num_3x3red, num_3x3, num_d3x3red, num_d3x3,  # noqa: N802
                      pool, proj, name):
    # 1x1
    c1x1 = ConvFactory(data=data, num_filter=num_1x1, kernel=(1, 1), name=('%s_1x1' % name))
    # 3x3 reduce + 3x3
    c3x3r = ConvFactory(data=data, num_filter=num_3x3red, kernel=(1, 1), name=('%s_3x3' % name),
                        suffix='_reduce')
    c3x3 = ConvFactory(data=c3x3r, num_filter=num_3x3, kernel=(3, 3), pad=(1, 1), name=('%s_3x3' % name))
    # double 3x3 reduce + double 3x3
    cd3x3r = ConvFactory(data=data, num_filter=num_d3x3red, kernel=(1, 1), name=('%s_double_3x3' % name),
                         suffix='_reduce')
    cd3x3 = ConvFactory(data=cd3x3r, num_filter=num_d3x3, kernel=(3, 3), pad=(1, 1),
                        name=('%s_double_3x3_0' % name))
    cd3x3 = ConvFactory(data=cd3x3, num_filter=num_d3x3, kernel=(3, 3), pad=(1, 1),
                        name=('%s_double_3x3_1' % name))
    # pool + proj
    pooling = mx.sym.Pooling(data=data, kernel=(3, 3), stride=(1, 1), pad=(1, 1), pool_type=pool,
                             name=('%s_pool_%s_pool' % (pool, name)))
    cproj = ConvFactory(data=pooling, num_filter=proj, kernel=(1, 1), name=('%s_proj' % name))
    # concat
    concat = mx.sym.Concat(*[c1x1, c3x3, cd3x3, cproj], name='ch_concat_%s_chconcat' % name)
    return concat


def modularized_construction(out_dir):
    section("Modularized Construction for Deep Networks")
    prev = mx.sym.Variable(name="Previous Output")
    conv_comp = ConvFactory(data=prev, num_filter=64, kernel=(7, 7), stride=(2, 2))
    shape = {"Previous Output": (128, 3, 28, 28)}
    show_plot(mx.viz.plot_network(symbol=conv_comp, shape=shape), out_dir, "conv_factory")
    print(conv_comp.infer_shape(**shape)[1])

    prev = mx.sym.Variable(name="Previous Output")
    in3a = InceptionFactoryA(prev, 64, 64, 64, 64, 96, "avg", 32, name="in3a")
    show_plot(mx.viz.plot_network(symbol=in3a, shape=shape), out_dir, "inception")
    print(in3a.infer_shape(**shape)[1])


def group_multiple_symbols():
    section("Group Multiple Symbols")
    net = mx.sym.Variable('data')
    fc1 = mx.sym.FullyConnected(data=net, name='fc1', num_hidden=128)
    net = mx.sym.Activation(data=fc1, name='relu1', act_type="relu")
    out1 = mx.sym.SoftmaxOutput(data=net, name='softmax')
    out2 = mx.sym.LinearRegressionOutput(data=net, name='regression')
    group = mx.sym.Group([out1, out2])
    print(group.list_outputs())


def shape_and_type_inference(c):
    section("Symbol Manipulation: shape and type inference")
    arg_name = c.list_arguments()  # get the names of the inputs
    out_name = c.list_outputs()    # get the names of the outputs
    # infers output shape given the shape of input arguments
    arg_shape, out_shape, _ = c.infer_shape(a=(2, 3), b=(2, 3))
    # infers output type given the type of input arguments
    arg_type, out_type, _ = c.infer_type(a='float32', b='float32')
    print({'input': dict(zip(arg_name, arg_shape)),
           'output': dict(zip(out_name, out_shape))})
    print({'input': dict(zip(arg_name, arg_type)),
           'output': dict(zip(out_name, out_type))})


def bind_and_evaluate(c):
    section("Bind with Data and Evaluate")
    ex = c.bind(ctx=mx.cpu(), args={'a': mx.nd.ones([2, 3]),
                                    'b': mx.nd.ones([2, 3])})
    ex.forward()
    print('number of outputs = %d\nthe first output = \n%s' % (
        len(ex.outputs), ex.outputs[0].asnumpy()))

    gpu_device = mx.gpu() if mx.context.num_gpus() > 0 else mx.cpu()  # the tutorial: "mx.cpu() without GPUs"
    ex_gpu = c.bind(ctx=gpu_device, args={'a': mx.nd.ones([3, 4], gpu_device) * 2,
                                          'b': mx.nd.ones([3, 4], gpu_device) * 3})
    ex_gpu.forward()
    print(ex_gpu.outputs[0].asnumpy())

    ex = c.eval(ctx=mx.cpu(), a=mx.nd.ones([2, 3]), b=mx.nd.ones([2, 3]))
    print('number of outputs = %d\nthe first output = \n%s' % (
        len(ex), ex[0].asnumpy()))


def load_and_save(c, out_dir):
    section("Load and Save")
    print(c.tojson())
    path = os.path.join(out_dir, 'symbol-c.json')
    c.save(path)
    c2 = mx.sym.load(path)
    print(c.tojson() == c2.tojson())


def type_cast():
    section("Advanced Usages: type cast")
    a = mx.sym.Variable('data')
    b = mx.sym.cast(data=a, dtype='float16')
    arg, out, _ = b.infer_type(data='float32')
    print({'input': arg, 'output': out})

    c = mx.sym.cast(data=a, dtype='uint8')
    arg, out, _ = c.infer_type(data='int32')
    print({'input': arg, 'output': out})


def variable_sharing():
    section("Advanced Usages: variable sharing")
    a = mx.sym.Variable('a')
    b = mx.sym.Variable('b')
    b = a + a * a

    data = mx.nd.ones((2, 3)) * 2
    ex = b.bind(ctx=mx.cpu(), args={'a': data, 'b': data})
    ex.forward()
    print(ex.outputs[0].asnumpy())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="accepted for symmetry with the other examples")
    parser.add_argument("--out", default=None, help="folder for symbol-c.json and the DOT pictures")
    args = parser.parse_args()
    out_dir = args.out or tempfile.mkdtemp(prefix="symbol-tutorial-")
    os.makedirs(out_dir, exist_ok=True)

    c = basic_symbol_composition(args.out)
    basic_neural_networks(args.out)
    more_complicated_composition()
    modularized_construction(args.out)
    group_multiple_symbols()
    shape_and_type_inference(c)
    bind_and_evaluate(c)
    load_and_save(c, out_dir)
    type_cast()
    variable_sharing()


if __name__ == "__main__":
    main()
