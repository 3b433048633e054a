"""Properties of `Redactor`, with identifiers drawn by the independent generator's rules.

* a valid resident ID, bank card or mobile number embedded in random Chinese
  or English text is always found and masked, and nothing else changes;
* a text without digits or ``@`` is never changed;
* redacting twice changes nothing more (mask, drop and vault).
"""

from __future__ import annotations

import datetime
import os
import re

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from branchmem import Redactor
from helpers.redact_gen import (
    CARD_LENGTHS,
    CARD_PREFIXES,
    MOBILE_PREFIXES,
    REGIONS,
    format_phone,
    id_check_char,
    id_like,
    luhn_check_digit,
)

EXAMPLES = int(os.environ.get("BRANCHMEM_REDACT_EXAMPLES", "100"))
MASK, DROP = Redactor(), Redactor("drop")
VAULT = Redactor("vault", key=Redactor.generate_key())

DIGITS = "0123456789"
CJK = st.characters(min_codepoint=0x4E00, max_codepoint=0x9FA5)
PUNCT = st.sampled_from(list("，。！？、：；（）“”《》 ,.!?;:'\"()-"))
WORD = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"), max_size=8)
FILLER = st.lists(st.one_of(CJK, PUNCT, WORD), max_size=12).map("".join)
# Separators that cannot join an identifier to a letter on its side.
SEP = st.one_of(CJK, st.sampled_from([" ", "，", "：", "。", "（", "）", "\n"]))
# The documented exception: a number right after these words is an order number.
ORDER_WORDS = re.compile(
    r"订单|单号|流水|运单|快递|发票|工单|合同|order|invoice|tracking|ref|serial", re.I
)


@st.composite
def id_numbers(draw: st.DrawFn) -> str:
    born = draw(st.dates(datetime.date(1900, 1, 1), datetime.date(2024, 12, 31)))
    body = f"{draw(st.sampled_from(REGIONS))}{born:%Y%m%d}{draw(st.integers(0, 999)):03d}"
    check = id_check_char(body)
    return body + (check.lower() if check == "X" and draw(st.booleans()) else check)


@st.composite
def card_numbers(draw: st.DrawFn) -> str:
    prefix = draw(st.sampled_from(CARD_PREFIXES))
    length = draw(st.sampled_from(CARD_LENGTHS.get(prefix, (16, 17, 18, 19))))
    body = prefix + draw(
        st.text(
            st.sampled_from(DIGITS),
            min_size=length - len(prefix) - 1,
            max_size=length - len(prefix) - 1,
        )
    )
    number = body + luhn_check_digit(body)
    assume(not id_like(number) and len(set(number)) > 1)
    if draw(st.booleans()) and len(number) != 15:
        sep = draw(st.sampled_from(" -"))
        return sep.join(number[i : i + 4] for i in range(0, len(number), 4))
    return number


@st.composite
def phones(draw: st.DrawFn) -> tuple[str, str]:
    head = draw(st.sampled_from(MOBILE_PREFIXES) | st.from_regex(r"\A1[3-9][0-9]\Z"))
    d = head + draw(st.text(st.sampled_from(DIGITS), min_size=8, max_size=8))
    return format_phone(d, draw(st.integers(0, 5))), f"{d[:3]}****{d[-4:]}"


@st.composite
def embedded(draw: st.DrawFn) -> tuple[str, str, str, str, str]:
    """(text before, identifier, text after, its kind, its mask)."""
    kind = draw(st.sampled_from(["id_card", "bank_card", "phone"]))
    if kind == "phone":
        value, mask = draw(phones())
    else:
        value = draw(id_numbers() if kind == "id_card" else card_numbers())
        mask = "[身份证号]" if kind == "id_card" else "[银行卡号]"
    before = draw(FILLER) + draw(SEP)
    after = draw(SEP) + draw(FILLER)
    assume(not ORDER_WORDS.search(before[-24:]))
    return before, value, after, kind, mask


@settings(max_examples=EXAMPLES, deadline=None)
@given(embedded())
def test_valid_identifiers_in_text_are_always_masked(case: tuple[str, str, str, str, str]) -> None:
    before, value, after, kind, mask = case
    text = before + value + after
    assert [(f.kind, f.text) for f in MASK.findings(text)] == [(kind, value)]
    assert MASK.redact(text) == before + mask + after
    assert DROP.redact(text) == before + after
    sealed = VAULT.redact(text)
    assert value not in sealed and VAULT.restore(sealed) == text


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.lists(embedded(), min_size=2, max_size=4))
def test_several_identifiers_in_one_text(cases: list[tuple[str, str, str, str, str]]) -> None:
    text = "".join(b + v + a for b, v, a, _, _ in cases)
    assert MASK.redact(text) == "".join(b + m + a for b, _, a, _, m in cases)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.text(st.characters(blacklist_characters="@", blacklist_categories=("Cs",))))
def test_text_without_digits_or_at_is_unchanged(text: str) -> None:
    assume(not any(c.isdigit() for c in text))
    assert MASK.redact(text) == text
    assert DROP.redact(text) == text
    assert VAULT.redact(text) == text


LOOK_ALIKE = st.sampled_from(
    ["2023-11-30", "订单号 2023113012345678", "v1.2.3.4", "¥1,299.00", "12:30:45", "10.0.0.1"]
)
MIXED = st.lists(
    st.one_of(
        FILLER,
        st.text(st.sampled_from(DIGITS + " -+.:@*[]abcXx订单"), max_size=24),
        LOOK_ALIKE,
        embedded().map(lambda c: c[0] + c[1] + c[2]),
        st.just("a.b@example.com"),
        st.just("fe80::1"),
    ),
    max_size=8,
).map("".join)


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(MIXED)
def test_redacting_twice_changes_nothing_more(text: str) -> None:
    for r in (MASK, DROP, VAULT):
        once = r.redact(text)
        assert r.redact(once) == once
