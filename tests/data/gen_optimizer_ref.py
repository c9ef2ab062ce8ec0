"""Write optimizer_ref.npz: weights after 3 updates of every optimizer config, computed
by MXNet 1.9.1, plus learning-rate scheduler values.

Run with MXNet's interpreter from this directory:  /work/mxvenv/bin/python gen_optimizer_ref.py
"""
import json

import mxnet as mx
import numpy as np

# (case name, optimizer name, kwargs, dtype)
CONFIGS = [
    ("sgd", "sgd", {"learning_rate": 0.1}, "float32"),
    ("sgd_mom", "sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}, "float32"),
    ("sgd_clip", "sgd", {"learning_rate": 0.1, "momentum": 0.9, "clip_gradient": 0.05, "rescale_grad": 0.5},
     "float32"),
    ("sgd_mp", "sgd", {"learning_rate": 0.1, "momentum": 0.9, "multi_precision": True}, "float16"),
    ("sgd_mp_nomom", "sgd", {"learning_rate": 0.1, "multi_precision": True, "wd": 0.01}, "float16"),
    ("sgd_f64", "sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}, "float64"),
    ("nag", "nag", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}, "float32"),
    ("nag_nomom", "nag", {"learning_rate": 0.1}, "float32"),
    ("nag_mp", "nag", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01, "multi_precision": True}, "float16"),
    ("adam", "adam", {"learning_rate": 0.1, "wd": 0.01}, "float32"),
    ("adam_clip", "adam", {"learning_rate": 0.1, "clip_gradient": 0.1, "rescale_grad": 2.0}, "float32"),
    ("adamax", "adamax", {"wd": 0.01}, "float32"),
    ("nadam", "nadam", {"learning_rate": 0.1, "wd": 0.01}, "float32"),
    ("adagrad", "adagrad", {"learning_rate": 0.1, "wd": 0.01}, "float32"),
    ("adadelta", "adadelta", {"wd": 0.01, "clip_gradient": 0.5}, "float32"),
    ("rmsprop", "rmsprop", {"learning_rate": 0.01}, "float32"),
    ("rmsprop_centered", "rmsprop", {"learning_rate": 0.01, "centered": True, "clip_weights": 0.5, "wd": 0.01},
     "float32"),
    ("ftrl", "ftrl", {"wd": 0.01}, "float32"),
    ("ftml", "ftml", {"learning_rate": 0.1, "wd": 0.01}, "float32"),
    ("signum", "signum", {"learning_rate": 0.1, "wd": 0.01, "wd_lh": 0.01}, "float32"),
    ("signsgd", "signum", {"learning_rate": 0.1, "momentum": 0.0}, "float32"),
    ("lamb", "lamb", {"learning_rate": 0.1, "wd": 0.01}, "float32"),
    ("lamb_bounds", "lamb", {"learning_rate": 0.1, "lower_bound": 0.1, "upper_bound": 2.0,
                             "bias_correction": False}, "float32"),
    ("lars", "lars", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01, "eta": 0.01}, "float32"),
    ("dcasgd", "dcasgd", {"learning_rate": 0.1, "wd": 0.01}, "float32"),
    ("test", "test", {"rescale_grad": 0.5}, "float32"),
    ("sgd_sched", "sgd", {"momentum": 0.9, "lr_scheduler": ("factor", {"step": 1, "factor": 0.5, "base_lr": 0.1})},
     "float32"),
]

SCHEDULERS = [
    ("factor", "FactorScheduler", {"step": 3, "factor": 0.5, "base_lr": 1.0, "stop_factor_lr": 0.05}),
    ("factor_warm", "FactorScheduler", {"step": 2, "factor": 0.9, "base_lr": 0.5, "warmup_steps": 4,
                                        "warmup_begin_lr": 0.1}),
    ("multifactor", "MultiFactorScheduler", {"step": [3, 7, 12], "factor": 0.3, "base_lr": 1.0,
                                             "warmup_steps": 2, "warmup_mode": "constant",
                                             "warmup_begin_lr": 0.2}),
    ("poly", "PolyScheduler", {"max_update": 15, "base_lr": 1.0, "pwr": 2, "final_lr": 0.01,
                               "warmup_steps": 3, "warmup_begin_lr": 0.1}),
    ("cosine", "CosineScheduler", {"max_update": 15, "base_lr": 1.0, "final_lr": 0.05, "warmup_steps": 3}),
]


def make_scheduler(spec):
    kind, kw = spec
    return {"factor": mx.lr_scheduler.FactorScheduler}[kind](**kw)


def main():
    out = {}
    rng = np.random.RandomState(0)
    for case, name, kwargs, dtype in CONFIGS:
        w0 = rng.uniform(-1, 1, size=(3, 4)).astype(dtype)
        grads = rng.uniform(-1, 1, size=(3, 3, 4)).astype(dtype)
        kw = dict(kwargs)
        if "lr_scheduler" in kw:
            kw["lr_scheduler"] = make_scheduler(kw["lr_scheduler"])
        opt = mx.optimizer.create(name, **kw)
        weight = mx.nd.array(w0, dtype=dtype)
        state = opt.create_state_multi_precision(0, weight)
        steps = []
        for g in grads:
            opt.update_multi_precision(0, weight, mx.nd.array(g, dtype=dtype), state)
            steps.append(weight.asnumpy())
        out[f"{case}/w0"] = w0
        out[f"{case}/grads"] = grads
        out[f"{case}/steps"] = np.stack(steps)
    for case, cls, kwargs in SCHEDULERS:
        sched = getattr(mx.lr_scheduler, cls)(**kwargs)
        out[f"sched/{case}"] = np.array([sched(i) for i in range(20)], dtype=np.float64)
    out["configs"] = np.array(json.dumps(CONFIGS))
    out["schedulers"] = np.array(json.dumps(SCHEDULERS))
    np.savez_compressed("optimizer_ref.npz", **out)


if __name__ == "__main__":
    main()
