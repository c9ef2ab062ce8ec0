"""`nd.image.*` operators against MXNet 1.9.1's results (tests/data/data_io_ref/image_ops.npz,
made by tests/data/gen_data_io_ref.py), their shape rules and errors."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph.nd.errors import MXNetError

REF = np.load(Path(__file__).resolve().parents[1] / "data" / "data_io_ref" / "image_ops.npz")


@pytest.mark.parametrize("key", [k for k in REF.files if k.startswith("resize_")])
def test_resize_matches_opencv(key):
    _, interp, w, h, dt = key.split("_")
    out = mx.nd.image.resize(mx.nd.array(REF["img"], dtype=dt), size=(int(w), int(h)), interp=int(interp))
    want = REF[key]
    assert out.shape == want.shape and out.dtype == want.dtype
    # floats agree to rounding; 8-bit bilinear reproduces OpenCV's fixed point exactly, the other
    # 8-bit modes are computed in float and rounded (off by at most 1)
    atol = 1e-3 if dt != "uint8" else 0 if interp == "1" else 1
    np.testing.assert_allclose(out.asnumpy().astype(float), want.astype(float), atol=atol)


@pytest.mark.parametrize("dt", ["uint8", "float32"])
def test_colour_kernels_match_mxnet(dt):
    x = mx.nd.array(REF["small"], dtype=dt)
    for op in ["brightness", "contrast", "saturation", "hue"]:
        f = 0.3 if op == "hue" else 1.4
        out = getattr(mx.nd.image, "random_" + op)(x, min_factor=f, max_factor=f)
        assert out.dtype == np.dtype(dt)
        np.testing.assert_allclose(out.asnumpy().astype(float), REF[f"{op}_{dt}"].astype(float),
                                   atol=1 if op == "hue" else 1e-3, err_msg=op)
    np.testing.assert_allclose(mx.nd.image.adjust_lighting(x, alpha=(0.1, -0.2, 0.3)).asnumpy(),
                               REF[f"lighting_{dt}"], atol=1e-4)
    np.testing.assert_allclose(mx.nd.image.normalize(mx.nd.image.to_tensor(x), mean=(0.1, 0.2, 0.3),
                                                     std=(0.5, 0.6, 0.7)).asnumpy(), REF[f"normalize_{dt}"], rtol=1e-6)


def test_shape_errors_are_mxnet_errors():
    with pytest.raises(MXNetError, match="height, width, channels"):
        mx.nd.image.to_tensor(mx.nd.zeros((1, 2, 3, 4, 3)))
    with pytest.raises(MXNetError, match="either 1 or 3"):
        mx.nd.image.normalize(mx.nd.zeros((4, 5, 5)), mean=(0.0,), std=(1.0,))
    with pytest.raises(MXNetError, match="mean must have either 1 or 3"):
        mx.nd.image.normalize(mx.nd.zeros((3, 5, 5)))  # MXNet's default mean has 4 entries
    with pytest.raises(MXNetError, match="greater than 0"):
        mx.nd.image.resize(mx.nd.zeros((5, 5, 3)), size=(-1,))
    with pytest.raises(MXNetError, match="exceeds"):
        mx.nd.image.crop(mx.nd.zeros((5, 5, 3)), x=3, y=0, width=3, height=2)


def test_crop_gradient_symbolic_and_eager():
    x = mx.nd.arange(60).reshape((5, 4, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.image.crop(x, x=1, y=2, width=2, height=3)
    y.backward(mx.nd.ones_like(y) * 2)
    want = np.zeros((5, 4, 3))
    want[2:5, 1:3] = 2
    np.testing.assert_array_equal(x.grad.asnumpy(), want)
    s = mx.sym.image.crop(mx.sym.Variable("data"), 1, 2, 2, 3)
    assert s.infer_shape(data=(5, 4, 3))[1] == [(3, 2, 3)]
    assert mx.sym.load_json(s.tojson()).tojson() == s.tojson()


def test_to_tensor_batches_and_keep_ratio_resize():
    x = mx.nd.array(np.random.RandomState(0).randint(0, 255, (2, 6, 4, 3)), dtype="uint8")
    t = mx.nd.image.to_tensor(x)
    assert t.shape == (2, 3, 6, 4) and t.dtype == np.float32
    np.testing.assert_allclose(t.asnumpy(), x.asnumpy().transpose(0, 3, 1, 2) / 255.0, rtol=1e-6)
    assert mx.nd.image.resize(mx.nd.zeros((30, 20, 3)), size=(10,), keep_ratio=True).shape == (15, 10, 3)
