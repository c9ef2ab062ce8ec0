"""mx.recordio: byte-compatibility with files MXNet 1.9.1 wrote (tests/data/data_io_ref,
made by tests/data/gen_data_io_ref.py), the magic-splitting rule, headers and errors."""
from __future__ import annotations

import pickle
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hybridgraph as mx
from hybridgraph import recordio
from hybridgraph.nd.errors import FormatError, MXNetError

REF = Path(__file__).resolve().parents[1] / "data" / "data_io_ref"
MAGIC = struct.pack("<I", 0xCED7230A)
PAYLOADS = [b"", b"a", b"abcd", b"abcde", MAGIC, b"xyzw" + MAGIC + b"tail", MAGIC + MAGIC,
            b"q" + MAGIC + b"123", b"0123" + MAGIC + b"4567" + MAGIC, bytes(range(256)) * 3]


def test_reads_mxnet_written_indexed_file():
    rec = mx.recordio.MXIndexedRecordIO(str(REF / "records.idx"), str(REF / "records.rec"), "r")
    assert rec.keys == list(range(len(PAYLOADS)))
    for i in reversed(rec.keys):
        assert rec.read_idx(i) == PAYLOADS[i]
    rec.reset()
    seq = mx.recordio.MXRecordIO(str(REF / "records.rec"), "r")
    assert [seq.read() for _ in PAYLOADS] == PAYLOADS
    assert seq.read() is None


def test_writes_the_bytes_mxnet_writes(tmp_path):
    rec = recordio.MXIndexedRecordIO(tmp_path / "r.idx", tmp_path / "r.rec", "w")
    assert rec.tell() == 0
    for i, p in enumerate(PAYLOADS):
        rec.write_idx(i, p)
    rec.close()
    assert (tmp_path / "r.rec").read_bytes() == (REF / "records.rec").read_bytes()
    assert (tmp_path / "r.idx").read_text() == (REF / "records.idx").read_text()


@given(st.lists(st.binary(max_size=40) | st.lists(st.sampled_from([MAGIC, b"ab", b"wxyz"]), max_size=6)
                .map(b"".join), max_size=8))
def test_round_trip_any_payload(tmp_path_factory, items):
    path = tmp_path_factory.mktemp("rt") / "x.rec"
    w = recordio.MXRecordIO(path, "w")
    for it in items:
        w.write(it)
    w.close()
    assert path.stat().st_size % 4 == 0
    r = recordio.MXRecordIO(path, "r")
    assert [r.read() for _ in items] == items
    assert r.read() is None


def test_pack_unpack_scalar_and_array_labels():
    h = recordio.IRHeader(0, 3.5, 7, 0)
    head, body = recordio.unpack(recordio.pack(h, b"payload"))
    assert (head.flag, head.label, head.id, head.id2, body) == (0, 3.5, 7, 0, b"payload")
    lab = np.array([1.5, -2.0, 3.25], dtype=np.float32)
    head, body = recordio.unpack(recordio.pack((9, lab, 1, 2), b"xy"))
    assert head.flag == 3 and body == b"xy" and head.id == 1 and head.id2 == 2
    np.testing.assert_array_equal(head.label, lab)
    assert len(recordio.pack(h, b"")) == struct.calcsize("IfQQ") == 24


def test_pack_img_round_trip_png():
    pytest.importorskip("PIL", reason="pack_img/unpack_img encode with Pillow")
    img = np.random.RandomState(0).randint(0, 255, (6, 5, 3)).astype(np.uint8)
    s = recordio.pack_img((0, 2.0, 3, 0), img, quality=3, img_fmt=".png")
    head, out = recordio.unpack_img(s)
    assert head.label == 2.0
    np.testing.assert_array_equal(out, img)  # BGR in, BGR out, lossless
    _, gray = recordio.unpack_img(s, iscolor=0)
    assert gray.shape == (6, 5)


def test_errors_name_the_file_and_offset(tmp_path):
    bad = tmp_path / "bad.rec"
    bad.write_bytes(b"\x00" * 8)
    with pytest.raises(FormatError, match="invalid magic.*byte 0"):
        recordio.MXRecordIO(bad, "r").read()
    trunc = tmp_path / "t.rec"
    trunc.write_bytes(MAGIC + struct.pack("<I", 100) + b"abc")
    with pytest.raises(FormatError, match="declares 100 bytes"):
        recordio.MXRecordIO(trunc, "r").read()
    with pytest.raises(MXNetError, match="cannot open"):
        recordio.MXRecordIO(tmp_path / "missing" / "x.rec", "r")
    with pytest.raises(ValueError, match="Invalid flag"):
        recordio.MXRecordIO(tmp_path / "x.rec", "a")
    w = recordio.MXRecordIO(tmp_path / "w.rec", "w")
    with pytest.raises(MXNetError, match="open for writing"):
        w.read()


def test_pickle_reopens_a_reader():
    r = recordio.MXIndexedRecordIO(str(REF / "records.idx"), str(REF / "records.rec"), "r")
    r2 = pickle.loads(pickle.dumps(r))
    assert r2.read_idx(5) == PAYLOADS[5]
