"""Held identifiers for the redaction tests, and where to look for them.

`held` draws one identifier of each kind from the suite's generators
(`redact_gen`, whose check digits are computed apart from the detectors);
`stored_text` is everything a store holds: on SQLite the bytes of the file,
its WAL and shared memory; on PostgreSQL every row of every table of the
store's schema as PostgreSQL writes it as text; in memory every string
reachable from the backend. `assert_absent` fails if any held identifier,
as written or as its bare digits, is in there.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from branchmem import Store
from branchmem.backends.memory import MemoryBackend
from branchmem.backends.postgres.conn import PgConnection
from branchmem.backends.sqlite import SQLiteBackend
from helpers.redact_gen import card_number, card_text, email, id_number, ipv4, ipv6, mobile_digits


@dataclass(frozen=True)
class Held:
    """One identifier of each kind, as a text would hold them."""

    phone: str
    phone_digits: str
    id_card: str
    card: str
    email: str
    ipv4: str
    ipv6: str

    @property
    def values(self) -> list[str]:
        return [self.phone, self.id_card, self.card, self.email, self.ipv4, self.ipv6]

    @property
    def forms(self) -> list[str]:
        """What must not be stored: each as written, and the bare digits of the
        numbers written in groups."""
        bare = [self.phone_digits, self.card.replace(" ", "").replace("-", "")]
        return list(dict.fromkeys([*self.values, *bare]))

    @property
    def text(self) -> str:
        return (
            f"我的手机 {self.phone}，身份证 {self.id_card}，卡号 {self.card}，"
            f"邮箱 {self.email}，IP {self.ipv4} / {self.ipv6}"
        )


def held(seed: int) -> Held:
    rng = random.Random(seed)
    digits = mobile_digits(rng)
    phone = f"{digits[:3]}-{digits[3:7]}-{digits[7:]}"
    card = card_text(rng, card_number(rng))
    return Held(phone, digits, id_number(rng), card, email(rng), ipv4(rng), ipv6(rng))


def meta_of(h: Held) -> dict[str, Any]:
    """A meta with the identifiers in keys and values, nested, and as a number."""
    return {
        "note": h.text,
        h.email: {"phone": h.phone, h.id_card: [h.card, {"ip": h.ipv4}]},
        "calls": [{"to": h.phone, "n": 1}, int(h.phone_digits)],
        "ipv6": h.ipv6,
    }


def stored_text(store: Store) -> str:
    """Everything ``store`` holds, as text (see the module docstring)."""
    b = store._engine.backend
    if isinstance(b, SQLiteBackend):
        parts = [Path(b.path), Path(f"{b.path}-wal"), Path(f"{b.path}-shm")]
        data = b"".join(p.read_bytes() for p in parts if p.exists())
        return data.decode("utf-8", "replace")
    if isinstance(b, PgConnection):
        with b._pool.connection() as c:
            listed = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            tables = sorted(r[0] for r in c.execute(listed))
            rows = [c.execute(f"SELECT CAST(t AS text) FROM {t} t").fetchall() for t in tables]
            return "\n".join(str(row[0]) for found in rows for row in found)
    assert isinstance(b, MemoryBackend)
    return "\n".join(strings_in(b))


def assert_absent(text: str, h: Held, where: str = "the store") -> None:
    found = [f for f in h.forms if f in text]
    assert not found, f"{where} holds {found}"


def assert_present(text: str, h: Held) -> None:
    """The control: the same check sees raw data where nothing redacted it."""
    assert any(f in text for f in h.forms)


def strings_in(obj: Any, seen: dict[int, Any] | None = None) -> Iterator[str]:
    """Every string reachable from ``obj`` (the memory backend's own state)."""
    seen = {} if seen is None else seen
    if id(obj) in seen:
        return
    seen[id(obj)] = obj  # kept alive: an attribute computed on access is a new object
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, bytes):
        yield obj.decode("utf-8", "replace")
    elif isinstance(obj, int) and not isinstance(obj, bool):
        yield str(obj)  # a number stored as one (a phone number kept as an int)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from strings_in(k, seen)
            yield from strings_in(v, seen)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for v in obj:
            yield from strings_in(v, seen)
    elif hasattr(obj, "__dict__") or hasattr(obj, "__slots__"):
        # Every field: dataclass fields, the slots of each class it is made of
        # (a row class adds slots to a dataclass), and its __dict__.
        names = [f.name for f in dataclasses.fields(obj)] if dataclasses.is_dataclass(obj) else []
        for cls in type(obj).__mro__:
            slots = getattr(cls, "__slots__", ())
            names += [slots] if isinstance(slots, str) else list(slots)
        names += list(getattr(obj, "__dict__", {}))
        for name in dict.fromkeys(names):
            yield from strings_in(getattr(obj, name, None), seen)
