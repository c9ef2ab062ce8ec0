"""RecordIO files (`mx.recordio`): MXNet's .rec/.idx container, byte-compatible both ways.

A .rec file is a sequence of records. Each record is written as one or more parts:
``magic (0xced7230a, little-endian uint32)``, ``lrec = cflag << 29 | length`` and
``length`` payload bytes, padded with zeros to a multiple of 4. A payload that holds
the magic number at a 4-byte-aligned offset is split there (dmlc-core's writer does
this so a reader can resynchronise on the magic): the magic is dropped from the
payload, the parts get cflag 1 (first), 2 (middle), 3 (last), and the reader puts
the magic back between parts. Whole records have cflag 0. The .idx file is text,
one ``key<TAB>byte offset`` line per record.

`pack`/`unpack` add MXNet's image-record header (`IRHeader`, struct ``IfQQ``);
`pack_img`/`unpack_img` encode/decode the image with Pillow (MXNet uses OpenCV:
the header and container are identical, the JPEG bytes of an encoder differ).
"""
from __future__ import annotations

import numbers
import os
import struct
from collections import namedtuple
from multiprocessing import current_process
from typing import Any

import numpy as np

from hybridgraph.nd.errors import FormatError, MXNetError

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img", "unpack_img"]

_MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", _MAGIC)
_LEN_MASK = (1 << 29) - 1


class MXRecordIO:
    """Reads/writes a RecordIO file sequentially.

    Parameters
    ----------
    uri : str
        Path to the record file.
    flag : str
        'w' for write or 'r' for read.
    """

    def __init__(self, uri: str | os.PathLike, flag: str):
        self.uri = os.fspath(uri)
        self.flag = flag
        self.pid: int | None = None
        self.is_open = False
        self.writable = False
        self._file: Any = None
        self.open()

    def open(self) -> None:
        """Opens the record file ('w' truncates it)."""
        if self.flag == "w":
            self._file = _open(self.uri, "wb")
            self.writable = True
        elif self.flag == "r":
            self._file = _open(self.uri, "rb")
            self.writable = False
        else:
            raise ValueError(f"Invalid flag {self.flag}")
        self.pid = current_process().pid
        self.is_open = True

    def __del__(self):
        self.close()

    def __getstate__(self) -> dict:
        """Pickled as the path, flag and whether it was open (reopened on unpickling)."""
        is_open = self.is_open
        self.close()
        d = dict(self.__dict__)
        d["is_open"] = is_open
        d["_file"] = None
        return d

    def __setstate__(self, d: dict) -> None:
        self.__dict__ = d
        is_open = d["is_open"]
        self.is_open = False
        if is_open:
            self.open()

    def _check_pid(self, allow_reset: bool = False) -> None:
        """A handle opened in another process is reopened (or refused when writing)."""
        if self.pid != current_process().pid:
            if allow_reset:
                self.reset()
            else:
                raise RuntimeError("Forbidden operation in multiple processes")

    def close(self) -> None:
        """Closes the record file."""
        if not getattr(self, "is_open", False):
            return
        self._file.close()
        self._file = None
        self.is_open = False
        self.pid = None

    def reset(self) -> None:
        """Moves back to the first record ('w': truncates the file)."""
        self.close()
        self.open()

    def write(self, buf: bytes) -> None:
        """Appends `buf` as one record."""
        if not self.writable:
            raise MXNetError(f"MXRecordIO: {self.uri} is open for reading, not writing")
        self._check_pid(allow_reset=False)
        self._file.write(encode_record(bytes(buf)))

    def read(self) -> bytes | None:
        """The next record, or None at the end of the file."""
        if self.writable:
            raise MXNetError(f"MXRecordIO: {self.uri} is open for writing, not reading")
        self._check_pid(allow_reset=False)
        return read_record(self._file, self.uri)


