"""The epilogue of `_fused_convolution` (conv_fused.py): a residual add, then ReLU, run on each
chunk of a convolution's output right after its GEMM wrote it."""
from __future__ import annotations


def epilogue(xp, residual, relu: bool):
    """`finish(dst, where)` for conv_forward: ``dst += residual[where]``, then ReLU in place."""
    if residual is None and not relu:
        return None

    def finish(dst, where):
        if residual is not None:
            dst += residual[where]
        if relu:
            xp.maximum(dst, dst.dtype.type(0), out=dst)
    return finish
