"""Layer and loss cases shared by tests/data/gen_gluon_ref.py (run with MXNet 1.9.1) and tests/hybrid.

Pure data: a case is (name, constructor expression, inputs, flags). The
constructor is evaluated with `nn` (layers) or `loss` (losses) in scope, with
`prefix='net_'` added so node and parameter names do not depend on how many
blocks were made before. Inputs are (name, shape, kind); kinds are drawn by
`make_input` from a numpy RandomState seeded per case.
"""
from __future__ import annotations

import zlib

import numpy as np

# flags: train = also run in train mode (BatchNorm statistics); grad = record input/param gradients;
# nograd = input names without a gradient; grad=False: MXNet cannot record it (forward only);
# hybrid = compare the exported JSON; mx_record_train: MXNet's predict-mode reference recorded in train mode;
# true_derivative: our input gradient is the true derivative, not MXNet's.
LAYER_CASES = [
    ("dense", "nn.Dense(3)", [("data", (4, 5), "normal")], {}),
    ("dense_act", "nn.Dense(4, activation='tanh', flatten=False, use_bias=False)", [("data", (2, 3, 5), "normal")], {}),
    ("dense_in_units", "nn.Dense(2, in_units=6, activation='relu')", [("data", (3, 2, 3), "normal")], {}),
    ("batchnorm", "nn.BatchNorm()", [("data", (4, 3, 2, 2), "normal")], {"train": True}),
    ("batchnorm_last", "nn.BatchNorm(axis=-1, scale=False, center=False, momentum=0.5, epsilon=1e-3)",
     [("data", (4, 2, 3), "normal")], {"train": True}),
    ("batchnorm_global", "nn.BatchNorm(use_global_stats=True, in_channels=3)", [("data", (5, 3), "normal")],
     {"train": True}),
    ("layernorm", "nn.LayerNorm()", [("data", (2, 3, 4), "normal")], {}),
    ("layernorm_axis1", "nn.LayerNorm(axis=1, epsilon=1e-3, center=False)", [("data", (2, 3, 4), "normal")], {}),
    ("instancenorm", "nn.InstanceNorm(scale=True)", [("data", (2, 3, 4), "normal")], {}),
    ("instancenorm_axis2", "nn.InstanceNorm(axis=2, scale=True)", [("data", (2, 3, 4), "normal")], {}),
    ("groupnorm", "nn.GroupNorm(num_groups=2)", [("data", (2, 4, 3), "normal")], {}),
    ("embedding", "nn.Embedding(10, 4)", [("data", (2, 3), "int:10")], {"nograd": ("data",)}),
    ("flatten", "nn.Flatten()", [("data", (2, 3, 4), "normal")], {}),
    ("dropout_p0", "nn.Dropout(0)", [("data", (2, 3), "normal")], {}),
    ("dropout", "nn.Dropout(0.5, axes=(1,))", [("data", (2, 3), "normal")], {}),
    ("act_relu", "nn.Activation('relu')", [("data", (3, 4), "normal")], {}),
    ("act_sigmoid", "nn.Activation('sigmoid')", [("data", (3, 4), "normal")], {}),
    ("act_tanh", "nn.Activation('tanh')", [("data", (3, 4), "normal")], {}),
    ("act_softrelu", "nn.Activation('softrelu')", [("data", (3, 4), "normal")], {}),
    ("act_softsign", "nn.Activation('softsign')", [("data", (3, 4), "normal")], {}),
    ("leakyrelu", "nn.LeakyReLU(0.1)", [("data", (3, 4), "normal")], {}),
    ("prelu", "nn.PReLU()", [("data", (3, 4), "normal")], {}),
    ("prelu_channels", "nn.PReLU(in_channels=3)", [("data", (2, 3, 4), "normal")], {}),
    ("elu", "nn.ELU(0.5)", [("data", (3, 4), "normal")], {}),
    # our selu backward is the true derivative; MXNet's is lambda * (y + alpha) for x < 0 (nd/ops/nn.py)
    ("selu", "nn.SELU()", [("data", (3, 4), "normal")], {"true_derivative": True}),
    ("gelu", "nn.GELU()", [("data", (3, 4), "normal")], {}),
    ("swish", "nn.Swish(2.0)", [("data", (3, 4), "normal")], {}),
]

# MXNet's oneDNN max-pooling backward is wrong after a predict-mode forward (it needs the
# workspace only a train-mode forward keeps), so MXNet's reference for these is recorded in
# train mode; pooling computes the same in both modes.
_MAXPOOL = {"mx_record_train": True}

