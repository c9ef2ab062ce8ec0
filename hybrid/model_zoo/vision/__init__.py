r"""Vision models of MXNet 1.9.1's ``gluon.model_zoo.vision``, built from hybridgraph layers.

Every architecture has MXNet's parameter names, so MXNet's ``save_parameters``
files load into it, and its ``export()`` writes the graph MXNet writes:

-  `AlexNet <https://arxiv.org/abs/1404.5997>`_
-  `DenseNet <https://arxiv.org/abs/1608.06993>`_
-  `Inception V3 <http://arxiv.org/abs/1512.00567>`_
-  `ResNet V1 <https://arxiv.org/abs/1512.03385>`_, `ResNet V2 <https://arxiv.org/abs/1603.05027>`_
-  `SqueezeNet <https://arxiv.org/abs/1602.07360>`_
-  `VGG <https://arxiv.org/abs/1409.1556>`_
-  `MobileNet <https://arxiv.org/abs/1704.04861>`_, `MobileNetV2 <https://arxiv.org/abs/1801.04381>`_

Build one with random weights::

    from hybridgraph.gluon.model_zoo import vision
    net = vision.get_model("resnet18_v1")
    net.initialize()

Pretrained weights are never downloaded. Load MXNet's weights from a local file with
``net.load_parameters("resnet18_v1-a0666292.params")``, or pass ``pretrained=True`` with
``root=`` the directory that holds ``<name>-<hash>.params`` (``pretrained="<file>"`` loads
that file).
"""
from __future__ import annotations

from typing import Any

from ...hybrid_block import HybridBlock
from . import alexnet as _alexnet
from . import densenet as _densenet
from . import inception as _inception
from . import mobilenet as _mobilenet
from . import resnet as _resnet
from . import squeezenet as _squeezenet
from . import vgg as _vgg

_MODULES = (_alexnet, _densenet, _inception, _resnet, _squeezenet, _vgg, _mobilenet)
for _module in _MODULES:  # the public names of every model module, as MXNet's `import *`
    globals().update({_name: getattr(_module, _name) for _name in _module.__all__})

_MODELS = {
    **{f"resnet{n}_v{v}": getattr(_resnet, f"resnet{n}_v{v}") for v in (1, 2) for n in (18, 34, 50, 101, 152)},
    **{f"vgg{n}{bn}": getattr(_vgg, f"vgg{n}{bn}") for bn in ("", "_bn") for n in (11, 13, 16, 19)},
    "alexnet": _alexnet.alexnet,
    **{f"densenet{n}": getattr(_densenet, f"densenet{n}") for n in (121, 161, 169, 201)},
    "squeezenet1.0": _squeezenet.squeezenet1_0,
    "squeezenet1.1": _squeezenet.squeezenet1_1,
    "inceptionv3": _inception.inception_v3,
    **{f"mobilenet{m}": getattr(_mobilenet, "mobilenet" + m.replace(".", "_")) for m in ("1.0", "0.75", "0.5", "0.25")},
    **{f"mobilenetv2_{m}": getattr(_mobilenet, "mobilenet_v2_" + m.replace(".", "_"))
       for m in ("1.0", "0.75", "0.5", "0.25")},
}


def get_model(name: str, **kwargs: Any) -> HybridBlock:
    """Returns a pre-defined model by name.

    Parameters
    ----------
    name : str
        Name of the model (``resnet18_v1``, ``mobilenetv2_0.25``, ``squeezenet1.1``, ...).
    pretrained : bool or str, default False
        Load pretrained weights from a local file: True looks for MXNet's
        ``<name>-<hash>.params`` in `root` (nothing is downloaded); a path loads that file.
    classes : int
        Number of classes for the output layer.
    ctx : Context, default CPU
        The context in which to load the pretrained weights.
    root : str, default '$MXNET_HOME/models'
        Location of the model parameter files.

    Returns
    -------
    HybridBlock
        The model.
    """
    name = name.lower()
    if name not in _MODELS:
        raise ValueError("Model {} is not supported. Available options are\n\t{}".format(
            name, "\n\t".join(sorted(_MODELS))))
    return _MODELS[name](**kwargs)


__all__ = ["get_model"] + [name for module in _MODULES for name in module.__all__]
