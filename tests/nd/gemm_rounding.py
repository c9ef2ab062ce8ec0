"""Comparing two computations of the same GEMMs in different shapes (chunked against whole,
per image against batched).

A BLAS may sum a dot product in another order when the matrices around it change shape: the
micro-kernel that covers an output element, or the path taken for small matrices, depends on
where that element falls. OpenBLAS 0.3.31's AVX2 ("Haswell") kernels do so on an AVX-512 AMD
Zen 5 CPU (OPENBLAS_CORETYPE=Haswell), while its SkylakeX kernels there, and its Haswell kernels
on Zen 4, did not. So chunking a GEMM keeps its values only up to float32 rounding; a wrong
offset or layout changes them by about their own size, far beyond it.
"""
from __future__ import annotations

import numpy as np

#: relative difference allowed between two summation orders of the same float32 dot products
#: (a few units in the last place of the largest value; a wrong element is off by ~100%)
GEMM_RTOL = 1e-5


def assert_equal_up_to_gemm_rounding(got, want) -> None:
    """got == want up to the rounding of reordered float32 sums (NaN only where want has one)."""
    want = np.asarray(want)
    scale = float(np.nanmax(np.abs(want))) if want.size and not np.isnan(want).all() else 0.0
    np.testing.assert_allclose(got, want, rtol=GEMM_RTOL, atol=GEMM_RTOL * max(scale, 1e-30))
