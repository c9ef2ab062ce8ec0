"""2-bit gradient compression with error feedback (MXNet 1.9.1's ``'2bit'``).

Each sender keeps a residual per key: the gradient is added to it; entries
``>= threshold`` are sent as ``+threshold`` (and ``threshold`` is taken off the
residual), entries ``<= -threshold`` as ``-threshold`` (and added back), all
others as 0 and kept in the residual for the next push. Sixteen values pack
into one float32's four bytes, two bits each, first value in the top bits of
the first byte (``11`` = +threshold, ``10`` = -threshold), as MXNet's
`quantize_2bit` kernel lays them out, so a packed buffer is what is sent.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hybridgraph.nd.errors import MXNetError

__all__ = ["GradientCompression", "parse_compression_params"]

_TYPES = ("2bit",)


def parse_compression_params(params: Any) -> tuple[str, float]:
    """Check MXNet's `compression_params` dict; returns ``(type, threshold)``."""
    if not isinstance(params, dict):
        raise MXNetError(f"compression_params must be a dict such as {{'type': '2bit', 'threshold': 0.5}}, "
                         f"got {type(params).__name__}")
    if "type" not in params:
        raise MXNetError("Required parameter type of string is not presented (compression_params needs 'type')")
    unknown = set(params) - {"type", "threshold"}
    if unknown:
        raise MXNetError(f"Cannot find argument {sorted(unknown)[0]!r} of gradient compression; "
                         "accepted: 'type', 'threshold'")
    ctype = str(params["type"])
    if ctype not in _TYPES:
        raise MXNetError(f"Unknown type for gradient compression {ctype}")
    threshold = float(params.get("threshold", 0.5))
    if not threshold > 0:
        raise MXNetError(f"threshold must be greater than 0, got {threshold}")
    return ctype, threshold


class GradientCompression:
    """Quantizes pushed gradients to 2 bits with a per-(key, sender) residual."""

    def __init__(self, params: dict):
        self.type, self.threshold = parse_compression_params(params)
        self._residuals: dict[Any, np.ndarray] = {}

    def quantize(self, slot: Any, grad: np.ndarray) -> np.ndarray:
        """Add `grad` to the residual of `slot` and return the packed 2-bit codes (uint8,
        4 values a byte, padded to 16 values)."""
        flat = np.asarray(grad, dtype=np.float32).reshape(-1)
        res = self._residuals.get(slot)
        if res is None or res.shape != flat.shape:
            res = self._residuals[slot] = np.zeros_like(flat)
        res += flat
        t = np.float32(self.threshold)
        pos = res >= t
        neg = res <= -t
        res[pos] -= t
        res[neg] += t
        codes = np.zeros(-(-flat.size // 16) * 16, dtype=np.uint8)
        codes[:flat.size][pos] = 3
        codes[:flat.size][neg] = 2
        quads = codes.reshape(-1, 4)
        return (quads[:, 0] << 6) | (quads[:, 1] << 4) | (quads[:, 2] << 2) | quads[:, 3]

    def dequantize(self, packed: np.ndarray, size: int) -> np.ndarray:
        """The float32 values (+-threshold or 0) of `size` entries packed by `quantize`."""
        packed = np.asarray(packed, dtype=np.uint8)
        codes = np.stack([(packed >> s) & 3 for s in (6, 4, 2, 0)], axis=1).reshape(-1)[:size]
        out = np.zeros(size, dtype=np.float32)
        out[codes == 3] = self.threshold
        out[codes == 2] = -self.threshold
        return out

    def compress(self, slot: Any, grad: np.ndarray) -> np.ndarray:
        """Quantize then dequantize: what the receiver sees of `grad` (same shape)."""
        flat = np.asarray(grad).reshape(-1)
        return self.dequantize(self.quantize(slot, flat), flat.size).reshape(np.shape(grad))

    def packed_size(self, size: int) -> int:
        """Bytes of the packed codes of `size` values."""
        return -(-size // 16) * 4
