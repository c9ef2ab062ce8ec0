"""Activation layers (`mx.gluon.nn.activations`), as MXNet 1.9.1 defines them.

Each layer calls the same operator MXNet's does (`Activation`, `LeakyReLU`
with an `act_type`, or `sigmoid` for Swish), with the same node names, so
an exported graph matches MXNet's JSON.
"""
from __future__ import annotations

from typing import Any

from .. import initializer
from ..hybrid_block import HybridBlock

__all__ = ["Activation", "LeakyReLU", "PReLU", "ELU", "SELU", "Swish", "GELU", "SiLU"]

# one shared default instance, as MXNet's signature default is
_PRELU_ALPHA_INIT = initializer.Constant(0.25)


class Activation(HybridBlock):
    r"""Applies an activation function to input.

    Parameters
    ----------
    activation : str
        Name of activation function to use (``relu``, ``sigmoid``, ``tanh``,
        ``softrelu``, ``softsign``). See :func:`nd.Activation`.

    Inputs:
        - **data**: input tensor with arbitrary shape.

    Outputs:
        - **out**: output tensor with the same shape as `data`.
    """

    def __init__(self, activation: str, **kwargs: Any):
        self._act_type = activation
        super().__init__(**kwargs)

    def _alias(self) -> str:
        return self._act_type

    def hybrid_forward(self, F, x):
        return F.Activation(x, act_type=self._act_type, name="fwd")

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._act_type})"


class LeakyReLU(HybridBlock):
    r"""Leaky version of a Rectified Linear Unit: ``x`` for ``x >= 0``, ``alpha * x`` otherwise.

    Parameters
    ----------
    alpha : float
        Slope coefficient for the negative half axis. Must be >= 0.

    Inputs:
        - **data**: input tensor with arbitrary shape.

    Outputs:
        - **out**: output tensor with the same shape as `data`.
    """

    def __init__(self, alpha: float, **kwargs: Any):
        assert alpha >= 0, "Slope coefficient for LeakyReLU must be no less than 0."
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="leaky", slope=self._alpha, name="fwd")

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._alpha})"


class PReLU(HybridBlock):
    r"""Parametric leaky ReLU: ``x`` for ``x >= 0``, ``alpha * x`` otherwise, with a learned ``alpha``.

    Parameters
    ----------
    alpha_initializer : Initializer, default Constant(0.25)
        Initializer for the `alpha` parameter.
    in_channels : int, default 1
        Number of channels (alpha parameters) to learn: 1, or the size of the
        second dimension of the input.

    Inputs:
        - **data**: input tensor with arbitrary shape.

    Outputs:
        - **out**: output tensor with the same shape as `data`.
    """

    def __init__(self, alpha_initializer: Any = _PRELU_ALPHA_INIT, in_channels: int = 1, **kwargs: Any):
        super().__init__(**kwargs)
        with self.name_scope():
            self.alpha = self.params.get("alpha", shape=(in_channels,), init=alpha_initializer)

    def hybrid_forward(self, F, x, alpha):
        return F.LeakyReLU(x, gamma=alpha, act_type="prelu", name="fwd")


class ELU(HybridBlock):
    r"""Exponential Linear Unit (Clevert et al., 2016): ``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise.

    Parameters
    ----------
    alpha : float, default 1.0
        The alpha parameter as described by Clevert et al.

    Inputs:
        - **data**: input tensor with arbitrary shape.

    Outputs:
        - **out**: output tensor with the same shape as `data`.
    """

    def __init__(self, alpha: float = 1.0, **kwargs: Any):
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="elu", slope=self._alpha)


class SELU(HybridBlock):
    r"""Scaled Exponential Linear Unit (Klambauer et al., 2017).

    Inputs:
        - **data**: input tensor with arbitrary shape.

    Outputs:
        - **out**: output tensor with the same shape as `data`.
    """

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="selu", name="fwd")


class GELU(HybridBlock):
    r"""Gaussian Error Linear Unit (Hendrycks et al., 2016), the erf form.

    Inputs:
        - **data**: input tensor with arbitrary shape.

    Outputs:
        - **out**: output tensor with the same shape as `data`.
    """

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="gelu", name="fwd")


class Swish(HybridBlock):
    r"""Swish activation (Ramachandran et al., 2017): ``x * sigmoid(beta * x)``.

    Parameters
    ----------
    beta : float, default 1.0
        The scale inside the sigmoid.

    Inputs:
        - **data**: input tensor with arbitrary shape.

    Outputs:
        - **out**: output tensor with the same shape as `data`.
    """

    def __init__(self, beta: float = 1.0, **kwargs: Any):
        super().__init__(**kwargs)
        self._beta = beta

    def hybrid_forward(self, F, x):
        return x * F.sigmoid(self._beta * x, name="fwd")


class SiLU(HybridBlock):
    r"""Sigmoid Linear Unit: ``x * sigmoid(x)`` (Swish with ``beta = 1``).

    Not part of MXNet 1.9.1's Gluon (it arrived in MXNet 2); provided for code
    written against the newer API. It is built from the same operators as
    ``Swish(beta=1.0)`` without the scalar multiply.

    Inputs:
        - **data**: input tensor with arbitrary shape.

    Outputs:
        - **out**: output tensor with the same shape as `data`.
    """

    def hybrid_forward(self, F, x):
        return x * F.sigmoid(x, name="fwd")
