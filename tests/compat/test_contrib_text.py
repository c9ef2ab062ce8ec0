"""mx.contrib.text: counting, Vocabulary, token embeddings (expected values from MXNet 1.9.1)."""
from __future__ import annotations

import collections
import hashlib
import warnings

import numpy as np
import pytest

import hybridgraph as mx

text = mx.contrib.text
COUNTER = collections.Counter("x y y z z z w w w 1 a b b".split())


@pytest.mark.parametrize(("most_freq_count", "min_freq", "reserved", "expected"), [
    (None, 1, None, ["<unk>", "w", "z", "b", "y", "1", "a", "x"]),  # ties in key order
    (1, 2, ["<pad>", "z"], ["<unk>", "<pad>", "z", "w"]),  # the cap counts reserved tokens apart
    (2, 1, ["b"], ["<unk>", "b", "w", "z"]),
    (0, 3, None, ["<unk>"]),
])
def test_vocabulary_order_and_caps(most_freq_count, min_freq, reserved, expected):
    v = text.vocab.Vocabulary(COUNTER, most_freq_count=most_freq_count, min_freq=min_freq, reserved_tokens=reserved)
    assert v.idx_to_token == expected
    assert v.token_to_idx == {t: i for i, t in enumerate(expected)}
    assert v.to_indices(["zz", expected[-1]]) == [0, len(expected) - 1]
    assert v.to_tokens(len(expected) - 1) == expected[-1]
    with pytest.raises(ValueError, match="invalid"):
        v.to_tokens(len(expected))


def test_vocabulary_rejects_bad_arguments():
    with pytest.raises(AssertionError, match="min_freq"):
        text.vocab.Vocabulary(COUNTER, min_freq=0)
    with pytest.raises(AssertionError, match="duplicate"):
        text.vocab.Vocabulary(COUNTER, reserved_tokens=["a", "a"])
    with pytest.raises(AssertionError, match="unknown_token"):
        text.vocab.Vocabulary(COUNTER, reserved_tokens=["<unk>"])
    with pytest.raises(AssertionError, match="Counter"):
        text.vocab.Vocabulary({"a": 1})


def test_count_tokens_regex_delimiters():
    counts = text.utils.count_tokens_from_str("a*b**c\nd*A", r"\*", "\n", to_lower=True)
    assert counts == collections.Counter({"a": 2, "b": 1, "c": 1, "d": 1})
    base = collections.Counter({"a": 5})
    assert text.utils.count_tokens_from_str("a b", counter_to_update=base) is base
    assert base == collections.Counter({"a": 6, "b": 1})


@pytest.fixture
def embed_file(tmp_path):
    path = tmp_path / "e.txt"
    path.write_text("hdr 3\nz 1 2 3\na 4 5 6\nz 7 8 9\n<unk> 9 9 9\nQ 0.5 0.25 1\n")
    return str(path)


def test_custom_embedding_loading_rules(embed_file):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        e = text.embedding.CustomEmbedding(embed_file)
    messages = " ".join(str(w.message) for w in caught)
    assert "likely a header" in messages and "duplicate" in messages  # line 1 and line 4
    assert e.idx_to_token == ["<unk>", "z", "a", "Q"]
    assert e.vec_len == 3 and e.idx_to_vec.dtype == np.float32
    np.testing.assert_allclose(e.idx_to_vec.asnumpy(), [[9, 9, 9], [1, 2, 3], [4, 5, 6], [0.5, 0.25, 1]])
    got = e.get_vecs_by_tokens(["q", "Q", "a"], lower_case_backup=True).asnumpy()
    np.testing.assert_allclose(got, [[9, 9, 9], [0.5, 0.25, 1], [4, 5, 6]])  # 'q' has no lower-case entry
    assert e.get_vecs_by_tokens("a").shape == (3,)


@pytest.mark.parametrize("bad_line", ["c\n", "c 1 2\n"])
def test_custom_embedding_bad_lines_name_the_line(tmp_path, bad_line):
    path = tmp_path / "bad.txt"
    path.write_text("a 1 2 3\nb 4 5 6\n" + bad_line)
    with pytest.raises(AssertionError, match="At line 3"):
        text.embedding.CustomEmbedding(str(path))
    with pytest.raises(ValueError, match="valid path"):
        text.embedding.CustomEmbedding(str(tmp_path / "absent.txt"))


def test_composite_embedding_and_updates(embed_file):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = text.embedding.CustomEmbedding(embed_file, init_unknown_vec=mx.nd.ones)
    v = text.vocab.Vocabulary(collections.Counter(["a", "q", "z", "z"]), reserved_tokens=["<pad>"])
    ce = text.embedding.CompositeEmbedding(v, [e, e])
    assert ce.idx_to_token == ["<unk>", "<pad>", "z", "a", "q"] and ce.vec_len == 6
    unk = [9, 9, 9, 9, 9, 9]
    np.testing.assert_allclose(ce.idx_to_vec.asnumpy(), [unk, unk, [1, 2, 3] * 2, [4, 5, 6] * 2, unk])
    ce.update_token_vectors(["a", "z"], mx.nd.array([[1] * 6, [2] * 6]))
    np.testing.assert_allclose(ce.idx_to_vec.asnumpy()[2:4], [[2] * 6, [1] * 6])
    ce.update_token_vectors("<unk>", mx.nd.zeros((6,)))
    np.testing.assert_allclose(ce.idx_to_vec.asnumpy()[0], 0)
    with pytest.raises(ValueError, match="unknown"):
        ce.update_token_vectors("nope", mx.nd.zeros((6,)))
    with pytest.raises(AssertionError, match="number of tokens"):
        ce.update_token_vectors("a", mx.nd.zeros((2, 6)))


def test_pretrained_names_registry_and_offline_error(tmp_path):
    assert len(text.embedding.get_pretrained_file_names("fasttext")) == 327
    assert "glove.6B.50d.txt" in text.embedding.get_pretrained_file_names()["glove"]
    with pytest.raises(KeyError, match="unknown"):
        text.embedding.get_pretrained_file_names("unknown")
    with pytest.raises(KeyError, match="Valid pretrained files"):
        text.embedding.create("glove", pretrained_file_name="nope.txt")

    payload = b"hello 1 2\nworld 3 4\n"

    class LocalVecs(text.embedding._TokenEmbedding):
        pretrained_file_name_sha1 = {"local.vec": hashlib.sha1(payload).hexdigest()}

        def __init__(self, embedding_root, **kwargs):
            super().__init__(**kwargs)
            path = LocalVecs._get_pretrained_file(embedding_root, "local.vec")
            self._load_embedding(path, " ", mx.nd.zeros)

    text.embedding.register(LocalVecs)
    (tmp_path / "localvecs").mkdir()
    (tmp_path / "localvecs" / "local.vec").write_bytes(payload)  # a file in place is used, no download
    e = text.embedding.create("LocalVecs", embedding_root=str(tmp_path))
    np.testing.assert_allclose(e.get_vecs_by_tokens("world").asnumpy(), [3, 4])
    assert "localvecs" in text.embedding.get_pretrained_file_names()


def test_missing_pretrained_file_says_where_to_put_it(tmp_path, monkeypatch):
    monkeypatch.setenv("MXNET_GLUON_REPO", "http://127.0.0.1:9/")  # nothing listens there: fails at once
    with pytest.raises(OSError, match="place the file at .*glove.6B.50d.txt .or its archive at .*glove.6B.zip"):
        text.embedding.GloVe("glove.6B.50d.txt", embedding_root=str(tmp_path))
