"""AlexNet (MXNet 1.9.1's ``gluon.model_zoo.vision.alexnet``)."""
from __future__ import annotations

from typing import Any

from ... import nn
from ...hybrid_block import HybridBlock
from ._common import finish

__all__ = ["AlexNet", "alexnet"]


class AlexNet(HybridBlock):
    r"""AlexNet model from the `"One weird trick..." <https://arxiv.org/abs/1404.5997>`_ paper.

    Parameters
    ----------
    classes : int, default 1000
        Number of classes for the output layer.
    """

    def __init__(self, classes: int = 1000, **kwargs: Any):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                self._add_features(self.features)
            self.output = nn.Dense(classes)

    @staticmethod
    def _add_features(features: nn.HybridSequential) -> None:
        features.add(nn.Conv2D(64, kernel_size=11, strides=4, padding=2, activation="relu"))
        features.add(nn.MaxPool2D(pool_size=3, strides=2))
        features.add(nn.Conv2D(192, kernel_size=5, padding=2, activation="relu"))
        features.add(nn.MaxPool2D(pool_size=3, strides=2))
        features.add(nn.Conv2D(384, kernel_size=3, padding=1, activation="relu"))
        features.add(nn.Conv2D(256, kernel_size=3, padding=1, activation="relu"))
        features.add(nn.Conv2D(256, kernel_size=3, padding=1, activation="relu"))
        features.add(nn.MaxPool2D(pool_size=3, strides=2))
        features.add(nn.Flatten())
        features.add(nn.Dense(4096, activation="relu"))
        features.add(nn.Dropout(0.5))
        features.add(nn.Dense(4096, activation="relu"))
        features.add(nn.Dropout(0.5))

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def alexnet(pretrained: Any = False, ctx: Any = None, root: str | None = None, **kwargs: Any) -> AlexNet:
    r"""AlexNet model from the `"One weird trick..." <https://arxiv.org/abs/1404.5997>`_ paper.

    Parameters
    ----------
    pretrained : bool or str, default False
        Load pretrained weights: True looks for MXNet's ``alexnet-<hash>.params`` in `root`
        (never downloads); a path loads that ``save_parameters`` file.
    ctx : Context, default CPU
        The context in which to load the pretrained weights.
    root : str, default $MXNET_HOME/models
        Location of the model parameter files.
    """
    return finish(AlexNet(**kwargs), "alexnet", pretrained, ctx, root)
