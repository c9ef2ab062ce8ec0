"""Weight initializers (`mx.init`): name-based dispatch and MXNet's registry.

An initializer is called as `init(InitDesc(name, attrs), array)` and fills the
array in place. Names decide the default (`*_weight` uses the initializer's
own rule, `*_bias`/`*_beta`/`*running_mean` zeros, `*_gamma`/`*running_var`
ones); an `__init__` attribute (from a Parameter's own `init=` or a
variable's JSON) overrides the global initializer, as in MXNet.
"""
from __future__ import annotations

import json
import math
import warnings
from typing import Any

import numpy as np

from hybridgraph.nd.errors import MXNetError

_REGISTRY: dict[str, type] = {}


def register(klass: type) -> type:
    """Register an initializer class under its lowercased name (MXNet's `mx.init.register`)."""
    _REGISTRY[klass.__name__.lower()] = klass
    return klass


def alias(*names: str):
    def wrap(klass):
        for n in names:
            _REGISTRY[n.lower()] = klass
        return klass
    return wrap


class InitDesc(str):
    """A parameter name with attributes (`__init__`) and the global initializer."""

    def __new__(cls, name: str, attrs: dict | None = None, global_init: Any = None):
        ret = super().__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


def _random():
    import hybridgraph.nd.random as ndrandom  # noqa: PLC0415 - nd.random registers ops on import
    return ndrandom


class Initializer:
    """Base class: dispatch on the parameter name; subclasses implement `_init_weight`."""

    def __init__(self, **kwargs: Any):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def set_verbosity(self, verbose: bool = False, print_func=None) -> "Initializer":
        self._verbose = verbose
        self._print_func = print_func
        return self

    def dumps(self) -> str:
        """The JSON string MXNet stores in a variable's `__init__` attribute."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, desc: InitDesc, arr) -> None:
        if not isinstance(desc, InitDesc):
            self._legacy_init(desc, arr)
            return
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get("__init__", "")
        if init:
            create(init)._init_weight(desc, arr)
            return
        name = str(desc)
        for suffix, method in (("weight", self._init_weight), ("bias", self._init_bias),
                               ("gamma", self._init_gamma), ("beta", self._init_beta),
                               ("running_mean", self._init_zero), ("moving_mean", self._init_zero),
                               ("running_var", self._init_one), ("moving_var", self._init_one),
                               ("moving_inv_var", self._init_zero), ("moving_avg", self._init_zero),
                               ("min", self._init_zero), ("max", self._init_one)):
            if name.endswith(suffix):
                method(desc, arr)
                return
        self._init_default(desc, arr)

    def _legacy_init(self, name: str, arr) -> None:
        """MXNet's deprecated `init(name, arr)` form: a plain name also picks bilinear/STN patterns."""
        warnings.warn("Calling initializer with init(str, NDArray) has been deprecated. please use "
                      "init(mx.init.InitDesc(...), NDArray) instead.", DeprecationWarning, stacklevel=3)
        if not isinstance(name, str):
            raise TypeError("name must be string")
        if name.startswith("upsampling"):
            from .initializer_extra import bilinear_kernel  # noqa: PLC0415 - that module imports this one
            arr[:] = bilinear_kernel(tuple(arr.shape))
        elif name.startswith("stn_loc") and name.endswith("weight"):
            self._init_zero(name, arr)
        elif name.startswith("stn_loc") and name.endswith("bias"):
            if arr.shape[0] != 6:
                raise AssertionError(f"{name}: an STN localisation bias has 6 elements, got shape {arr.shape}")
            arr[:] = np.array([1.0, 0, 0, 0, 1.0, 0])
        else:
            for suffix, method in (("bias", self._init_bias), ("gamma", self._init_gamma),
                                   ("beta", self._init_beta), ("weight", self._init_weight),
                                   ("moving_mean", self._init_zero), ("moving_var", self._init_one),
                                   ("moving_inv_var", self._init_zero), ("moving_avg", self._init_zero),
                                   ("min", self._init_zero), ("max", self._init_one)):
                if name.endswith(suffix):
                    method(name, arr)
                    return
            self._init_default(name, arr)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = object.__hash__

    def _init_bias(self, _, arr):
        arr[:] = 0.0

    def _init_gamma(self, _, arr):
        arr[:] = 1.0

    def _init_beta(self, _, arr):
        arr[:] = 0.0

    def _init_zero(self, _, arr):
        arr[:] = 0.0

    def _init_one(self, _, arr):
        arr[:] = 1.0

    def _init_weight(self, name, arr):
        raise NotImplementedError("Must override it")

    def _init_default(self, name, _):
        raise ValueError(f"Unknown initialization pattern for {name}. Default initialization is now "
                         'limited to "weight", "bias", "gamma" (1.0), and "beta" (0.0). Please use '
                         "mx.sym.Variable(init=mx.init.*) to set initialization pattern")

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({', '.join(f'{k}={v!r}' for k, v in self._kwargs.items())})"


