"""`Redactor`: finds personal identifiers in a text and masks, drops or seals them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidInput
from .detectors import BUILTIN, DETECTORS, HAS_DIGIT, Detector, Span
from .values import Extra, redact_value
from .vault import TOKEN, Vault, generate_key

MODES = ("mask", "drop", "vault")
LANGS = ("zh", "en")
_MASKED_PHONE = re.compile(r"(?<![0-9])1[3-9][0-9]\*{4}[0-9]{4}(?![0-9])")
_MAX_PASSES = 8
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,39}")


@dataclass(frozen=True)
class Rule:
    """A custom detector: every match of ``pattern`` is redacted as ``name``.

    ``label`` (default: ``name``) is what mask mode writes, in brackets.

    >>> Redactor(rules=[Rule("staff_id", r"EMP-[0-9]{6}", "工号")]).redact("工号 EMP-004211")
    '工号 [工号]'
    """

    name: str
    pattern: str
    label: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "pattern": self.pattern, "label": self.label}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rule:
        """The inverse of `to_dict`."""
        if not isinstance(data, Mapping) or "name" not in data or "pattern" not in data:
            raise InvalidInput(f"a rule is a dict with name and pattern (and label), got {data!r}")
        return cls(data["name"], data["pattern"], data.get("label"))


@dataclass(frozen=True)
class Finding:
    """One identifier found in a text: its detector, its span and the text there."""

    kind: str
    start: int
    end: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "start": self.start, "end": self.end, "text": self.text}


class Redactor:
    """Redacts personal data from text before a `Store` keeps it.

    Built-in detectors (all on by default; choose with ``detectors=``):
    ``id_card`` (Chinese resident ID, checksum and birth date verified),
    ``bank_card`` (13 to 19 digits, issuer prefix and Luhn verified),
    ``phone`` (Chinese mobile numbers, with spaces, dashes or +86),
    ``email``, ``ipv6`` and ``ipv4``. ``rules`` adds custom detectors: `Rule`
    objects or a mapping of name to regular expression.

    ``mode``: ``"mask"`` (default) replaces a phone number by ``138****5678``
    and anything else by its label (``[身份证号]``, or ``[ID number]`` with
    ``lang="en"``); ``"drop"`` removes it; ``"vault"`` replaces it with a token
    holding the original encrypted with ``key`` (extra ``branchmem[redact]``),
    which only `restore` with the same key turns back.

    >>> r = Redactor()
    >>> r.redact("手机 138-1234-5678，身份证 11010519491231002X，订单号 2023113012345678")
    '手机 138****5678，身份证 [身份证号]，订单号 2023113012345678'
    >>> Redactor(mode="drop", lang="en").redact("mail me at li.lei@example.com!")
    'mail me at !'
    """

    def __init__(
        self,
        mode: str = "mask",
        *,
        detectors: Iterable[str] | None = None,
        rules: Iterable[Rule] | Mapping[str, str] = (),
        key: str | bytes | None = None,
        lang: str = "zh",
    ) -> None:
        if mode not in MODES:
            raise InvalidInput(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
        if lang not in LANGS:
            raise InvalidInput(f"lang must be one of {', '.join(LANGS)}; got {lang!r}")
        self.mode = mode
        self.lang = lang
        self._detectors = _pick(detectors) + _compile(rules, lang)
        self._builtin_only = all(d.name in DETECTORS for d in self._detectors)
        if mode == "vault":
            if key is None:
                raise InvalidInput(
                    "mode='vault' needs key=: make one with Redactor.generate_key() and keep "
                    "it outside the store"
                )
            self._vault: Vault | None = Vault(key)
        elif key is not None:
            raise InvalidInput(f"key= applies to mode='vault' only, not mode={mode!r}")
        else:
            self._vault = None

    generate_key = staticmethod(generate_key)

    @property
    def detectors(self) -> tuple[str, ...]:
        """The names of the active detectors, built-in then custom, in priority order."""
        return tuple(d.name for d in self._detectors)

    def __repr__(self) -> str:
        return f"Redactor(mode={self.mode!r}, detectors={self.detectors!r}, lang={self.lang!r})"

    def findings(self, text: str) -> list[Finding]:
        """The identifiers in ``text``, left to right, none overlapping.

        Where two overlap, the one starting first wins, then the longer, then
        the detector listed first. Vault tokens and masked phone numbers
        (``138****5678``) are never looked into.

        >>> [f.kind for f in Redactor().findings("张三 zhang3@example.com 10.0.0.8")]
        ['email', 'ipv4']
        """
        return [Finding(d.name, s, e, text[s:e]) for s, e, d in self._spans(_check_text(text))]

    def redact(self, text: str) -> str:
        """``text`` with every finding masked, dropped or sealed (by ``mode``).

        Redacting a redacted text changes nothing more (for the built-in
        detectors; custom rules whose labels match each other may need more
        than the `_MAX_PASSES` passes this makes).
        """
        text = _check_text(text)
        # A replacement changes what its neighbours touch (a removal can even join two
        # pieces into a new identifier), so redact until nothing more is found.
        for _ in range(_MAX_PASSES):
            out = self._apply(text)
            if out == text:
                break
            text = out
        return text

    def redact_value(self, value: Any) -> Any:
        """``value`` (a dict, list, string, number or a structure of them, such
        as ``meta`` or a graph's state) with every string in it redacted, dict
        keys included (see `branchmem.redact.values` for numbers and for two
        keys that redact alike). What holds nothing to redact comes back as is.

        >>> Redactor().redact_value({"li.lei@example.com": ["call 13812345678", 13812345678]})
        {'[邮箱]': ['call 138****5678', '138****5678']}
        """
        return self._redact_value(value)

    def _redact_value(self, value: Any, extra: Extra | None = None) -> Any:
        """`redact_value`, with ``extra`` walking objects of more types."""
        # The built-in detectors find nothing in a number of fewer than 11 digits.
        floor = 10**10 if self._builtin_only else 0
        return redact_value(value, self.redact, int_floor=floor, extra=extra)

    def restore(self, text: str) -> str:
        """``text`` with every vault token opened (needs the key that sealed them).

        >>> r = Redactor(mode="vault", key=Redactor.generate_key())
        >>> sealed = r.redact("电话 13812345678")
        >>> "13812345678" in sealed, r.restore(sealed)
        (False, '电话 13812345678')
        """
        text = _check_text(text)
        if self._vault is None:
            raise InvalidInput(
                "restore() needs a vault: Redactor(mode='vault', key=<the key that sealed it>)"
            )
        vault = self._vault
        return TOKEN.sub(lambda m: vault.open(m.group(1), m.group(2)), text)

    # ----------------------------------------------------------------- inner
    def _spans(self, text: str) -> list[tuple[int, int, Detector]]:
        has_digit = HAS_DIGIT.search(text) is not None
        found: list[tuple[int, int, int, Detector]] = []
        for prio, d in enumerate(self._detectors):
            if has_digit or not d.numeric:
                found += [(s, s - e, prio, d) for s, e in d.find(text) if e > s]
        if not found:
            return []
        found.sort(key=lambda f: f[:3])
        taken = [m.span() for m in TOKEN.finditer(text)] if "[[vault:" in text else []
        if "****" in text:  # a masked phone's digits start nothing new
            taken += [m.span() for m in _MASKED_PHONE.finditer(text)]
        out: list[tuple[int, int, Detector]] = []
        end = 0
        for s, neg, _, d in found:
            e = s - neg
            if s >= end and not any(s < te and ts < e for ts, te in taken):
                out.append((s, e, d))
                end = e
        return out

    def _apply(self, text: str) -> str:
        spans = self._spans(text)
        if not spans:
            return text
        parts = []
        pos = 0
        for s, e, d in spans:
            parts += [text[pos:s], self._replacement(d, text[s:e])]
            pos = e
        parts.append(text[pos:])
        return "".join(parts)

    def _replacement(self, d: Detector, value: str) -> str:
        if self.mode == "drop":
            return ""
        if self._vault is not None:
            return self._vault.seal(d.name, value)
        label = d.label_zh if self.lang == "zh" else d.label_en
        return d.mask(value, label) if d.mask is not None else f"[{label}]"


def _check_text(text: Any) -> str:
    if not isinstance(text, str):
        raise InvalidInput(f"text to redact must be a str, got {type(text).__name__}")
    return text


def _pick(names: Iterable[str] | None) -> tuple[Detector, ...]:
    if names is None:
        return BUILTIN
    if isinstance(names, str):
        raise InvalidInput(f"detectors must be a list of names, e.g. ['phone']; got {names!r}")
    wanted = list(names)
    unknown = [n for n in wanted if n not in DETECTORS]
    if unknown:
        raise InvalidInput(
            f"unknown detector(s) {unknown!r}; the built-in ones are {', '.join(DETECTORS)} "
            "(add others with rules=)"
        )
    return tuple(d for d in BUILTIN if d.name in wanted)


def _compile(rules: Iterable[Rule] | Mapping[str, str], lang: str) -> tuple[Detector, ...]:
    if isinstance(rules, str):
        raise InvalidInput("rules must be a list of Rule or a dict of name -> regular expression")
    items = [Rule(k, v) for k, v in rules.items()] if isinstance(rules, Mapping) else list(rules)
    out: list[Detector] = []
    for rule in items:
        if not isinstance(rule, Rule):
            raise InvalidInput(f"each rule must be a branchmem.redact.Rule, got {rule!r}")
        out.append(_rule_detector(rule, {*DETECTORS, *(d.name for d in out)}))
    return tuple(out)


def _rule_detector(rule: Rule, taken: set[str]) -> Detector:
    name, pattern = rule.name, rule.pattern
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InvalidInput(
            f"rule name must be a letter then up to 39 letters, digits, _ or -; got {name!r}"
        )
    if name in taken:
        raise InvalidInput(f"rule name {name!r} is already used by a detector; pick another")
    if not isinstance(pattern, str) or not pattern:
        raise InvalidInput(f"rule {name!r}: pattern must be a non-empty regular expression")
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise InvalidInput(
            f"rule {name!r}: {pattern!r} is not a valid regular expression: {exc}"
        ) from exc
    if compiled.fullmatch(""):
        raise InvalidInput(f"rule {name!r}: the pattern matches the empty string; make it stricter")
    label = name if rule.label is None else rule.label
    if not isinstance(label, str) or not label.isprintable() or not label.strip():
        raise InvalidInput(f"rule {name!r}: label must be a non-empty printable string")
    if compiled.search(f"[{label}]"):
        raise InvalidInput(
            f"rule {name!r}: the pattern matches its own mask [{label}], so redacting twice "
            "would change the text again; pick another label or a stricter pattern"
        )

    def find(text: str) -> Iterator[Span]:
        for m in compiled.finditer(text):
            yield m.span()

    return Detector(name, label, label, find, numeric=False)
