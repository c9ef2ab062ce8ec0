"""`mx.contrib.text`: MXNet 1.9.1's text utilities — token counting (`utils`), indexing
(`vocab.Vocabulary`) and token embeddings (`embedding`: GloVe, FastText, CustomEmbedding,
CompositeEmbedding, and a registry for user embeddings)."""
from . import embedding, utils, vocab

__all__ = ["embedding", "utils", "vocab"]
