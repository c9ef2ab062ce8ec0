"""Image decoding and encoding on Pillow (MXNet uses OpenCV), imported lazily.

Decoded images are uint8 numpy arrays, (H, W, 3) or (H, W, 1); `decode_bgr` /
`encode_bgr` use OpenCV's BGR channel order for `recordio.pack_img`/`unpack_img`.
"""
from __future__ import annotations

import io
from typing import Any

import numpy as np

from hybridgraph.nd.errors import MXNetError


def pil() -> Any:
    """The PIL.Image module, or a clear error naming the extra to install."""
    try:
        from PIL import Image
    except ImportError as e:  # pragma: no cover - exercised only without Pillow
        raise ImportError("hybridgraph's image functions (mx.image, recordio.pack_img, gluon.data.vision "
                          "datasets) decode and encode with Pillow: pip install 'hybridgraph[image]' "
                          "(or pip install Pillow)") from e
    return Image


def decode(buf: bytes | bytearray | np.ndarray, flag: int = 1, to_rgb: bool = True, where: str = "") -> np.ndarray:
    """Decode an encoded image. flag 1: (H, W, 3); flag 0: grayscale (H, W, 1); to_rgb False: BGR."""
    data = bytes(np.asarray(buf, dtype=np.uint8).tobytes() if isinstance(buf, np.ndarray) else buf)
    if not data:
        raise MXNetError(f"imdecode: the image buffer{where} is empty")
    Image = pil()
    try:
        with Image.open(io.BytesIO(data)) as im:
            im = im.convert("L" if flag == 0 else "RGB")
            arr = np.asarray(im, dtype=np.uint8)
    except (OSError, ValueError, SyntaxError) as e:
        raise MXNetError(f"imdecode: cannot decode the image{where} ({len(data)} bytes): {e}") from e
    if flag == 0:
        return arr[:, :, None].copy()
    return arr.copy() if to_rgb else arr[:, :, ::-1].copy()


def decode_bgr(buf: bytes, iscolor: int = -1) -> np.ndarray:
    """OpenCV's `imdecode(buf, iscolor)`: BGR (H, W, 3), or (H, W) for grayscale images / iscolor 0."""
    Image = pil()
    try:
        with Image.open(io.BytesIO(bytes(buf))) as im:
            mode = im.mode
    except OSError as e:
        raise MXNetError(f"unpack_img: cannot decode the image ({len(buf)} bytes): {e}") from e
    gray = iscolor == 0 or (iscolor < 0 and mode in ("L", "1", "I", "I;16", "F"))
    img = decode(buf, flag=0 if gray else 1, to_rgb=False)
    return img[:, :, 0] if gray else img


def encode_bgr(img: np.ndarray, quality: int, img_fmt: str) -> bytes:
    """Encode a BGR (H, W, 3) or grayscale (H, W) uint8 array as '.jpg' or '.png'."""
    Image = pil()
    arr = np.asarray(img)
    if arr.dtype != np.uint8:
        raise MXNetError(f"pack_img: expected a uint8 image, got {arr.dtype}")
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    if arr.ndim == 3:
        arr = arr[:, :, ::-1]
    fmt = img_fmt.upper()
    out = io.BytesIO()
    pic = Image.fromarray(np.ascontiguousarray(arr))
    if fmt in (".JPG", ".JPEG"):
        pic.save(out, format="JPEG", quality=int(quality))
    elif fmt == ".PNG":
        pic.save(out, format="PNG", compress_level=min(max(int(quality), 0), 9))  # OpenCV clamps too
    else:
        raise MXNetError(f"pack_img: unsupported img_fmt {img_fmt!r} (expected '.jpg', '.jpeg' or '.png')")
    return out.getvalue()
