"""Writes svrg_ref.json with real MXNet 1.9.1 (.mxvenv): weights, biases and full gradients of
an SVRGModule trained on a linear regression, without a kvstore, with a KVStore instance, on two
contexts, with Adam, and through `fit`. tests/compat/test_svrg.py runs `run(mx, SVRGModule)`
under hybridgraph and compares.

    /work/main/.mxvenv/bin/python tests/data/gen_svrg_ref.py
"""
import json
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "svrg_ref.json")


def run(mx, SVRGModule):  # noqa: N803 - the class under test
    rng = np.random.RandomState(0)
    data = rng.randint(1, 5, [40, 2]).astype("float32")
    label = data.dot(np.array([1.0, 2.0]))
    lro = mx.sym.LinearRegressionOutput(mx.sym.FullyConnected(mx.sym.Variable("data"), name="fc1", num_hidden=1),
                                        mx.sym.Variable("lin_reg_label"), name="lro")

    def make(ctx):
        it = mx.io.NDArrayIter(data, label, batch_size=8, shuffle=False, label_name="lin_reg_label")
        mod = SVRGModule(symbol=lro, data_names=["data"], label_names=["lin_reg_label"], update_freq=2, context=ctx)
        return it, mod

    def train(kvstore, ctx, opt="sgd", params=(("learning_rate", 0.01),)):
        it, mod = make(ctx)
        mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
        mod.init_params(initializer=mx.init.One())
        mod.init_optimizer(kvstore=mx.kv.create("local") if kvstore == "instance" else kvstore, optimizer=opt,
                           optimizer_params=params)
        out = [type(mod._optimizer).__name__]
        for epoch in range(3):
            if epoch % mod.update_freq == 0:
                mod.update_full_grads(it)
            it.reset()
            for batch in it:
                mod.forward_backward(batch)
                mod.update()
            arg = mod.get_params()[0]
            out += [arg["fc1_weight"].asnumpy().tolist(), arg["fc1_bias"].asnumpy().tolist()]
        out.append(mod._param_dict[0]["fc1_weight"].asnumpy().tolist())
        return out

    res = {"local": train("local", mx.cpu()), "instance": train("instance", mx.cpu()),
           "two_ctx": train("local", [mx.cpu(0), mx.cpu(1)]),
           "adam": train("local", mx.cpu(), "adam", (("learning_rate", 0.05), ("beta1", 0.8)))}
    it, mod = make(mx.cpu())
    mod.fit(it, eval_metric="mse", optimizer="sgd", optimizer_params=(("learning_rate", 0.01),), num_epoch=4,
            initializer=mx.init.One())
    res["fit"] = mod.get_params()[0]["fc1_weight"].asnumpy().tolist()
    return json.loads(json.dumps(res))


if __name__ == "__main__":
    import mxnet
    from mxnet.contrib.svrg_optimization.svrg_module import SVRGModule as MXSVRGModule

    with open(OUT, "w") as f:
        json.dump(run(mxnet, MXSVRGModule), f)
