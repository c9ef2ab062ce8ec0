"""`mx.contrib.text.embedding`: token embeddings (MXNet 1.9.1).

A token embedding is a Vocabulary plus `idx_to_vec`, one vector per indexed token (row 0 for
the unknown token). Vectors come from a text file with one token and its numbers per line
(`CustomEmbedding`), from the published GloVe / fastText files (`GloVe`, `FastText`, created by
name through `create`), or from several embeddings concatenated over a vocabulary
(`CompositeEmbedding`). hybridgraph never downloads on its own behalf in an offline setting:
a pre-trained file that is not on disk raises OSError naming the file and where to put it.
"""
from __future__ import annotations

import logging
import os
import tarfile
import warnings
import zipfile
from collections.abc import Callable
from typing import Any

from ... import nd
from ...base import data_dir
from ...util import is_np_array
from . import _pretrained
from .vocab import UNKNOWN_IDX, Vocabulary

__all__ = ["register", "create", "get_pretrained_file_names", "GloVe", "FastText", "CustomEmbedding",
           "CompositeEmbedding"]

_REGISTRY: dict[str, type] = {}


def _array_fns() -> tuple:
    """(array, zeros, expand_dims, embedding) of the active front end (mx.nd, or mx.np under np mode)."""
    if is_np_array():
        from ...nd import numpy as mnp, numpy_extension as npx  # noqa: PLC0415 - np mode only
        return mnp.array, mnp.zeros, mnp.expand_dims, npx.embedding
    return nd.array, nd.zeros, nd.expand_dims, nd.Embedding


def register(embedding_cls: type) -> type:
    """Register a `_TokenEmbedding` subclass under its lower-cased class name, for `create`."""
    assert isinstance(embedding_cls, type) and issubclass(embedding_cls, _TokenEmbedding), \
        f"Can only register subclass of _TokenEmbedding, got {embedding_cls!r}"
    name = embedding_cls.__name__.lower()
    if name in _REGISTRY:
        old = _REGISTRY[name]
        warnings.warn(f"New token embedding {embedding_cls.__module__}.{embedding_cls.__name__} registered with "
                      f"name {name} is overriding existing token embedding {old.__module__}.{old.__name__}",
                      UserWarning, stacklevel=2)
    _REGISTRY[name] = embedding_cls
    return embedding_cls


def create(embedding_name: Any, **kwargs: Any) -> _TokenEmbedding:
    """An instance of the registered embedding `embedding_name` (case-insensitive), built with `kwargs`."""
    if isinstance(embedding_name, _TokenEmbedding):
        assert not kwargs, "token embedding is already an instance. Additional arguments are invalid"
        return embedding_name
    assert isinstance(embedding_name, str), f"token embedding must be of string type, got {embedding_name!r}"
    name = embedding_name.lower()
    assert name in _REGISTRY, \
        f"{name} is not registered. Please register with token embedding.register first"
    return _REGISTRY[name](**kwargs)


def get_pretrained_file_names(embedding_name: str | None = None) -> list | dict:
    """The valid `pretrained_file_name`s of one registered embedding, or a dict of all of them."""
    if embedding_name is None:
        return {name: list(cls.pretrained_file_name_sha1) for name, cls in _REGISTRY.items()}
    if embedding_name not in _REGISTRY:
        raise KeyError(f"Cannot find `embedding_name` {embedding_name}. Use `get_pretrained_file_names("
                       "embedding_name=None).keys()` to get all the valid embedding names.")
    return list(_REGISTRY[embedding_name].pretrained_file_name_sha1)


