"""Which entity names a text mentions: the link from records to the graph.

Names are matched on normalised text (`norm`), a name of letters or digits
only at word boundaries (so "auth" is not found in "author"), by a table of
each name's first two characters: the cost follows the text's length and the
names sharing its character pairs, not the number of entities.
"""

from __future__ import annotations

from collections.abc import Iterable

from .model import norm


def _wordish(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "_")


class Mentions:
    """A matcher over a fixed set of normalised names."""

    def __init__(self, names: Iterable[str]) -> None:
        self.by_pair: dict[str, list[str]] = {}
        for key in set(names):
            if key:
                self.by_pair.setdefault(key[:2], []).append(key)
        for lst in self.by_pair.values():
            lst.sort(key=len, reverse=True)

    def find(self, text: str) -> set[str]:
        """The names ``text`` mentions.

        >>> m = Mentions(["alice", "auth-service", "支付服务"])
        >>> sorted(m.find("Alice 负责支付服务和 author"))
        ['alice', '支付服务']
        """
        t = norm(text)
        out: set[str] = set()
        get = self.by_pair.get
        n = len(t)
        for i in range(n):
            for cand in (get(t[i : i + 2]), get(t[i])):
                if not cand:
                    continue
                for key in cand:
                    if not t.startswith(key, i):
                        continue
                    j = i + len(key)
                    if _wordish(key[0]) and i > 0 and _wordish(t[i - 1]):
                        continue
                    if _wordish(key[-1]) and j < n and _wordish(t[j]):
                        continue
                    out.add(key)
        return out
