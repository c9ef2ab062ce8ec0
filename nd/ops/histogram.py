"""_histogram (MXNet 1.9.1, src/operator/tensor/histogram*): counts of the flattened data per
bin, with the bin edges. `nd.histogram` / `sym.histogram` (nd/arith.py) are MXNet's Python
wrappers around it.

Two forms, as MXNet's: `bin_cnt` and `range` given (one input; `bin_cnt` equal bins over
`range`, edges computed in float64 and stored in the data's dtype), or neither (inputs `data`
and `bins`, the bin edges). Bin i holds edges[i] <= x < edges[i+1], the last bin closed on the
right; values outside [edges[0], edges[-1]] are not counted. Counts are int64.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import AttrError, ShapeError
from ..registry import ZERO_GRAD, register

_ATTRS = {
    "bin_cnt": Attr("int", None, "Number of bins for uniform case"),
    "range": Attr("floats", None, "The lower and upper range of the bins. if not provided, range is simply "
                                  "(a.min(), a.max()). values outside the range are ignored."),
}


def _check(a) -> None:
    if (a.bin_cnt is None) != (a.range is None):
        raise AttrError("operator _histogram: bin_cnt and range should both or neither be specified, "
                        f"got bin_cnt={a.bin_cnt}, range={a.range}")
    if a.range is not None and len(a.range) != 2:
        raise AttrError(f"operator _histogram: range must be (low, high), got {a.range}")
    if a.bin_cnt is not None and a.bin_cnt < 1:
        raise AttrError(f"operator _histogram: bin_cnt must be positive, got {a.bin_cnt}")


def _inputs(a) -> tuple:
    return ("data",) if a.bin_cnt is not None else ("data", "bins")


def _shape(a, data, bins=None):
    _check(a)
    if a.bin_cnt is not None:
        return [data], [(a.bin_cnt,), (a.bin_cnt + 1,)]
    if bins is None:
        return None
    if len(bins) != 1 or bins[0] < 2:
        raise ShapeError(f"operator _histogram: bins should be a 1-D vector of at least 2 bounds, got shape "
                         f"{tuple(bins)}")
    return [data, bins], [(bins[0] - 1,), tuple(bins)]


def _type(a, t, *rest):
    if t is None:
        return None
    return [t] * (1 + len(rest)), [np.dtype(np.int64), t]


def _bin_index(xp, x, edges, uniform: tuple | None):
    """The bin of every element (-1 outside the edges), by MXNet's rule."""
    nbins = edges.shape[0] - 1
    lo, hi = (float(edges[0]), float(edges[-1])) if uniform is None else uniform
    inside = (x >= lo) & (x <= hi)
    if uniform is None:
        idx = xp.searchsorted(edges, x, side="right") - 1
    else:
        # the arithmetic guess (float64), then one step of correction against the stored edges
        idx = xp.floor((x.astype(np.float64) - lo) * nbins / (hi - lo) if hi > lo else xp.zeros(x.shape))
        idx = xp.clip(xp.nan_to_num(idx), 0, nbins - 1).astype(np.int64)
        idx -= x < edges[idx]
        idx = xp.clip(idx, 0, nbins - 1)
        idx += (x >= edges[idx + 1]) & (idx != nbins - 1)
    return xp.where(inside, xp.clip(idx, 0, nbins - 1), -1)


@register("_histogram", aliases=("_npi_histogram",), inputs=_inputs,
          arguments=("data", "bins"), outputs=("output0", "output1"), attrs=dict(_ATTRS), gradient=ZERO_GRAD,
          infer_shape=_shape, infer_type=_type)
def _histogram(xp, a, data, bins=None):
    """Counts per bin (int64) and the bin edges (data's dtype)."""
    _shape(a, data.shape, None if bins is None else bins.shape)
    x = data.reshape(-1)
    if a.bin_cnt is not None:
        lo, hi = float(a.range[0]), float(a.range[1])
        i = np.arange(a.bin_cnt + 1, dtype=np.float64)
        edges = xp.asarray(((hi * i + (a.bin_cnt - i) * lo) / a.bin_cnt).astype(data.dtype))
        idx = _bin_index(xp, x, edges, (lo, hi))
    else:
        edges = bins.astype(data.dtype, copy=False)
        idx = _bin_index(xp, x, edges, None)
    counts = xp.bincount(idx[idx >= 0], minlength=edges.shape[0] - 1).astype(np.int64)
    return counts, edges.copy()
