"""The contract of what a backend keeps beside its records: vectors
(`VectorStore`) and keyword tokens (`TermStore`), both optional."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..backends.base import TermStore, VectorStore
from .harness import Stores

Get = Callable[[str, str, Iterable[str]], dict[str, tuple[str, bytes]]]
Put = Callable[[str, str, list[tuple[str, str, bytes]]], None]


def stored_vectors_and_terms_follow_their_records(stores: Stores) -> None:
    """`VectorStore` and `TermStore` (each checked where the backend has it):
    a row is kept per (namespace, key, id) for a stored record only, replaced
    by a later one, apart per key and per kind (a vector is no token), read
    back as written, and deleted with its record by a purge and with its
    namespace by a whole-namespace purge."""
    store = stores.open()
    b = store._engine.backend
    kinds: list[tuple[str, Get, Put]] = []
    if isinstance(b, VectorStore):
        kinds.append(("vectors", b.get_vectors, b.put_vectors))
    if isinstance(b, TermStore):
        kinds.append(("terms", b.get_terms, b.put_terms))
    for ns in ("default", "other"):
        store.add_event("e1", namespace=ns)
        for rid in ("m1", "m2"):
            store.add_memory(f"{rid} of {ns}", sources=["e1"], id=rid, namespace=ns)
    for name, get, put in kinds:
        with b.transaction():
            for ns in ("default", "other"):
                put(ns, f"{name}:k", [("m1", "d1", b"\x01\x02"), ("m2", "d2", b"\x00" * 8)])
                put(ns, f"{name}:k", [("ghost", "d", b"x")])
            put("default", f"{name}:k", [("m1", "d1b", b"\x03")])
            put("default", f"{name}:j", [("m1", "dj", b"")])
        with b.reading():
            got = get("default", f"{name}:k", ["m1", "m2", "ghost"])
            assert got == {"m1": ("d1b", b"\x03"), "m2": ("d2", b"\x00" * 8)}, (name, got)
            assert get("default", f"{name}:j", ["m1", "m2"]) == {"m1": ("dj", b"")}, name
            assert get("default", "nothing", ["m1"]) == {} and get("nowhere", "k", ["m1"]) == {}
    if len(kinds) == 2:
        with b.reading():
            assert kinds[0][1]("default", "terms:k", ["m1"]) == {}, "a token read as a vector"
            assert kinds[1][1]("default", "vectors:k", ["m1"]) == {}, "a vector read as tokens"
    store.purge(memories=["m1"])
    store.purge(namespace="other", whole_namespace=True)
    for name, get, _ in kinds:
        with b.reading():
            assert get("default", f"{name}:k", ["m1", "m2"]) == {"m2": ("d2", b"\x00" * 8)}, name
            assert get("default", f"{name}:j", ["m1"]) == {}, name
            assert get("other", f"{name}:k", ["m1", "m2"]) == {}, name
