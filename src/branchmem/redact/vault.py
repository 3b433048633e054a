"""The vault: originals sealed with an application key, restorable only with it.

A sealed value is a token ``[[vault:<kind>:<ciphertext>]]`` in the text.
The cipher is AES-SIV (from the optional ``cryptography`` package, extra
``branchmem[redact]``): deterministic, so the same value sealed twice gives
the same token (a re-added event stays identical), at the cost of showing
which tokens hold equal values. The kind is authenticated with the value,
so a token cannot be relabelled.
"""

from __future__ import annotations

import base64
import binascii
import re
import secrets
from typing import Any

from ..errors import InvalidInput

TOKEN = re.compile(r"\[\[vault:([A-Za-z][A-Za-z0-9_-]{0,39}):([A-Za-z0-9_-]+)\]\]")
"""A sealed value in a text: its kind and its ciphertext (base64url, unpadded)."""

KEY_BYTES = (32, 48, 64)
_AAD = b"branchmem-vault-v1"


def generate_key() -> str:
    """A new random application key (64 bytes, base64url): keep it outside the store."""
    return base64.urlsafe_b64encode(secrets.token_bytes(64)).decode("ascii")


def _key_bytes(key: Any) -> bytes:
    if isinstance(key, str):
        try:
            raw = base64.urlsafe_b64decode(key + "=" * (-len(key) % 4))
        except (binascii.Error, ValueError) as exc:
            raise InvalidInput(
                "key must be base64url text (as Redactor.generate_key() makes) or raw bytes"
            ) from exc
    elif isinstance(key, (bytes, bytearray)):
        raw = bytes(key)
    else:
        raise InvalidInput(
            f"key must be a str or bytes from Redactor.generate_key(), got {type(key).__name__}"
        )
    if len(raw) not in KEY_BYTES:
        raise InvalidInput(
            f"key must hold 32, 48 or 64 bytes, got {len(raw)}; "
            "Redactor.generate_key() makes a valid one"
        )
    return raw


class Vault:
    """Seals and opens values with one key."""

    def __init__(self, key: Any) -> None:
        raw = _key_bytes(key)
        try:
            from cryptography.hazmat.primitives.ciphers.aead import AESSIV
        except ImportError as exc:
            raise InvalidInput(
                "mode='vault' needs the cryptography package: pip install 'branchmem[redact]', "
                "or use mode='mask' or 'drop'"
            ) from exc
        self._cipher = AESSIV(raw)

    def __repr__(self) -> str:
        return "Vault(<key hidden>)"

    def seal(self, kind: str, value: str) -> str:
        ct = self._cipher.encrypt(value.encode("utf-8"), [_AAD, kind.encode("ascii")])
        return f"[[vault:{kind}:{base64.urlsafe_b64encode(ct).decode('ascii').rstrip('=')}]]"

    def open(self, kind: str, data: str) -> str:
        from cryptography.exceptions import InvalidTag

        try:
            ct = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
            return self._cipher.decrypt(ct, [_AAD, kind.encode("ascii")]).decode("utf-8")
        except (InvalidTag, binascii.Error, ValueError) as exc:
            raise InvalidInput(
                f"a vault token of kind {kind!r} cannot be opened with this key: it was "
                "sealed with another key, or altered; restore with the key that sealed it"
            ) from exc
