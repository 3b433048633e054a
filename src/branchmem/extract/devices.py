"""A change of device: which clauses state one, and what kind of device a text names.

"换了小米14" or "switched to a Pixel 8" replaces the user's phone, not their
laptop: `RuleExtractor` supersedes the visible device of the same kind.
"""

from __future__ import annotations

import re

DEVICE_CHANGE = re.compile(
    r"换|新买|入手|\b(?:switched|upgraded|changed|moved|replaced|new)\b", re.IGNORECASE
)
"""A device clause that states a change: the new device replaces the old one of its kind."""

DEVICE_KINDS = (
    (
        "laptop",
        re.compile(
            r"MacBook|MateBook|ThinkPad|XPS|Chromebook|联想|戴尔|Dell|Lenovo|电脑|笔记本|laptop|computer|\bMac\b",
            re.IGNORECASE,
        ),
    ),
    ("tablet", re.compile(r"iPad|平板|tablet|Kindle", re.IGNORECASE)),
    (
        "phone",
        re.compile(
            r"iPhone|Pixel|Galaxy|小米|红米|Redmi|华为|荣耀|三星|OPPO|vivo|一加|手机|phone|Android",
            re.IGNORECASE,
        ),
    ),
)
"""What kind of device a text names (the first that matches), for `DEVICE_CHANGE`."""


def device_kind(text: str) -> str | None:
    """``"laptop"``, ``"tablet"``, ``"phone"`` or None.

    >>> device_kind("用户使用小米14"), device_kind("User uses a MacBook Air")
    ('phone', 'laptop')
    """
    return next((k for k, pat in DEVICE_KINDS if pat.search(text)), None)
