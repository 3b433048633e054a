r"""Grant patterns: names match literally, and ``*`` is the one wildcard.

A grant's namespace and branch parts are patterns. ``*`` stands for any run
of characters (``/`` included, or none): ``user/*`` matches ``user/1`` and
``user/1/a`` but not ``user``, and ``*`` alone matches every name. Every other
character matches itself. A backslash makes the next character literal, for
names that hold one of the special characters (namespaces and branch names
may hold any printable character): ``\*``, ``\?``, ``\[``, ``\]``, ``\:`` (the
grant separator) and ``\\``.

``?``, ``[`` and ``]`` are not wildcards, and a new key's grant that holds one
unescaped is refused (`problem`): in a shell glob they would be, so
``user[1]`` is ambiguous, and a key is the wrong place to guess. A grant
stored before this rule is read the same way, literally: an old ``user[1]``
grant matches only the namespace ``user[1]``, never ``user1``.
"""

from __future__ import annotations

import re
from functools import lru_cache

SPECIAL = "\\*?[]:"
"""The characters a backslash escapes."""


def tokens(pattern: str) -> list[str | None]:
    r"""The characters a name must have, ``None`` for each wildcard (a backslash
    before a character it does not escape is a literal backslash).

    >>> tokens(r"a*\*")
    ['a', None, '*']
    """
    out: list[str | None] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and pattern[i + 1] in SPECIAL:
            out.append(pattern[i + 1])
            i += 2
            continue
        out.append(None if c == "*" else c)
        i += 1
    return out


def problem(pattern: str) -> str | None:
    """Why ``pattern`` may not be a new grant's pattern, or ``None`` if it may.

    >>> print(problem("user[1]"))
    '[' is not a wildcard in a grant ('*' is the only one): write \\[ for a literal [
    """
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            if i + 1 == len(pattern) or pattern[i + 1] not in SPECIAL:
                return r"a '\' escapes one of \ * ? [ ] : (write \\ for a literal backslash)"
            i += 2
            continue
        if c in "?[]":
            return (
                f"{c!r} is not a wildcard in a grant ('*' is the only one): "
                f"write \\{c} for a literal {c}"
            )
        i += 1
    return None


def split(text: str) -> list[str]:
    r"""``text`` cut at each ``:`` that is not escaped (the escapes stay in the parts).

    >>> split(r"a\:b:read")
    ['a\\:b', 'read']
    """
    parts, start, i = [], 0, 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == ":":
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return parts


@lru_cache(maxsize=4096)
def _compiled(pattern: str) -> re.Pattern[str]:
    body = "".join(".*" if t is None else re.escape(t) for t in tokens(pattern))
    return re.compile(body, re.DOTALL)


def matches(pattern: str, name: str) -> bool:
    r"""Does ``name`` match ``pattern``?

    >>> matches("user/*", "user/1/a"), matches("user/*", "user"), matches("user[1]", "user1")
    (True, False, False)
    >>> matches(r"a\*", "a*"), matches(r"a\*", "ab")
    (True, False)
    """
    return _compiled(pattern).fullmatch(name) is not None


def escape(name: str) -> str:
    r"""The pattern that matches ``name`` and nothing else.

    >>> escape("team*[x]")
    'team\\*\\[x\\]'
    """
    return "".join("\\" + c if c in SPECIAL else c for c in name)


def describe(pattern: str, one: str, many: str) -> str:
    """What ``pattern`` matches, in words: ``one``/``many`` name the kind of thing.

    >>> describe("alice", "namespace", "namespaces")
    "namespace 'alice' only"
    >>> describe("user/*", "namespace", "namespaces")
    "namespaces matching user/* ('*': any characters, '/' included)"
    """
    found = tokens(pattern)
    if all(t is None for t in found):
        return f"every {one}"
    if None not in found:
        return f"{one} {''.join(t for t in found if t is not None)!r} only"
    return f"{many} matching {pattern} ('*': any characters, '/' included)"
