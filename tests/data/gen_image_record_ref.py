"""ImageRecordIter reference (tests/data/data_io_ref/imgrec_*), in two steps:

    python tests/data/gen_image_record_ref.py write            # any Python with Pillow + hybridgraph
    .mxvenv/bin/python tests/data/gen_image_record_ref.py expect   # real MXNet 1.9.1

`write` packs 7 random PNG images of different heights with labels into imgrec.rec/.idx
(MXNet's Python lacks OpenCV here, so pack_img cannot run there; the record bytes are the
same container either way). `expect` reads them with MXNet's ImageRecordIter (centre crop,
mean/std/scale, round_batch both ways, a mean_img file it computes, a resize=11 case) and
with mx.image.ImageIter (ImageNet mean/std, pad), saving the batches to
imgrec_expected.npz and the mean image to imgrec_mean.bin.
"""
import os
import sys

import numpy as np

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data_io_ref")


def write():
    import hybridgraph as mx
    rs = np.random.RandomState(0)
    w = mx.recordio.MXIndexedRecordIO(os.path.join(HERE, "imgrec.idx"), os.path.join(HERE, "imgrec.rec"), "w")
    for i in range(7):
        img = rs.randint(0, 255, (10 + i, 12, 3)).astype(np.uint8)
        w.write_idx(i, mx.recordio.pack_img((0, float(i % 3), i, 0), img, img_fmt=".png"))
    w.close()


def batches(mx, rec, mean_file):
    res = {}
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 9), batch_size=3, mean_r=10, mean_g=20,
                               mean_b=30, std_r=2, std_g=3, std_b=4, scale=0.5)
    for k, b in enumerate(it):
        res[f"b{k}"] = b.data[0].asnumpy()
        res[f"l{k}"] = b.label[0].asnumpy()
        res[f"p{k}"] = np.array(b.pad)
    it.reset()
    res["again"] = it.next().label[0].asnumpy()
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 9), batch_size=4, mean_img=mean_file,
                               round_batch=False)
    for k, b in enumerate(it):
        res[f"m{k}"] = b.data[0].asnumpy()
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 9), batch_size=7, resize=11)
    res["resized"] = it.next().data[0].asnumpy()
    it = mx.image.ImageIter(3, (3, 8, 9), path_imgrec=rec, path_imgidx=rec[:-4] + ".idx", mean=True, std=True,
                            last_batch_handle="pad")
    for k, b in enumerate(it):
        res[f"imageiter{k}"] = b.data[0].asnumpy()
        res[f"imageiter_label{k}"] = b.label[0].asnumpy()
    return res


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write()
    else:
        import mxnet as mx
        mean = os.path.join(HERE, "imgrec_mean.bin")
        if os.path.exists(mean):
            os.remove(mean)
        np.savez_compressed(os.path.join(HERE, "imgrec_expected.npz"),
                            **batches(mx, os.path.join(HERE, "imgrec.rec"), mean))
