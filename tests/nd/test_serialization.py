"""MXNet's binary NDArray format (`nd.save` / `nd.load`): byte-exact writes, every
golden file readable, and bounded parsing of corrupted bytes."""
from __future__ import annotations

import json
import os
import stat
import struct
import tracemalloc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hybridgraph as mx
from hybridgraph import nd
from hybridgraph.nd import serialization as ser
from hybridgraph.nd.errors import FormatError
from tests.conftest import GOLDEN

FMT = "mxnet-format"
ALL_DTYPES = ["float32", "float64", "float16", "uint8", "int32", "int8", "int64", "bool"]


def _index(golden):
    return json.loads((golden / FMT / "index.json").read_text())["files"]


def _expected(golden):
    with np.load(golden / FMT / "expected.npz") as f:
        return {k: f[k] for k in f.files}


def _all_params_files():
    if not GOLDEN.is_dir():
        return []
    return sorted(p.relative_to(GOLDEN).as_posix() for p in GOLDEN.rglob("*.params"))


def _np(x):
    return x.asnumpy()


# -- byte-exact writing -------------------------------------------------------------

@pytest.mark.parametrize("fname", ["dtypes_dict.params", "dtypes_list.params"])
def test_save_reproduces_mxnet_bytes(golden, tmp_path, fname):
    info = _index(golden)[fname]
    exp = _expected(golden)
    arrays = [nd.NDArray(exp[f"{fname}|{e['key']}"]) for e in info["arrays"]]
    data = {e["key"]: a for e, a in zip(info["arrays"], arrays)} if info["names"] else arrays
    want = (golden / FMT / fname).read_bytes()
    assert ser.save_tobuffer(data) == want
    out = tmp_path / fname
    ser.save(out, data)
    assert out.read_bytes() == want


@pytest.mark.parametrize("fname", ["shapes.params", "names.params", "gluon_export-0000.params",
                                   "module_ckpt-0003.params", "zero_d_legacy.params"])
def test_load_then_save_is_identity_for_v2_files(golden, fname):
    """Every dense V2 file MXNet wrote on cpu(0) round-trips to the same bytes."""
    want = (golden / FMT / fname).read_bytes()
    assert ser.save_tobuffer(ser.load_frombuffer(want)) == want


def test_annotated_dump_of_formats_md():
    """The byte-by-byte example of formats.md 2.2."""
    data = {"a": nd.array([[1, 2], [3, 4]], dtype="float64"), "bb": nd.array([7], dtype="uint8")}
    want = (struct.pack("<QQQ", 0x112, 0, 2)
            + struct.pack("<Iiiqqiii", 0xF993FAC9, 0, 2, 2, 2, 1, 0, 1) + np.arange(1, 5, dtype="<f8").tobytes()
            + struct.pack("<Iiiqiii", 0xF993FAC9, 0, 1, 1, 1, 0, 3) + b"\x07"
            + struct.pack("<Q", 2) + struct.pack("<Q", 1) + b"a" + struct.pack("<Q", 2) + b"bb")
    assert ser.save_tobuffer(data) == want


# -- reading every golden file --------------------------------------------------------

@pytest.mark.parametrize("rel", _all_params_files())
def test_every_golden_params_file_loads(golden, rel):
    path = golden / rel
    with mx.np_shape("np_semantics" in rel):   # MXNet loads a V3 file only under np_shape, V2 outside
        loaded = nd.serialization.load(path)
    items = loaded.items() if isinstance(loaded, dict) else enumerate(loaded)
    items = list(items)
    assert items
    for _, v in items:
        assert isinstance(v, nd.NDArray)
    files = _index(golden)
    if rel.startswith(FMT + "/") and path.name in files:
        exp = _expected(golden)
        info = files[path.name]
        assert isinstance(loaded, dict) == info["names"]
        assert len(items) == len(info["arrays"])
        for e in info["arrays"]:
            got = _np(loaded[e["key"]])
            want = exp[f"{path.name}|{e['key']}"]
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)


def test_load_accepts_str_and_path(golden):
    p = golden / FMT / "legacy_v0.params"
    a, b = ser.load(str(p)), ser.load(p)
    assert list(a) == list(b) == ["arg:w", "aux:b"]


# -- round trips ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(3,), (2, 3), (1, 2, 3, 4), (0, 3), (2, 0), ()])
def test_round_trip_all_dtypes(tmp_path, dtype, shape):
    rng = np.random.default_rng(0)
    src = (rng.standard_normal(shape) * 50).astype(dtype)
    f = tmp_path / "x.params"
    ser.save(f, {"x": nd.NDArray(src), "y": nd.NDArray(src)})
    back = ser.load(f)
    for k in "xy":
        got = _np(back[k])
        assert got.dtype == src.dtype and got.shape == src.shape
        np.testing.assert_array_equal(got, src)


