"""An independent generator of identifiers and look-alikes for the redaction tests.

The check characters are computed here from their published definitions
(ISO 7064 MOD 11-2 for resident IDs, Luhn for cards) written differently from
`branchmem.redact.detectors`, so that a bug there makes the tests fail.

    python tests/helpers/redact_gen.py     # writes tests/data/redact_labelled.jsonl (seeded)
"""

from __future__ import annotations

import ipaddress
import json
import random
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).parents[1] / "data" / "redact_labelled.jsonl"

REGIONS = ["110101", "110105", "310104", "320102", "330106", "440305", "510107", "620102"]
REGIONS += ["420111", "500103", "610113", "350203", "370202", "210102", "450103", "530102"]
CARD_PREFIXES = ["622202", "622848", "621700", "622588", "623058", "4", "51", "55", "37", "9558"]
CARD_LENGTHS = {"4": (16, 19), "51": (16,), "55": (16,), "37": (15,)}  # UnionPay: 16-19
MOBILE_PREFIXES = ["130", "135", "138", "139", "150", "158", "166", "177", "186", "189", "199"]


# ----------------------------------------------------------- check characters
def id_check_char(first17: str) -> str:
    """ISO 7064 MOD 11-2: weights are 2**(position from the right) mod 11."""
    total = sum(int(c) * pow(2, 17 - i, 11) for i, c in enumerate(first17))
    r = (12 - total % 11) % 11
    return "X" if r == 10 else str(r)


def is_valid_id(s: str) -> bool:
    return len(s) == 18 and s[:17].isdigit() and id_check_char(s[:17]) == s[17].upper()


def luhn_sum(number: str) -> int:
    """Luhn: double every second digit from the right, add the digits of each product."""
    total = 0
    for pos, c in enumerate(number[::-1], 1):
        n = int(c) * (2 if pos % 2 == 0 else 1)
        total += n // 10 + n % 10
    return total


def luhn_check_digit(body: str) -> str:
    return next(d for d in "0123456789" if luhn_sum(body + d) % 10 == 0)


def is_luhn(number: str) -> bool:
    return luhn_sum(number) % 10 == 0


# ------------------------------------------------------------------ positives
def id_number(rng: random.Random, *, x_ok: bool = True) -> str:
    while True:
        y, m, d = rng.randint(1940, 2012), rng.randint(1, 12), rng.randint(1, 28)
        body = f"{rng.choice(REGIONS)}{y:04d}{m:02d}{d:02d}{rng.randint(0, 999):03d}"
        check = id_check_char(body)
        if x_ok or check != "X":
            return body + check


def card_number(rng: random.Random) -> str:
    """A Luhn-valid number of a real issuer's prefix and length (UnionPay 16-19,
    Visa 16 or 19, Mastercard 16, Amex 15). An 18-digit one whose digits 7-14
    read as a birth date is drawn again: it has a resident ID's shape."""
    while True:
        prefix = rng.choice(CARD_PREFIXES)
        length = rng.choice(CARD_LENGTHS.get(prefix, (16, 17, 18, 19)))
        body = prefix + "".join(rng.choice("0123456789") for _ in range(length - len(prefix) - 1))
        number = body + luhn_check_digit(body)
        if not id_like(number):
            return number


def id_like(s: str) -> bool:
    """Digits 7-14 read as a birth date (year 18xx-20xx, month 1-12, day 1-31)."""
    return (
        len(s) == 18
        and s[6:8] in ("18", "19", "20")
        and 1 <= int(s[10:12]) <= 12
        and 1 <= int(s[12:14]) <= 31
    )


def mobile_digits(rng: random.Random) -> str:
    return rng.choice(MOBILE_PREFIXES) + f"{rng.randint(0, 99_999_999):08d}"


def format_phone(d: str, style: int) -> str:
    """Mobile number ``d`` (11 digits) written in one of six styles."""
    return [
        d,
        f"{d[:3]} {d[3:7]} {d[7:]}",
        f"{d[:3]}-{d[3:7]}-{d[7:]}",
        f"+86 {d}",
        f"+86-{d[:3]}-{d[3:7]}-{d[7:]}",
        f"+86{d}",
    ][style]


