"""Token counting for `mx.contrib.text` (MXNet 1.9.1's `mx.contrib.text.utils`)."""
from __future__ import annotations

import collections
import re


def count_tokens_from_str(source_str: str, token_delim: str = " ", seq_delim: str = "\n", to_lower: bool = False,
                          counter_to_update: collections.Counter | None = None) -> collections.Counter:
    """Count the tokens of `source_str`, split at `token_delim` and `seq_delim`.

    Both delimiters are regular expressions (escape special characters, e.g. ``'\\*'``), as in
    MXNet. Empty pieces are dropped. With `to_lower` tokens are lower-cased first. The counts are
    added to `counter_to_update` (which is returned) when given, else to a new Counter.
    """
    tokens = [t for t in re.split(token_delim + "|" + seq_delim, source_str) if t]
    if to_lower:
        tokens = [t.lower() for t in tokens]
    if counter_to_update is None:
        return collections.Counter(tokens)
    counter_to_update.update(tokens)
    return counter_to_update
