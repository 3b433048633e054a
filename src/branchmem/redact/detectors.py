"""The built-in detectors: where personal identifiers are in a text.

Each detector finds candidate spans with a regular expression and keeps
only those that pass its check (the resident ID checksum and birth date,
the Luhn digit and an issuer prefix of bank cards, a parse of IP addresses).
A number is never taken out of a longer one: a match may not touch a
letter or digit, and a number written in groups (``138 1234 5678``) may not
continue with another short group across a space or dash. A number introduced
as an order, invoice or tracking number is left alone, and so is a dotted
quad introduced as a version.
"""

from __future__ import annotations

import datetime
import ipaddress
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

Span = tuple[int, int]

_NOT_DIGIT = re.compile(r"[^0-9Xx]")
HAS_DIGIT = re.compile(r"[0-9]")
_LEFT = r"(?<![0-9A-Za-z])"
_RIGHT = r"(?![0-9A-Za-z])"
# A short group of digits across one space or dash: the rest of a grouped number.
_GROUP_BEFORE = re.compile(r"(?<![0-9])[0-9]{1,4}[ -]$")
_GROUP_AFTER = re.compile(r"[ -][0-9]{1,4}(?![0-9])")

_PHONE = re.compile(
    _LEFT + r"(?:(?:\(\+86\)|\+86|0086|86)[ -]?)?1[3-9][0-9]([ -]?)[0-9]{4}\1[0-9]{4}" + _RIGHT
)
_ID_CARD = re.compile(
    _LEFT + r"[1-9][0-9]{5}([ -]?)(?:18|19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])"
    r"\1[0-9]{3}[0-9Xx]" + _RIGHT
)
_BANK_CARD = re.compile(
    _LEFT + r"(?:[0-9]{13,19}|[0-9]{4}(?:([ -])[0-9]{4}){2,3}(?:[ -][0-9]{1,4})?"
    r"|[0-9]{4}([ -])[0-9]{6}\2[0-9]{4,5})" + _RIGHT
)
_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9_](?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9_%+-])?"
    r"@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![A-Za-z0-9-])"
)
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_IPV4 = re.compile(
    r"(?<![0-9A-Za-z.])" + _OCTET + r"(?:\." + _OCTET + r"){3}(?![0-9A-Za-z]|\.[0-9])"
)
_IPV6 = re.compile(r"(?<![0-9A-Za-z:.])[0-9A-Fa-f:][0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*(?![0-9A-Za-z:])")

_ORDER_CONTEXT = re.compile(
    r"(?:订单|单号|流水|运单|快递|发票|工单|合同|order|invoice|tracking|transaction|ref|serial)"
    r"\s*(?:号码?|编号|no\.?|number|id)?\s*[:：#]?\s*$",
    re.IGNORECASE,
)
_VERSION_CONTEXT = re.compile(
    r"(?:版本号?|(?<![A-Za-z])(?:version|ver\.?|release|build|v))\s*[:：]?\s*$", re.IGNORECASE
)
_CONTEXT_WINDOW = 16

_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"
# Issuer prefixes and their card lengths: UnionPay (and 95xx domestic debit cards),
# Visa, Mastercard, Amex, JCB, Diners, Discover.
_ANY = tuple(range(16, 20))
_CARD_LENGTHS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("62", _ANY),
    ("81", _ANY),
    ("95", _ANY),
    ("4", (13, 16, 19)),
    *((p, (16,)) for p in ("51", "52", "53", "54", "55")),
    ("34", (15,)),
    ("37", (15,)),
    ("35", _ANY),
    *((p, tuple(range(14, 20))) for p in ("30", "36", "38")),
    ("60", _ANY),
    ("65", _ANY),
)
_PROVINCE_RANGES: tuple[tuple[int, int], ...] = (
    (11, 15),
    (21, 23),
    (31, 37),
    (41, 46),
    (50, 54),
    (61, 65),
    (71, 71),
)
_PROVINCE_RANGES += ((81, 83), (91, 91))
_PROVINCES = frozenset(str(n) for lo, hi in _PROVINCE_RANGES for n in range(lo, hi + 1))


def digits(s: str) -> str:
    """The digits (and a final X) of ``s``, separators dropped."""
    return _NOT_DIGIT.sub("", s).upper()


def _after_context(text: str, start: int, context: re.Pattern[str]) -> bool:
    return context.search(text, max(0, start - _CONTEXT_WINDOW), start) is not None


