"""Time in the question (`retrieval.when`), on a fixed clock."""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from branchmem import HashingEmbedder, Store
from branchmem.model import Memory
from branchmem.retrieval.when import asks_when, dates_in, prior, states_time, window

NOW = datetime(2024, 6, 12, 15, 0, tzinfo=timezone.utc).timestamp()  # a Wednesday
DAY = 86400.0


def _days(span: tuple[float, float] | None) -> tuple[date, date] | None:
    if span is None:
        return None
    a, b = (datetime.fromtimestamp(t, tz=timezone.utc).date() for t in span)
    return a, b


WINDOWS = """
    what did I eat yesterday | 2024-06-11 | 2024-06-12
    我昨天吃了什么 | 2024-06-11 | 2024-06-12
    前天的会议 | 2024-06-10 | 2024-06-11
    what happened last week | 2024-06-03 | 2024-06-10
    上个月买了什么 | 2024-05-01 | 2024-06-01
    the trip last May | 2024-05-01 | 2024-06-01
    the trip last July | 2023-07-01 | 2023-08-01
    the trip in May | 2024-05-01 | 2024-06-01
    what did I read in 2023 | 2023-01-01 | 2024-01-01
    去年去了哪里 | 2023-01-01 | 2024-01-01
    2022年5月的体检 | 2022-05-01 | 2022-06-01
    two weeks ago | 2024-05-27 | 2024-06-03
    3天前说的 | 2024-06-09 | 2024-06-10
    一个月前 | 2024-05-01 | 2024-06-01
    on 2024-03-05 | 2024-03-05 | 2024-03-06
    on March 5, 2024 | 2024-03-05 | 2024-03-06
    in December 2023 | 2023-12-01 | 2024-01-01
    八月份的账单 | 2023-08-01 | 2023-09-01
"""
"""query | first day | day after the window (the latest May past, in June, is this year's)."""


@pytest.mark.parametrize("row", WINDOWS.strip().splitlines())
def test_window_reads_the_time_a_query_names(row: str) -> None:
    query, start, end = (x.strip() for x in row.split("|"))
    assert _days(window(query, NOW)) == (date.fromisoformat(start), date.fromisoformat(end))


@pytest.mark.parametrize(
    "query", ["what is my phone", "I may come", "几月去的", "two weeks before the trip"]
)
def test_no_time_named_no_window(query: str) -> None:
    assert window(query, NOW) is None


def test_when_questions_and_texts_that_state_a_time() -> None:
    assert asks_when("When did Alice move?") and asks_when("她什么时候搬家")
    assert not asks_when("Where does Alice live?")
    assert states_time("Standup moved to Thursday 3pm") and states_time("计划Q3完成")
    assert states_time("婚礼定在五月二十号") and not states_time("有一点累")
    assert not states_time("User likes green tea")
    assert [_days(s) for s in dates_in("Flew out on 2024-03-05, back 2024年4月")] == [
        (date(2024, 3, 5), date(2024, 3, 6)),
        (date(2024, 4, 1), date(2024, 5, 1)),
    ]


def test_prior_boosts_records_of_the_named_time_only_when_one_is_named() -> None:
    mems = [
        Memory("a", "Went hiking", ("e1",), created_at=NOW - 30 * DAY),
        Memory("b", "Went to the dentist", ("e1",), created_at=NOW - 1 * DAY),
        Memory("c", "Dentist visit planned on 2024-06-11", ("e1",), created_at=NOW - 40 * DAY),
        Memory("d", "Dentist fixed", ("e1",), created_at=0.0, valid_from=NOW - 0.5 * DAY),
    ]
    got = prior("what did I do yesterday", mems, NOW)
    assert got is not None and got[0] == 1.0 and got[1] > 1.0 and got[2] > 1.0
    assert got[3] == 1.0  # valid_from (today) counts over created_at
    assert prior("what did I do", mems, NOW) is None
    when = prior("when is the dentist", mems, NOW)
    assert when is not None and when[2] > when[1] == 1.0


def test_search_lifts_the_record_of_the_named_time() -> None:
    t = [NOW - 20 * DAY]
    store = Store(clock=lambda: t[0])
    store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
    store.add_memory("User had sushi for dinner", sources=["e1"])
    t[0] = NOW - DAY
    store.add_memory("User had pizza for dinner", sources=["e2"])
    emb = HashingEmbedder()
    q = "what did I have for dinner"
    plain = store.search(q, at="e2", k=1, embedder=emb, now=NOW)
    assert [h.memory.content for h in plain] == ["User had pizza for dinner"]  # the newer
    timed = store.search(q + " three weeks ago", at="e2", k=1, embedder=emb, now=NOW, explain=True)
    assert [h.memory.content for h in timed] == ["User had sushi for dinner"]
    assert "time in the question 1.5" in timed[0].explanation.scoring  # type: ignore[union-attr]
    zh = store.search("我上个月晚饭吃了什么 dinner", at="e2", k=1, embedder=emb, now=NOW)
    assert [h.memory.content for h in zh] == ["User had sushi for dinner"]


def test_a_time_out_of_the_calendar_names_no_time_and_never_fails_a_search() -> None:
    """A year past 9999, before 1, or a count of days no date can hold is not a
    time: the question ranks as if it named none (no ValueError or OverflowError)."""
    for q in ("3000000 days ago", "9999年13月", "9999年12月", "December 9999", "0年5月"):
        assert window(q, NOW) is None, q
    store = Store()
    store.add_event("e1")
    store.add_memory("planned for 9999年12月 and December 9999", sources=["e1"], id="m1")
    for q in ("what happened 3000000 days ago", "9999年12月的计划", "plans for December 9999"):
        assert [h.memory.id for h in store.search(q, at="e1", embedder="hashing")] == ["m1"]
