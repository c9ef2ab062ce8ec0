"""A numpy-mode model both sides build with their own gluon (imported by the interop test and by
np_mx_side.py): convolution, pooling, dense layers and `F.np` / `F.npx` code in hybrid_forward,
so an export names MXNet's np operators (`_npi_*`, `_np_*`, `_npx_*`)."""
from __future__ import annotations

INPUT_SHAPE = (2, 1, 8, 8)


def build(gluon):
    """The model, built with `gluon` (hybridgraph's or MXNet's)."""
    nn = gluon.nn

    class NpNet(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.conv = nn.Conv2D(4, 3)
                self.pool = nn.MaxPool2D()
                self.fc = nn.Dense(6)
                self.out = nn.Dense(3)

        def hybrid_forward(self, F, x):  # noqa: N803 - gluon's convention
            h = self.pool(F.npx.relu(self.conv(x)))
            h = self.fc(h)
            h = F.np.tanh(h) * 2 + 1 - h / 3
            s = F.np.sum(h, axis=1, keepdims=True)
            centred = h - F.np.mean(h, axis=1, keepdims=True)
            return self.out(centred) + F.np.exp(-s * s)

    return NpNet(prefix="npnet_")
