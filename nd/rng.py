"""The one place random generators live: one seeded generator per device.

Random kernels (Dropout, rrelu, the `_random_*` / `_sample_*` operators) ask
`generator(xp_or_ctx)` for the generator of the array module or context they
run on; `seed(n)` reseeds every device at once (MXNet's `mx.random.seed`).
A numpy `Generator` serves the CPU; a cupy one each GPU, made on first use.
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np

_LOCK = threading.Lock()
_SEED: int | None = None
_GENERATORS: dict[tuple[str, int], Any] = {}


def _key(ctx_or_xp: Any) -> tuple[str, int]:
    """(array-module name, device id) for a Context, an array module or None (CPU)."""
    if ctx_or_xp is None or ctx_or_xp is np:
        return ("numpy", 0)
    if hasattr(ctx_or_xp, "device_type"):  # a Context
        if ctx_or_xp.device_type == "gpu":
            return ("cupy", int(ctx_or_xp.device_id))
        return ("numpy", 0)
    name = getattr(ctx_or_xp, "__name__", "")
    if name.startswith("cupy"):
        return ("cupy", int(ctx_or_xp.cuda.runtime.getDevice()))
    return ("numpy", 0)


def _make(key: tuple[str, int], seed_words: list[int] | None = None):
    """A fresh generator for a device, from `seed_words` or else the global seed."""
    mod, dev = key
    if seed_words is None and _SEED is not None:
        seed_words = [_SEED, dev, mod == "cupy"]
    seed_seq = None if seed_words is None else np.random.SeedSequence(seed_words)
    if mod == "cupy":
        from .backend import _import_cupy  # noqa: PLC0415 - cupy only on first GPU use
        cp = _import_cupy()
        with cp.cuda.Device(dev):
            seed = None if seed_seq is None else int(seed_seq.generate_state(1)[0])
            return cp.random.default_rng(seed)
    return np.random.default_rng(seed_seq)


def generator(ctx_or_xp: Any = None):
    """The generator for a device: pass a Context, `numpy`/`cupy`, or None for the CPU."""
    key = _key(ctx_or_xp)
    gen = _GENERATORS.get(key)
    if gen is None:
        with _LOCK:
            gen = _GENERATORS.get(key)
            if gen is None:
                gen = _GENERATORS[key] = _make(key)
    return gen


def seed(n: int, ctx: Any = "all") -> None:
    """Reseed the generators (MXNet's `mx.random.seed(seed_state, ctx)`).

    With ctx="all" every device is reseeded and each one mixes its device id into
    the seed, so devices draw different streams. With a Context only that device
    is reseeded, from the seed alone, so every device of one kind seeded this way
    draws the same stream (device 0 draws the same stream either way). As in MXNet
    the seed is taken modulo 2**32.
    """
    global _SEED
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"seed expects an integer, got {n!r}")
    n = int(n) % (1 << 32)
    with _LOCK:
        if isinstance(ctx, str) and ctx == "all":
            _SEED = n
            _GENERATORS.clear()
            return
        key = _key(ctx)
        _GENERATORS[key] = _make(key, [n, 0, key[0] == "cupy"])
