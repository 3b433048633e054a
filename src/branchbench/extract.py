"""The one deterministic, rule-based extractor every system shares.

All systems see the same derived records, so they differ only in what they
keep and how they gate it. The rules are deliberately plain:

* **Facts.** Every user message yields one fact, ``用户说：<message>``, with
  the message as its only source. Its *key* is the first topic of
  `TOPICS` whose trigger occurs in the message (``预算`` → ``budget``), or
  ``None`` when no trigger occurs. Two facts with the same key are taken to
  talk about the same value, so a later one corrects an earlier one.
* **Summaries.** Every `SUMMARY_EVERY` received messages (any role, in
  arrival order, branches mixed exactly as they arrive) yield one summary
  whose sources are exactly the messages it covers. Its text is the covered
  messages, each clipped to `CLIP` characters, joined in arrival order. A
  summary over messages from two branches is the mixing that leaks in
  ``whole_summary``; a gated store hides it wherever one covered message is
  off the path. `Extractor.flush` summarises the messages not yet covered,
  so a summary system does not lose the newest turns at question time.

No language model is involved: the same input gives the same records.
"""

from __future__ import annotations

from dataclasses import dataclass

from .scenario import ScenarioEvent

SUMMARY_EVERY = 4
"""Messages per summary."""

CLIP = 60
"""Characters kept from each message in a summary (longer ones end with …)."""

FACT_PREFIX = "用户说："
SUMMARY_PREFIX = "摘要："

ROLE_LABELS = {"user": "用户", "assistant": "助手", "tool": "工具", "system": "系统"}

TOPICS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("move", ("搬去", "搬到", "搬家到", "搬回")),
    ("budget", ("预算",)),
    ("allergy", ("过敏",)),
    ("diet", ("吃素", "忌口")),
    ("name", ("我叫", "名字")),
    ("birthday", ("生日",)),
    ("address", ("住在", "地址")),
    ("phone", ("电话", "手机号")),
    ("email", ("邮箱",)),
    ("job", ("职业", "工作是")),
    ("pet", ("宠物",)),
    ("destination", ("目的地", "去旅游", "旅行")),
    ("hotel", ("酒店", "住宿")),
    ("flight", ("航班", "机票")),
    ("headcount", ("人数",)),
    ("date", ("日期", "出发")),
    ("deadline", ("截止", "期限", "上线")),
    ("color", ("颜色",)),
    ("size", ("尺码", "尺寸")),
    ("language", ("编程语言", "语言")),
    ("framework", ("框架",)),
    ("database", ("数据库",)),
)
"""Generic personal-fact topics (key, triggers), tried in order; first hit wins."""


@dataclass(frozen=True)
class Derived:
    """A record the extractor derived: a fact or a summary, with its true sources."""

    kind: str  # "fact" or "summary"
    content: str
    sources: tuple[str, ...]
    key: str | None = None


def topic_key(text: str) -> str | None:
    """The key of the first topic whose trigger occurs in ``text``, else ``None``.

    >>> topic_key("我的预算是3000元")
    'budget'
    """
    for key, triggers in TOPICS:
        if any(t in text for t in triggers):
            return key
    return None


def clip(text: str, limit: int = CLIP) -> str:
    """Whitespace collapsed, cut to ``limit`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def line(event: ScenarioEvent) -> str:
    """One message as a line of a context: ``用户：…``."""
    return f"{ROLE_LABELS.get(event.role, event.role)}：{event.content}"


def summarize(events: list[ScenarioEvent]) -> Derived:
    """A summary record of ``events``: each message clipped, in the given order."""
    text = "；".join(f"{ROLE_LABELS.get(e.role, e.role)}：{clip(e.content)}" for e in events)
    return Derived("summary", SUMMARY_PREFIX + text, tuple(e.id for e in events))


class Extractor:
    """Turns arriving events into derived records; one instance per scenario and system."""

    def __init__(self, summary_every: int = SUMMARY_EVERY) -> None:
        if summary_every < 1:
            raise ValueError(f"summary_every must be at least 1, got {summary_every}")
        self.summary_every = summary_every
        self._pending: list[ScenarioEvent] = []

    def observe(self, event: ScenarioEvent) -> list[Derived]:
        """Records derived when ``event`` arrives: its fact first, then any summary."""
        out: list[Derived] = []
        if event.role == "user":
            out.append(
                Derived("fact", FACT_PREFIX + event.content, (event.id,), topic_key(event.content))
            )
        self._pending.append(event)
        if len(self._pending) >= self.summary_every:
            out.append(summarize(self._pending))
            self._pending = []
        return out

    def flush(self) -> list[Derived]:
        """A summary of the messages received since the last one (none if there are none)."""
        if not self._pending:
            return []
        out = [summarize(self._pending)]
        self._pending = []
        return out