def test_round_trip_single_array_and_list(tmp_path):
    x = nd.array([1.5, 2.5])
    assert [_np(a).tolist() for a in ser.load_frombuffer(ser.save_tobuffer(x))] == [[1.5, 2.5]]
    back = ser.load_frombuffer(ser.save_tobuffer([x, x * 2]))
    assert isinstance(back, list) and _np(back[1]).tolist() == [3.0, 5.0]
    assert ser.load_frombuffer(ser.save_tobuffer([])) == []
    assert ser.load_frombuffer(ser.save_tobuffer({})) == []  # MXNet cannot tell an empty dict either


def test_loaded_arrays_are_writable_and_independent():
    back = ser.load_frombuffer(ser.save_tobuffer([nd.zeros((2,)), nd.zeros((2,))]))
    back[0][:] = 5
    assert _np(back[1]).tolist() == [0.0, 0.0]


def test_save_rejects_bad_inputs(tmp_path):
    with pytest.raises(TypeError, match="dict keys must be str"):
        ser.save_tobuffer({1: nd.zeros((1,))})
    with pytest.raises(TypeError, match="must be an NDArray"):
        ser.save_tobuffer([np.zeros(2)])
    with pytest.raises(TypeError, match="data needs to either be"):
        ser.save_tobuffer(3)
    with pytest.raises(TypeError, match="cannot store"):
        ser.save_tobuffer([nd.NDArray(np.zeros(2, dtype=np.int16))])


def test_save_is_atomic_and_respects_umask(tmp_path):
    f = tmp_path / "m.params"
    f.write_bytes(b"old")
    ser.save(f, [nd.zeros((2,))])
    assert ser.load(f)[0].shape == (2,)
    assert os.listdir(tmp_path) == ["m.params"]  # no temp file left behind
    mask = os.umask(0o022)
    os.umask(mask)
    assert stat.S_IMODE(f.stat().st_mode) == 0o666 & ~mask


def test_failed_save_leaves_old_file(tmp_path):
    f = tmp_path / "m.params"
    f.write_bytes(b"old")
    with pytest.raises(TypeError):
        ser.save(f, ["not an array"])
    assert f.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["m.params"]


# -- legacy layouts, none arrays, unusual type flags -----------------------------------

def _file(records: list[bytes], names: list[bytes] = ()) -> bytes:
    out = struct.pack("<QQQ", 0x112, 0, len(records)) + b"".join(records) + struct.pack("<Q", len(names))
    return out + b"".join(struct.pack("<Q", len(n)) + n for n in names)


def test_legacy_0d_records_carry_data_as_in_mxnet_1_9_1():
    v1 = struct.pack("<Iiiii", 0xF993FAC8, 0, 1, 0, 0) + struct.pack("<f", 5.0)
    v0 = struct.pack("<Iiii", 0, 1, 0, 0) + struct.pack("<f", 6.0)
    got = ser.load_frombuffer(_file([v1, v0]))
    assert [(a.shape, float(_np(a))) for a in got] == [((), 5.0), ((), 6.0)]


def test_none_array_records_load_as_none():
    none_v2 = struct.pack("<Iii", 0xF993FAC9, 0, 0)
    none_v3 = struct.pack("<Iii", 0xF993FACA, 0, -1)
    dense = struct.pack("<Iiiqiii", 0xF993FAC9, 0, 1, 1, 1, 0, 0) + struct.pack("<f", 1.0)
    # the parser reads both kinds in one file; nd.load_frombuffer would refuse the mix (MXNet's rule)
    arrays, names = ser.load_arrays(_file([none_v2, dense, none_v3], [b"a", b"b", b"c"]))
    got = dict(zip(names, arrays))
    assert got["a"] is None and got["c"] is None and got["b"].tolist() == [1.0]


def test_gpu_context_and_extra_type_flags_load_on_cpu():
    rec = struct.pack("<Iiiqiii", 0xF993FAC9, 0, 1, 2, 2, 1, 8) + np.array([-3, 4], "<i2").tobytes()
    bf16 = struct.pack("<Iiiqiii", 0xF993FAC9, 0, 1, 1, 1, 0, 12) + struct.pack("<H", 0x3FC0)
    a, b = ser.load_frombuffer(_file([rec, bf16]))
    assert a.context == nd.cpu() and a.dtype == np.int16 and _np(a).tolist() == [-3, 4]
    assert b.dtype == np.float32 and _np(b).tolist() == [1.5]


# -- bounded parsing ----------------------------------------------------------------------

def _dense(shape, flag=0, nbytes=None):
    head = struct.pack(f"<Iii{len(shape)}qiii", 0xF993FAC9, 0, len(shape), *shape, 1, 0, flag)
    return head + b"\0" * (nbytes if nbytes is not None else 4 * int(np.prod(shape)))


