"""Time in the question: a query that names a time ranks the records of that
time higher; a "when" question ranks higher the records that state a time.

`window` reads the time a query names, relative to the search's ``now``, as a
half-open range of seconds (UTC days): "yesterday", "today", "last week",
"this month", "last year", "in 2023", "last May", "May 2023", "3 days ago",
"two weeks ago", an ISO date "2023-05-04"; in Chinese 昨天, 前天, 今天, 上周,
本周, 上个月, 这个月, 去年, 今年, 前年, 2023年, 五月 / 5月, 3天前, 两周前, 一个月前.
A time relative to another event ("two weeks before the trip") is not read.

`prior` gives each ranked record a multiplier: ``1 + IN_RANGE`` where the
record's time (``valid_from``, else ``created_at``) or a date written in its
text (`dates_in`) falls in the window; for a "when" question (`asks_when`),
``1 + STATES_TIME`` where the text states a date or time (`states_time`);
1 otherwise. Standard library only, offline.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta, timezone

from ..model import Memory
from .fusion import Scored

IN_RANGE = 0.5
"""Boost of a record whose time falls in the window the query names."""

STATES_TIME = 0.15
"""Boost, for a "when" question, of a record whose text states a date or time."""

_DAY = 86400.0
_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for m in names
}  # fmt: skip
_NUM_EN = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a few": 3,
    "several": 3, "couple of": 2, "a couple of": 2,
}  # fmt: skip
_NUM_ZH = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
           "九": 9, "十": 10, "十一": 11, "十二": 12, "几": 3}  # fmt: skip
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_EN_NUM = "|".join(sorted(_NUM_EN, key=len, reverse=True))
_ZH_NUM = "十二|十一|" + "|".join(_NUM_ZH)

_ISO = re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b")
_MONTH_DAY_YEAR = re.compile(
    rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.IGNORECASE
)
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})\s+({_MONTH_RE})\.?,?\s+(\d{{4}})\b", re.IGNORECASE)
_MONTH_YEAR = re.compile(rf"\b({_MONTH_RE})\.?,?\s+(?:of\s+)?(\d{{4}})\b", re.IGNORECASE)
_ZH_DATE = re.compile(r"(\d{4})\s*年\s*(?:(\d{1,2})\s*月\s*(?:(\d{1,2})\s*[日号])?)?")
_YEAR = re.compile(r"\b(?:in|during|of|since)\s+((?:19|20)\d{2})\b", re.IGNORECASE)
_LAST_MONTH_NAME = re.compile(rf"\b(last|this|in|on|during)\s+({_MONTH_RE})\b", re.IGNORECASE)
_AGO_EN = re.compile(rf"\b(\d+|{_EN_NUM})\s+(day|week|month|year)s?\s+ago\b", re.IGNORECASE)
_AGO_ZH = re.compile(rf"(\d+|{_ZH_NUM})\s*(天|日|周|个?星期|个?礼拜|个?月|年)(?:以|之)?前")
_ZH_MONTH = re.compile(r"(?<![\d年个几])(\d{1,2}|十二|十一|[一二三四五六七八九十])\s*月")
_RELATIVE = [
    # (pattern, unit, offset): the unit ("day", "week", "month", "year") `offset` units from now
    (re.compile(r"\bday before yesterday\b|前天", re.IGNORECASE), "day", -2),
    (re.compile(r"\byesterday\b|昨天|昨日|昨晚", re.IGNORECASE), "day", -1),
    (re.compile(r"\btoday\b|\btonight\b|今天|今日|今晚", re.IGNORECASE), "day", 0),
    (re.compile(r"\blast week\b|上周|上个?星期|上个?礼拜", re.IGNORECASE), "week", -1),
    (re.compile(r"\bthis week\b|本周|这周|这个?星期", re.IGNORECASE), "week", 0),
    (re.compile(r"\blast month\b|上个?月", re.IGNORECASE), "month", -1),
    (re.compile(r"\bthis month\b|本月|这个月", re.IGNORECASE), "month", 0),
    (re.compile(r"\blast year\b|去年", re.IGNORECASE), "year", -1),
    (re.compile(r"\bthis year\b|今年", re.IGNORECASE), "year", 0),
    (re.compile(r"前年"), "year", -2),
]
_WHEN = re.compile(
    r"\b(when|what time|what date|which (day|date|year|month)|how long ago|what year)\b"
    r"|什么时候|啥时候|何时|哪天|哪一天|几号|几月|哪年|哪一年|几点|多久以前|多久前",
    re.IGNORECASE,
)
_TIME_TEXT = re.compile(
    rf"\b({_MONTH_RE}|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"yesterday|today|tomorrow|tonight|morning|evening|afternoon|weekend|ago|quarter|"
    r"(\d{4}\s*)?[QH][1-4]|"
    r"(19|20)\d{2}|\d{1,2}(:\d{2})?\s*(am|pm)|\d{1,2}:\d{2})\b"
    r"|\d+\s*[年月日号点]|[〇零一二三四五六七八九十两]+[月日号]|[〇零一二三四五六七八九]{4}年|[一二三四]季度|[QH][1-4]|[昨今明前后]天|[上下本这]周|星期|周[一二三四五六日末]|去年|今年|明年|"
    r"上个?月|下个?月|[早晚]上|下午|中午",
    re.IGNORECASE,
)


def _utc(t: float) -> datetime:
    return datetime.fromtimestamp(t, tz=timezone.utc)


def _ts(d: datetime) -> float:
    return d.timestamp()


_OFF_CALENDAR = (ValueError, OverflowError)
"""What `datetime` raises for a date it cannot hold (year 0, 10000, a month 13)."""


def _month(year: int, month: int) -> tuple[float, float] | None:
    try:
        start = datetime(year, month, 1, tzinfo=timezone.utc)
        end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=timezone.utc)
    except _OFF_CALENDAR:
        return None
    return _ts(start), _ts(end)


def _day(year: int, month: int, day: int) -> tuple[float, float] | None:
    try:
        start = _ts(datetime(year, month, day, tzinfo=timezone.utc))
    except _OFF_CALENDAR:
        return None
    return start, start + _DAY


def _unit(now: float, unit: str, offset: int) -> tuple[float, float] | None:
    d = _utc(now).replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "day":
        start = d + timedelta(days=offset)
        return _ts(start), _ts(start + timedelta(days=1))
    if unit == "week":  # weeks start on Monday
        start = d - timedelta(days=d.weekday()) + timedelta(weeks=offset)
        return _ts(start), _ts(start + timedelta(weeks=1))
    if unit == "month":
        n = d.year * 12 + d.month - 1 + offset
        return _month(n // 12, n % 12 + 1)
    return _ts(d.replace(year=d.year + offset, month=1, day=1)), _ts(
        d.replace(year=d.year + offset + 1, month=1, day=1)
    )


def _count(word: str) -> int:
    w = word.lower()
    if w.isdigit():
        return int(w)
    return _NUM_EN.get(w) or _NUM_ZH.get(w, 1)


def _recent_month(now: float, month: int, strictly_past: bool) -> tuple[float, float] | None:
    d = _utc(now)
    year = d.year if month < d.month or (month == d.month and not strictly_past) else d.year - 1
    return _month(year, month)


def window(query: str, now: float) -> tuple[float, float] | None:
    """The range of time (``[start, end)`` seconds, UTC) ``query`` names, or None;
    a time off the calendar (`_OFF_CALENDAR`) names none.

    >>> now = 1_700_000_000.0  # Tuesday 2023-11-14 22:13 UTC
    >>> [_utc(t).date().isoformat() for t in window("what did I do yesterday", now)]
    ['2023-11-13', '2023-11-14']
    >>> [_utc(t).date().isoformat() for t in window("上个月买了什么", now)]
    ['2023-10-01', '2023-11-01']
    >>> [_utc(t).date().isoformat() for t in window("the trip last May", now)]
    ['2023-05-01', '2023-06-01']
    >>> window("what is my phone", now) is None
    True
    >>> window("3000000 days ago", now) is None
    True
    """
    try:
        return _window(query, now)
    except _OFF_CALENDAR:
        return None


def _window(query: str, now: float) -> tuple[float, float] | None:
    for pat in (_ISO, _MONTH_DAY_YEAR, _DAY_MONTH_YEAR):
        m = pat.search(query)
        if m:
            g = m.groups()
            if pat is _ISO:
                got = _day(int(g[0]), int(g[1]), int(g[2]))
            elif pat is _MONTH_DAY_YEAR:
                got = _day(int(g[2]), _MONTHS[g[0].lower()], int(g[1]))
            else:
                got = _day(int(g[2]), _MONTHS[g[1].lower()], int(g[0]))
            if got:
                return got
    m = _ZH_DATE.search(query)
    if m:
        year, month, day = m.group(1), m.group(2), m.group(3)
        if day and _day(int(year), int(month), int(day)):
            return _day(int(year), int(month), int(day))
        if month and 1 <= int(month) <= 12:
            return _month(int(year), int(month))
        return _ts(datetime(int(year), 1, 1, tzinfo=timezone.utc)), _ts(
            datetime(int(year) + 1, 1, 1, tzinfo=timezone.utc)
        )
    m = _MONTH_YEAR.search(query)
    if m:
        return _month(int(m.group(2)), _MONTHS[m.group(1).lower()])
    m = _AGO_EN.search(query) or _AGO_ZH.search(query)
    if m:
        n, unit = _count(m.group(1)), m.group(2).lower()
        unit = {"天": "day", "日": "day", "周": "week", "年": "year"}.get(unit[-1], unit)
        unit = {"期": "week", "拜": "week", "月": "month"}.get(unit[-1], unit)
        return _unit(now, unit, -n)
    for pat, unit, offset in _RELATIVE:
        if pat.search(query):
            return _unit(now, unit, offset)
    m = _YEAR.search(query)
    if m:
        return _unit(now, "year", int(m.group(1)) - _utc(now).year)
    m = _LAST_MONTH_NAME.search(query)
    if m and (m.group(2).lower() != "may" or m.group(1).lower() != "this"):
        return _recent_month(now, _MONTHS[m.group(2).lower()], m.group(1).lower() == "last")
    m = _ZH_MONTH.search(query)
    if m:
        month = _count(m.group(1))
        if 1 <= month <= 12:
            return _recent_month(now, month, False)
    return None


def asks_when(query: str) -> bool:
    """Whether ``query`` asks for a time ("when", 什么时候, 哪天, ...).

    >>> asks_when("When did Alice move?"), asks_when("她什么时候搬家"), asks_when("Where?")
    (True, True, False)
    """
    return bool(_WHEN.search(query))


def states_time(text: str) -> bool:
    """Whether ``text`` states a date or a time.

    >>> states_time("Met Bob on May 4"), states_time("周五下午开会"), states_time("likes tea")
    (True, True, False)
    """
    return bool(_TIME_TEXT.search(text))


def dates_in(text: str) -> list[tuple[float, float]]:
    """The absolute dates written in ``text`` (ISO, "May 4, 2023", "4 May 2023",
    "May 2023", 2023年5月4日), each as a range of seconds."""
    out: list[tuple[float, float]] = []
    for m in _ISO.finditer(text):
        got = _day(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        out.extend([got] if got else [])
    for m in _MONTH_DAY_YEAR.finditer(text):
        got = _day(int(m.group(3)), _MONTHS[m.group(1).lower()], int(m.group(2)))
        out.extend([got] if got else [])
    for m in _DAY_MONTH_YEAR.finditer(text):
        got = _day(int(m.group(3)), _MONTHS[m.group(2).lower()], int(m.group(1)))
        out.extend([got] if got else [])
    for m in _MONTH_YEAR.finditer(text):
        got = _month(int(m.group(2)), _MONTHS[m.group(1).lower()])
        out.extend([got] if got else [])
    for m in _ZH_DATE.finditer(text):
        y, mo, d = m.group(1), m.group(2), m.group(3)
        got = _day(int(y), int(mo), int(d)) if d and mo else None
        if got is None and mo and 1 <= int(mo) <= 12:
            got = _month(int(y), int(mo))
        out.extend([got] if got else [])
    return out


def in_window(m: Memory, span: tuple[float, float]) -> bool:
    """Whether the record's time or a date in its text falls in ``span``."""
    start, end = span
    t = m.valid_from if m.valid_from is not None else m.created_at
    if start <= t < end:
        return True
    return any(a < end and start < b for a, b in dates_in(m.content))


