"""A convolution whose kernel covers the whole image (MXNet's test_conv2d_16c uses 224x224):
its data gradient goes through GEMM + col2im, not the full convolution of the output gradient,
which costs prod(input)/prod(output) times more (50176x there: minutes instead of a second)."""
from __future__ import annotations

import numpy as np

from hybridgraph import autograd, nd


def test_whole_image_kernel_gradients():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 40, 40)).astype(np.float32)
    w = rng.standard_normal((4, 3, 40, 40)).astype(np.float32)
    g = rng.standard_normal((2, 4, 1, 1)).astype(np.float32)
    xa, wa = nd.array(x), nd.array(w)
    xa.attach_grad()
    wa.attach_grad()
    with autograd.record():
        y = nd.Convolution(xa, wa, kernel=(40, 40), num_filter=4, no_bias=True)
    y.backward(nd.array(g))
    np.testing.assert_allclose(y.asnumpy()[:, :, 0, 0], np.einsum("nchw,ochw->no", x, w), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(xa.grad.asnumpy(), np.einsum("no,ochw->nchw", g[:, :, 0, 0], w), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(wa.grad.asnumpy(), np.einsum("no,nchw->ochw", g[:, :, 0, 0], x), rtol=1e-5, atol=1e-5)


def test_large_kernel_with_padding_matches_the_full_convolution_path():
    """5x5 kernel, pad 1, on 6x6: output 4x4, input/output 2.25 (full-convolution path) versus
    a 6x6 kernel with pad 0 (col2im path): both against a direct numpy adjoint."""
    rng = np.random.default_rng(1)
    for k, pad in ((5, 1), (6, 0), (6, 2)):
        x = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
        w = rng.standard_normal((3, 2, k, k)).astype(np.float32)
        xa = nd.array(x)
        xa.attach_grad()
        with autograd.record():
            y = nd.Convolution(xa, nd.array(w), kernel=(k, k), pad=(pad, pad), num_filter=3, no_bias=True)
        g = rng.standard_normal(y.shape).astype(np.float32)
        y.backward(nd.array(g))
        want = np.zeros((1, 2, 6 + 2 * pad, 6 + 2 * pad), np.float32)
        for i in range(g.shape[2]):
            for j in range(g.shape[3]):
                want[:, :, i:i + k, j:j + k] += np.einsum("no,ochw->nchw", g[:, :, i, j], w)
        want = want[:, :, pad:pad + 6, pad:pad + 6]
        np.testing.assert_allclose(xa.grad.asnumpy(), want, rtol=1e-4, atol=1e-4)
