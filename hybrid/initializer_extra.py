"""MXNet's remaining initializers: Load, Mixed, Orthogonal, Bilinear, LSTMBias, FusedRNN.

Kept apart from initializer.py (the base class, the registry and the plain
random fills) because these are compositions of other initializers or fill
special layouts (bilinear upsampling kernels, the packed vector of a fused RNN).
They are re-exported by `mx.init`.
"""
from __future__ import annotations

import json
import logging
import re
from typing import Any

import numpy as np

from hybridgraph.nd.errors import MXNetError

from .initializer import _REGISTRY, InitDesc, Initializer, _random, register


class Load:
    """Fill parameters from a dict (or a saved .params file) by name; `default_init` for the rest.

    A leading ``arg:``/``aux:`` in the saved names is dropped, as in MXNet.
    """

    def __init__(self, param: Any, default_init: Any = None, verbose: bool = False):
        if isinstance(param, str):
            from hybridgraph import nd  # noqa: PLC0415 - nd.load lives in the NDArray layer
            param = nd.load(param)
        if not isinstance(param, dict):
            raise TypeError(f"Load expects a dict of name -> NDArray or a .params file name, got "
                            f"{type(param).__name__}")
        self.param = {(k[4:] if k.startswith(("arg:", "aux:")) else k): v for k, v in param.items()}
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name: str, arr: Any) -> None:
        if name in self.param:
            src = self.param[name]
            if tuple(arr.shape) != tuple(src.shape):
                raise AssertionError(f"Parameter {name} cannot be initialized from loading. Shape mismatch, "
                                     f"target {arr.shape} vs loaded {src.shape}")
            arr[:] = src
            if self.verbose:
                logging.info("Initialized %s by loading", name)
            return
        if self.default_init is None:
            raise AssertionError(f"Cannot Initialize {name}. Not found in loaded param and no default "
                                 "Initializer is provided.")
        self.default_init(name, arr)
        if self.verbose:
            logging.info("Initialized %s by default", name)


class Mixed:
    """Pick the initializer of the first regular expression (re.match) that matches the name."""

    def __init__(self, patterns: list[str], initializers: list[Any]):
        if len(patterns) != len(initializers):
            raise AssertionError(f"Mixed needs one initializer per pattern: {len(patterns)} patterns, "
                                 f"{len(initializers)} initializers")
        self.map = list(zip([re.compile(p) for p in patterns], initializers))

    def __call__(self, name: str, arr: Any) -> None:
        for prog, init in self.map:
            if prog.match(name):
                init(name, arr)
                return
        raise ValueError(f"Parameter name {name} did not match any pattern. Consider adding a \".*\" "
                         "pattern at the end with a default Initializer.")


@register
class Orthogonal(Initializer):
    """An orthogonal matrix (from the SVD of a random one) times `scale` (Saxe et al. 2013)."""

    def __init__(self, scale: float = 1.414, rand_type: str = "uniform"):
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, _, arr):
        nout, nin = arr.shape[0], int(np.prod(arr.shape[1:]))
        if self.rand_type == "uniform":
            tmp = _random().uniform(-1.0, 1.0, shape=(nout, nin)).asnumpy()
        elif self.rand_type == "normal":
            tmp = _random().normal(0.0, 1.0, shape=(nout, nin)).asnumpy()
        else:
            raise MXNetError(f"Orthogonal: unknown rand_type {self.rand_type!r}; expected uniform or normal")
        u, _, v = np.linalg.svd(tmp, full_matrices=False)
        res = u if u.shape == tmp.shape else v
        arr[:] = self.scale * res.reshape(arr.shape)


def bilinear_kernel(shape: tuple) -> np.ndarray:
    """The bilinear-upsampling kernel MXNet fills a (C_out, C_in, H, W) weight with."""
    size = int(np.prod(shape))
    f = np.ceil(shape[3] / 2.0)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    idx = np.arange(size)
    x = idx % shape[3]
    y = (idx // shape[3]) % shape[2]
    weight = (1 - np.abs(x / f - c)) * (1 - np.abs(y / f - c))
    return weight.astype(np.float32).reshape(shape)


@register
class Bilinear(Initializer):
    """Weights of a bilinear upsampling (Deconvolution) kernel."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = bilinear_kernel(tuple(arr.shape))


@register
class LSTMBias(Initializer):
    """All LSTM biases 0 except the forget gate's (the second quarter), set to `forget_bias`."""

    def __init__(self, forget_bias: float = 1.0):
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name, arr):
        arr[:] = 0.0
        num_hidden = int(arr.shape[0] / 4)
        arr[num_hidden:2 * num_hidden] = self.forget_bias


