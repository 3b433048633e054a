"""The offline entity pass (`graph.entities`): what it finds, what it leaves,
and that its cache never outlives a record's text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from branchmem import Store
from branchmem.graph.entities import EntityCache, entities
from branchmem.graph.model import norm


def test_english_names_products_and_identifiers() -> None:
    got = entities("Priya Nair said auth-service on api.example.com uses jsonwebtoken v8.5.1")
    assert {"priya nair", "auth-service", "api.example.com", "jsonwebtoken 8.5.1"} <= got
    assert "jsonwebtoken" in got  # the product alone links two versions
    assert {"cve-2021-44228", "port 6001"} <= entities("CVE-2021-44228 hit the db on port 6001")
    assert "port 6001" in entities("MatrixOne 监听 6001 端口")
    assert "port 5432" in entities("connect to db.internal:5432")
    assert "matrixone" in entities("we deploy MatrixOne")
    assert "python 3.12" in entities("upgrade to Python 3.12 next week")
    assert "lodash" in entities("lodash before 4.17.21 has a bug")
    assert "pay-142" in entities("see ticket PAY-142")
    assert "project phoenix" in entities('the codename is "Project Phoenix"')


def test_common_words_are_not_names() -> None:
    assert entities("The weather is nice today. We went out on Monday.") == frozenset()
    assert entities("This is fine, thanks") == frozenset()
    assert "the identity" not in entities("The Identity team owns it")
    assert "identity" in entities("The Identity team owns it")


def test_chinese_without_jieba() -> None:
    got = entities("张伟是支付组的组长，负责 payment-gateway 和「风控平台」", use_jieba=False)
    assert {"张伟", "支付组", "payment-gateway", "风控平台"} <= got
    assert "fastjson" in entities("依赖 fastjson 和 gin", use_jieba=False)
    assert entities("今天天气不错", use_jieba=False) == frozenset()


TEXT = st.text(
    alphabet=st.sampled_from(list('abcXYZ 0123456789.-:"「」张伟组是的 port端口CVE')), max_size=60
)


@settings(max_examples=300, deadline=None, database=None)
@given(TEXT)
def test_every_name_comes_from_the_text(text: str) -> None:
    flat = norm(text)
    for name in entities(text, use_jieba=False):
        assert name == norm(name) and len(name) >= 2
        if name.startswith("port "):
            assert name[5:] in flat
        else:
            # a versioned product is "name version" from "name v?version"
            assert all(part.lstrip("v") in flat for part in name.split()), (name, text)


def test_the_cache_is_keyed_by_id_and_text() -> None:
    cache = EntityCache(size=2)
    assert cache.get("ns", "r1", "Alice owns auth-service") == {"alice", "auth-service"}
    # r1 rewritten (a purge, then the same id again): its new text counts
    assert cache.get("ns", "r1", "Bob owns billing-api") == {"bob", "billing-api"}
    cache.get("ns", "r2", "x")
    cache.get("ns", "r3", "y")
    assert len(cache._seen) == 2


def test_a_purge_drops_what_the_cache_derived() -> None:
    """The store's engine holds the cache: a purge leaves no name of a purged record."""
    store = Store()
    store.add_event("e1")
    store.add_memory("Alice owns auth-service", sources=["e1"], id="m1")
    store.add_memory("auth-service uses Redis", sources=["e1"], id="m2")
    store.search("who owns auth-service", at="e1", hops=2)
    cache = store._engine.cache("entities", EntityCache)
    assert {k[1] for k in cache._seen} == {"m1", "m2"}
    store.purge(memories=["m1"])
    assert {k[1] for k in cache._seen} == {"m2"}
    store.purge(whole_namespace=True)
    assert cache._seen == {}
