"""Data-parallel Gluon training on several processes with kvstore='dist_sync' (MPI).

    python -m hybridgraph.launch -n 2 python examples/distributed_training.py
    mpiexec -n 2 python examples/distributed_training.py --quick      # the same, by hand
    python examples/distributed_training.py                           # one worker (a warning says so)

Needs `pip install 'hybridgraph[dist]'` (mpi4py + mpich) for more than one worker.
Every worker builds the same network from the same seed, reads its own part of
scikit-learn's digits (`SplitSampler(len, kv.num_workers, kv.rank)`), and
`Trainer(..., kvstore=kv)` sums the gradients of all workers (allreduce) before
the update, so each step is one step on the global batch
(``batch_size * num_workers``). Rank 0 writes the checkpoint (atomically), and
every worker prints its accuracy, which is the same on all of them.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import hybridgraph as mx  # noqa: E402  (MXNet scripts only change this line)
from hybridgraph import autograd, gluon  # noqa: E402
from hybridgraph.gluon import nn  # noqa: E402
from hybridgraph.gluon.data import DataLoader, SplitSampler  # noqa: E402


def load_digits(seed: int = 0):
    """Digits as (N, 64) float32 rows in [0, 1], split 80/20 (same split on every worker)."""
    from sklearn.datasets import load_digits as sk_digits
    digits = sk_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.float32)
    order = np.random.RandomState(seed).permutation(len(x))
    x, y = x[order], y[order]
    split = int(0.8 * len(x))
    return gluon.data.ArrayDataset(x[:split], y[:split]), gluon.data.ArrayDataset(x[split:], y[split:])


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="3 epochs (CI)")
    parser.add_argument("--batch-size", type=int, default=32, help="per worker")
    parser.add_argument("--out", type=str, default=None, help="checkpoint folder (default: a temporary one)")
    args = parser.parse_args(argv)
    epochs = 3 if args.quick else args.epochs

    kv = mx.kv.create("dist_sync")
    np.random.seed(kv.rank)          # shuffling may differ per worker; the model must not:
    mx.random.seed(0)                # same initial weights everywhere (rank 0's are broadcast anyway)
    train_set, test_set = load_digits()
    train = DataLoader(train_set, batch_size=args.batch_size, last_batch="discard",
                       sampler=SplitSampler(len(train_set), kv.num_workers, kv.rank))
    test = DataLoader(test_set, batch_size=128)

    net = nn.HybridSequential(prefix="mlp_")
    with net.name_scope():
        net.add(nn.Dense(64, activation="relu"), nn.Dense(10))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.2, "momentum": 0.9}, kvstore=kv)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    global_batch = args.batch_size * kv.num_workers
    start, samples = time.perf_counter(), 0
    for _ in range(epochs):
        for data, label in train:
            with autograd.record():
                loss = loss_fn(net(data), label)
            loss.backward()
            trainer.step(global_batch)
            samples += data.shape[0]
    seconds = time.perf_counter() - start
    metric = mx.metric.Accuracy()
    for data, label in test:
        metric.update(label, net(data))
    accuracy = metric.get()[1]

    folder = Path(args.out or tempfile.mkdtemp(prefix="dist_example_"))
    folder.mkdir(parents=True, exist_ok=True)
    if kv.rank == 0:
        net.save_parameters(str(folder / "mlp.params"))
    trainer.save_states(str(folder / "mlp.states"))  # rank 0 writes, everyone waits at a barrier
    print(f"rank {kv.rank}/{kv.num_workers}: test accuracy {accuracy:.4f}, {samples / seconds:.0f} samples/s "
          f"on this worker, {kv.comm_seconds:.2f} s in allreduce; checkpoint in {folder}", flush=True)
    return {"accuracy": accuracy, "rank": kv.rank, "num_workers": kv.num_workers, "folder": str(folder)}


if __name__ == "__main__":
    main()