class _TokenEmbedding(Vocabulary):
    """Base of every token embedding: a Vocabulary with `vec_len` and `idx_to_vec`.

    Subclasses for pre-trained files set `pretrained_file_name_sha1` (file name -> SHA-1) and,
    when the files are published inside archives, `pretrained_archive_name_sha1`.
    """

    pretrained_file_name_sha1: dict[str, str] = {}

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self._vec_len: int | None = None
        self._idx_to_vec = None

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name: str) -> str:
        return pretrained_file_name

    @classmethod
    def _get_pretrained_file_url(cls, pretrained_file_name: str) -> str:
        repo_url = os.environ.get("MXNET_GLUON_REPO", _pretrained.APACHE_REPO_URL)
        return (f"{repo_url}gluon/embeddings/{cls.__name__.lower()}/"
                f"{cls._get_download_file_name(pretrained_file_name)}")

    @classmethod
    def _get_pretrained_file(cls, embedding_root: str, pretrained_file_name: str) -> str:
        """The path of the pre-trained file under `embedding_root/<class name>`, fetched if absent.

        A file already there with the right SHA-1 is used as is. Otherwise the archive (or file)
        is downloaded and unpacked beside it; when that fails (no network), OSError says which
        file to place where.
        """
        from ...gluon.utils import check_sha1, download  # noqa: PLC0415 - gluon is heavier than text
        embedding_dir = os.path.join(os.path.expanduser(embedding_root), cls.__name__.lower())
        path = os.path.join(embedding_dir, pretrained_file_name)
        expected = cls.pretrained_file_name_sha1[pretrained_file_name]
        if os.path.exists(path) and check_sha1(path, expected):
            return path
        url = cls._get_pretrained_file_url(pretrained_file_name)
        downloaded = os.path.join(embedding_dir, os.path.basename(url))
        archive_sha1 = getattr(cls, "pretrained_archive_name_sha1", None)
        expected_download = archive_sha1[os.path.basename(url)] if archive_sha1 else expected
        try:
            download(url, downloaded, sha1_hash=expected_download)
        except OSError as e:
            found = "is missing" if not os.path.exists(path) else f"does not have the SHA-1 {expected}"
            cause = e.__cause__ or e
            archive = "" if downloaded == path else f" (or its archive at {os.path.abspath(downloaded)})"
            raise OSError(f"pre-trained embedding file {pretrained_file_name!r} of {cls.__name__} {found} at "
                          f"{os.path.abspath(path)}, and downloading {url} failed ({type(cause).__name__}: "
                          f"{cause}). Without network access, place the file at {os.path.abspath(path)}{archive}, "
                          "or load a local file with mx.contrib.text.embedding.CustomEmbedding.") from e
        ext = os.path.splitext(downloaded)[1]
        if ext == ".zip":
            with zipfile.ZipFile(downloaded, "r") as zf:
                zf.extractall(embedding_dir)
        elif ext == ".gz":
            with tarfile.open(downloaded, "r:gz") as tar:
                tar.extractall(path=embedding_dir)  # noqa: S202 - MXNet's published archives
        return path

    def _load_embedding(self, pretrained_file_path: str, elem_delim: str, init_unknown_vec: Callable,
                        encoding: str = "utf8") -> None:
        """Index every token of the file and load its vector (the first one for a repeated token).

        A line for the unknown token sets row 0; otherwise row 0 is `init_unknown_vec(shape=vec_len)`.
        A line with a single number is taken as a header and skipped (with a warning). A line with no
        number, or with a length unlike the first vector's, fails with AssertionError naming the line.
        """
        path = os.path.expanduser(pretrained_file_path)
        if not os.path.isfile(path):
            raise ValueError(f"`pretrained_file_path` must be a valid path to the pre-trained token embedding "
                             f"file, got {pretrained_file_path!r}")
        logging.info("Loading pre-trained token embedding vectors from %s", path)
        vec_len, rows, seen, unknown_vec = None, [], set(), None
        with open(path, encoding=encoding) as f:
            for line_num, line in enumerate(f, start=1):
                elems = line.rstrip().split(elem_delim)
                assert len(elems) > 1, (f"At line {line_num} of the pre-trained text embedding file: the data format "
                                        f"of the pre-trained token embedding file {path} is unexpected.")
                token, vec = elems[0], [float(x) for x in elems[1:]]
                if token == self.unknown_token and unknown_vec is None:
                    unknown_vec = vec
                    seen.add(token)
                elif token in seen:
                    warnings.warn(f"At line {line_num} of the pre-trained token embedding file: the embedding vector "
                                  f"for token {token} has been loaded and a duplicate embedding for the same token "
                                  "is seen and skipped.", stacklevel=2)
                elif len(vec) == 1:
                    warnings.warn(f"At line {line_num} of the pre-trained text embedding file: token {token} with "
                                  f"1-dimensional vector {vec} is likely a header and is skipped.", stacklevel=2)
                else:
                    if vec_len is None:
                        vec_len = len(vec)
                    assert len(vec) == vec_len, (
                        f"At line {line_num} of the pre-trained token embedding file: the dimension of token "
                        f"{token} is {len(vec)} but the dimension of previous tokens is {vec_len}. Dimensions "
                        "of all the tokens must be the same.")
                    rows.append(vec)
                    self._idx_to_token.append(token)
                    self._token_to_idx[token] = len(self._idx_to_token) - 1
                    seen.add(token)
        array, _, _, _ = _array_fns()
        self._vec_len = vec_len
        flat = [0.0] * (vec_len or 0) + [x for row in rows for x in row]
        self._idx_to_vec = array(flat).reshape((-1, vec_len))
        if unknown_vec is None:
            init = init_unknown_vec(shape=vec_len)
            self._idx_to_vec[UNKNOWN_IDX] = init.as_np_ndarray() if is_np_array() else init
        else:
            self._idx_to_vec[UNKNOWN_IDX] = array(unknown_vec)

    def _index_tokens_from_vocabulary(self, vocabulary: Vocabulary) -> None:
        self._token_to_idx = dict(vocabulary.token_to_idx)
        self._idx_to_token = list(vocabulary.idx_to_token)
        self._unknown_token = vocabulary.unknown_token
        self._reserved_tokens = None if vocabulary.reserved_tokens is None else list(vocabulary.reserved_tokens)

    def _set_idx_to_vec_by_embeddings(self, token_embeddings: list, vocab_len: int, vocab_idx_to_token: list) -> None:
        """idx_to_vec for `vocab_idx_to_token`: the embeddings' vectors side by side (row 0: their unknown rows)."""
        _, zeros, _, _ = _array_fns()
        new_vec_len = sum(embed.vec_len for embed in token_embeddings)
        new_idx_to_vec = zeros(shape=(vocab_len, new_vec_len))
        col = 0
        for embed in token_embeddings:
            end = col + embed.vec_len
            new_idx_to_vec[0, col:end] = embed.idx_to_vec[0]
            if vocab_len > 1:
                new_idx_to_vec[1:, col:end] = embed.get_vecs_by_tokens(list(vocab_idx_to_token[1:]))
            col = end
        self._vec_len = new_vec_len
        self._idx_to_vec = new_idx_to_vec

    def _build_embedding_for_vocabulary(self, vocabulary: Vocabulary | None) -> None:
        if vocabulary is None:
            return
        assert isinstance(vocabulary, Vocabulary), \
            f"The argument `vocabulary` must be an instance of mxnet.contrib.text.vocab.Vocabulary, got {vocabulary!r}"
        self._set_idx_to_vec_by_embeddings([self], len(vocabulary), vocabulary.idx_to_token)
        self._index_tokens_from_vocabulary(vocabulary)

    @property
    def vec_len(self) -> int | None:
        """The length of each token's vector."""
        return self._vec_len

    @property
    def idx_to_vec(self):
        """NDArray (len(self), vec_len): row i is the vector of token i."""
        return self._idx_to_vec

    def get_vecs_by_tokens(self, tokens: Any, lower_case_backup: bool = False):
        """The vector of a token (1-D), or the vectors of a list of tokens (2-D); unknown -> row 0.

        With `lower_case_backup`, a token not found as written is looked up lower-cased.
        """
        single = not isinstance(tokens, list)
        tokens = [tokens] if single else tokens
        if lower_case_backup:
            indices = [self._token_to_idx[t] if t in self._token_to_idx
                       else self._token_to_idx.get(t.lower(), UNKNOWN_IDX) for t in tokens]
        else:
            indices = [self._token_to_idx.get(t, UNKNOWN_IDX) for t in tokens]
        array, _, _, embedding = _array_fns()
        vecs = embedding(array(indices), self._idx_to_vec, self._idx_to_vec.shape[0], self._idx_to_vec.shape[1])
        return vecs[0] if single else vecs

    def update_token_vectors(self, tokens: Any, new_vectors: Any) -> None:
        """Overwrite the vectors of known `tokens` with the rows of `new_vectors`.

        A single token takes a 1-D or 2-D (1 row) NDArray; several take a 2-D one with a row each.
        Unknown tokens raise ValueError (name the unknown token itself to change row 0).
        """
        assert self._idx_to_vec is not None, "The property `idx_to_vec` has not been properly set."
        array, _, expand_dims, _ = _array_fns()
        if not isinstance(tokens, list) or len(tokens) == 1:
            assert isinstance(new_vectors, nd.NDArray) and len(new_vectors.shape) in (1, 2), \
                "`new_vectors` must be a 1-D or 2-D NDArray if `tokens` is a singleton."
            tokens = tokens if isinstance(tokens, list) else [tokens]
            if len(new_vectors.shape) == 1:
                new_vectors = expand_dims(new_vectors, axis=0)
        else:
            assert isinstance(new_vectors, nd.NDArray) and len(new_vectors.shape) == 2, \
                "`new_vectors` must be a 2-D NDArray if `tokens` is a list of multiple strings."
        assert new_vectors.shape == (len(tokens), self.vec_len), (
            f"The length of new_vectors must be equal to the number of tokens ({len(tokens)}) and the width of "
            f"new_vectors must be equal to the dimension of embeddings ({self.vec_len}); got {new_vectors.shape}.")
        indices = []
        for token in tokens:
            if token not in self._token_to_idx:
                raise ValueError(f"Token {token} is unknown. To update the embedding vector for an unknown token, "
                                 f"please specify it explicitly as the `unknown_token` "
                                 f"{self._idx_to_token[UNKNOWN_IDX]} in `tokens`. This is to avoid unintended "
                                 "updates.")
            indices.append(self._token_to_idx[token])
        self._idx_to_vec[array(indices)] = new_vectors

    @classmethod
    def _check_pretrained_file_names(cls, pretrained_file_name: str) -> None:
        """KeyError listing the valid names when `pretrained_file_name` is not one of this embedding's files."""
        name = cls.__name__.lower()
        if pretrained_file_name not in cls.pretrained_file_name_sha1:
            raise KeyError(f"Cannot find pretrained file {pretrained_file_name} for token embedding {name}. Valid "
                           f"pretrained files for embedding {name}: {', '.join(cls.pretrained_file_name_sha1)}")


