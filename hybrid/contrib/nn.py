"""`mx.gluon.contrib.nn`: Concurrent, HybridConcurrent, Identity, SyncBatchNorm, PixelShuffle1D/2D/3D.

SyncBatchNorm synchronises statistics across devices in MXNet; hybridgraph runs
one process, so it is BatchNorm over the channel axis (the same result on one
device). SparseEmbedding keeps MXNet's interface; its weight and gradient are dense
arrays (hybridgraph has no row_sparse storage), with the same values.
"""
from __future__ import annotations

from typing import Any

from hybridgraph import nd

from ..block import Block
from ..hybrid_block import HybridBlock
from ..nn import BatchNorm, HybridSequential, Sequential

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "SparseEmbedding", "SyncBatchNorm", "PixelShuffle1D",
           "PixelShuffle2D", "PixelShuffle3D"]


class Concurrent(Sequential):
    """Feed the input to every child and concatenate their outputs along `axis`."""

    def __init__(self, axis: int = -1, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):
        return nd.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class HybridConcurrent(HybridSequential):
    """Hybridizable Concurrent: children's outputs concatenated along `axis`."""

    def __init__(self, axis: int = -1, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    forward = HybridBlock.forward  # HybridSequential chains its children; this one concatenates them

    def hybrid_forward(self, F, x):
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class Identity(HybridBlock):
    """Returns its input (the residual branch of a HybridConcurrent)."""

    def hybrid_forward(self, F, x):
        return x


class SparseEmbedding(Block):
    """Embedding whose gradient only touches the looked-up rows (dense storage here)."""

    def __init__(self, input_dim: int, output_dim: int, dtype: Any = "float32", weight_initializer: Any = None,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype, "sparse_grad": True}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim), init=weight_initializer, dtype=dtype)

    def forward(self, x):
        return nd.Embedding(x, self.weight.data(x.context), name="fwd", **self._kwargs)

    def __repr__(self) -> str:
        return "{block_name}({input_dim} -> {output_dim}, {dtype})".format(block_name=self.__class__.__name__,
                                                                          **self._kwargs)


class SyncBatchNorm(BatchNorm):
    """Cross-device BatchNorm; with one process it is BatchNorm on axis 1 (`num_devices` is accepted)."""

    def __init__(self, in_channels: int = 0, num_devices: int | None = None, momentum: float = 0.9,
                 epsilon: float = 1e-5, center: bool = True, scale: bool = True, use_global_stats: bool = False,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
                 running_mean_initializer: Any = "zeros", running_variance_initializer: Any = "ones", **kwargs: Any):
        super().__init__(axis=1, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
                         use_global_stats=use_global_stats, beta_initializer=beta_initializer,
                         gamma_initializer=gamma_initializer, running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer, in_channels=in_channels,
                         **kwargs)
        self.num_devices = num_devices


def _factors(factor: Any, n: int) -> tuple:
    try:
        return (int(factor),) * n
    except TypeError:
        out = tuple(int(f) for f in factor)
        if len(out) != n:
            raise AssertionError(f"wrong length {len(out)}: PixelShuffle{n}D takes {n} factors") from None
        return out


class PixelShuffle1D(HybridBlock):
    """(N, f*C, W) -> (N, C, W*f): channel groups become consecutive pixels."""

    def __init__(self, factor: Any):
        super().__init__()
        self._factor = _factors(factor, 1)[0]

    def hybrid_forward(self, F, x):
        f = self._factor
        x = F.reshape(x, (0, -4, -1, f, 0))        # (N, C, f, W)
        x = F.transpose(x, (0, 1, 3, 2))           # (N, C, W, f)
        return F.reshape(x, (0, 0, -3))            # (N, C, W*f)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._factor})"


class PixelShuffle2D(HybridBlock):
    """(N, f1*f2*C, H, W) -> (N, C, H*f1, W*f2)."""

    def __init__(self, factor: Any):
        super().__init__()
        self._factors = _factors(factor, 2)

    def hybrid_forward(self, F, x):
        f1, f2 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2, 0, 0))      # (N, C, f1*f2, H, W)
        x = F.reshape(x, (0, 0, -4, f1, f2, 0, 0))        # (N, C, f1, f2, H, W)
        x = F.transpose(x, (0, 1, 4, 2, 5, 3))            # (N, C, H, f1, W, f2)
        return F.reshape(x, (0, 0, -3, -3))               # (N, C, H*f1, W*f2)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._factors})"


class PixelShuffle3D(HybridBlock):
    """(N, f1*f2*f3*C, D, H, W) -> (N, C, D*f1, H*f2, W*f3)."""

    def __init__(self, factor: Any):
        super().__init__()
        self._factors = _factors(factor, 3)

    def hybrid_forward(self, F, x):
        f1, f2, f3 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2 * f3, 0, 0, 0))    # (N, C, f1*f2*f3, D, H, W)
        x = F.swapaxes(x, 2, 3)                                  # (N, C, D, f1*f2*f3, H, W)
        x = F.reshape(x, (0, 0, 0, -4, f1, f2 * f3, 0, 0))       # (N, C, D, f1, f2*f3, H, W)
        x = F.reshape(x, (0, 0, -3, 0, 0, 0))                    # (N, C, D*f1, f2*f3, H, W)
        x = F.swapaxes(x, 3, 4)                                  # (N, C, D*f1, H, f2*f3, W)
        x = F.reshape(x, (0, 0, 0, 0, -4, f2, f3, 0))            # (N, C, D*f1, H, f2, f3, W)
        x = F.reshape(x, (0, 0, 0, -3, 0, 0))                    # (N, C, D*f1, H*f2, f3, W)
        x = F.swapaxes(x, 4, 5)                                  # (N, C, D*f1, H*f2, W, f3)
        return F.reshape(x, (0, 0, 0, 0, -3))                    # (N, C, D*f1, H*f2, W*f3)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._factors})"
