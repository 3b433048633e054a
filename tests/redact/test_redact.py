"""`Redactor`: detectors, modes, custom rules, the vault, and its errors."""

from __future__ import annotations

import base64
import doctest
import random
import sys
from pathlib import Path

import pytest

from branchmem import InvalidInput, Redactor, Store
from branchmem.redact import DETECTORS, Rule
from helpers.redact_gen import card_number, id_number

KEY = Redactor.generate_key()


@pytest.mark.parametrize(
    ("text", "kind", "found"),
    [
        ("手机13812345678。", "phone", "13812345678"),
        ("call 138 1234 5678 now", "phone", "138 1234 5678"),
        ("电话：138-1234-5678", "phone", "138-1234-5678"),
        ("tel +86 199 0000 1111.", "phone", "+86 199 0000 1111"),
        ("(+86)13912345678", "phone", "(+86)13912345678"),
        ("身份证11010519491231002X", "id_card", "11010519491231002X"),
        ("ID 110105194912310021 ok", "id_card", None),  # checksum fails
        ("卡号 6222 0212 3456 7890 127", "bank_card", None),  # Luhn fails
        ("card 4111-1111-1111-1111", "bank_card", "4111-1111-1111-1111"),
        ("Amex 378282246310005.", "bank_card", "378282246310005"),
        ("邮箱zhang.wei@example.com谢谢", "email", "zhang.wei@example.com"),
        ("server 192.168.1.10:8080", "ipv4", "192.168.1.10"),
        ("link-local fe80::1ff:fe23:4567:890a%eth0", "ipv6", "fe80::1ff:fe23:4567:890a"),
        ("loopback ::1.", "ipv6", "::1"),
    ],
)
def test_detectors_find_identifiers(text: str, kind: str, found: str | None) -> None:
    got = [(f.kind, f.text) for f in Redactor().findings(text)]
    assert got == ([(kind, found)] if found else [])


@pytest.mark.parametrize(
    "text",
    [
        "订单号：13812345678",  # introduced as an order number
        "Order #4111111111111111",
        "版本 1.2.3.4",
        "v10.0.0.1",
        "10.0.19041.1",  # five parts: a build number
        "2023-11-30 12:30:45",
        "¥1,299.00",
        "1381234567",  # ten digits
        "138123456789",  # twelve digits
        "12812345678",  # no mobile prefix 12x
        "A13812345678",  # part of a code
        "std::vector and cafe::beef",
        "ts=1701234567890",
        "4111111111111111111111",  # too long for a card
        "4111 1111 1111 1111 2024",  # groups of a longer number
        "7 138 1234 5678",
    ],
)
def test_look_alikes_are_left_alone(text: str) -> None:
    assert Redactor().findings(text) == []
    assert Redactor().redact(text) == text


def test_mask_labels_in_chinese_and_english() -> None:
    text = "张三 11010519491231002X 13812345678 a@b.com 10.0.0.8 4111111111111111"
    assert Redactor().redact(text) == "张三 [身份证号] 138****5678 [邮箱] [IP地址] [银行卡号]"
    assert Redactor(lang="en").redact(text) == (
        "张三 [ID number] 138****5678 [email] [IP address] [bank card]"
    )
    assert Redactor().redact("+86 138-1234-5678") == "138****5678"
    assert Redactor().redact("13812345678 18612345678") == "138****5678 186****5678"


def test_drop_mode_removes_and_repeats_until_nothing_is_left() -> None:
    assert Redactor("drop").redact("电话 13812345678，谢谢") == "电话 ，谢谢"
    # Dropping the tag joins the two halves into a phone number, which goes too.
    assert Redactor("drop", rules={"tag": "XX"}).redact("1381234XX5678") == ""
    assert Redactor("mask", rules={"tag": "XX"}).redact("1381234XX5678") == "1381234[tag]5678"


def test_overlaps_take_the_earliest_then_longest() -> None:
    found = Redactor().findings("13812345678@qq.com")
    assert [(f.kind, f.text) for f in found] == [("email", "13812345678@qq.com")]
    assert found[0].to_dict() == {"kind": "email", "start": 0, "end": 18, "text": found[0].text}


def test_detectors_can_be_chosen() -> None:
    r = Redactor(detectors=["email"])
    assert r.detectors == ("email",)
    assert r.redact("a@b.com 13812345678") == "[邮箱] 13812345678"
    assert Redactor().detectors == DETECTORS


