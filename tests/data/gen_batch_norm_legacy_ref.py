"""Write batch_norm_legacy_ref.npz: MXNet 1.9.1's BatchNorm_v1 and contrib SyncBatchNorm
(training forward with output_mean_var, backward, updated moving statistics) through the
Executor. MXNet also writes 1 into gamma when fix_gamma (not recorded here: hybridgraph leaves
the input unchanged), and leaves SyncBatchNorm's mean/var outputs unwritten with
use_global_stats (those cases record only the output and gradients).

Run with MXNet's interpreter from this directory:
    /work/main/.mxvenv/bin/python gen_batch_norm_legacy_ref.py
"""
import json

import mxnet as mx
import numpy as np

CASES = [("BatchNorm_v1", (4, 3, 2, 2), {}), ("BatchNorm_v1", (5, 3), {"fix_gamma": False}),
         ("BatchNorm_v1", (4, 3, 2, 2), {"use_global_stats": True, "fix_gamma": False}),
         ("SyncBatchNorm", (4, 3, 2, 5), {"fix_gamma": False, "key": "k"}),
         ("SyncBatchNorm", (4, 2, 3), {"key": "k2", "eps": 1e-5}),
         ("SyncBatchNorm", (4, 2, 3), {"key": "k2", "use_global_stats": True, "fix_gamma": False})]


def main():
    rng = np.random.RandomState(3)
    store = {}
    for i, (op, shape, kw) in enumerate(CASES):
        fn = mx.sym.BatchNorm_v1 if op == "BatchNorm_v1" else mx.sym.contrib.SyncBatchNorm
        c = shape[1]
        sym = fn(mx.sym.var("x"), output_mean_var=True, name="bn", **kw)
        args = {"x": rng.uniform(-1, 1, shape), "bn_gamma": rng.uniform(0.5, 1.5, c),
                "bn_beta": rng.uniform(-1, 1, c)}
        aux = {"bn_moving_mean": rng.uniform(-0.5, 0.5, c), "bn_moving_var": rng.uniform(0.5, 1.5, c)}
        head = rng.uniform(-1, 1, shape)
        nd_args = {k: mx.nd.array(v) for k, v in args.items()}
        nd_aux = {k: mx.nd.array(v) for k, v in aux.items()}
        grads = {k: mx.nd.zeros(v.shape) for k, v in args.items()}
        exe = sym.bind(mx.cpu(), nd_args, args_grad=grads, aux_states=nd_aux)
        outs = exe.forward(is_train=True)
        exe.backward([mx.nd.array(head), mx.nd.zeros((c,)), mx.nd.zeros((c,))])
        for k, v in {**args, **aux}.items():
            store[f"{i}_in_{k}"] = v.astype(np.float32)
        store[f"{i}_head"] = head.astype(np.float32)
        for j, o in enumerate(outs):
            store[f"{i}_out{j}"] = o.asnumpy()
        for k, g in grads.items():
            store[f"{i}_grad_{k}"] = g.asnumpy()
        for k, v in nd_aux.items():
            store[f"{i}_after_{k}"] = v.asnumpy()
    store["meta"] = np.array(json.dumps(CASES))
    np.savez_compressed("batch_norm_legacy_ref.npz", **store)


if __name__ == "__main__":
    main()