_GATES = {"rnn_relu": [""], "rnn_tanh": [""], "lstm": ["_i", "_f", "_c", "_o"], "gru": ["_r", "_z", "_o"]}


def fused_rnn_layout(mode: str, num_layers: int, bidirectional: bool, num_hidden: int, num_input: int,
                     prefix: str = "") -> list[tuple[str, int, tuple]]:
    """(name, offset, shape) of each per-gate weight and bias in a fused RNN's `parameters` vector.

    The order is cuDNN's, as MXNet's FusedRNNCell packs it: every layer's and
    direction's i2h then h2h weights (gate by gate), then all biases likewise.
    """
    if mode not in _GATES:
        raise MXNetError(f"unknown RNN mode {mode!r}; expected one of {sorted(_GATES)}")
    gates, dirs, lh = _GATES[mode], (["l", "r"] if bidirectional else ["l"]), num_hidden
    out, p = [], 0
    for layer in range(num_layers):
        for d in dirs:
            shape = (lh, len(dirs) * lh) if layer > 0 else (lh, num_input)
            for g in gates:
                out.append((f"{prefix}{d}{layer}_i2h{g}_weight", p, shape))
                p += shape[0] * shape[1]
            for g in gates:
                out.append((f"{prefix}{d}{layer}_h2h{g}_weight", p, (lh, lh)))
                p += lh * lh
    for layer in range(num_layers):
        for d in dirs:
            for kind in ("i2h", "h2h"):
                for g in gates:
                    out.append((f"{prefix}{d}{layer}_{kind}{g}_bias", p, (lh,)))
                    p += lh
    return out


def fused_rnn_num_input(size: int, mode: str, num_layers: int, bidirectional: bool, num_hidden: int) -> int:
    """The input width a fused `parameters` vector of `size` elements implies."""
    b, m, h = 2 if bidirectional else 1, len(_GATES[mode]), num_hidden
    return size // b // h // m - (num_layers - 1) * (h + b * h + 2) - h - 2


@register
class FusedRNN(Initializer):
    """Fill a fused RNN `parameters` vector gate by gate with `init` (or the global initializer)."""

    def __init__(self, init: Any, num_hidden: int, num_layers: int, mode: str, bidirectional: bool = False,
                 forget_bias: float = 1.0):
        if isinstance(init, str):
            klass, kwargs = json.loads(init)
            init = _REGISTRY[klass.lower()](**kwargs)
        super().__init__(init=init.dumps() if init is not None else None, num_hidden=num_hidden,
                         num_layers=num_layers, mode=mode, bidirectional=bidirectional,
                         forget_bias=forget_bias)
        self._init = init
        self._num_hidden, self._num_layers, self._mode = num_hidden, num_layers, mode
        self._bidirectional, self._forget_bias = bidirectional, forget_bias

    def _init_weight(self, desc, arr):
        from hybridgraph import nd  # noqa: PLC0415
        num_input = fused_rnn_num_input(arr.size, self._mode, self._num_layers, self._bidirectional,
                                        self._num_hidden)
        flat = arr.asnumpy().reshape(-1).copy()
        global_init = getattr(desc, "global_init", None)
        layout = fused_rnn_layout(self._mode, self._num_layers, self._bidirectional, self._num_hidden, num_input)
        if layout[-1][1] + layout[-1][2][0] != arr.size:
            raise MXNetError(f"FusedRNN: a parameters vector of {arr.size} elements does not fit "
                             f"mode={self._mode} num_layers={self._num_layers} num_hidden={self._num_hidden}")
        for name, start, shape in layout:
            part = nd.zeros(shape, dtype=arr.dtype)
            if self._mode == "lstm" and name.endswith("_f_bias"):
                part[:] = self._forget_bias
            elif self._init is None:
                global_init(InitDesc(name, global_init=global_init), part)
            else:
                self._init(InitDesc(name, global_init=global_init), part)
            flat[start:start + part.size] = part.asnumpy().reshape(-1)
        arr[:] = flat.reshape(arr.shape)
