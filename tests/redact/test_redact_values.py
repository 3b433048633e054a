"""`branchmem.redact.values`: every string of a structured value redacted, keys
too, checked against a deliberately plain reference (which copies everything
and keeps colliding keys apart by the documented rule in a loop of its own)."""

from __future__ import annotations

import dataclasses
import random
from collections import deque
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from branchmem import InvalidInput, Redactor
from helpers.redact_gen import (
    card_number,
    card_text,
    email,
    id_number,
    ipv4,
    mobile_digits,
    phone_text,
)

R = Redactor()


def _identifier(seed: int) -> str:
    rng = random.Random(seed)
    return [
        lambda: phone_text(rng),
        lambda: id_number(rng),
        lambda: card_text(rng, card_number(rng)),
        lambda: email(rng),
        lambda: ipv4(rng),
    ][seed % 5]()


held_text = st.integers(0, 10**6).map(_identifier)
text = st.one_of(
    st.text(max_size=8),
    held_text,
    st.tuples(st.text(max_size=4), held_text).map("".join),
    st.sampled_from(["[邮箱]", "[邮箱]#2", "138****5678"]),
)
whole = st.one_of(
    st.integers(-(10**12), 10**12),
    st.integers(0, 10**6).map(lambda s: int(mobile_digits(random.Random(s)))),
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False), whole, text),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(text, inner, max_size=4)),
    max_leaves=20,
)


def reference(v: Any) -> Any:
    """Plainly: copy everything, redact each string and each whole number's text."""
    if isinstance(v, str):
        return R.redact(v)
    if isinstance(v, bool) or v is None or isinstance(v, float):
        return v
    if isinstance(v, int):
        return v if R.redact(str(v)) == str(v) else R.redact(str(v))
    if isinstance(v, list):
        return [reference(x) for x in v]
    assert isinstance(v, dict)
    new = {k: reference(k) for k in v}
    out: dict[Any, Any] = {}
    names: dict[Any, Any] = {k: new[k] for k in v if new[k] == k}  # unchanged keep theirs
    for k in sorted((k for k in v if new[k] != k), key=lambda k: (type(k).__name__, str(k))):
        n, name = 1, new[k]
        while name in names.values():
            n += 1
            name = f"{new[k]}#{n}"
        names[k] = name
    for k, x in v.items():
        out[names[k]] = reference(x)
    return out


def strings(v: Any) -> list[str]:
    if isinstance(v, str):
        return [v]
    if isinstance(v, list):
        return [s for x in v for s in strings(x)]
    if isinstance(v, dict):
        return [s for k, x in v.items() for s in [*strings(k), *strings(x)]]
    return []


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_redact_value_is_the_plain_reference(v: Any) -> None:
    out = R.redact_value(v)
    assert out == reference(v)
    assert not [s for s in strings(out) if R.findings(s)]  # nothing left to find
    assert R.redact_value(out) == out  # redacting twice changes nothing more
    if out == v:
        assert out is v  # what holds nothing to redact is not copied


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(text, st.integers(0, 1000), max_size=6))
def test_keys_stay_apart_and_do_not_depend_on_their_order(d: dict[str, int]) -> None:
    out = R.redact_value(d)
    assert len(out) == len(d)
    assert sorted(out.values()) == sorted(d.values())
    assert R.redact_value(dict(reversed(d.items()))) == out


@dataclasses.dataclass(frozen=True)
class Note:
    text: str
    n: int = 0


class Pair(NamedTuple):
    a: str
    b: int


def test_state_types_are_walked_and_rebuilt_as_their_own_type() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.messages import HumanMessage

    phone, mail = "13812345678", "li.lei@example.com"
    state = {
        "msg": HumanMessage(content=f"call {phone}", additional_kwargs={mail: 1}),
        "note": Note(mail, 7),
        "pair": Pair(mail, 1),
        "tags": {phone, "x"},
        "frozen": frozenset([mail]),
        "queue": deque([phone], maxlen=3),
        "tuple": (phone, 1.5, b"13812345678"),
    }
    out = R.redact_value(state)
    assert out["msg"].content == "call 138****5678" and isinstance(out["msg"], HumanMessage)
    assert out["msg"].additional_kwargs == {"[邮箱]": 1}
    assert out["note"] == Note("[邮箱]", 7)
    assert out["pair"] == Pair("[邮箱]", 1) and isinstance(out["pair"], Pair)
    assert out["tags"] == {"138****5678", "x"} and out["frozen"] == frozenset(["[邮箱]"])
    assert out["queue"] == deque(["138****5678"]) and out["queue"].maxlen == 3
    assert out["tuple"] == ("138****5678", 1.5, b"13812345678")  # bytes are not text
    assert state["note"] == Note(mail, 7)  # the input is left as it was


def test_a_value_nested_too_deeply_is_one_clear_error() -> None:
    v: Any = "13812345678"
    for _ in range(100_000):
        v = [v]
    with pytest.raises(InvalidInput, match="nested too deeply"):
        R.redact_value(v)


def test_custom_rules_check_every_whole_number() -> None:
    r = Redactor(rules={"room": r"(?<![0-9])4[0-9]{2}(?![0-9])"})
    assert r.redact_value({"room": 412, "n": 12}) == {"room": "[room]", "n": 12}
    assert R.redact_value({"room": 412}) == {"room": 412}
