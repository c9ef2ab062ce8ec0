"""Writes data_io_ref/ with real MXNet 1.9.1 (run with the .mxvenv interpreter).

- records.rec / records.idx: MXIndexedRecordIO output for payloads that include the
  RecordIO magic at aligned and unaligned offsets, empty and odd-length payloads;
- image_ops.npz: `nd.image.*` results (resize for every interpolation and both
  dtypes, the colour kernels at fixed factors, lighting, normalize) on random images.

The reader tests check our reader against these bytes and our writer reproduces them.
"""
import os
import struct

import mxnet as mx
import numpy as np

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data_io_ref")
MAGIC = struct.pack("<I", 0xCED7230A)


def payloads():
    return [b"", b"a", b"abcd", b"abcde", MAGIC, b"xyzw" + MAGIC + b"tail", MAGIC + MAGIC,
            b"q" + MAGIC + b"123", b"0123" + MAGIC + b"4567" + MAGIC, bytes(range(256)) * 3]


def write_records():
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(HERE, "records.idx"), os.path.join(HERE, "records.rec"), "w")
    for i, p in enumerate(payloads()):
        rec.write_idx(i, p)
    rec.close()


def image_ops():
    rs = np.random.RandomState(0)
    out = {}
    img = rs.uniform(0, 255, (11, 9, 3)).astype("uint8")
    out["img"] = img
    for interp in range(5):
        for (w, h) in [(5, 4), (20, 25), (9, 15), (4, 20)]:
            for dt in ["uint8", "float32"]:
                x = mx.nd.array(img, dtype=dt)
                out[f"resize_{interp}_{w}_{h}_{dt}"] = mx.nd.image.resize(x, size=(w, h), interp=interp).asnumpy()
    small = img[:7, :9]
    out["small"] = small
    for dt in ["uint8", "float32"]:
        x = mx.nd.array(small, dtype=dt)
        for op in ["brightness", "contrast", "saturation", "hue"]:
            f = 0.3 if op == "hue" else 1.4
            out[f"{op}_{dt}"] = getattr(mx.nd.image, "random_" + op)(x, min_factor=f, max_factor=f).asnumpy()
        out[f"lighting_{dt}"] = mx.nd.image.adjust_lighting(x, alpha=(0.1, -0.2, 0.3)).asnumpy()
        out[f"normalize_{dt}"] = mx.nd.image.normalize(mx.nd.image.to_tensor(x), mean=(0.1, 0.2, 0.3),
                                                       std=(0.5, 0.6, 0.7)).asnumpy()
    np.savez_compressed(os.path.join(HERE, "image_ops.npz"), **out)


if __name__ == "__main__":
    os.makedirs(HERE, exist_ok=True)
    write_records()
    image_ops()
