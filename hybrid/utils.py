"""Gluon utilities (`mx.gluon.utils`): splitting batches across contexts and
clipping gradients by their global norm, with MXNet 1.9.1's semantics."""
from __future__ import annotations

import hashlib
import os
import warnings
from typing import Any

import numpy as np

from hybridgraph import nd
from hybridgraph.nd.ndarray import NDArray

from .block import HookHandle

__all__ = ["split_data", "split_and_load", "clip_global_norm", "check_sha1", "download", "replace_file",
           "HookHandle", "shape_is_known", "export_paths"]


def export_paths(path: str, epoch: int = 0) -> tuple[str, str]:
    """The files `HybridBlock.export(path, epoch)` writes: (`path-symbol.json`,
    `path-%04d.params`). `export` itself returns None, as in MXNet 1.9.1; this is the
    way to get the names (`SymbolBlock.imports(*export_paths(path), ...)` needs the input
    names too)."""
    return f"{path}-symbol.json", f"{path}-{int(epoch):04d}.params"


def split_data(data: NDArray, num_slice: int, batch_axis: int = 0, even_split: bool = True) -> list:
    """Split an NDArray into `num_slice` slices along `batch_axis`.

    Usually used for data parallelism where each slice is sent to one device.

    Parameters
    ----------
    data : NDArray
        A batch of data.
    num_slice : int
        Number of desired slices.
    batch_axis : int, default 0
        The axis along which to slice.
    even_split : bool, default True
        Whether to force all slices to have the same number of elements. If
        False, the first ``size % num_slice`` slices get one element more.

    Returns
    -------
    list of NDArray
        The slices; `num_slice` of them.
    """
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError(f"data with shape {data.shape} cannot be evenly split into {num_slice} slices along axis "
                         f"{batch_axis}. Use a batch size that's multiple of {num_slice} or set even_split=False to "
                         "allow uneven partitioning of data.")
    n_each_section, extras = divmod(size, num_slice)
    section_sizes = [0] + extras * [n_each_section + 1] + (num_slice - extras) * [n_each_section]
    div_points = np.array(section_sizes).cumsum()
    if batch_axis != 0:
        return [nd.slice_axis(data, axis=batch_axis, begin=int(div_points[i]), end=int(div_points[i + 1]))
                for i in range(num_slice)]
    return [data[int(div_points[i]):int(div_points[i + 1])] if i < num_slice - 1 else data[int(div_points[i]):size]
            for i in range(num_slice)]


def split_and_load(data: Any, ctx_list: list, batch_axis: int = 0, even_split: bool = True) -> list:
    """Split an NDArray (or array-like) into ``len(ctx_list)`` slices along `batch_axis`
    and load each slice onto one context.

    Parameters
    ----------
    data : NDArray or numpy.ndarray
        A batch of data.
    ctx_list : list of Context
        The contexts to load the slices onto.
    batch_axis : int, default 0
        The axis along which to slice.
    even_split : bool, default True
        Whether to force all slices to have the same number of elements.

    Returns
    -------
    list of NDArray
        Each slice on its context.
    """
    if not isinstance(data, NDArray):
        data = nd.array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [s.as_in_context(ctx) for s, ctx in zip(slices, ctx_list)]


def clip_global_norm(arrays: list, max_norm: float, check_isfinite: bool = True) -> Any:
    """Rescale NDArrays (in place) so that the 2-norm of all of them together is at
    most `max_norm`.

    Parameters
    ----------
    arrays : list of NDArray
        The arrays, e.g. gradients.
    max_norm : float
        The largest allowed global norm.
    check_isfinite : bool, default True
        If True, warn when the norm is nan or inf, and return the norm as a float
        (a host sync); otherwise return it as a 1-element NDArray.

    Returns
    -------
    float or NDArray
        The total norm before clipping.
    """
    if len(arrays) == 0:
        raise AssertionError("clip_global_norm: arrays must not be empty")
    ctx = arrays[0].context
    squares = []
    for arr in arrays:
        x = arr.reshape((-1,))
        squares.append(nd.dot(x, x).as_in_context(ctx))
    total_norm = nd.sqrt(nd.add_n(*squares))
    if check_isfinite and not np.isfinite(total_norm.asscalar()):
        warnings.warn(UserWarning("nan or inf is detected. Clipping results will be undefined."), stacklevel=2)
    scale = max_norm / (total_norm + 1e-8)
    scale = nd.min(nd.concat(scale.reshape((1,)), nd.ones((1,), ctx=ctx, dtype=scale.dtype), dim=0))
    for arr in arrays:
        arr *= scale.as_in_context(arr.context)
    if check_isfinite:
        return total_norm.asscalar()
    return total_norm