def _default_root() -> str:
    return os.path.join(data_dir(), "embeddings")


@register
class GloVe(_TokenEmbedding):
    """The GloVe word vectors (https://nlp.stanford.edu/projects/glove/), read from
    `embedding_root/glove/<pretrained_file_name>` (space-separated); `vocabulary` restricts and
    orders the indexed tokens."""

    pretrained_archive_name_sha1 = _pretrained.GLOVE_ARCHIVE_SHA1
    pretrained_file_name_sha1 = _pretrained.GLOVE_FILE_SHA1

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name: str) -> str:
        # the archive of the same corpus: glove.6B.50d.txt -> glove.6B.zip
        by_corpus = {archive.split(".")[1]: archive for archive in cls.pretrained_archive_name_sha1}
        return by_corpus[pretrained_file_name.split(".")[1]]

    def __init__(self, pretrained_file_name: str = "glove.840B.300d.txt", embedding_root: str | None = None,
                 init_unknown_vec: Callable = nd.zeros, vocabulary: Vocabulary | None = None, **kwargs: Any):
        GloVe._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        path = GloVe._get_pretrained_file(embedding_root or _default_root(), pretrained_file_name)
        self._load_embedding(path, " ", init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)


@register
class FastText(_TokenEmbedding):
    """The fastText word vectors (https://fasttext.cc/), read from
    `embedding_root/fasttext/<pretrained_file_name>` (space-separated; the header line is skipped)."""

    pretrained_archive_name_sha1 = _pretrained.FAST_TEXT_ARCHIVE_SHA1
    pretrained_file_name_sha1 = _pretrained.FAST_TEXT_FILE_SHA1

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name: str) -> str:
        return pretrained_file_name.rsplit(".", 1)[0] + ".zip"

    def __init__(self, pretrained_file_name: str = "wiki.simple.vec", embedding_root: str | None = None,
                 init_unknown_vec: Callable = nd.zeros, vocabulary: Vocabulary | None = None, **kwargs: Any):
        FastText._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        path = FastText._get_pretrained_file(embedding_root or _default_root(), pretrained_file_name)
        self._load_embedding(path, " ", init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)


