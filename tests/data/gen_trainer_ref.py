"""Write trainer_ref.npz (+ trainer_ref_<case>.states): a Dense net trained 3 steps by
MXNet 1.9.1's gluon.Trainer, and the trainer states after 2 steps.

Run with MXNet's interpreter from this directory:  /work/mxvenv/bin/python gen_trainer_ref.py
"""
import json

import mxnet as mx
import numpy as np

CASES = [
    ("sgd", "sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}),
    ("adam", "adam", {"learning_rate": 0.01, "wd": 0.001, "clip_gradient": 1.0}),
    ("nag_sched", "nag", {"momentum": 0.9, "lr_scheduler": "factor"}),
]


def main():
    rng = np.random.RandomState(1)
    w0 = rng.uniform(-1, 1, (4, 3)).astype("float32")
    b0 = rng.uniform(-1, 1, (4,)).astype("float32")
    xs = rng.uniform(-1, 1, (3, 5, 3)).astype("float32")
    out = {"w0": w0, "b0": b0, "xs": xs}
    for case, name, kwargs in CASES:
        kw = dict(kwargs)
        if kw.get("lr_scheduler") == "factor":
            kw["lr_scheduler"] = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=0.2)
        net = mx.gluon.nn.Dense(4, in_units=3, prefix="dense0_")
        net.initialize()
        net.weight.set_data(mx.nd.array(w0))
        net.bias.set_data(mx.nd.array(b0))
        net.bias.lr_mult = 2.0
        trainer = mx.gluon.Trainer(net.collect_params(), name, kw)
        steps = []
        for i, x in enumerate(xs):
            with mx.autograd.record():
                loss = (net(mx.nd.array(x)) ** 2).sum()
            loss.backward()
            trainer.step(5)
            steps.append(np.concatenate([net.weight.data().asnumpy().ravel(), net.bias.data().asnumpy()]))
            if i == 1:
                trainer.save_states(f"trainer_ref_{case}.states")
        out[f"{case}/steps"] = np.stack(steps)
    out["cases"] = np.array(json.dumps(CASES))
    np.savez_compressed("trainer_ref.npz", **out)


if __name__ == "__main__":
    main()