def id_shaped(number: str) -> bool:
    """18 characters with a province code, a year 18xx-20xx, a month and a day
    of month (01-31) where a resident ID has them; the calendar is not checked."""
    return (
        len(number) == 18
        and number[:17].isdigit()
        and number[:2] in _PROVINCES
        and number[6:8] in ("18", "19", "20")
        and 1 <= int(number[10:12]) <= 12
        and 1 <= int(number[12:14]) <= 31
    )


def id_card_valid(number: str) -> bool:
    """An ID's shape, a real birth date, and the GB 11643 check character."""
    if not id_shaped(number):
        return False
    try:
        datetime.date(int(number[6:10]), int(number[10:12]), int(number[12:14]))
    except ValueError:
        return False
    total = sum(int(d) * w for d, w in zip(number[:17], _ID_WEIGHTS, strict=True))
    return _ID_CHECK[total % 11] == number[17].upper()


def luhn_valid(number: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(number)):
        d = int(c)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def bank_card_valid(number: str) -> bool:
    """An issuer's prefix and length, the Luhn check, not one repeated digit.

    An 18-digit number shaped like a resident ID is judged as an ID only: if
    its ID check fails it is a mistyped ID, not a card, and is left alone.
    """
    if not number.isdigit() or not 13 <= len(number) <= 19 or len(set(number)) == 1:
        return False
    lengths = next((n for p, n in _CARD_LENGTHS if number.startswith(p)), None)
    if lengths is None and 2221 <= int(number[:4]) <= 2720:
        lengths = (16,)  # Mastercard's 2-series
    return (
        lengths is not None
        and len(number) in lengths
        and not (len(number) == 18 and id_shaped(number))
        and luhn_valid(number)
    )


def _numbers(
    pattern: re.Pattern[str], valid: Callable[[str], bool]
) -> Callable[[str], Iterator[Span]]:
    def find(text: str) -> Iterator[Span]:
        for m in pattern.finditer(text):
            s, e = m.span()
            value = m.group()
            if (" " in value or "-" in value) and (
                _GROUP_BEFORE.search(text, max(0, s - 6), s) or _GROUP_AFTER.match(text, e)
            ):
                continue  # groups of a longer grouped number
            if valid(digits(value)) and not _after_context(text, s, _ORDER_CONTEXT):
                yield s, e

    return find


def _phone_valid(number: str) -> bool:
    return len(number) in (11, 13, 15)  # the number, after 86 or 0086


def _find_email(text: str) -> Iterator[Span]:
    if "@" in text:
        for m in _EMAIL.finditer(text):
            yield m.span()


def _find_ipv4(text: str) -> Iterator[Span]:
    for m in _IPV4.finditer(text):
        if not _after_context(text, m.start(), _VERSION_CONTEXT):
            yield m.span()


def _find_ipv6(text: str) -> Iterator[Span]:
    if "::" not in text and text.count(":") < 7:
        return
    for m in _IPV6.finditer(text):
        s, e = m.span()
        while e > s and text[e - 1] == ".":
            e -= 1
        cand = text[s:e]
        if not any(c.isdigit() for c in cand):
            continue  # "cafe::beef" is a word more often than an address
        try:
            ipaddress.IPv6Address(cand)
        except ValueError:
            continue
        yield s, e


def mask_phone(value: str, label: str) -> str:
    d = digits(value)[-11:]
    return f"{d[:3]}****{d[-4:]}"


@dataclass(frozen=True)
class Detector:
    """One kind of identifier: how to find it and its labels."""

    name: str
    label_zh: str
    label_en: str
    find: Callable[[str], Iterator[Span]]
    mask: Callable[[str, str], str] | None = None
    """Builds the masked text from the value and label; ``None``: ``[label]``."""
    numeric: bool = True
    """True when every match holds a digit (texts without digits are skipped)."""


BUILTIN: tuple[Detector, ...] = (
    Detector("id_card", "身份证号", "ID number", _numbers(_ID_CARD, id_card_valid)),
    Detector("bank_card", "银行卡号", "bank card", _numbers(_BANK_CARD, bank_card_valid)),
    Detector("phone", "手机号", "phone", _numbers(_PHONE, _phone_valid), mask_phone),
    Detector("email", "邮箱", "email", _find_email, numeric=False),
    Detector("ipv6", "IP地址", "IP address", _find_ipv6),
    Detector("ipv4", "IP地址", "IP address", _find_ipv4),
)
"""In priority order: where two detectors find the same span, the first wins."""

DETECTORS: tuple[str, ...] = tuple(d.name for d in BUILTIN)
"""The names of the built-in detectors."""