def create(init: Any, /, **kwargs: Any) -> Initializer:
    """An initializer from an instance, a registered name, or MXNet's JSON dump."""
    if isinstance(init, Initializer):
        return init
    if isinstance(init, type) and issubclass(init, Initializer):
        return init(**kwargs)
    if isinstance(init, str):
        text = init.strip()
        if text.startswith("["):
            name, params = json.loads(text)
            return create(name, **params)
        key = text.lower()
        if key not in _REGISTRY:
            raise MXNetError(f"unknown initializer {init!r}; registered: {sorted(_REGISTRY)}")
        return _REGISTRY[key](**kwargs)
    raise TypeError(f"cannot create an initializer from {type(init).__name__}")


@register
class Zero(Initializer):
    """Fills with 0."""

    def _init_weight(self, _, arr):
        arr[:] = 0.0


alias("zeros")(Zero)


@register
class One(Initializer):
    """Fills with 1."""

    def _init_weight(self, _, arr):
        arr[:] = 1.0


alias("ones")(One)


@register
class Constant(Initializer):
    """Fills with a constant value (a scalar or an array of the parameter's shape)."""

    def __init__(self, value: Any):
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _, arr):
        arr[:] = self.value

    def dumps(self) -> str:
        # MXNet stores the list form back into _kwargs, so json.dumps(init._kwargs) works afterwards
        val = self._kwargs["value"]
        if not np.isscalar(val):
            self._kwargs["value"] = val.tolist() if isinstance(val, np.ndarray) else val.asnumpy().tolist()
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])


@register
class Uniform(Initializer):
    """Uniform values in [-scale, scale]."""

    def __init__(self, scale: float = 0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr):
        _random().uniform(-self.scale, self.scale, shape=arr.shape, out=arr)


@register
class Normal(Initializer):
    """Normal values with mean 0 and standard deviation sigma."""

    def __init__(self, sigma: float = 0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr):
        _random().normal(0, self.sigma, shape=arr.shape, out=arr)


def _fans(shape: tuple) -> tuple[float, float]:
    hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
    return shape[1] * hw_scale, shape[0] * hw_scale


@register
class Xavier(Initializer):
    """Xavier/Glorot: scale from fan-in/fan-out (rnd_type uniform|gaussian; factor_type avg|in|out)."""

    def __init__(self, rnd_type: str = "uniform", factor_type: str = "avg", magnitude: float = 3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type, self.factor_type, self.magnitude = rnd_type, factor_type, float(magnitude)

    def _init_weight(self, name, arr):
        shape = arr.shape
        if len(shape) < 2:
            raise MXNetError(f"Xavier initializer cannot be applied to vector {name}. It requires at "
                             "least 2D.")
        fan_in, fan_out = _fans(shape)
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}.get(self.factor_type)
        if factor is None:
            raise MXNetError(f"Incorrect factor type {self.factor_type!r}; expected avg, in or out")
        scale = math.sqrt(self.magnitude / factor)
        if self.rnd_type == "uniform":
            _random().uniform(-scale, scale, shape=shape, out=arr)
        elif self.rnd_type == "gaussian":
            _random().normal(0, scale, shape=shape, out=arr)
        else:
            raise MXNetError(f"Unknown random type {self.rnd_type!r}; expected uniform or gaussian")


@register
class MSRAPrelu(Xavier):
    """He/Kaiming initialization for PReLU/ReLU networks."""

    def __init__(self, factor_type: str = "avg", slope: float = 0.25):
        magnitude = 2.0 / (1 + slope ** 2)
        super().__init__("gaussian", factor_type, magnitude)
        self._kwargs = {"factor_type": factor_type, "slope": slope}


from .initializer_extra import Bilinear, FusedRNN, Load, LSTMBias, Mixed, Orthogonal  # noqa: E402, F401