MALFORMED = [
    (b"", "file magic"),
    (struct.pack("<QQ", 0x113, 0), "file magic 0x112"),
    (struct.pack("<QQQ", 0x112, 0, 2**60), "array count"),
    (_file([_dense((2**40, 2**20), nbytes=8)]), "only 16 bytes left"),
    (_file([_dense((2,), flag=99)]), "type flag"),
    (_file([_dense((2,))])[:-3], "number of names"),
    (_file([_dense((2,))]) + b"x", "trailing"),
    (_file([struct.pack("<Iii", 0xF993FAC9, 7, 1)]), "storage type"),
    (_file([struct.pack("<Ii", 0xF993FAC9, 0) + struct.pack("<i", 1000)]), "ndim"),
    (_file([struct.pack("<I", 0xDEADBEEF)]), "record magic"),
    (_file([_dense((2,))], [b"\xff\xfe"]), "UTF-8"),
    (_file([_dense((2,))], [b"a", b"b"]), "names"),
    (_file([_dense((-2,))]), "non-negative"),
    (_file([_dense((2**62, 0), nbytes=0)]), "representable"),
]


@pytest.mark.parametrize("buf, match", MALFORMED, ids=[m for _, m in MALFORMED])
def test_malformed_files_raise_format_error(buf, match):
    with pytest.raises(FormatError, match=match):
        ser.load_frombuffer(buf)


def test_sparse_record_cannot_expand_to_a_huge_dense_array():
    rsp = (struct.pack("<Iii2qi2qiii", 0xF993FAC9, 1, 2, 0, 1024, 2, 2**40, 1024, 1, 0, 0)
           + struct.pack("<iiq", 6, 1, 0))
    with pytest.raises(FormatError, match="at most .* dense bytes per file"):
        ser.load_frombuffer(_file([rsp]))


def test_format_error_names_the_file(tmp_path):
    f = tmp_path / "bad.params"
    f.write_bytes(b"\0" * 30)
    with pytest.raises(FormatError, match="bad.params.*offset 0.*0x112"):
        ser.load(f)


def _golden_bytes(name):
    return (GOLDEN / FMT / name).read_bytes() if GOLDEN.is_dir() else b""


MUTATE = ["dtypes_dict.params", "sparse.params", "legacy_v0.params", "np_semantics.params",
          "zero_d_legacy.params", "legacy_v1.params"]


def _check_bounded(buf: bytes) -> None:
    """Parsing either succeeds or raises FormatError, allocating little either way."""
    tracemalloc.start()
    try:
        ser.load_arrays(buf)
    except FormatError:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < 64 * len(buf) + (1 << 20), f"parsing {len(buf)} bytes allocated {peak} bytes"


@pytest.mark.parametrize("name", MUTATE)
def test_every_truncation_raises_format_error(golden, name):
    buf = _golden_bytes(name)
    for cut in range(len(buf)):
        with pytest.raises(FormatError):
            ser.load_arrays(buf[:cut])


@given(name=st.sampled_from(MUTATE), data=st.data())
def test_bit_flips_never_crash(golden, name, data):
    buf = bytearray(_golden_bytes(name))
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(buf) - 1))
        buf[pos] ^= 1 << data.draw(st.integers(0, 7))
    _check_bounded(bytes(buf))


@given(name=st.sampled_from(MUTATE), data=st.data())
def test_overwritten_words_never_crash(golden, name, data):
    """Whole 4/8-byte fields replaced by extreme values (counts, dims, flags)."""
    buf = bytearray(_golden_bytes(name))
    width = data.draw(st.sampled_from([4, 8]))
    pos = data.draw(st.integers(0, len(buf) - width))
    value = data.draw(st.sampled_from([0, 1, 2**31 - 1, 2**32 - 1, 2**63 - 1, 2**64 - 1, 2**40]))
    buf[pos:pos + width] = (value % (1 << (8 * width))).to_bytes(width, "little")
    _check_bounded(bytes(buf))


@given(st.binary(max_size=200))
def test_random_bytes_never_crash(buf):
    _check_bounded(struct.pack("<QQ", 0x112, 0) + buf)


def test_load_keeps_the_shape_semantics_of_the_file(tmp_path):
    """MXNet 1.9.1 (checked): nd.load of a file saved under np_shape (V3 records) raises
    outside np_shape, and of a legacy file (V2) inside it; each loads in its own."""
    legacy, np_file = tmp_path / "legacy", tmp_path / "np"
    nd.save(str(legacy), [nd.ones((2, 3))])
    with mx.np_shape(True):
        nd.save(str(np_file), [nd.ones((2, 0)), nd.ones(())])
    with pytest.raises(mx.MXNetError, match="saved in np shape semantics"):
        nd.load(str(np_file))
    with mx.np_shape(True):
        with pytest.raises(mx.MXNetError, match="not saved in np shape semantics"):
            nd.load(str(legacy))
        assert [a.shape for a in nd.load(str(np_file))] == [(2, 0), ()]
    assert nd.load(str(legacy))[0].shape == (2, 3)