def phone_text(rng: random.Random, number: str | None = None) -> str:
    return format_phone(number or mobile_digits(rng), rng.randrange(6))


def card_text(rng: random.Random, number: str) -> str:
    if rng.random() < 0.5 or len(number) == 15:
        return number
    sep = rng.choice(" -")
    return sep.join(number[i : i + 4] for i in range(0, len(number), 4))


def email(rng: random.Random) -> str:
    user = rng.choice(["zhang.wei", "li_na", "wangfang88", "chen-jie", "liu.yang2020", "amy"])
    domain = rng.choice(["qq.com", "163.com", "example.com", "mail.example.cn", "gmail.com"])
    return f"{user}{rng.randint(1, 999)}@{domain}"


def ipv4(rng: random.Random) -> str:
    return ".".join(str(rng.randint(1, 254)) for _ in range(4))


def ipv6(rng: random.Random) -> str:
    groups = [rng.choice([0, 0, rng.randint(1, 0xFFFF)]) for _ in range(8)]
    groups[0] = rng.choice([0x2001, 0xFE80, 0x240E])
    return str(ipaddress.IPv6Address(":".join(f"{g:x}" for g in groups)))


# ------------------------------------------------------------------ negatives
def bad_id(rng: random.Random) -> str:
    good = id_number(rng)
    wrong = [c for c in "0123456789X" if c != good[17]]
    return good[:17] + rng.choice(wrong)


def bad_date_id(rng: random.Random) -> str:
    """Checksum right, but no such birth date (Feb 30 or Apr 31)."""
    body = f"{rng.choice(REGIONS)}{rng.randint(1950, 2005)}{rng.choice(['0230', '0431', '0631'])}"
    body += f"{rng.randint(0, 999):03d}"
    return body + id_check_char(body)


def bad_card(rng: random.Random) -> str:
    good = card_number(rng)
    return good[:-1] + str((int(good[-1]) + rng.randint(1, 9)) % 10)


def negative(rng: random.Random, kind: str) -> str:
    r = rng.randint
    if kind == "order":
        n = "".join(rng.choice("0123456789") for _ in range(r(14, 19)))
        return rng.choice(
            [
                f"订单号：{n}",
                f"您的订单 {n} 已发货",
                f"Order #{n} has shipped",
                f"快递单号 SF{n[:12]}",
                f"order number: {n}",
                f"订单编号{2020 + r(0, 5)}{r(1, 12):02d}{r(1, 28):02d}{n[:10]}",
                f"交易流水号 {n}",
            ]
        )
    if kind == "date":
        y, m, d = r(1990, 2030), r(1, 12), r(1, 28)
        return rng.choice(
            [
                f"{y}-{m:02d}-{d:02d}",
                f"{y}/{m}/{d}",
                f"{y}年{m}月{d}日",
                f"{d:02d}.{m:02d}.{y}",
                f"会议定在 {y}{m:02d}{d:02d}",
                f"{y}-{m:02d}-{d:02d} {r(0, 23):02d}:{r(0, 59):02d}:{r(0, 59):02d}",
            ]
        )
    if kind == "price":
        return rng.choice(
            [
                f"¥{r(1, 9)},{r(0, 999):03d}.{r(0, 99):02d}",
                f"{r(1, 9999)}.{r(0, 99):02d}元",
                f"${r(1, 999)}.99",
                f"总价 {r(100, 99999)} 元",
                f"月薪 {r(5, 60)}k，年终 {r(1, 6)} 个月",
            ]
        )
    if kind == "version":
        return rng.choice(
            [
                f"v{r(0, 9)}.{r(0, 20)}.{r(0, 50)}",
                f"版本 {r(1, 9)}.{r(0, 9)}.{r(0, 9)}.{r(0, 99)}",
                f"Python {r(2, 3)}.{r(6, 13)}.{r(0, 9)}",
                f"version {r(1, 20)}.{r(0, 9)}.{r(0, 9)}.{r(0, 999)}",
                f"build {r(1, 9)}.{r(0, 9)}.{r(0, 9)}.{r(0, 9999)}",
                f"10.0.{r(10000, 22000)}.{r(1, 999)}.{r(1, 9)}",
            ]
        )
    if kind == "bad_id":
        return f"身份证 {bad_id(rng) if rng.random() < 0.7 else bad_date_id(rng)}"
    if kind == "bad_card":
        return f"卡号 {card_text(rng, bad_card(rng))}"
    if kind == "wrong_length_phone":
        d = mobile_digits(rng)
        return rng.choice([d[:10], d + str(r(0, 9)), "12" + d[2:], f"{d[:3]}-{d[3:7]}-{d[7:10]}"])
    # other numeric look-alikes
    return rng.choice(
        [
            f"时间戳 {r(1_600_000_000, 1_800_000_000)}",
            f"ts={r(1_600_000_000_000, 1_799_999_999_999)}",
            f"{r(0, 23):02d}:{r(0, 59):02d}:{r(0, 59):02d}",
            f"坐标 {r(20, 40)}.{r(0, 9999):04d}, {r(100, 125)}.{r(0, 9999):04d}",
            f"ISBN 978-7-{r(100, 999)}-{r(10000, 99999)}-{r(0, 9)}",
            f"房间 {r(100, 2999)}，人数 {r(1, 30)}",
            f"比分 {r(0, 5)}:{r(0, 5)}，完成 {r(0, 100)}%",
            f"邮编 {r(100000, 999999)}",
        ]
    )


