"""The tutorial MLP trained with the Module API: one script text for MXNet and hybridgraph.

`SCRIPT.format(MX="mxnet")` or `SCRIPT.format(MX="hybridgraph")` is run as a
subprocess with: the data .npz, the initial-weights .params, the output .npz
and the checkpoint prefix. Only the import line differs between the two runs.
"""

SCRIPT = '''
import logging
import sys

import numpy as np
import {MX} as mx

logging.basicConfig(level=logging.INFO, format="%(message)s")
data_file, init_file, out_file, prefix = sys.argv[1:5]
d = np.load(data_file)
np.random.seed(42)

data = mx.sym.Variable("data")
net = mx.sym.FullyConnected(data, num_hidden=128, name="fc1")
net = mx.sym.Activation(net, act_type="relu", name="relu1")
net = mx.sym.FullyConnected(net, num_hidden=64, name="fc2")
net = mx.sym.Activation(net, act_type="relu", name="relu2")
net = mx.sym.FullyConnected(net, num_hidden=10, name="fc3")
net = mx.sym.SoftmaxOutput(net, name="softmax")

train_iter = mx.io.NDArrayIter(d["X_train"], d["y_train"], batch_size=32, shuffle=True)
val_iter = mx.io.NDArrayIter(d["X_val"], d["y_val"], batch_size=32)
init = mx.nd.load(init_file)

curve = []
def record(param):
    curve.append(param.eval_metric.get_global_name_value()[0][1])

val_curve = []
def record_val(param):
    val_curve.append(param.eval_metric.get_name_value()[0][1])

mod = mx.mod.Module(net, data_names=("data",), label_names=("softmax_label",), context=mx.cpu())
mod.fit(train_iter, eval_data=val_iter, num_epoch=int(d["epochs"]), optimizer="sgd",
        optimizer_params={{"learning_rate": 0.1, "momentum": 0.9}}, eval_metric="acc",
        arg_params=init, aux_params={{}},
        batch_end_callback=[mx.callback.Speedometer(32, 20), record],
        eval_end_callback=record_val,
        epoch_end_callback=mx.callback.do_checkpoint(prefix))
score = mod.score(val_iter, "acc")[0][1]
pred = mod.predict(val_iter).asnumpy()
args, _ = mod.get_params()
np.savez(out_file, curve=np.array(curve), val_curve=np.array(val_curve), score=score, pred=pred,
         **{{"w_" + k: v.asnumpy() for k, v in args.items()}})
'''

PREDICT = '''
import sys

import numpy as np
import {MX} as mx

prefix, epoch, data_file, out_file = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
x = np.load(data_file)["X_val"]
mod = mx.mod.Module.load(prefix, epoch, context=mx.cpu())
mod.bind(data_shapes=[("data", (32, x.shape[1]))], label_shapes=None, for_training=False)
pred = mod.predict(mx.io.NDArrayIter(x, batch_size=32)).asnumpy()
# the label is an input of SoftmaxOutput (unused in prediction), so it is an input here too
net = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data", "softmax_label"],
                                   "%s-%04d.params" % (prefix, epoch))
gluon_pred = net(mx.nd.array(x), mx.nd.zeros((x.shape[0],))).asnumpy()
np.savez(out_file, pred=pred, gluon_pred=gluon_pred)
'''
