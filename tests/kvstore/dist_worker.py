"""One worker of the distributed-kvstore tests: `mpiexec -n 2 python dist_worker.py SCENARIO OUTDIR`.

Also run without mpiexec (one worker) for the references. Each scenario writes
``OUTDIR/<scenario>_rank<R>.npz`` with what the test compares.
"""
from __future__ import annotations

import os
import signal
import sys
import time
import warnings

import numpy as np

import hybridgraph as mx
from hybridgraph import autograd, gluon
from hybridgraph.gluon import nn

GLOBAL_BATCH = 8
STEPS = 20
#: FAKE_NCCL=1: the contexts are GPUs of the cupy/NCCL test double (tests/kvstore/fake_nccl.py)
FAKE_NCCL = os.getenv("FAKE_NCCL") == "1"


def device(i: int):
    """Context i of a worker: cpu(i), or gpu(i) under the NCCL test double."""
    return mx.gpu(i) if FAKE_NCCL else mx.cpu(i)


def make_net(kind: str) -> gluon.Block:
    net = nn.HybridSequential(prefix=f"{kind}_")
    with net.name_scope():
        if kind == "mlp":
            net.add(nn.Dense(16, activation="relu"), nn.Dense(4))
        else:
            net.add(nn.Conv2D(4, 3, padding=1))
            if kind == "cnnbn":
                net.add(nn.BatchNorm())
            net.add(nn.Activation("relu"), nn.MaxPool2D(2), nn.Flatten(), nn.Dense(4))
    return net


def batches(kind: str, steps: int) -> list:
    rng = np.random.RandomState(42)
    shape = (GLOBAL_BATCH, 6) if kind == "mlp" else (GLOBAL_BATCH, 2, 6, 6)
    return [(rng.uniform(-1, 1, shape).astype(np.float32), rng.randint(0, 4, GLOBAL_BATCH).astype(np.float32))
            for _ in range(steps)]


def train(kind: str, kv, rank: int, size: int, start: int = 0, steps: int = STEPS, load: str | None = None,
          save: str | None = None, shares: int | None = None, update_on_kvstore: bool | None = None,
          decoy: bool = False) -> gluon.Block:
    """Train on this worker's share of each global batch; `shares` > size splits the share
    again and runs the pieces one by one (BatchNorm statistics per piece, as per worker).
    `decoy`: a backward on other data first, whose gradients the real one overwrites."""
    mx.random.seed(0)
    np.random.seed(0)
    net = make_net(kind)
    net.initialize(mx.init.Xavier())
    net(mx.nd.zeros((1, 6) if kind == "mlp" else (1, 2, 6, 6)))
    if load:
        net.load_parameters(load + ".params")
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9}, kvstore=kv,
                            update_on_kvstore=update_on_kvstore)
    if load:
        trainer.load_states(load + ".states")
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    shares = shares or size
    per = GLOBAL_BATCH // shares
    mine = range(rank * (shares // size), (rank + 1) * (shares // size))
    for x, y in batches(kind, start + steps)[start:]:
        if decoy:
            with autograd.record():
                decoy_loss = loss_fn(net(mx.nd.ones((per,) + x.shape[1:])), mx.nd.array(y[:per]))
            decoy_loss.backward()
        with autograd.record():
            losses = [loss_fn(net(mx.nd.array(x[p * per:(p + 1) * per])), mx.nd.array(y[p * per:(p + 1) * per]))
                      for p in mine]
        autograd.backward(losses)
        trainer.step(GLOBAL_BATCH)
    if save:
        if rank == 0:
            net.save_parameters(save + ".params")
        trainer.save_states(save + ".states")
    return net


def fit_module(kv, rank: int, size: int) -> dict:
    """Module.fit(kvstore=kv) for one epoch on this worker's part of the data (global batch 8,
    part `rank` of each), from the same seed everywhere; returns the learned parameters."""
    mx.random.seed(0)
    np.random.seed(0)
    data, label = mx.sym.Variable("data"), mx.sym.Variable("softmax_label")
    net = mx.sym.FullyConnected(data, num_hidden=8, name="fc1")
    net = mx.sym.FullyConnected(mx.sym.Activation(net, act_type="tanh"), num_hidden=3, name="fc2")
    net = mx.sym.SoftmaxOutput(net, label, name="softmax")
    xs = np.concatenate([x for x, _ in batches("mlp", 4)])
    ys = np.concatenate([y for _, y in batches("mlp", 4)]) % 3
    per = GLOBAL_BATCH // size
    pick = np.concatenate([np.arange(b * GLOBAL_BATCH + rank * per, b * GLOBAL_BATCH + (rank + 1) * per)
                           for b in range(4)])
    it = mx.io.NDArrayIter(xs[pick], ys[pick], batch_size=per)
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.fit(it, num_epoch=1, kvstore=kv, optimizer="sgd", initializer=mx.init.Xavier(),
            optimizer_params={"learning_rate": 0.5, "momentum": 0.9})
    args, _ = mod.get_params()
    return {k: v.asnumpy() for k, v in args.items()}


def params_of(net) -> dict:
    return {k: v.data().asnumpy() for k, v in net.collect_params().items()}


def scenario_api(kv, out: dict) -> None:
    r, n = kv.rank, kv.num_workers
    kv.init(3, mx.nd.ones((2, 3)) * (r + 10))           # rank 0's value wins
    a = mx.nd.zeros((2, 3))
    kv.pull(3, out=a)
    out["init"] = a.asnumpy()
    kv.push(3, [mx.nd.ones((2, 3)) * (r + 1), mx.nd.ones((2, 3), ctx=device(1))])  # devices then workers
    kv.pull(3, out=a)
    out["push"] = a.asnumpy()
    outs = [mx.nd.zeros((5,)), mx.nd.zeros((5,), ctx=device(1))]
    skv = mx.kv.create("dist_sync")
    skv.broadcast(["w", "v"], [mx.nd.arange(5) + 100 * r, mx.nd.ones((3,)) * r], out=[outs, mx.nd.zeros((3,))])
    out["broadcast"] = np.stack([o.asnumpy() for o in outs])
    vals = [mx.nd.ones((4,)) * (r + 1), mx.nd.ones((70000,)) * (r + 1)]  # the second spans buckets of 0.25 MB
    skv.init(["g1", "g2"], [mx.nd.zeros((4,)), mx.nd.zeros((70000,))])
    skv._bucket_bytes = 256 * 1024
    skv.pushpull(["g1", "g2"], vals)
    out["pushpull"] = np.array([vals[0].asnumpy()[0], vals[1].asnumpy()[-1]])
    # update on the store: every worker applies SGD to the summed gradient
    okv = mx.kv.create("dist_sync")
    okv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5))
    okv.init(0, mx.nd.ones((3,)))
    w = mx.nd.zeros((3,))
    okv.pushpull(0, mx.nd.ones((3,)) * (r + 1), out=w)
    out["optimizer"] = w.asnumpy()
    # 2-bit: each worker quantizes its own sum with its own residual
    ckv = mx.kv.create("dist_sync")
    ckv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    ckv.init(7, mx.nd.zeros((20,)))
    rng = np.random.RandomState(100 + r)
    got = []
    for _ in range(3):
        ckv.push(7, mx.nd.array(rng.uniform(-1, 1, 20)))
        res = mx.nd.zeros((20,))
        ckv.pull(7, out=res)
        got.append(res.asnumpy())
    out["compressed"] = np.stack(got)
    t = time.perf_counter()
    if r == 1:
        time.sleep(0.5)
    kv.barrier()
    out["barrier_wait"] = np.array(time.perf_counter() - t)
    out["rank_size"] = np.array([r, n])


