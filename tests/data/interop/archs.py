"""Model definitions shared by hybridgraph and MXNet 1.9.1 (the same code runs on both).

`build(nn, name)` takes the library's `gluon.nn` module, so the interop tests
construct identical architectures on each side: same layers, same parameter
names, same exported graph.
"""
from __future__ import annotations

from typing import Any

INPUT_SHAPES = {"mlp": (4, 20), "lenet": (2, 1, 28, 28), "bn_dropout": (4, 3, 8, 8)}


def build(nn: Any, name: str) -> Any:
    """The architecture `name` ('mlp', 'lenet', 'bn_dropout') as a HybridSequential
    with prefix `NAME_` (names independent of how many blocks the process made before)."""
    net = nn.HybridSequential(prefix=f"{name}_")
    with net.name_scope():
        if name == "mlp":
            net.add(nn.Dense(32, activation="relu"), nn.Dense(16, activation="tanh"), nn.Dense(10))
        elif name == "lenet":
            net.add(nn.Conv2D(6, kernel_size=5, activation="relu"), nn.MaxPool2D(pool_size=2, strides=2),
                    nn.Conv2D(16, kernel_size=3, activation="relu"), nn.AvgPool2D(pool_size=2, strides=2),
                    nn.Flatten(), nn.Dense(32, activation="relu"), nn.Dense(10))
        elif name == "bn_dropout":
            net.add(nn.Conv2D(8, kernel_size=3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
                    nn.Dropout(0.3), nn.Flatten(), nn.Dense(16), nn.BatchNorm(), nn.LeakyReLU(0.1),
                    nn.Dropout(0.5), nn.Dense(5))
        else:
            raise ValueError(f"unknown architecture {name!r}")
    return net


def nested(nn: Any, prefix: str | None = None) -> Any:
    """A block with a `features` HybridSequential and a `head`: structural names `features.0.weight`."""

    class Net(nn.HybridBlock):
        def __init__(self, **kwargs: Any):
            super().__init__(**kwargs)
            with self.name_scope():
                self.features = nn.HybridSequential()
                self.features.add(nn.Conv2D(4, kernel_size=3, activation="relu"), nn.BatchNorm(),
                                  nn.MaxPool2D(), nn.Flatten())
                self.head = nn.Dense(5)

        def hybrid_forward(self, F: Any, x: Any) -> Any:  # noqa: N803
            return self.head(self.features(x))

    return Net(prefix=prefix)


def summary_net(nn: Any) -> Any:
    """The LeNet-like stack MXNet's summary example prints (with Dense/Conv activations)."""
    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(nn.Conv2D(6, 5, activation="relu"), nn.MaxPool2D(2), nn.BatchNorm(), nn.Flatten(),
                nn.Dense(16, activation="relu"), nn.Dropout(0.5), nn.Dense(10))
    return net


def two_output(nn: Any) -> Any:
    """A block returning a tuple, with a child Sequential of a Dense and an Activation."""

    class TwoOut(nn.HybridBlock):
        def __init__(self, **kwargs: Any):
            super().__init__(**kwargs)
            with self.name_scope():
                self.features = nn.HybridSequential()
                self.features.add(nn.Dense(8), nn.Activation("relu"))
                self.out = nn.Dense(2, in_units=8)

        def hybrid_forward(self, F: Any, x: Any) -> Any:  # noqa: N803
            return self.out(self.features(x)), x * 2

    return TwoOut(prefix="twoout_")
