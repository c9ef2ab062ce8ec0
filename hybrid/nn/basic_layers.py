"""Basic layers (`mx.gluon.nn.basic_layers`): Dense, Dropout, normalisation, Embedding, Flatten.

Parameter names, defaults, reprs and the operator calls (with `name='fwd'`
where MXNet passes it) mirror MXNet 1.9.1, so a model defined the same way
exports the same `-symbol.json`. Sequential, HybridSequential, Lambda,
HybridLambda and Identity live in `containers.py`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hybridgraph import nd

from ..hybrid_block import HybridBlock
from .activations import Activation
from .containers import HybridSequential, Sequential

__all__ = ["Dense", "Dropout", "Embedding", "BatchNorm", "InstanceNorm", "LayerNorm", "GroupNorm",
           "Flatten", "HybridConcatenate", "Concatenate"]


def _kwargs_repr(kwargs: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


class Dense(HybridBlock):
    r"""Just your regular densely-connected NN layer: ``activation(dot(input, weight.T) + bias)``.

    Parameters
    ----------
    units : int
        Dimensionality of the output space.
    activation : str, optional
        Activation function to use (see :class:`Activation`). If you don't
        specify anything, no activation is applied ("linear").
    use_bias : bool, default True
        Whether the layer uses a bias vector.
    flatten : bool, default True
        If True, all but the first axis of the input are collapsed together;
        if False, the transformation applies on the last axis.
    dtype : str or np.dtype, default 'float32'
        Data type of the parameters.
    weight_initializer : str or Initializer, optional
        Initializer for the `weight` matrix.
    bias_initializer : str or Initializer, default 'zeros'
        Initializer for the bias vector.
    in_units : int, default 0
        Size of the input data. If 0, it is inferred on the first forward pass.
    prefix, params : see :class:`Block`.

    Inputs:
        - **data**: `(batch_size, x1, ..., xn)` if `flatten`, else `(x1, ..., xn, in_units)`.

    Outputs:
        - **out**: `(batch_size, units)` if `flatten`, else `(x1, ..., xn, units)`.
    """

    def __init__(self, units: int, activation: str | None = None, use_bias: bool = True, flatten: bool = True,
                 dtype: Any = "float32", weight_initializer: Any = None, bias_initializer: Any = "zeros",
                 in_units: int = 0, **kwargs: Any):
        super().__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get("weight", shape=(units, in_units), init=weight_initializer,
                                          dtype=dtype, allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=(units,), init=bias_initializer, dtype=dtype,
                                            allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + "_") if activation is not None else None

    def hybrid_forward(self, F, x, weight, bias=None):
        args = (x, weight) if bias is None else (x, weight, bias)  # MXNet drops the None bias the same way
        act = F.FullyConnected(*args, no_bias=bias is None, num_hidden=self._units, flatten=self._flatten,
                               name="fwd")
        if self.act is not None:
            act = self.act(act)
        return act

    def __repr__(self) -> str:
        shape = self.weight.shape
        act = self.act if self.act else "linear"
        return f"{self.__class__.__name__}({shape[1] if shape[1] else None} -> {shape[0]}, {act})"


class Dropout(HybridBlock):
    """Applies Dropout to the input: at training time a fraction `rate` of the units is set to 0.

    Parameters
    ----------
    rate : float
        Fraction of the input units to drop, between 0 and 1. With 0 the
        layer is an identity (an `_copy` node in the graph, as in MXNet).
    axes : tuple of int, default ()
        The axes on which the dropout mask is shared. If empty, regular dropout is applied.

    Inputs:
        - **data**: input tensor with arbitrary shape.

    Outputs:
        - **out**: output tensor with the same shape as `data`.
    """

    def __init__(self, rate: float, axes: tuple = (), **kwargs: Any):
        super().__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F, x):
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, name="fwd", cudnn_off=False)
        return F.identity(x)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p = {self._rate}, axes={self._axes})"


class BatchNorm(HybridBlock):
    """Batch normalization layer (Ioffe and Szegedy, 2014).

    Normalizes the input at each batch (training mode) or with the running
    statistics (inference mode or ``use_global_stats``), then scales by
    `gamma` and shifts by `beta`.

    Parameters
    ----------
    axis : int, default 1
        The axis to normalize: the channel axis (1 for NCHW, 3 for NHWC).
    momentum : float, default 0.9
        Momentum for the moving average.
    epsilon : float, default 1e-5
        Small float added to variance to avoid dividing by zero.
    center : bool, default True
        If True, add offset of `beta` to the normalized tensor.
    scale : bool, default True
        If True, multiply by `gamma` (else `gamma` is fixed at 1, `fix_gamma=True`).
    use_global_stats : bool, default False
        If True, always use the moving statistics (a scale-shift operator).
    beta_initializer, gamma_initializer : str or Initializer, default 'zeros', 'ones'
    running_mean_initializer, running_variance_initializer : str or Initializer, default 'zeros', 'ones'
    in_channels : int, default 0
        Number of channels; if 0 it is inferred on the first forward pass.

    Inputs:
        - **data**: input tensor with arbitrary shape.

    Outputs:
        - **out**: output tensor with the same shape as `data`.
    """

    def __init__(self, axis: int = 1, momentum: float = 0.9, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = True, use_global_stats: bool = False, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", running_mean_initializer: Any = "zeros",
                 running_variance_initializer: Any = "ones", in_channels: int = 0, **kwargs: Any):
        super().__init__(**kwargs)
        self._kwargs = {"axis": axis, "eps": epsilon, "momentum": momentum,
                        "fix_gamma": not scale, "use_global_stats": use_global_stats}
        if in_channels != 0:
            self.in_channels = in_channels
        shape = (in_channels,)
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null", shape=shape,
                                     init=gamma_initializer, allow_deferred_init=True, differentiable=scale)
        self.beta = self.params.get("beta", grad_req="write" if center else "null", shape=shape,
                                    init=beta_initializer, allow_deferred_init=True, differentiable=center)
        self.running_mean = self.params.get("running_mean", grad_req="null", shape=shape,
                                            init=running_mean_initializer, allow_deferred_init=True,
                                            differentiable=False)
        self.running_var = self.params.get("running_var", grad_req="null", shape=shape,
                                           init=running_variance_initializer, allow_deferred_init=True,
                                           differentiable=False)

    def cast(self, dtype: Any) -> None:
        """Cast the parameters; float16 stays float32, as in MXNet."""
        if np.dtype(dtype).name == "float16":
            dtype = "float32"
        super().cast(dtype)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.BatchNorm(x, gamma, beta, running_mean, running_var, name="fwd", **self._kwargs)

    def __repr__(self) -> str:
        in_channels = self.gamma.shape[0]
        return f"{self.__class__.__name__}({_kwargs_repr(self._kwargs)}, in_channels={in_channels or None})"


class Embedding(HybridBlock):
    r"""Turns non-negative integers (indexes/tokens) into dense vectors of fixed size.

    Parameters
    ----------
    input_dim : int
        Size of the vocabulary, i.e. maximum integer index + 1.
    output_dim : int
        Dimension of the dense embedding.
    dtype : str or np.dtype, default 'float32'
        Data type of output embeddings.
    weight_initializer : Initializer, optional
        Initializer for the embeddings matrix.
    sparse_grad : bool, default False
        Recorded in the graph as MXNet does; the gradient is always a dense
        array here (same values as MXNet's row_sparse gradient).

    Inputs:
        - **data**: (N-1)-D tensor with shape `(x1, ..., xN-1)`.

    Outputs:
        - **out**: N-D tensor with shape `(x1, ..., xN-1, output_dim)`.
    """

    def __init__(self, input_dim: int, output_dim: int, dtype: Any = "float32", weight_initializer: Any = None,
                 sparse_grad: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": sparse_grad}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim), init=weight_initializer,
                                      dtype=dtype, allow_deferred_init=True)

    def hybrid_forward(self, F, x, weight):
        return F.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self) -> str:
        k = self._kwargs
        return f"{self.__class__.__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"


class Flatten(HybridBlock):
    r"""Flattens the input to two dimensions: `(N, x1, ..., xn)` -> `(N, x1 * ... * xn)`."""

    def hybrid_forward(self, F, x):
        return F.flatten(x)

    def __repr__(self) -> str:
        return self.__class__.__name__


def _norm_params(block: HybridBlock, shape: tuple, epsilon: float, center: bool, scale: bool,
                 beta_initializer: Any, gamma_initializer: Any, **named: Any) -> None:
    """The state every normalization layer keeps: its attributes for repr (`_kwargs`: eps, the
    `named` axis or groups, center, scale), epsilon and flags, and its gamma/beta Parameters of
    `shape` (not learned when `scale`/`center` is off)."""
    block._kwargs = {"eps": epsilon, **named, "center": center, "scale": scale}
    block._epsilon = epsilon
    block._center = center
    block._scale = scale
    block.gamma = block.params.get("gamma", grad_req="write" if scale else "null", shape=shape,
                                   init=gamma_initializer, allow_deferred_init=True)
    block.beta = block.params.get("beta", grad_req="write" if center else "null", shape=shape,
                                  init=beta_initializer, allow_deferred_init=True)


class InstanceNorm(HybridBlock):
    r"""Instance normalization: normalizes each sample and channel over the remaining axes.

    ``out = (x - mean[x, C]) / sqrt(Var[x, C] + epsilon) * gamma + beta`` where
    ``C`` is every axis but the batch axis 0 and `axis`.

    Parameters
    ----------
    axis : int, default 1
        The channel axis, excluded from the normalization.
    epsilon : float, default 1e-5
        Small float added to variance to avoid dividing by zero.
    center : bool, default True
        If True, `beta` is learned (else its gradient is not computed).
    scale : bool, default False
        If True, `gamma` is learned.
    beta_initializer, gamma_initializer : str or Initializer, default 'zeros', 'ones'
    in_channels : int, default 0
        Number of channels; if 0 it is inferred on the first forward pass.

    Inputs:
        - **data**: input tensor with arbitrary shape.

    Outputs:
        - **out**: output tensor with the same shape as `data`.
    """

    def __init__(self, axis: int = 1, epsilon: float = 1e-5, center: bool = True, scale: bool = False,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones", in_channels: int = 0,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self._axis = axis
        _norm_params(self, (in_channels,), epsilon, center, scale, beta_initializer, gamma_initializer, axis=axis)

    def hybrid_forward(self, F, x, gamma, beta):
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, name="fwd", eps=self._epsilon)
        x = x.swapaxes(1, self._axis)
        return F.InstanceNorm(x, gamma, beta, name="fwd", eps=self._epsilon).swapaxes(1, self._axis)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({_kwargs_repr(self._kwargs)}, in_channels={self.gamma.shape[0]})"


class LayerNorm(HybridBlock):
    r"""Layer normalization: ``(x - mean[x, axis]) / sqrt(Var[x, axis] + epsilon) * gamma + beta``.

    Parameters
    ----------
    axis : int, default -1
        The axis to normalize over.
    epsilon : float, default 1e-5
        Small float added to variance to avoid dividing by zero.
    center : bool, default True
        If True, `beta` is learned.
    scale : bool, default True
        If True, `gamma` is learned.
    beta_initializer, gamma_initializer : str or Initializer, default 'zeros', 'ones'
    in_channels : int, default 0
        Size of `axis`; if 0 it is inferred on the first forward pass.

    Inputs:
        - **data**: input tensor with arbitrary shape.

    Outputs:
        - **out**: output tensor with the same shape as `data`.
    """

    def __init__(self, axis: int = -1, epsilon: float = 1e-5, center: bool = True, scale: bool = True,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones", in_channels: int = 0,
                 prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self._axis = axis
        _norm_params(self, (in_channels,), epsilon, center, scale, beta_initializer, gamma_initializer, axis=axis)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({_kwargs_repr(self._kwargs)}, in_channels={self.gamma.shape[0]})"


class GroupNorm(HybridBlock):
    r"""Group normalization: channels are split into `num_groups` groups normalized separately.

    ``x`` of shape `(N, C, ...)` is viewed as `(N, num_groups, C // num_groups, ...)`
    and normalized over all axes after the group axis; `gamma` and `beta`
    have one entry per group.

    Parameters
    ----------
    num_groups : int, default 1
        Number of groups to separate the channel axis into.
    epsilon : float, default 1e-5
        Small float added to variance to avoid dividing by zero.
    center : bool, default True
        If True, `beta` is learned.
    scale : bool, default True
        If True, `gamma` is learned.
    beta_initializer, gamma_initializer : str or Initializer, default 'zeros', 'ones'

    Inputs:
        - **data**: input tensor with shape `(N, C, ...)`.

    Outputs:
        - **out**: output tensor with the same shape as `data`.
    """

    def __init__(self, num_groups: int = 1, epsilon: float = 1e-5, center: bool = True, scale: bool = True,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
                 prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self._num_groups = num_groups
        _norm_params(self, (num_groups,), epsilon, center, scale, beta_initializer, gamma_initializer,
                     num_groups=num_groups)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups, eps=self._epsilon)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({_kwargs_repr(self._kwargs)})"


class HybridConcatenate(HybridSequential):
    """Feeds the input to every child and concatenates their outputs along `axis`.

    MXNet 1.9.1 ships this as ``gluon.contrib.nn.HybridConcurrent``; MXNet 2
    renamed it ``nn.HybridConcatenate``. The graph is one ``Concat`` node over
    the children's outputs.

    Parameters
    ----------
    axis : int, default -1
        The axis on which to concatenate the outputs.
    """

    def __init__(self, axis: int = -1, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    forward = HybridBlock.forward

    def hybrid_forward(self, F, x):
        out = [block(x) for block in self._children.values()]
        return F.concat(*out, dim=self.axis)


class Concatenate(Sequential):
    """Feeds the input to every child Block and concatenates their outputs along `axis`.

    The imperative twin of :class:`HybridConcatenate` (MXNet 1.9.1's
    ``gluon.contrib.nn.Concurrent``).

    Parameters
    ----------
    axis : int, default -1
        The axis on which to concatenate the outputs.
    """

    def __init__(self, axis: int = -1, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x: Any) -> Any:
        out = [block(x) for block in self._children.values()]
        return nd.concat(*out, dim=self.axis)

