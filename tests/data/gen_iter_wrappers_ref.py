"""Writes data_io_ref/iter_wrappers.json with real MXNet 1.9.1 (.mxvenv): the batches
(labels, pad) of ResizeIter over NDArrayIter for each last_batch_handle over two epochs,
of PrefetchingIter over two renamed NDArrayIters, and of ResizeIter over a CSVIter.
tests/data_io/test_iter_wrappers.py runs `run(mx)` under hybridgraph and compares."""
import json
import os
import sys
import tempfile

import numpy as np

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data_io_ref")


def run(mx):
    out = []
    for lbh in ["pad", "discard", "roll_over"]:
        base = mx.io.NDArrayIter(np.arange(20.0).reshape(10, 2), np.arange(10.0), batch_size=3, last_batch_handle=lbh)
        it = mx.io.ResizeIter(base, 5)
        for _ in range(2):
            out.append([(b.label[0].asnumpy().tolist(), b.pad) for b in it])
            it.reset()
    a = mx.io.NDArrayIter(np.arange(20.0).reshape(10, 2), np.arange(10.0), batch_size=4)
    b = mx.io.NDArrayIter(np.arange(30.0).reshape(10, 3), np.arange(10.0) * 2, batch_size=4)
    p = mx.io.PrefetchingIter([a, b], rename_data=[{"data": "a"}, {"data": "b"}],
                              rename_label=[{"softmax_label": "la"}, {"softmax_label": "lb"}])
    out.append([[d.name, list(d.shape)] for d in p.provide_data + p.provide_label])
    for _ in range(2):
        out.append([([x.asnumpy().tolist() for x in bt.data], [x.asnumpy().tolist() for x in bt.label], bt.pad)
                    for bt in p])
        p.reset()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "d.csv")
        with open(path, "w") as f:
            f.write("".join(f"{i},{i + 1}\n" for i in range(7)))
        r = mx.io.ResizeIter(mx.io.CSVIter(data_csv=path, data_shape=(2,), batch_size=3), 5)
        out.append([(bt.data[0].asnumpy().tolist(), bt.pad) for bt in r])
    return json.loads(json.dumps(out))


if __name__ == "__main__":
    import mxnet
    with open(os.path.join(HERE, "iter_wrappers.json"), "w") as f:
        json.dump(run(mxnet), f)
    sys.exit(0)
