"""`mx.contrib.text.vocab.Vocabulary`: token <-> index tables built from a Counter (MXNet 1.9.1).

Index 0 is always the unknown token, then the reserved tokens in the given order, then the
counter's keys by decreasing frequency (ties broken by the keys' natural order), limited by
`most_freq_count` and `min_freq`. Invalid arguments raise AssertionError, as MXNet's do.
"""
from __future__ import annotations

import collections
from collections.abc import Hashable, Sequence
from typing import Any

UNKNOWN_IDX = 0  # the unknown token's index, in every vocabulary and embedding


class Vocabulary:
    """Indexes the unknown token, `reserved_tokens` and the keys of `counter`.

    Keys of `counter`, `unknown_token` and `reserved_tokens` must be of one hashable type
    (str, int, tuple, ...). `most_freq_count` caps how many counter keys are indexed (reserved
    tokens not counted); `min_freq` is the lowest frequency a key needs.
    """

    def __init__(self, counter: collections.Counter | None = None, most_freq_count: int | None = None,
                 min_freq: int = 1, unknown_token: Hashable = "<unk>",
                 reserved_tokens: Sequence[Hashable] | None = None):
        assert min_freq > 0, "`min_freq` must be set to a positive value."
        if reserved_tokens is not None:
            reserved = set(reserved_tokens)
            assert unknown_token not in reserved, "`reserved_token` cannot contain `unknown_token`."
            assert len(reserved) == len(reserved_tokens), \
                "`reserved_tokens` cannot contain duplicate reserved tokens."
        self._unknown_token = unknown_token
        self._reserved_tokens = None if reserved_tokens is None else list(reserved_tokens)
        self._idx_to_token = [unknown_token, *(self._reserved_tokens or [])]
        self._token_to_idx = {token: idx for idx, token in enumerate(self._idx_to_token)}
        if counter is not None:
            self._index_counter_keys(counter, most_freq_count, min_freq)

    def _index_counter_keys(self, counter: collections.Counter, most_freq_count: int | None, min_freq: int) -> None:
        """Append the counter's keys, most frequent first, within the two thresholds."""
        assert isinstance(counter, collections.Counter), "`counter` must be an instance of collections.Counter."
        special = set(self._idx_to_token)
        # by key first, then a stable sort by decreasing frequency: equal counts stay in key order
        token_freqs = sorted(counter.items(), key=lambda kv: kv[0])
        token_freqs.sort(key=lambda kv: kv[1], reverse=True)
        cap = len(special) + (len(counter) if most_freq_count is None else most_freq_count)
        for token, freq in token_freqs:
            if freq < min_freq or len(self._idx_to_token) == cap:
                break
            if token not in special:
                self._idx_to_token.append(token)
                self._token_to_idx[token] = len(self._idx_to_token) - 1

    def __len__(self) -> int:
        return len(self._idx_to_token)

    @property
    def token_to_idx(self) -> dict:
        """dict: each indexed token -> its index."""
        return self._token_to_idx

    @property
    def idx_to_token(self) -> list:
        """list: the indexed tokens, position = index."""
        return self._idx_to_token

    @property
    def unknown_token(self) -> Hashable:
        """The token every unknown token maps to (index 0)."""
        return self._unknown_token

    @property
    def reserved_tokens(self) -> list | None:
        """The reserved tokens (indices 1..), or None."""
        return self._reserved_tokens

    def to_indices(self, tokens: Any) -> int | list[int]:
        """The index of a token, or the list of indices of a list of tokens (unknown -> 0)."""
        if not isinstance(tokens, list):
            return self._token_to_idx.get(tokens, UNKNOWN_IDX)
        return [self._token_to_idx.get(token, UNKNOWN_IDX) for token in tokens]

    def to_tokens(self, indices: int | list[int]) -> Any:
        """The token at an index, or the tokens at a list of indices; ValueError for an invalid index."""
        single = not isinstance(indices, list)
        max_idx = len(self._idx_to_token) - 1
        tokens = []
        for idx in [indices] if single else indices:
            if not isinstance(idx, int) or idx > max_idx:
                raise ValueError(f"Token index {idx!r} in the provided `indices` is invalid "
                                 f"(expected an int in [0, {max_idx}]).")
            tokens.append(self._idx_to_token[idx])
        return tokens[0] if single else tokens