# layers that need the Convolution / Deconvolution / Pooling / Pad operators
CONV_CASES = [
    ("conv1d", "nn.Conv1D(4, 3, strides=2, padding=1)", [("data", (2, 3, 7), "normal")], {}),
    ("conv2d", "nn.Conv2D(4, (3, 2), padding=(1, 0), dilation=(1, 2), activation='relu')",
     [("data", (2, 3, 5, 6), "normal")], {}),
    ("conv2d_groups", "nn.Conv2D(4, 3, groups=2, use_bias=False, in_channels=4)", [("data", (1, 4, 5, 5), "normal")],
     {}),
    ("conv3d", "nn.Conv3D(2, 2, strides=(1, 2, 1))", [("data", (1, 2, 3, 4, 3), "normal")], {}),
    ("conv1d_t", "nn.Conv1DTranspose(3, 3, strides=2, padding=1, output_padding=1)", [("data", (2, 2, 4), "normal")],
     {}),
    ("conv2d_t", "nn.Conv2DTranspose(4, (2, 3), strides=2, groups=2, in_channels=2)",
     [("data", (1, 2, 3, 3), "normal")], {}),
    ("conv3d_t", "nn.Conv3DTranspose(2, 2, use_bias=False)", [("data", (1, 2, 2, 3, 2), "normal")], {}),
    ("maxpool1d", "nn.MaxPool1D(3, 2, 1)", [("data", (2, 3, 7), "normal")], _MAXPOOL),
    ("maxpool2d", "nn.MaxPool2D()", [("data", (2, 3, 4, 6), "normal")], _MAXPOOL),
    ("maxpool2d_ceil", "nn.MaxPool2D(3, 2, ceil_mode=True)", [("data", (1, 2, 6, 6), "normal")], _MAXPOOL),
    ("maxpool3d", "nn.MaxPool3D(2)", [("data", (1, 2, 4, 4, 2), "normal")], _MAXPOOL),
    ("avgpool1d", "nn.AvgPool1D(2)", [("data", (2, 3, 6), "normal")], {}),
    ("avgpool2d_pad", "nn.AvgPool2D(3, 1, 1, count_include_pad=False)", [("data", (1, 2, 4, 5), "normal")], {}),
    ("avgpool2d_nhwc", "nn.AvgPool2D(2, layout='NHWC')", [("data", (1, 4, 4, 3), "normal")], {}),
    ("avgpool3d", "nn.AvgPool3D(2, padding=1)", [("data", (1, 2, 3, 3, 3), "normal")], {}),
    ("gmaxpool1d", "nn.GlobalMaxPool1D()", [("data", (2, 3, 5), "normal")], _MAXPOOL),
    ("gmaxpool2d", "nn.GlobalMaxPool2D()", [("data", (2, 3, 4, 5), "normal")], _MAXPOOL),
    ("gmaxpool3d", "nn.GlobalMaxPool3D()", [("data", (1, 2, 3, 2, 2), "normal")], _MAXPOOL),
    ("gavgpool1d", "nn.GlobalAvgPool1D()", [("data", (2, 3, 5), "normal")], {}),
    ("gavgpool2d", "nn.GlobalAvgPool2D()", [("data", (2, 3, 4, 5), "normal")], {}),
    ("gavgpool3d", "nn.GlobalAvgPool3D()", [("data", (1, 2, 3, 2, 2), "normal")], {}),
    ("reflectionpad2d", "nn.ReflectionPad2D(2)", [("data", (1, 2, 3, 4), "normal")], {}),
]