def check_sha1(filename: str, sha1_hash: str) -> bool:
    """Whether the file's sha1 hex digest equals `sha1_hash`."""
    sha1 = hashlib.sha1()
    with open(filename, "rb") as f:
        while True:
            data = f.read(1048576)
            if not data:
                break
            sha1.update(data)
    return sha1.hexdigest() == sha1_hash


def replace_file(src: str, dst: str) -> None:
    """Atomically move `src` over `dst`."""
    try:
        os.replace(src, dst)
    except OSError:
        try:
            os.remove(src)
        except OSError:
            pass
        raise OSError(f"Moving downloaded temp file - {src}, to {dst} failed. Please retry the download.") from None


def _fetch(url: str, verify_ssl: bool) -> bytes:
    """The body of `url`, through requests when installed (as MXNet), else urllib."""
    try:
        import requests  # noqa: PLC0415 - optional, as in MXNet
    except ImportError:
        requests = None
    if requests is None:
        import ssl  # noqa: PLC0415
        import urllib.request  # noqa: PLC0415
        ctx = None if verify_ssl else ssl._create_unverified_context()
        with urllib.request.urlopen(url, context=ctx) as r:  # noqa: S310 - the user's URL
            if getattr(r, "status", 200) != 200:
                raise RuntimeError(f"Failed downloading url {url}")
            return r.read()
    r = requests.get(url, stream=True, verify=verify_ssl)
    if r.status_code != 200:
        raise RuntimeError(f"Failed downloading url {url}")
    return b"".join(chunk for chunk in r.iter_content(chunk_size=1024) if chunk)


def download(url: str, path: str | None = None, overwrite: bool = False, sha1_hash: str | None = None,
             retries: int = 5, verify_ssl: bool = True) -> str:
    """Download `url` to `path` (a file, or a folder for the URL's last part); return the file name.

    An existing file is kept unless `overwrite` or its sha1 differs from
    `sha1_hash`. The file appears atomically (written beside, then renamed),
    so concurrent downloads of one file leave one complete copy. Without
    network access the last failure is raised as an OSError that says where
    to put the file by hand.
    """
    from hybridgraph.nd.serialization import atomic_write  # noqa: PLC0415
    fname = url.rsplit("/", maxsplit=1)[-1] if path is None else os.path.expanduser(path)
    if path is not None and os.path.isdir(fname):
        fname = os.path.join(fname, url.rsplit("/", maxsplit=1)[-1])
    if retries < 0:
        raise AssertionError(f"Number of retries should be at least 0, currently it's {retries}")
    if not verify_ssl:
        warnings.warn("Unverified HTTPS request is being made (verify_ssl=False). Adding certificate "
                      "verification is strongly advised.", stacklevel=2)
    if not (overwrite or not os.path.exists(fname) or (sha1_hash and not check_sha1(fname, sha1_hash))):
        return fname
    os.makedirs(os.path.dirname(os.path.abspath(fname)), exist_ok=True)
    while True:
        try:
            payload = _fetch(url, verify_ssl)
            if not os.path.exists(fname) or overwrite or (sha1_hash and not check_sha1(fname, sha1_hash)):
                atomic_write(fname, payload)
            if sha1_hash and not check_sha1(fname, sha1_hash):
                raise UserWarning(f"File {fname} is downloaded but the content hash does not match. The repo may "
                                  "be outdated or download may be incomplete.")
            return fname
        except Exception as e:  # noqa: BLE001 - any failure is retried, as MXNet does
            retries -= 1
            if retries <= 0:
                if isinstance(e, (UserWarning, RuntimeError)):
                    raise e from None
                raise OSError(f"could not download {url} ({type(e).__name__}: {e}); without network access, "
                              f"fetch it by other means and place it at {os.path.abspath(fname)}") from e


def shape_is_known(shape: Any) -> bool:
    """Whether every dimension of `shape` is known (MXNet 1.x: unknown dims are 0)."""
    if shape is None:
        return False
    if len(shape) == 0:
        return False
    return all(d > 0 for d in shape)
