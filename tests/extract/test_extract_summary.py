"""Summaries through the gate, and a change of mind reaching them (every backend)."""

from __future__ import annotations

from branchmem import Store
from branchmem.extract import ChainExtractor, RuleExtractor, SummaryExtractor
from branchmem.extract.summary import is_summary, without


def summaries(store: Store, at: str) -> list[str]:
    return [m.content for m in store.memories(at=at) if is_summary(m)]


def chat(store: Store, items: list[tuple[str, str | None, str, str]]) -> None:
    store.add_events([{"id": i, "parent": p, "role": r, "content": c} for i, p, r, c in items])


def test_summary_sources_are_exactly_the_summarised_events(store: Store) -> None:
    chat(
        store,
        [
            ("e1", None, "user", "你好，我想订酒店。"),
            ("e2", "e1", "assistant", "好的，去哪个城市？"),
            ("a3", "e2", "user", "去成都。"),
            ("b3", "e2", "user", "去重庆。"),
        ],
    )
    two = SummaryExtractor(every=2)
    store.extract(at="a3", extractor=two)
    store.extract(at="b3", extractor=two)
    # the shared prefix is summarised once and seen on both branches
    assert (
        summaries(store, "a3")
        == summaries(store, "b3")
        == ["用户：你好，我想订酒店。；助手：好的，去哪个城市？"]
    )
    shared = next(m for m in store.memories(at="a3") if is_summary(m))
    assert shared.sources == ("e1", "e2") and shared.kind == "episodic"
    # a tail summary that includes the abandoned message stays on its branch
    tail = SummaryExtractor(every=2, partial=True)
    store.extract(at="a3", extractor=tail)
    store.extract(at="b3", extractor=tail)
    assert summaries(store, "a3")[-1] == "用户：去成都。"
    assert summaries(store, "b3")[-1] == "用户：去重庆。"
    assert not any("成都" in s for s in summaries(store, "b3"))


def test_a_superseded_value_does_not_survive_in_a_summary_on_that_path(store: Store) -> None:
    chat(
        store,
        [
            ("e1", None, "user", "我住在北京，我在腾讯工作。"),
            ("e2", "e1", "assistant", "北京的冬天很冷吧。"),
            ("a3", "e2", "user", "我搬到上海了。"),
            ("b3", "e2", "user", "我养了一只猫。"),
        ],
    )
    ex = ChainExtractor(RuleExtractor(), SummaryExtractor(every=2))
    store.extract(at="e2", extractor=ex)
    assert summaries(store, "e2") == ["用户：我住在北京，我在腾讯工作。；助手：北京的冬天很冷吧。"]
    store.extract(at="a3", extractor=ex)
    store.extract(at="b3", extractor=ex)
    on_a = "\n".join(m.content for m in store.memories(at="a3"))
    assert "北京" not in on_a  # neither the fact nor the summary keeps the old city
    assert "腾讯" in on_a and "用户住在上海" in on_a
    assert summaries(store, "a3") == ["用户：我在腾讯工作。；更正：用户住在上海"]
    # the other branch and the shared prefix keep the original summary
    assert summaries(store, "b3") == summaries(store, "e2")
    assert "用户住在北京" in [m.content for m in store.memories(at="b3")]


def test_a_summary_written_after_the_change_leaves_the_old_value_out(store: Store) -> None:
    chat(
        store,
        [
            ("e1", None, "user", "I live in Oslo."),
            ("e2", "e1", "user", "Actually I'm moving to Bergen, the rent is lower."),
        ],
    )
    rules = RuleExtractor()
    store.extract(at="e1", extractor=rules)
    store.extract(at="e2", extractor=rules)
    store.extract(at="e2", extractor=SummaryExtractor(every=2))
    text = "\n".join(m.content for m in store.memories(at="e2"))
    assert "Oslo" not in text and "Bergen" in text
    # e1's only clause stated the old city, so its line is left out
    assert summaries(store, "e2") == ["User: Actually I'm moving to Bergen, the rent is lower."]
    summary = next(m for m in store.memories(at="e2") if is_summary(m))
    assert summary.sources == ("e1", "e2")


def test_a_deleted_fact_is_cut_from_summaries_on_that_path_only(store: Store) -> None:
    chat(
        store,
        [
            ("e1", None, "user", "我对芒果过敏，我喜欢爬山。"),
            ("e2", "e1", "assistant", "记住了。"),
            ("a3", "e2", "user", "其实我对芒果不过敏了。"),
            ("b3", "e2", "user", "谢谢。"),
        ],
    )
    ex = ChainExtractor(RuleExtractor(), SummaryExtractor(every=2))
    for at in ("e2", "a3", "b3"):
        store.extract(at=at, extractor=ex)
    assert all("芒果" not in s for s in summaries(store, "a3"))
    assert "用户喜欢爬山" in [m.content for m in store.memories(at="a3")]
    assert any("芒果" in s for s in summaries(store, "b3"))


def test_without_keeps_clauses_with_the_new_value() -> None:
    assert without("定在十五号。改到二十五号吧。", ["十五号"], ["二十五号"]) == "改到二十五号吧。"
    assert without("a, b, c", ["b"]) == "a, c"


def test_a_clause_stating_an_old_value_goes_even_beside_a_current_one(store: Store) -> None:
    # the old employer shares its clause with the job, a value still current
    chat(
        store,
        [
            ("e1", None, "user", "我在腾讯做产品经理。"),
            ("e2", "e1", "user", "我换工作了，现在在阿里巴巴上班。"),
        ],
    )
    rules = RuleExtractor()
    store.extract(at="e1", extractor=rules)
    store.extract(at="e2", extractor=rules)
    store.extract(at="e2", extractor=SummaryExtractor(every=2))
    assert all("腾讯" not in s for s in summaries(store, "e2"))
    assert "用户的职业是产品经理" in [m.content for m in store.memories(at="e2")]


def test_an_old_value_the_assistant_repeated_is_dropped_too(store: Store) -> None:
    chat(
        store,
        [
            ("e1", None, "user", "I live in Oslo."),
            ("e2", "e1", "assistant", "Oslo is lovely, and I can plan a weekend in Oslo for you."),
            ("e3", "e2", "user", "Actually I'm moving to Bergen."),
            ("e4", "e3", "assistant", "Noted."),
        ],
    )
    rules = RuleExtractor()
    for at in ("e1", "e3"):
        store.extract(at=at, extractor=rules)
    store.extract(at="e4", extractor=SummaryExtractor(every=4))
    (text,) = summaries(store, "e4")
    assert "Oslo" not in text and "Bergen" in text
    # off the change's path the assistant's line stands
    store.extract(at="e2", extractor=SummaryExtractor(every=2))
    assert any("Oslo" in s for s in summaries(store, "e2"))