class MXIndexedRecordIO(MXRecordIO):
    """Reads/writes a RecordIO file with an index file, for random access.

    Parameters
    ----------
    idx_path : str
        Path to the index file.
    uri : str
        Path to the record file.
    flag : str
        'w' for write or 'r' for read.
    key_type : type
        Data type for keys.
    """

    def __init__(self, idx_path: str | os.PathLike, uri: str | os.PathLike, flag: str, key_type: type = int):
        self.idx_path = os.fspath(idx_path)
        self.idx: dict = {}
        self.keys: list = []
        self.key_type = key_type
        self.fidx: Any = None
        super().__init__(uri, flag)

    def open(self) -> None:
        super().open()
        self.idx = {}
        self.keys = []
        self.fidx = _open(self.idx_path, self.flag)
        if not self.writable:
            for lineno, line in enumerate(iter(self.fidx.readline, ""), 1):
                fields = line.strip().split("\t")
                if len(fields) < 2:
                    raise FormatError(f"{self.idx_path}:{lineno}: expected 'key<TAB>offset', got {line!r}")
                key = self.key_type(fields[0])
                self.idx[key] = int(fields[1])
                self.keys.append(key)

    def close(self) -> None:
        if not getattr(self, "is_open", False):
            return
        super().close()
        self.fidx.close()

    def __getstate__(self) -> dict:
        d = super().__getstate__()
        d["fidx"] = None
        return d

    def seek(self, idx: Any) -> None:
        """Moves the read position to the record with key `idx`."""
        if self.writable:
            raise MXNetError(f"MXIndexedRecordIO: {self.uri} is open for writing, cannot seek")
        self._check_pid(allow_reset=True)
        if idx not in self.idx:
            raise KeyError(f"MXIndexedRecordIO: no record with key {idx!r} in {self.idx_path}")
        self._file.seek(self.idx[idx])

    def tell(self) -> int:
        """The byte offset the next record will be written at."""
        if not self.writable:
            raise MXNetError(f"MXIndexedRecordIO: {self.uri} is open for reading; tell() is for writing")
        return self._file.tell()

    def read_idx(self, idx: Any) -> bytes | None:
        """The record with key `idx`."""
        self.seek(idx)
        return self.read()

    def write_idx(self, idx: Any, buf: bytes) -> None:
        """Appends `buf` as a record with key `idx`."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write(f"{key}\t{pos}\n")
        self.idx[key] = pos
        self.keys.append(key)


def _open(path: str, mode: str) -> Any:
    try:
        return open(path, mode)  # noqa: SIM115 (kept open for the handle's lifetime)
    except OSError as e:
        raise MXNetError(f"RecordIO: cannot open {path!r} for {'reading' if 'r' in mode else 'writing'}: "
                         f"{e.strerror}") from e


def encode_record(buf: bytes) -> bytes:
    """`buf` as the bytes dmlc-core's RecordIOWriter writes for it (split at aligned magics)."""
    n = len(buf)
    if n >= 1 << 29:
        raise MXNetError(f"RecordIO only accepts records smaller than 2^29 bytes, got {n}")
    parts = []
    start = 0
    for i in range(0, n - n % 4, 4):
        if buf[i:i + 4] == _MAGIC_BYTES:
            parts.append(_MAGIC_BYTES + struct.pack("<I", (1 if start == 0 else 2) << 29 | (i - start)))
            parts.append(buf[start:i])
            start = i + 4
    parts.append(_MAGIC_BYTES + struct.pack("<I", (3 if start else 0) << 29 | (n - start)))
    parts.append(buf[start:])
    parts.append(b"\0" * (-n % 4))
    return b"".join(parts)


def read_record(f: Any, where: str) -> bytes | None:
    """Reads one record from the binary file `f` (None at a clean end of file)."""
    out = []
    while True:
        head = f.read(8)
        if not head:
            if out:
                raise FormatError(f"RecordIO {where}: file ends inside a multi-part record")
            return None
        if len(head) < 8:
            raise FormatError(f"RecordIO {where}: truncated record header at byte {f.tell() - len(head)}")
        magic, lrec = struct.unpack("<II", head)
        if magic != _MAGIC:
            raise FormatError(f"RecordIO {where}: invalid magic 0x{magic:08x} at byte {f.tell() - 8} "
                              f"(expected 0x{_MAGIC:08x}); not a RecordIO file or a wrong offset")
        cflag, length = lrec >> 29, lrec & _LEN_MASK
        data = f.read(length)
        if len(data) < length:
            raise FormatError(f"RecordIO {where}: record at byte {f.tell() - len(data) - 8} declares {length} "
                              f"bytes, the file has {len(data)}")
        f.read(-length % 4)
        if out:
            out.append(_MAGIC_BYTES)
        out.append(data)
        if cflag in (0, 3):
            return b"".join(out)


IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
IRHeader.__doc__ = """Header of an image record: flag (the label count when the label is an array),
label (a float, or an array of floats), id and id2 (the high bits of the id)."""

_IR_FORMAT = "IfQQ"
_IR_SIZE = struct.calcsize(_IR_FORMAT)


def pack(header: Any, s: bytes) -> bytes:
    """Prefixes `s` with the image-record header (and an array label's float32 values)."""
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + s
    return struct.pack(_IR_FORMAT, *header) + s


def unpack(s: bytes) -> tuple:
    """Splits a packed record into (IRHeader, payload); an array label comes back as float32."""
    if len(s) < _IR_SIZE:
        raise FormatError(f"recordio.unpack: a record needs a {_IR_SIZE}-byte header, got {len(s)} bytes")
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s


def unpack_img(s: bytes, iscolor: int = -1) -> tuple:
    """(IRHeader, image as a numpy uint8 array in BGR order, as OpenCV gives it).

    `iscolor`: -1 keeps the file's channels, 0 gives grayscale (H, W), 1 gives 3 channels."""
    from .image.codec import decode_bgr
    header, s = unpack(s)
    return header, decode_bgr(s, iscolor)


def pack_img(header: Any, img: np.ndarray, quality: int = 95, img_fmt: str = ".jpg") -> bytes:
    """Encodes `img` (numpy, BGR channel order as OpenCV's) as JPEG or PNG and packs it.

    `quality`: JPEG quality 1-100, or PNG compression level 0-9."""
    from .image.codec import encode_bgr
    return pack(header, encode_bgr(img, quality, img_fmt))
