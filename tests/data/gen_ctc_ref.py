"""Write ctc_ref.npz: inputs, losses and activation gradients of MXNet 1.9.1's CTCLoss.

Run with MXNet's interpreter from this directory:  /work/main/.mxvenv/bin/python gen_ctc_ref.py
Every case is feasible (each label fits its sequence): for a label longer than its data
MXNet leaves its gradient buffer unwritten, so there is nothing to compare.
"""
import mxnet as mx
import numpy as np


def labels_for(blank_label):
    if blank_label == "first":    # 1..4 are tokens, 0 pads
        return np.array([[1, 2, 2, 0], [3, 0, 0, 0], [4, 4, 1, 2], [2, 0, 0, 0]], dtype=np.float32)
    return np.array([[1, 2, 2, -1], [3, -1, -1, -1], [0, 0, 1, 2], [2, -1, -1, -1]], dtype=np.float32)


def main():
    rng = np.random.RandomState(3)
    out = {}
    for blank in ("first", "last"):
        for use_dl in (False, True):
            for use_ll in (False, True):
                key = f"{blank}_{int(use_dl)}{int(use_ll)}"
                data = rng.uniform(-2, 2, (9, 4, 5)).astype(np.float32)
                label = labels_for(blank)
                args = [mx.nd.array(data), mx.nd.array(label)]
                if use_dl:
                    args.append(mx.nd.array([9, 6, 8, 3]))
                if use_ll:
                    args.append(mx.nd.array([3, 1, 2, 1]))
                head = rng.uniform(0.5, 2, (4,)).astype(np.float32)
                x = args[0]
                x.attach_grad()
                with mx.autograd.record():
                    loss = mx.nd.CTCLoss(*args, use_data_lengths=use_dl, use_label_lengths=use_ll,
                                         blank_label=blank)
                loss.backward(mx.nd.array(head))
                out[key + "_data"] = data
                out[key + "_label"] = label
                out[key + "_head"] = head
                out[key + "_loss"] = loss.asnumpy()
                out[key + "_grad"] = x.grad.asnumpy()
    np.savez_compressed("ctc_ref.npz", **out)


if __name__ == "__main__":
    main()