def run(scenario: str, kv, outdir: str) -> dict:
    """Run one scenario on this worker; returns the arrays to compare."""
    r, n = kv.rank, kv.num_workers
    out: dict = {}
    if scenario == "api":
        scenario_api(kv, out)
    elif scenario in ("mlp", "cnn", "cnnbn"):
        out.update(params_of(train(scenario, kv, r, n, shares=int(os.getenv("SHARES", "0")) or None)))
    elif scenario in ("mlp_overlap", "mlp_stale"):  # a bucket per key: buckets start during backward
        from hybridgraph.kvstore.overlap import OverlapPlan
        kv._bucket_bytes = 64
        started: list = []
        finish = OverlapPlan.finish
        OverlapPlan.finish = lambda plan: started.append(len(plan.inflight)) or finish(plan)
        try:
            out.update(params_of(train("mlp", kv, r, n, decoy=scenario == "mlp_stale")))
        finally:
            OverlapPlan.finish = finish
        out["started_early"] = np.array(started)
    elif scenario == "mlp_local_update":  # allreduce only; every worker runs its own optimizer
        out.update(params_of(train("mlp", kv, r, n, update_on_kvstore=False)))
    elif scenario == "module":
        out.update(fit_module(kv, r, n))
    elif scenario == "ckpt_first":   # steps 0-4, then a checkpoint from rank 0
        train("mlp", kv, r, n, steps=5, save=os.path.join(outdir, "ckpt"))
    elif scenario == "ckpt_resume":  # steps 5-9 from the checkpoint, on any number of workers
        out.update(params_of(train("mlp", kv, r, n, start=5, steps=5, load=os.path.join(outdir, "ckpt"))))
    elif scenario == "ckpt_ref":
        out.update(params_of(train("mlp", kv, r, n, steps=10)))
    elif scenario == "init_differs":  # rank-dependent initial weights: rank 0's win at the first step
        mx.random.seed(r)
        net = make_net("mlp")
        net.initialize(mx.init.Xavier())
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1}, kvstore=kv)
        x, y = batches("mlp", 1)[0]
        with autograd.record():
            loss = gluon.loss.SoftmaxCrossEntropyLoss()(net(mx.nd.array(x)), mx.nd.array(y))
        loss.backward()
        trainer.step(GLOBAL_BATCH)
        out.update(params_of(net))
    elif scenario == "barrier_hang":  # rank 1 never reaches the barrier
        if r == 1:
            time.sleep(120)
        kv.barrier()
    elif scenario in ("raise", "kill", "hang"):
        kv.init(0, mx.nd.zeros((3,)))
        for step in range(100):
            if r == 1 and step == 3:
                if scenario == "raise":
                    raise ValueError("worker 1 broke on purpose")
                if scenario == "kill":
                    os.kill(os.getpid(), signal.SIGKILL)
                time.sleep(120)
            kv.pushpull(0, mx.nd.ones((3,)))
            time.sleep(0.01)
    else:
        raise ValueError(f"unknown scenario {scenario!r}")
    return out


def main() -> None:
    scenarios, outdir = sys.argv[1].split(","), sys.argv[2]
    if FAKE_NCCL:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import fake_nccl
        fake_nccl.install()
    for scenario in scenarios:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the single-worker warning of reference runs
            kv = mx.kv.create(os.getenv("KV_TYPE", "dist_sync"))  # a fresh store: keys are initialized once
        with device(0):   # default context of the scenario's arrays and parameters
            out = run(scenario, kv, outdir)
        if FAKE_NCCL:   # the calls the store made to NCCL in this scenario
            out["nccl_calls"] = np.array(fake_nccl.names())
            fake_nccl.CALLS.clear()
        np.savez(os.path.join(outdir, f"{scenario}_rank{kv.rank}.npz"), **out)


if __name__ == "__main__":
    main()
