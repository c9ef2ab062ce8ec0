"""Local store of pretrained model files (`mx.gluon.model_zoo.model_store`).

MXNet downloads pretrained weights from its model repository; hybridgraph never
downloads anything. A weights file that is already on disk, named as MXNet names
it (``<root>/<name>-<short hash>.params``, e.g. ``resnet18_v1-a0666292.params``),
is used; otherwise a clear error says how to get and load one.
"""
from __future__ import annotations

import hashlib
import os
import warnings
from typing import Any

__all__ = ["get_model_file", "purge", "short_hash", "default_root", "load_pretrained"]

_model_sha1 = {name: checksum for checksum, name in [
    ("44335d1f0046b328243b32a26a4fbd62d9057b45", "alexnet"),
    ("f27dbf2dbd5ce9a80b102d89c7483342cd33cb31", "densenet121"),
    ("b6c8a95717e3e761bd88d145f4d0a214aaa515dc", "densenet161"),
    ("2603f878403c6aa5a71a124c4a3307143d6820e9", "densenet169"),
    ("1cdbc116bc3a1b65832b18cf53e1cb8e7da017eb", "densenet201"),
    ("ed47ec45a937b656fcc94dabde85495bbef5ba1f", "inceptionv3"),
    ("9f83e440996887baf91a6aff1cccc1c903a64274", "mobilenet0.25"),
    ("8e9d539cc66aa5efa71c4b6af983b936ab8701c3", "mobilenet0.5"),
    ("529b2c7f4934e6cb851155b22c96c9ab0a7c4dc2", "mobilenet0.75"),
    ("6b8c5106c730e8750bcd82ceb75220a3351157cd", "mobilenet1.0"),
    ("36da4ff1867abccd32b29592d79fc753bca5a215", "mobilenetv2_1.0"),
    ("e2be7b72a79fe4a750d1dd415afedf01c3ea818d", "mobilenetv2_0.75"),
    ("aabd26cd335379fcb72ae6c8fac45a70eab11785", "mobilenetv2_0.5"),
    ("ae8f9392789b04822cbb1d98c27283fc5f8aa0a7", "mobilenetv2_0.25"),
    ("a0666292f0a30ff61f857b0b66efc0228eb6a54b", "resnet18_v1"),
    ("48216ba99a8b1005d75c0f3a0c422301a0473233", "resnet34_v1"),
    ("0aee57f96768c0a2d5b23a6ec91eb08dfb0a45ce", "resnet50_v1"),
    ("d988c13d6159779e907140a638c56f229634cb02", "resnet101_v1"),
    ("671c637a14387ab9e2654eafd0d493d86b1c8579", "resnet152_v1"),
    ("a81db45fd7b7a2d12ab97cd88ef0a5ac48b8f657", "resnet18_v2"),
    ("9d6b80bbc35169de6b6edecffdd6047c56fdd322", "resnet34_v2"),
    ("ecdde35339c1aadbec4f547857078e734a76fb49", "resnet50_v2"),
    ("18e93e4f48947e002547f50eabbcc9c83e516aa6", "resnet101_v2"),
    ("f2695542de38cf7e71ed58f02893d82bb409415e", "resnet152_v2"),
    ("264ba4970a0cc87a4f15c96e25246a1307caf523", "squeezenet1.0"),
    ("33ba0f93753c83d86e1eb397f38a667eaf2e9376", "squeezenet1.1"),
    ("dd221b160977f36a53f464cb54648d227c707a05", "vgg11"),
    ("ee79a8098a91fbe05b7a973fed2017a6117723a8", "vgg11_bn"),
    ("6bc5de58a05a5e2e7f493e2d75a580d83efde38c", "vgg13"),
    ("7d97a06c3c7a1aecc88b6e7385c2b373a249e95e", "vgg13_bn"),
    ("e660d4569ccb679ec68f1fd3cce07a387252a90a", "vgg16"),
    ("7f01cf050d357127a73826045c245041b0df7363", "vgg16_bn"),
    ("ad2f660d101905472b83590b59708b71ea22b2e5", "vgg19"),
    ("f360b758e856f1074a85abd5fd873ed1d98297c3", "vgg19_bn")]}

_URL = "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/gluon/models/{file_name}.zip"


def default_root() -> str:
    """``$MXNET_HOME/models``, or ``~/.mxnet/models`` as in MXNet."""
    return os.path.join(os.environ.get("MXNET_HOME", os.path.join("~", ".mxnet")), "models")


def short_hash(name: str) -> str:
    """The first 8 hex digits of the published SHA-1 of model `name`'s weights."""
    if name not in _model_sha1:
        raise ValueError(f"Pretrained model for {name} is not available.")
    return _model_sha1[name][:8]


def _sha1(path: str) -> str:
    digest = hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def get_model_file(name: str, root: str | None = None) -> str:
    """Path of the local pretrained weights of model `name`; never downloads.

    Parameters
    ----------
    name : str
        Name of the model, as in MXNet's store (``resnet18_v1``, ``mobilenetv2_0.25``).
    root : str, default ``$MXNET_HOME/models``
        Directory that holds ``<name>-<short hash>.params`` files.

    Raises
    ------
    FileNotFoundError
        When the file is not there, with the URL to fetch it from elsewhere and
        the way to load any local parameter file instead.
    """
    file_name = f"{name}-{short_hash(name)}"
    root = os.path.expanduser(root if root is not None else default_root())
    file_path = os.path.join(root, file_name + ".params")
    if not os.path.exists(file_path):
        raise FileNotFoundError(
            f"Pretrained weights for '{name}' cannot be downloaded: hybridgraph never downloads model files, "
            f"and {file_path} does not exist. Fetch {_URL.format(file_name=file_name)} on a machine with "
            f"network access and unzip it into {root} (or pass root=<directory>), or build the model with "
            f"pretrained=False and load any MXNet save_parameters file with net.load_parameters(path).")
    if _sha1(file_path) != _model_sha1[name]:
        warnings.warn(f"{file_path} does not match the published SHA-1 of '{name}'; loading it anyway",
                      stacklevel=2)
    return file_path


def load_pretrained(net: Any, name: str, pretrained: Any, ctx: Any, root: str | None) -> None:
    """Load weights into `net` as the `pretrained=` argument of a model constructor asks.

    `pretrained` is True (MXNet's file for `name` under `root`) or the path of a
    ``.params`` file written by ``save_parameters``.
    """
    path = pretrained if isinstance(pretrained, (str, os.PathLike)) else get_model_file(name, root=root)
    net.load_parameters(os.fspath(path), ctx=ctx)


def purge(root: str | None = None) -> None:
    """Remove every ``.params`` file in `root` (default ``$MXNET_HOME/models``)."""
    root = os.path.expanduser(root if root is not None else default_root())
    for f in os.listdir(root):
        if f.endswith(".params"):
            os.remove(os.path.join(root, f))