def test_custom_rules() -> None:
    r = Redactor(rules=[Rule("staff_id", r"EMP-[0-9]{6}", "工号")], detectors=[])
    assert r.redact("工号 EMP-004211, 13812345678") == "工号 [工号], 13812345678"
    assert Redactor(rules={"plate": r"[京沪]A[0-9A-Z]{5}"}).redact("车牌京A12345") == "车牌[plate]"
    rule = Rule("x", "Y+", "z")
    assert Rule.from_dict(rule.to_dict()) == rule


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "hash"}, "mode must be one of mask, drop, vault"),
        ({"lang": "fr"}, "lang must be one of zh, en"),
        ({"detectors": ["passport"]}, "unknown detector"),
        ({"detectors": "phone"}, "list of names"),
        ({"rules": "EMP"}, "rules must be"),
        ({"rules": [("a", "b")]}, "branchmem.redact.Rule"),
        ({"rules": {"bad": "("}}, "not a valid regular expression"),
        ({"rules": {"empty": "x*"}}, "matches the empty string"),
        ({"rules": {"9lives": "x"}}, "rule name"),
        ({"rules": {"phone": "x"}}, "already used"),
        ({"rules": {"bad": ""}}, "non-empty regular expression"),
        ({"rules": [Rule("t", r"\[t\]")]}, "matches its own mask"),
        ({"rules": [Rule("t", "x", "")]}, "label must be"),
        ({"mode": "vault"}, "needs key="),
        ({"mode": "mask", "key": KEY}, "applies to mode='vault' only"),
        ({"mode": "vault", "key": "c2hvcnQ"}, "32, 48 or 64 bytes"),
        ({"mode": "vault", "key": "not base64!!"}, "base64url"),
        ({"mode": "vault", "key": 1234}, "str or bytes"),
    ],
)
def test_bad_arguments_say_what_to_do(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        Redactor(**kwargs)  # type: ignore[arg-type]


def test_bad_text_and_rule_dicts() -> None:
    with pytest.raises(InvalidInput, match="must be a str"):
        Redactor().redact(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="name and pattern"):
        Rule.from_dict({"name": "x"})
    with pytest.raises(InvalidInput, match=r"redactor must be a branchmem\.Redactor"):
        Store(redactor="mask")  # type: ignore[arg-type]


# ------------------------------------------------------------------- vault
def test_vault_round_trip_only_with_its_key() -> None:
    r = Redactor("vault", key=KEY)
    idn, card = id_number(random.Random(1)), card_number(random.Random(2))
    text = f"身份证 {idn}，卡 {card}，邮箱 li@example.com"
    sealed = r.redact(text)
    assert idn not in sealed and card not in sealed and "li@example.com" not in sealed
    assert sealed.count("[[vault:") == 3
    assert r.redact(sealed) == sealed  # tokens are never looked into
    assert r.redact(text) == sealed  # deterministic: a re-add stays identical
    assert r.restore(sealed) == text
    assert Redactor("vault", key=base64.urlsafe_b64decode(KEY)).restore(sealed) == text
    other = Redactor("vault", key=Redactor.generate_key())
    with pytest.raises(InvalidInput, match="another key"):
        other.restore(sealed)
    with pytest.raises(InvalidInput, match="needs a vault"):
        Redactor().restore(sealed)
    assert KEY not in repr(r) and KEY not in repr(r._vault)


def test_vault_tokens_cannot_be_altered_or_relabelled() -> None:
    r = Redactor("vault", key=KEY)
    sealed = r.redact("13812345678")
    assert sealed.startswith("[[vault:phone:")
    with pytest.raises(InvalidInput, match="another key, or altered"):
        r.restore(sealed.replace("vault:phone:", "vault:email:"))
    body = sealed[len("[[vault:phone:") : -2]
    flipped = body[:-3] + ("A" if body[-3] != "A" else "B") + body[-2:]
    with pytest.raises(InvalidInput, match="another key, or altered"):
        r.restore(f"[[vault:phone:{flipped}]]")


def test_vault_accepts_raw_key_bytes() -> None:
    raw = bytes(range(32))
    r = Redactor("vault", key=raw)
    assert r.restore(r.redact("a@b.com")) == "a@b.com"


def test_vault_without_the_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cryptography.hazmat.primitives.ciphers.aead", None)
    with pytest.raises(InvalidInput, match=r"pip install 'branchmem\[redact\]'"):
        Redactor("vault", key=KEY)


def test_a_grouped_number_next_to_another_identifier_is_found() -> None:
    text = "138 1234 5678 11010519491231002X"
    assert Redactor().redact(text) == "138****5678 [身份证号]"


def test_a_replacement_that_frees_a_neighbour_is_redacted_in_one_call() -> None:
    # The email takes "1a.b@..." first; once it is masked, "fe80::" stands alone.
    assert Redactor().redact("fe80::1a.b@example.com") == "[IP地址][邮箱]"


def test_the_guide_runs() -> None:
    guide = Path(__file__).resolve().parents[2] / "docs" / "redaction.md"
    result = doctest.testfile(str(guide), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 15 and result.failed == 0, result
