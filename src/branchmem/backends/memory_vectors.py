"""The memory backend's stored vectors and tokens (`VectorStore`, `TermStore`):
per namespace, a table of ``id -> (digest, bytes)`` per embedder and per
tokenizer key, the two kept apart."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

Rows = dict[str, dict[str, tuple[str, bytes]]]
"""Embedder (or tokenizer key) -> record id -> (digest, bytes)."""


def _get(tables: Rows, key: str, ids: Iterable[str]) -> dict[str, tuple[str, bytes]]:
    got = tables.get(key)
    if not got:
        return {}
    return {i: v for i in ids if (v := got.get(i)) is not None}


def _put(sp: Any, tables: Rows, key: str, rows: list[tuple[str, str, bytes]]) -> None:
    table = tables.setdefault(key, {})
    for rid, digest, blob in rows:
        if rid in sp.records:  # a record purged meanwhile gets none
            table[rid] = (digest, blob)


def forget(sp: Any, rid: str) -> None:
    """Drop a deleted record's vectors and tokens."""
    for table in (*sp.vectors.values(), *sp.terms.values()):
        table.pop(rid, None)


class VectorRows:
    """`VectorStore` and `TermStore` over each space's ``vectors`` and ``terms``."""

    if TYPE_CHECKING:

        def _read(self, ns: str) -> Any: ...

        def _space(self, ns: str) -> Any: ...

    def get_vectors(
        self, ns: str, embedder: str, ids: Iterable[str]
    ) -> dict[str, tuple[str, bytes]]:
        return _get(self._read(ns).vectors, embedder, ids)

    def put_vectors(self, ns: str, embedder: str, rows: list[tuple[str, str, bytes]]) -> None:
        sp = self._space(ns)
        _put(sp, sp.vectors, embedder, rows)

    def get_terms(
        self, ns: str, tokenizer: str, ids: Iterable[str]
    ) -> dict[str, tuple[str, bytes]]:
        return _get(self._read(ns).terms, tokenizer, ids)

    def put_terms(self, ns: str, tokenizer: str, rows: list[tuple[str, str, bytes]]) -> None:
        sp = self._space(ns)
        _put(sp, sp.terms, tokenizer, rows)