def prior(query: str, mems: Sequence[Memory], now: float) -> list[float] | None:
    """One multiplier per record (see the module), or None when the query
    neither names a time nor asks "when"."""
    return prior_of(window(query, now), asks_when(query), mems)


def prior_of(
    span: tuple[float, float] | None, when: bool, mems: Sequence[Memory]
) -> list[float] | None:
    """`prior` from the query's `window` and `asks_when`, read once by the caller."""
    if span is None and not when:
        return None
    out = []
    for m in mems:
        x = 1.0
        if span is not None and in_window(m, span):
            x += IN_RANGE
        if when and states_time(m.content):
            x += STATES_TIME
        out.append(x)
    return out


def lifted(pairs: list[tuple[Scored, float]], lift: Sequence[float]) -> list[tuple[Scored, float]]:
    """Each pair's score and confidence times its `when.prior`, re-sorted best first."""
    out = [
        (replace(s, score=s.score * x), min(1.0, c * x))
        for (s, c), x in zip(pairs, lift, strict=True)
    ]
    order = sorted(range(len(out)), key=lambda i: -out[i][0].score)  # stable on ties
    return [out[i] for i in order]


def lift_note(path: str | None, x: float | None) -> str | None:
    """The explanation's scoring line gains the time prior that lifted the hit."""
    if x is None:
        return path
    note = f"× time in the question {x:g} (retrieval.when)"
    return f"{path}; {note}" if path else note