class CustomEmbedding(_TokenEmbedding):
    """Vectors from a user file: one line per token, `token<elem_delim>v1<elem_delim>...vk`."""

    def __init__(self, pretrained_file_path: str, elem_delim: str = " ", encoding: str = "utf8",
                 init_unknown_vec: Callable = nd.zeros, vocabulary: Vocabulary | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self._load_embedding(pretrained_file_path, elem_delim, init_unknown_vec, encoding)
        self._build_embedding_for_vocabulary(vocabulary)


class CompositeEmbedding(_TokenEmbedding):
    """The tokens of `vocabulary`, each with the vectors of `token_embeddings` concatenated in order."""

    def __init__(self, vocabulary: Vocabulary, token_embeddings: Any):
        assert isinstance(vocabulary, Vocabulary), \
            f"The argument `vocabulary` must be an instance of mxnet.contrib.text.vocab.Vocabulary, got {vocabulary!r}"
        if not isinstance(token_embeddings, list):
            token_embeddings = [token_embeddings]
        for embed in token_embeddings:
            assert isinstance(embed, _TokenEmbedding), (
                "The argument `token_embeddings` must be an instance or a list of instances of "
                f"mxnet.contrib.text.embedding._TokenEmbedding, got {embed!r}")
        self._index_tokens_from_vocabulary(vocabulary)
        self._set_idx_to_vec_by_embeddings(token_embeddings, len(self), self.idx_to_token)
