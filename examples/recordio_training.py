"""Training from a RecordIO file: pack images into .rec/.idx, train with
`mx.io.ImageRecordIter`, evaluate through `gluon.data.vision` transforms.

    python examples/recordio_training.py            # 8 epochs
    python examples/recordio_training.py --quick    # 4 epochs (CI)

1. scikit-learn's bundled digits (8x8, no download) are upscaled to 18x18 RGB and
   written with `mx.recordio.MXIndexedRecordIO` + `recordio.pack_img` (PNG), the
   format MXNet's im2rec writes and real MXNet reads.
2. Training reads train.rec with `mx.io.ImageRecordIter` (random 16x16 crops, mean and
   std normalisation, shuffling through the .idx) into a hybridized Gluon CNN.
3. Validation reads val.rec as a `gluon.data.vision.ImageRecordDataset` with a
   hybridizable transform pipeline (CenterCrop, ToTensor, Normalize) and a DataLoader.

Needs Pillow (`pip install 'hybridgraph[image]'`) and scikit-learn.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import hybridgraph as mx  # noqa: E402  (MXNet scripts only change this line)
from hybridgraph import autograd, gluon  # noqa: E402
from hybridgraph.gluon import nn  # noqa: E402
from hybridgraph.gluon.data.vision import transforms  # noqa: E402

MEAN, STD = 60.0, 90.0  # pixel statistics of the upscaled digits (0..255)


def write_records(folder: Path, seed: int = 0) -> dict:
    """Digits as 18x18 RGB PNGs in train.rec/.idx and val.rec/.idx (80/20 split)."""
    from sklearn.datasets import load_digits
    digits = load_digits()
    order = np.random.RandomState(seed).permutation(len(digits.images))
    split = int(0.8 * len(order))
    counts = {}
    for name, idx in (("train", order[:split]), ("val", order[split:])):
        rec = mx.recordio.MXIndexedRecordIO(str(folder / f"{name}.idx"), str(folder / f"{name}.rec"), "w")
        for i, k in enumerate(idx):
            small = (digits.images[k] * (255.0 / 16.0)).astype(np.uint8)
            big = mx.image.imresize(mx.nd.array(small[:, :, None].repeat(3, axis=2), dtype="uint8"), 18, 18,
                                    interp=1).asnumpy()
            header = mx.recordio.IRHeader(0, float(digits.target[k]), i, 0)
            rec.write_idx(i, mx.recordio.pack_img(header, big[:, :, ::-1], img_fmt=".png"))  # pack_img takes BGR
        rec.close()
        counts[name] = len(idx)
    return counts


def build_net() -> nn.HybridSequential:
    net = nn.HybridSequential()
    net.add(nn.Conv2D(16, kernel_size=3, padding=1, activation="relu"), nn.MaxPool2D(2),
            nn.Conv2D(32, kernel_size=3, padding=1, activation="relu"), nn.MaxPool2D(2),
            nn.Flatten(), nn.Dense(64, activation="relu"), nn.Dense(10))
    return net


def evaluate(net, folder: Path) -> float:
    """Accuracy on val.rec read through ImageRecordDataset + transforms."""
    pipeline = transforms.Compose([transforms.CenterCrop(16), transforms.ToTensor(),
                                   transforms.Normalize(MEAN / 255.0, STD / 255.0)])
    dataset = gluon.data.vision.ImageRecordDataset(str(folder / "val.rec")).transform_first(pipeline)
    metric = mx.metric.Accuracy()
    for data, label in gluon.data.DataLoader(dataset, batch_size=64):
        metric.update([label], [net(data)])
    return metric.get()[1]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 epochs instead of 8 (for CI)")
    parser.add_argument("--out", default=None, help="folder for the .rec/.idx files")
    args = parser.parse_args(argv)
    epochs = 4 if args.quick else 8
    mx.random.seed(3)
    np.random.seed(3)
    folder = Path(args.out or tempfile.mkdtemp(prefix="recordio-training-"))
    folder.mkdir(parents=True, exist_ok=True)
    counts = write_records(folder)
    print(f"wrote {counts['train']} training and {counts['val']} validation records to {folder}")

    train_iter = mx.io.ImageRecordIter(path_imgrec=str(folder / "train.rec"), path_imgidx=str(folder / "train.idx"),
                                       data_shape=(3, 16, 16), batch_size=32, shuffle=True, rand_crop=True,
                                       mean_r=MEAN, mean_g=MEAN, mean_b=MEAN, std_r=STD, std_g=STD, std_b=STD,
                                       seed=1)
    net = build_net()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 2e-3})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for epoch in range(epochs):
        train_iter.reset()
        metric = mx.metric.Accuracy()
        for batch in train_iter:
            data, label = batch.data[0], batch.label[0]
            with autograd.record():
                out = net(data)
                loss = loss_fn(out, label)
            loss.backward()
            trainer.step(data.shape[0])
            metric.update([label], [out])
        print(f"epoch {epoch}: train accuracy {metric.get()[1]:.3f}")
    accuracy = evaluate(net, folder)
    print(f"validation accuracy: {accuracy:.4f}")
    return {"accuracy": accuracy, "records": counts, "folder": str(folder)}


if __name__ == "__main__":
    main()
