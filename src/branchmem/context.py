"""`Context`: what a model sees at an anchor, the last messages on the path and
the memories visible there, ranked for the question when there is one.

Gate first: the messages are the anchor's own path and the memories pass the
gate before any ranking, so nothing from a sibling branch reaches the prompt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import InvalidInput
from .model import KINDS, Memory
from .validate import check_anchors, check_int, check_query

if TYPE_CHECKING:
    import os

    from .api import StoreAPI
    from .retrieval.embed import Embedder
    from .retrieval.fusion import Weights
    from .retrieval.tokenize import Tokenizer
    from .searchlog import QueryLog

_LABELS = {
    "zh": (
        "相关记忆：",
        "对话记录：",
        {"user": "用户", "assistant": "助手", "tool": "工具", "system": "系统"},
    ),
    "en": ("Relevant memories:", "Conversation:", {"user": "User", "assistant": "Assistant"}),
}


@dataclass(frozen=True)
class Context:
    """The prompt material at ``at``: ``messages`` root first as
    ``{"role", "content"}`` dicts, ``memories`` best first.

    >>> ctx = Context("e2", [{"role": "user", "content": "我在阿里巴巴上班。"}],
    ...               [Memory("m1", "用户在阿里巴巴工作", ("e2",))])
    >>> print(ctx.text())
    相关记忆：
    - 用户在阿里巴巴工作
    <BLANKLINE>
    对话记录：
    用户：我在阿里巴巴上班。
    """

    at: str | tuple[str, ...] | None
    messages: list[dict[str, str]]
    memories: list[Memory]
    query: str | None = None

    @property
    def language(self) -> str:
        """``"zh"`` when the content has Chinese characters, else ``"en"``."""
        from .extract.rules import language

        texts = [m["content"] for m in self.messages] + [m.content for m in self.memories]
        return language("".join(texts))

    def text(self) -> str:
        """One prompt block: the memories, then the conversation, labelled in the
        content's language ("" when there is nothing)."""
        mem_head, conv_head, roles = _LABELS[self.language]
        colon = "：" if self.language == "zh" else ": "
        parts = []
        if self.memories:
            parts.append("\n".join([mem_head] + [f"- {m.content}" for m in self.memories]))
        if self.messages:
            lines = [
                f"{roles.get(m['role'], m['role'])}{colon}{m['content']}" for m in self.messages
            ]
            parts.append("\n".join([conv_head, *lines]))
        return "\n\n".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": list(self.at) if isinstance(self.at, tuple) else self.at,
            "query": self.query,
            "messages": [dict(m) for m in self.messages],
            "memories": [m.to_dict() for m in self.memories],
            "text": self.text(),
        }


def build_context(
    store: StoreAPI,
    at: str | Sequence[str] | None,
    *,
    query: str | None = None,
    window: int | None = 8,
    k: int | None = 10,
    namespace: str = "default",
    mode: str = "hybrid",
    embedder: Embedder | str | None = None,
    tokenizer: Tokenizer | str | None = None,
    weights: Weights | None = None,
    scope_weights: Sequence[float] | None = None,
    kind: str | Sequence[str] | None = None,
    key_prefix: str | None = None,
    meta: Mapping[str, Any] | None = None,
    now: float | None = None,
    as_of: float | None = None,
    explain: bool = False,
    log: QueryLog | str | os.PathLike[str] | None = None,
    max_embed: int | None = None,
) -> Context:
    """The `Context` at ``at`` (see `Store.context`); the keywords after
    ``namespace`` go to ``store.search`` when there is a ``query``."""
    for name, v in (("window", window), ("k", k)):
        if v is not None:
            check_int(v, f"{name} (or None, for no limit)")
    if query is not None and not isinstance(query, str):
        raise InvalidInput(f"query must be text or None, got {type(query).__name__}")
    if query is not None:
        check_query(query)
    if at is None:
        return Context(None, [], [], query)
    key: str | tuple[str, ...]
    if isinstance(at, str):
        first, key = at, at
    else:
        chain = check_anchors(at)
        if not chain:
            return Context((), [], [], query)
        first, key = chain[0], tuple(chain)
    shown = store.path(first, namespace=namespace, last=1 if window == 0 else window)
    if window == 0:
        shown = []
    messages = [{"role": e.role, "content": e.content} for e in shown]
    visible = [
        m
        for m in store.memories(at=at, namespace=namespace)
        if m.target is None and m.kind in KINDS
    ]
    limit = len(visible) if k is None else min(k, len(visible))
    if not limit:
        memories: list[Memory] = []
    elif query:
        hits = store.search(
            query,
            at=at,
            k=limit,
            namespace=namespace,
            mode=mode,
            embedder=embedder,
            tokenizer=tokenizer,
            weights=weights,
            scope_weights=scope_weights,
            kind=kind,
            key_prefix=key_prefix,
            meta=meta,
            now=now,
            as_of=as_of,
            explain=explain,
            log=log,
            max_embed=max_embed,
        )
        memories = [h.memory for h in hits if h.memory.target is None]
    else:
        memories = sorted(visible, key=lambda m: (-m.importance, -m.seq))[:limit]
    from .ops.dedup import same_text

    once: dict[str, Memory] = {}
    for m in memories:  # the same text is listed once (the first, best ranked)
        once.setdefault(same_text(m.content), m)
    return Context(key, messages, list(once.values()), query)
