"""Summaries through the gate, and a change of mind reaching them (every backend)."""

from __future__ import annotations

from branchmem import Store
from branchmem.extract import ChainExtractor, Proposal, RuleExtractor, SummaryExtractor
from branchmem.extract.proposal import ADD, UPDATE
from branchmem.extract.summary import is_summary, without
from branchmem.model import Event, Memory


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


class _Calories:
    """A fact at e1; at e4 its change, naming as replaced the assistant's
    restatement of the old value in digits (as `meta["previous"]` allows)."""

    def propose(self, window: list[Event], visible: list[Memory]) -> list[Proposal]:
        tip = window[-1].id
        if tip == "e1":
            return [Proposal(ADD, "用户每天吃两千大卡", ("e1",), key="diet.kcal",
                             meta={"value": "两千大卡"})]  # fmt: skip
        if tip != "e4":
            return []
        (fact,) = [m for m in visible if m.key == "diet.kcal"]
        meta = {"value": "一千八百大卡", "previous": ["2000大卡"]}
        return [Proposal(UPDATE, "用户每天吃一千八百大卡", ("e4",), target=fact.id, meta=meta)]


def test_a_summary_written_before_the_change_loses_every_value_the_change_replaces(
    store: Store,
) -> None:
    # The assistant restated the old value in other words; the user changed it
    # after that summary was written: its rewrite leaves out both forms.
    said = [
        "我每天吃两千大卡。",
        "好的，每天2000大卡，我按这个排食谱。",
        "我住在成都。",
        "还是改成一千八百大卡吧。",
    ]
    roles = ["user", "assistant", "user", "user"]
    chat(store, [(f"e{n}", f"e{n - 1}" if n > 1 else None, r, c)
                 for n, (r, c) in enumerate(zip(roles, said, strict=True), 1)])  # fmt: skip
    ex = ChainExtractor(_Calories(), SummaryExtractor(every=2))
    for at in ("e1", "e2", "e3", "e4"):
        store.extract(at=at, extractor=ex)
    texts = summaries(store, "e4")
    assert texts and not any("两千" in s or "2000" in s for s in texts), texts
    assert any("我按这个排食谱" in s for s in texts)  # the rest of the line stays
    assert any("2000大卡" in s for s in summaries(store, "e3"))  # before the change
