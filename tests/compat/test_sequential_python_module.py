"""mx.mod.SequentialModule chaining a symbolic Module and a PythonLossModule whose gradient is
a Python function: training reduces the loss; wiring, labels and duplicate-name checks."""
import numpy as np
import pytest

import hybridgraph as mx


def _softmax_grad(scores, labels):
    p = mx.nd.softmax(scores).asnumpy()
    p[np.arange(len(p)), labels.asnumpy().astype(int)] -= 1
    return p  # the Module's optimizer rescales by 1 / batch_size


def _data(n=64):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 5)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.float32)
    return mx.io.NDArrayIter(x, y, batch_size=16, label_name="softmax_label")


def test_sequential_module_trains_with_python_loss():
    mx.random.seed(0)
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    seq = mx.mod.SequentialModule()
    seq.add(mx.mod.Module(net, label_names=None))
    seq.add(mx.mod.PythonLossModule(grad_func=_softmax_grad), take_labels=True, auto_wiring=True)
    it = _data()
    seq.fit(it, num_epoch=15, optimizer="sgd", optimizer_params={"learning_rate": 0.5},
            initializer=mx.init.Xavier(), eval_metric="acc")
    it.reset()
    acc = dict(seq.score(it, "acc"))["accuracy"]
    assert acc > 0.9
    assert seq.output_shapes == [("pyloss_output", (16, 2))] and seq.data_names == ["data"]
    assert set(seq.get_params()[0]) == {"fc_weight", "fc_bias"}


def test_python_loss_module_contract():
    loss = mx.mod.PythonLossModule(grad_func=lambda s, lab: s * 0 + 1)
    loss.bind(data_shapes=[("data", (2, 3))], label_shapes=[("softmax_label", (2,))])
    batch = mx.io.DataBatch(data=[mx.nd.ones((2, 3))], label=[mx.nd.zeros((2,))])
    loss.forward(batch, is_train=True)
    loss.backward()
    assert loss.get_input_grads()[0].asnumpy().tolist() == [[1, 1, 1], [1, 1, 1]]
    with pytest.raises(AssertionError, match="out_grads"):
        loss.backward(out_grads=[mx.nd.ones((2, 3))])
    with pytest.raises(NotImplementedError, match="grad_func"):
        no_grad = mx.mod.PythonLossModule()
        no_grad.bind(data_shapes=[("data", (2, 3))], label_shapes=[("softmax_label", (2,))])
        no_grad.forward(batch, is_train=True)
        no_grad.backward()


def test_sequential_module_rejects_bad_meta_and_duplicate_params():
    seq = mx.mod.SequentialModule()
    with pytest.raises(AssertionError, match="typo"):
        seq.add(mx.mod.Module(mx.sym.Variable("data"), label_names=None), take_label=True)
    fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")
    seq.add(mx.mod.Module(fc, label_names=None)).add(mx.mod.Module(fc, label_names=None), auto_wiring=True)
    seq.bind(data_shapes=[("data", (2, 3))])
    with pytest.raises(AssertionError, match="Duplicated parameter names"):
        seq.init_params()