NEGATIVE_KINDS = ["order", "date", "price", "version", "bad_id", "bad_card"]
NEGATIVE_KINDS += ["wrong_length_phone", "other"]

TEMPLATES = [
    "我的{label}是{value}，请记下来。",
    "My {label_en} is {value}, thanks.",
    "{value}",
    "请联系：{value}（工作日）",
    "客户资料 — {label}: {value}; 订单号 2023{n}",
    "用户说 {value} 是他的{label}",
]
LABELS = {
    "id_card": ("身份证号", "ID number"),
    "bank_card": ("银行卡号", "card number"),
    "phone": ("手机号", "phone"),
    "email": ("邮箱", "email"),
    "ipv4": ("IP", "IP"),
    "ipv6": ("IPv6 地址", "IPv6 address"),
}


def positive(rng: random.Random, kind: str) -> tuple[str, str]:
    """(text, the identifier as written in it)."""
    if kind == "id_card":
        value = id_number(rng)
    elif kind == "bank_card":
        value = card_text(rng, card_number(rng))
    elif kind == "phone":
        value = phone_text(rng)
    elif kind == "email":
        value = email(rng)
    elif kind == "ipv4":
        value = ipv4(rng)
    else:
        value = ipv6(rng)
    zh, en = LABELS[kind]
    n = f"{rng.randint(0, 10**12):012d}"
    text = rng.choice(TEMPLATES).format(label=zh, label_en=en, value=value, n=n)
    return text, value


def build(seed: int = 9, per_kind: int = 25, negatives_per_kind: int = 22) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for kind in LABELS:
        for _ in range(per_kind):
            text, value = positive(rng, kind)
            rows.append({"text": text, "expect": [{"kind": kind, "text": value}], "tag": kind})
    for _ in range(per_kind):  # several identifiers and look-alikes in one text
        idn, card, phone = id_number(rng), card_text(rng, card_number(rng)), phone_text(rng)
        decoy = negative(rng, rng.choice(NEGATIVE_KINDS))
        text = f"姓名张三，身份证{idn}，手机 {phone}，工资卡 {card}。备注：{decoy}"
        expect = [
            {"kind": "id_card", "text": idn},
            {"kind": "phone", "text": phone},
            {"kind": "bank_card", "text": card},
        ]
        rows.append({"text": text, "expect": expect, "tag": "mixed"})
    for kind in NEGATIVE_KINDS:
        for _ in range(negatives_per_kind):
            rows.append({"text": negative(rng, kind), "expect": [], "tag": f"negative:{kind}"})
    return rows


def main() -> None:
    rows = build()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    n_neg = sum(1 for r in rows if not r["expect"])
    print(f"wrote {len(rows)} strings ({n_neg} negatives) to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
