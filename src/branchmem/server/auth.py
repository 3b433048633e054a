"""API keys, principals and grants.

A key is bound to a principal (a name, written as the audit actor of every
write it makes) and to grants ``NAMESPACE:ROLE`` with roles ``read`` <
``write`` < ``admin``, optionally narrowed to branches:
``team:write:branch=task/*`` lets the key write only on branches matching
``task/*`` (it still reads the whole namespace). Names match literally;
``*`` is the one wildcard (``user/*:read``, ``*:admin``), and a backslash
escapes a special character in a name (`branchmem.server.patterns`).

Keys live in a sidecar SQLite file next to the store (``mem.db.keys``, mode
0600), never in the store itself: the store's backends stay unaware of
serving. A key is ``bm_<id>_<secret>``; only the SHA-256 of the secret is
stored (the secret is 32 random bytes, so a slow hash adds nothing), and it
is shown once, when created.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidInput, NotFound
from .errors import Forbidden, UnknownNamespace
from .patterns import describe, matches, problem, split

ROLES = {"read": 1, "write": 2, "admin": 3}


@dataclass(frozen=True)
class Grant:
    """One grant: ``namespace`` (a pattern), ``role``, and an optional ``branch``
    pattern; patterns as written, escapes and all (`branchmem.server.patterns`)."""

    namespace: str
    role: str
    branch: str | None = None

    @classmethod
    def parse(cls, text: str, *, stored: bool = False) -> Grant:
        r"""``"alice:write"``, ``"shared:read"``, ``"team:write:branch=task/*"``,
        ``"user/*:read"``. A ``:`` inside a name is written ``\:``.

        Unescaped ``?``, ``[`` or ``]`` are refused (they are not wildcards), but
        not in a grant read back from the keys file (``stored``), where they
        match themselves.
        """
        parts = split(text) if isinstance(text, str) else []
        branch = None
        if len(parts) == 3 and parts[2].startswith("branch=") and parts[2] != "branch=":
            branch = parts[2][len("branch=") :]
        elif len(parts) != 2:
            parts = []
        if not parts or not parts[0] or parts[1] not in ROLES:
            raise InvalidInput(
                f"grant {text!r} is not NAMESPACE:ROLE[:branch=PATTERN] with ROLE one of "
                "read, write, admin; e.g. alice:write or team:write:branch=task/*"
            )
        if not stored:
            for pattern in (parts[0], branch):
                why = None if pattern is None else problem(pattern)
                if why is not None:
                    raise InvalidInput(f"grant {text!r}: {why}")
        return cls(parts[0], parts[1], branch)

    def describe(self) -> str:
        """What the grant lets a key do, in words (`branchmem keys create` prints it).

        >>> print(Grant.parse("team:write:branch=task/*").describe())
        read namespace 'team' only; write there only on branches matching task/* ('*': ...)
        """
        where = describe(self.namespace, "namespace", "namespaces")
        if self.branch is None:
            return f"{_VERBS[self.role]} {where}"
        branches = describe(self.branch, "branch", "branches").removesuffix(" only")
        if branches.startswith("every "):
            return f"{_VERBS[self.role]} {where}"
        return f"read {where}; {self.role} there only on {branches}"

    def __str__(self) -> str:
        tail = f":branch={self.branch}" if self.branch is not None else ""
        return f"{self.namespace}:{self.role}{tail}"


_VERBS = {"read": "read", "write": "read and write", "admin": "read, write and administer"}


@dataclass(frozen=True)
class Principal:
    """Who is calling, and what they may do."""

    name: str
    grants: tuple[Grant, ...] = field(default=())

    def authorize(self, namespace: str, need: str, branch: str | None = None) -> None:
        """Raise unless this principal may do a ``need`` call on ``namespace``.

        No grant on the namespace is `UnknownNamespace` (exactly what a missing
        namespace answers); a grant too weak is `Forbidden`. A write on a branch
        passes ``branch``; a branch-narrowed grant covers only writes that name
        a branch matching its pattern.
        """
        strong = self.check_role(namespace, need)
        if ROLES[need] == ROLES["read"]:
            return
        if any(
            g.branch is None or (branch is not None and matches(g.branch, branch)) for g in strong
        ):
            return
        allowed = ", ".join(sorted({g.branch for g in strong if g.branch}))
        where = f"branch {branch!r}" if branch is not None else "outside a branch"
        raise Forbidden(
            f"this key may {need} namespace {namespace!r} only on branches matching "
            f"{allowed}, not {where}"
        )

    def check_role(self, namespace: str, need: str) -> list[Grant]:
        """Raise unless a grant on ``namespace`` has role ``need`` or above, whatever
        branches it is narrowed to (`UnknownNamespace`, `Forbidden` as `authorize`);
        those grants."""
        mine = [g for g in self.grants if matches(g.namespace, namespace)]
        if not mine:
            raise UnknownNamespace(namespace)
        level = ROLES[need]
        strong = [g for g in mine if ROLES[g.role] >= level]
        if not strong:
            best = max(mine, key=lambda g: ROLES[g.role]).role
            raise Forbidden(
                f"this key may {best} namespace {namespace!r} but this call needs {need}; "
                "ask for a key with a stronger grant"
            )
        return strong


@dataclass(frozen=True)
class KeyInfo:
    """A stored key, without its secret."""

    id: str
    principal: str
    grants: tuple[Grant, ...]
    created_at: float
    revoked_at: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "principal": self.principal,
            "grants": [str(g) for g in self.grants],
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
        }


def keys_path(db: str) -> str:
    """Where the keys of the store at ``db`` live."""
    return db + ".keys"


_SCHEMA = """
CREATE TABLE IF NOT EXISTS keys (
    id TEXT PRIMARY KEY,
    secret_sha256 TEXT NOT NULL,
    principal TEXT NOT NULL,
    grants TEXT NOT NULL,
    created_at REAL NOT NULL,
    revoked_at REAL
)
"""


class KeyStore:
    """The keys file (``None``: in memory, for tests and ``--no-auth`` runs)."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        if path is not None and not os.path.exists(path):
            # Create it private before sqlite writes anything into it.
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        self._db = sqlite3.connect(
            path or ":memory:", isolation_level=None, check_same_thread=False, timeout=30.0
        )
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def create(self, principal: str, grants: list[str] | tuple[str, ...]) -> tuple[KeyInfo, str]:
        """A new key for ``principal`` with ``grants``; returns its info and the key
        itself, which is not stored and cannot be shown again."""
        parsed = check_new_key(principal, grants)
        kid = secrets.token_hex(6)
        secret = secrets.token_urlsafe(32)
        info = KeyInfo(kid, principal, parsed, time.time())
        with self._lock:
            self._db.execute(
                "INSERT INTO keys VALUES (?, ?, ?, ?, ?, NULL)",
                (
                    kid,
                    _sha(secret),
                    principal,
                    json.dumps([str(g) for g in parsed]),
                    info.created_at,
                ),
            )
        return info, f"bm_{kid}_{secret}"

    def delete(self, principal: str) -> list[KeyInfo]:
        """Delete every key of ``principal`` (revoked ones too) from the file, for
        good; the keys deleted (`NotFound` if it has none)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, principal, grants, created_at, revoked_at FROM keys "
                "WHERE principal = ? ORDER BY created_at, id",
                (principal,),
            ).fetchall()
            self._db.execute("DELETE FROM keys WHERE principal = ?", (principal,))
        if not rows:
            raise NotFound(
                f"no key of principal {principal!r}; `branchmem keys list` shows the principals"
            )
        return [_info(r) for r in rows]

    def list(self) -> list[KeyInfo]:
        """Every key, oldest first (revoked ones too, with their time)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, principal, grants, created_at, revoked_at FROM keys "
                "ORDER BY created_at, id"
            ).fetchall()
        return [_info(r) for r in rows]

    def revoke(self, key_id: str) -> KeyInfo:
        """Revoke a key by its id (the ``<id>`` part of ``bm_<id>_...``)."""
        with self._lock:
            self._db.execute(
                "UPDATE keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (time.time(), key_id),
            )
            row = self._db.execute(
                "SELECT id, principal, grants, created_at, revoked_at FROM keys WHERE id = ?",
                (key_id,),
            ).fetchone()
        if row is None:
            raise NotFound(f"no key {key_id!r}; `branchmem keys list` shows the ids")
        return _info(row)

    def authenticate(self, key: str) -> Principal | None:
        """The principal of a valid key, or ``None``."""
        parts = key.split("_") if isinstance(key, str) else []
        if len(parts) < 3 or parts[0] != "bm":
            return None
        kid, secret = parts[1], "_".join(parts[2:])
        with self._lock:
            row = self._db.execute(
                "SELECT secret_sha256, principal, grants FROM keys "
                "WHERE id = ? AND revoked_at IS NULL",
                (kid,),
            ).fetchone()
        if row is None or not hmac.compare_digest(row[0], _sha(secret)):
            return None
        return Principal(row[1], tuple(Grant.parse(g, stored=True) for g in json.loads(row[2])))


def check_new_key(principal: str, grants: list[str] | tuple[str, ...]) -> tuple[Grant, ...]:
    """The grants of a new key for ``principal``, checked before anything is
    written (a bad one leaves no keys file behind).

    >>> [str(g) for g in check_new_key("alice", ["alice:write"])]
    ['alice:write']
    """
    if not isinstance(principal, str) or not principal.strip() or ":" in principal:
        raise InvalidInput("principal must be a non-empty name without ':', e.g. alice")
    parsed = tuple(Grant.parse(g) for g in grants)
    if not parsed:
        raise InvalidInput("a key needs at least one grant, e.g. --grant alice:write")
    return parsed


def _sha(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _info(row: tuple[Any, ...]) -> KeyInfo:
    grants = tuple(Grant.parse(g, stored=True) for g in json.loads(row[2]))
    return KeyInfo(row[0], row[1], grants, row[3], row[4])


ANONYMOUS = Principal("anonymous", (Grant("*", "admin"),))
"""The principal of a ``--no-auth`` server (loopback only)."""


def key_of(request: Any) -> str | None:
    """The API key a request carries (``Authorization: Bearer``, or ``X-API-Key``)."""
    auth = request.headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return str(auth[7:].strip())
    key = request.headers.get("x-api-key")
    return None if key is None else str(key)
