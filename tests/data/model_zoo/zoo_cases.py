"""The model-zoo reference cases, shared by gen_model_zoo_ref.py (run under MXNet's venv) and
tests/hybrid/test_model_zoo.py: which models, at which input size, and deterministic inputs
and weights made with numpy alone, so both sides build identical models without exchanging
large files.
"""
from __future__ import annotations

import zlib

import numpy as np

# name -> input shape: the smallest convenient size each architecture accepts
# (squeezenet and densenet end in fixed 13x13 / 7x7 pools, inception v3 in an 8x8 one)
MODELS = {
    **{f"resnet{n}_v{v}": (1, 3, 64, 64) for v in (1, 2) for n in (18, 34, 50, 101, 152)},
    **{f"vgg{n}{bn}": (1, 3, 32, 32) for bn in ("", "_bn") for n in (11, 13, 16, 19)},
    "alexnet": (1, 3, 64, 64),
    **{f"densenet{n}": (1, 3, 224, 224) for n in (121, 161, 169, 201)},
    "squeezenet1.0": (1, 3, 224, 224),
    "squeezenet1.1": (1, 3, 224, 224),
    "inceptionv3": (1, 3, 299, 299),
    **{f"mobilenet{m}": (1, 3, 64, 64) for m in ("1.0", "0.75", "0.5", "0.25")},
    **{f"mobilenetv2_{m}": (1, 3, 64, 64) for m in ("1.0", "0.75", "0.5", "0.25")},
}

# run fully (MXNet interop and outputs) in every CI run; the others need HYBRIDGRAPH_ZOO_ALL=1
CI_MODELS = ("resnet18_v1", "mobilenetv2_0.25", "squeezenet1.1")


def make_input(shape: tuple) -> np.ndarray:
    """A deterministic, image-like input in [-1, 1] (no random generator involved)."""
    n = int(np.prod(shape))
    return np.sin(np.arange(n, dtype=np.float64) * 0.731 + 0.3).reshape(shape).astype(np.float32)


def _rng(key: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(key.encode()))


def make_param(key: str, shape: tuple) -> np.ndarray:
    """The value of the parameter with structural name `key` (``features.0.weight``): He-normal
    weights, small biases, and non-trivial BatchNorm scale, shift and running statistics."""
    rng, shape = _rng(key), tuple(shape)
    kind = key.rsplit(".", 1)[-1]
    if kind == "weight":
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        value = rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)
    elif kind == "gamma":
        value = rng.uniform(0.7, 1.3, shape)
    elif kind == "running_var":
        value = rng.uniform(0.6, 1.6, shape)
    elif kind in ("beta", "running_mean"):
        value = rng.standard_normal(shape) * 0.1
    else:  # biases
        value = rng.standard_normal(shape) * 0.05
    return value.astype(np.float32)