_SW = ("sample_weight", (4, 1), "uniform")
LOSS_CASES = [
    ("l2", "loss.L2Loss()", [("pred", (4, 5), "normal"), ("label", (4, 5), "normal")], {}),
    ("l2_sw", "loss.L2Loss(weight=2.0)", [("pred", (4, 5), "normal"), ("label", (4, 5), "normal"), _SW], {}),
    ("l2_axis1", "loss.L2Loss(batch_axis=1)", [("pred", (3, 4), "normal"), ("label", (12,), "normal")], {}),
    ("l1", "loss.L1Loss()", [("pred", (4, 5), "normal"), ("label", (4, 5), "normal"), _SW], {}),
    ("bce", "loss.SigmoidBCELoss()", [("pred", (4, 5), "normal"), ("label", (4, 5), "binary"), _SW], {}),
    ("bce_pos", "loss.SigmoidBCELoss()",
     [("pred", (4, 5), "normal"), ("label", (4, 5), "binary"), ("sample_weight", (), "none"),
      ("pos_weight", (1, 5), "uniform")], {}),
    ("bce_sigmoid", "loss.SigmoidBinaryCrossEntropyLoss(from_sigmoid=True, weight=0.5)",
     [("pred", (4, 5), "prob01"), ("label", (4, 5), "binary")], {}),
    ("bce_sigmoid_pos", "loss.SigmoidBCELoss(from_sigmoid=True)",
     [("pred", (4, 5), "prob01"), ("label", (4, 5), "binary"), ("sample_weight", (4, 1), "uniform"),
      ("pos_weight", (1, 5), "uniform")], {}),
    ("sce", "loss.SoftmaxCrossEntropyLoss()", [("pred", (4, 5), "normal"), ("label", (4,), "int:5"), _SW],
     {"nograd": ("label",)}),
    ("sce_axis1", "loss.SoftmaxCELoss(axis=1)", [("pred", (2, 3, 4), "normal"), ("label", (2, 4), "int:3")],
     {"nograd": ("label",)}),
    ("sce_dense", "loss.SoftmaxCELoss(sparse_label=False)", [("pred", (4, 5), "normal"), ("label", (4, 5), "prob")],
     {}),
    ("sce_logits", "loss.SoftmaxCELoss(from_logits=True, weight=3.0)",
     [("pred", (4, 5), "logprob"), ("label", (4,), "int:5")], {"nograd": ("label",)}),
    ("kl", "loss.KLDivLoss()", [("pred", (4, 5), "logprob"), ("label", (4, 5), "prob"), _SW], {}),
    ("kl_softmax", "loss.KLDivLoss(from_logits=False, axis=1)",
     [("pred", (2, 3, 4), "normal"), ("label", (2, 3, 4), "prob")], {}),
    ("huber", "loss.HuberLoss(rho=0.5)", [("pred", (4, 5), "normal"), ("label", (4, 5), "normal"), _SW], {}),
    ("hinge", "loss.HingeLoss(margin=0.5)", [("pred", (4, 5), "normal"), ("label", (4, 5), "sign"), _SW], {}),
    ("sq_hinge", "loss.SquaredHingeLoss()", [("pred", (4, 5), "normal"), ("label", (4, 5), "sign")], {}),
    ("logistic", "loss.LogisticLoss()", [("pred", (4, 5), "normal"), ("label", (4, 5), "sign"), _SW], {}),
    ("logistic_bin", "loss.LogisticLoss(label_format='binary')",
     [("pred", (4, 5), "normal"), ("label", (4, 5), "binary")], {}),
    ("triplet", "loss.TripletLoss(margin=0.3)",
     [("pred", (4, 5), "normal"), ("positive", (4, 5), "normal"), ("negative", (4, 5), "normal")], {}),
    ("poisson", "loss.PoissonNLLLoss()", [("pred", (4, 5), "normal"), ("target", (4, 5), "count"), _SW], {}),
    ("poisson_full", "loss.PoissonNLLLoss(from_logits=False, compute_full=True)",
     [("pred", (4, 5), "positive"), ("target", (4, 5), "count1")], {"grad": False, "hybrid": False}),
    ("cosine", "loss.CosineEmbeddingLoss(margin=0.2)",
     [("input1", (4, 5), "normal"), ("input2", (4, 5), "normal"), ("label", (4,), "sign")], {"nograd": ("label",)}),
    ("cosine_sw", "loss.CosineEmbeddingLoss()",
     [("input1", (4, 5), "normal"), ("input2", (4, 5), "normal"), ("label", (4,), "sign"), _SW],
     {"nograd": ("label",)}),
    ("sdml", "loss.SDMLLoss()", [("x1", (4, 3), "normal"), ("x2", (4, 3), "normal")], {"hybrid": False}),
]


def case_seed(name: str) -> int:
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def make_input(rng: np.random.RandomState, shape: tuple, kind: str) -> np.ndarray | None:
    """A float32 array of `shape` drawn as `kind` describes (kind "none" is an absent optional input)."""
    if kind == "none":
        return None
    if kind == "normal":
        x = rng.randn(*shape)
    elif kind == "uniform":
        x = rng.uniform(0.5, 1.5, shape)
    elif kind == "positive":
        x = rng.uniform(0.2, 3.0, shape)
    elif kind == "prob01":
        x = rng.uniform(0.05, 0.95, shape)
    elif kind == "binary":
        x = rng.randint(0, 2, shape)
    elif kind == "sign":
        x = rng.randint(0, 2, shape) * 2 - 1
    elif kind == "count":
        x = rng.randint(0, 6, shape)
    elif kind == "count1":  # no zeros: MXNet's Stirling term is 0 * log(0) = nan there
        x = rng.randint(1, 6, shape)
    elif kind.startswith("int:"):
        x = rng.randint(0, int(kind[4:]), shape)
    elif kind in ("prob", "logprob"):
        e = np.exp(rng.randn(*shape))
        x = e / e.sum(axis=-1, keepdims=True)
        x = np.log(x) if kind == "logprob" else x
    else:
        raise ValueError(f"unknown input kind {kind!r}")
    return np.asarray(x, dtype=np.float32)


def make_param(rng: np.random.RandomState, name: str, shape: tuple) -> np.ndarray:
    """Fixed parameter values: running variances positive, everything else in [-1, 1]."""
    if name.endswith("running_var"):
        return rng.uniform(0.5, 1.5, shape).astype(np.float32)
    return rng.uniform(-1, 1, shape).astype(np.float32)
