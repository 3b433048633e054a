"""Read a JSON array one element at a time, with the standard library only.

A 500 MB ``conversations.json`` is parsed element by element with
`json.JSONDecoder.raw_decode` over a sliding text buffer, so the file is never
held in memory as one string next to its parsed form.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterator
from typing import IO, Any

from ..errors import InvalidInput

CHUNK = 1 << 20
"""Bytes read per step."""

_WS = " \t\n\r"
_NUMBER = "-0123456789"
_AFTER_NUMBER = ",]" + _WS
_decode = json.JSONDecoder().raw_decode


class ArrayReader:
    """Iterate over the elements of the JSON array in a binary stream.

    ``done`` is the number of bytes read so far (for a progress bar).

    >>> import io
    >>> [x for x in ArrayReader(io.BytesIO(b' [ {"a": 1}, 2 ,"x"] '))]
    [{'a': 1}, 2, 'x']
    """

    def __init__(self, raw: IO[bytes], *, name: str = "<stream>", chunk: int = CHUNK) -> None:
        self._raw = raw
        self._name = name
        self._chunk = chunk
        self._dec: codecs.IncrementalDecoder | None = None  # chosen by the first bytes
        self._unit = "utf-8"  # how the text is encoded, for byte offsets in errors
        self._buf = ""
        self._pos = 0
        self._eof = False
        self.done = 0
        self._gone_bytes = 0  # bytes of the file before the buffer (a BOM included)
        self._gone_lines = 0  # line breaks before the buffer
        self._gone_col = 0  # characters after the last of them, before the buffer

    def _more(self, at_least: int = 0) -> bool:
        """Append at least one chunk (or ``at_least`` characters) to the buffer."""
        if self._eof:
            return False
        if self._pos > self._chunk:  # drop what is parsed, now and then, not per element
            self._forget(self._buf[: self._pos])
            self._buf = self._buf[self._pos :]
            self._pos = 0
        want = max(self._chunk, at_least)
        parts = []
        got = 0
        while got < want:
            data = self._raw.read(self._chunk)
            self.done += len(data)
            if self._dec is None:
                name, self._unit, bom = encoding_of(data)
                self._dec = codecs.getincrementaldecoder(name)()
                self._gone_bytes += bom
            if not data:
                parts.append(self._dec.decode(b"", final=True))
                self._eof = True
                break
            try:
                text = self._dec.decode(data)
            except UnicodeDecodeError as exc:
                raise InvalidInput(
                    f"{self._name} is not {self._unit.upper()} text ({exc}); pass the export "
                    "file as downloaded"
                ) from None
            parts.append(text)
            got += len(text)
        self._buf += "".join(parts)
        return True

    def _skip_ws(self) -> str:
        """The next non-blank character (``""`` at the end of the file)."""
        while True:
            buf, n = self._buf, len(self._buf)
            i = self._pos
            while i < n and buf[i] in _WS:
                i += 1
            self._pos = i
            if i < n:
                return buf[i]
            if not self._more():
                return ""

    def _forget(self, text: str) -> None:
        """Count ``text`` (leaving the buffer) into the offsets before it."""
        self._gone_bytes += len(text.encode(self._unit))
        breaks = text.count("\n")
        self._gone_lines += breaks
        self._gone_col = len(text) - text.rfind("\n") - 1 if breaks else self._gone_col + len(text)

    def where(self) -> tuple[int, int, int]:
        """The byte offset in the file, line and column (from 1) of the parse position."""
        head = self._buf[: self._pos]
        breaks = head.count("\n")
        col = len(head) - head.rfind("\n") - 1 if breaks else self._gone_col + len(head)
        return (
            self._gone_bytes + len(head.encode(self._unit)),
            self._gone_lines + breaks + 1,
            col + 1,
        )

    def _fail(self, what: str) -> InvalidInput:
        at, line, col = self.where()
        return InvalidInput(
            f"{self._name} is not valid JSON at byte {at} (line {line}, column {col}): "
            f"{what}; check that the file is complete (not cut off) and is the "
            "export as downloaded"
        )

    def _value(self) -> Any:
        # A number is the one value whose prefix parses too ("1" of "12", "0" of "0.5"):
        # have its end in the buffer before decoding it.
        if self._buf[self._pos] in _NUMBER:
            while not any(c in self._buf[self._pos :] for c in _AFTER_NUMBER) and self._more():
                pass
        while True:
            try:
                value, end = _decode(self._buf, self._pos)
            except json.JSONDecodeError as exc:
                # Incomplete at the end of the buffer, or really malformed: read more
                # (at least as much again, so a huge element is not re-parsed often).
                if not self._more(len(self._buf) - self._pos):
                    self._pos = exc.pos  # where the parser stopped
                    raise self._fail(exc.msg) from None
                continue
            except RecursionError:
                raise too_deep(self._name) from None
            self._pos = end
            return value

    def __iter__(self) -> Iterator[Any]:
        if self._skip_ws() != "[":
            raise self._fail("expected a JSON array ('[')")
        self._pos += 1
        if self._skip_ws() == "]":
            self._pos += 1
            return
        while True:
            if self._skip_ws() == "":
                raise self._fail("the array is not closed")
            yield self._value()
            c = self._skip_ws()
            self._pos += 1
            if c == "]":
                return
            if c != ",":
                raise self._fail(f"expected ',' or ']' between elements, found {c!r}")


def encoding_of(head: bytes) -> tuple[str, str, int]:
    """How a file that starts with ``head`` is encoded, by its byte-order mark:
    the decoder's name, the codec of its text without the mark, the mark's length.

    >>> encoding_of(b"\\xff\\xfe[\\x00")
    ('utf-16', 'utf-16-le', 2)
    """
    if head[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"):
        return "utf-32", "utf-32-le" if head[0] == 0xFF else "utf-32-be", 4
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "utf-16", "utf-16-le" if head[0] == 0xFF else "utf-16-be", 2
    return "utf-8-sig", "utf-8", 3 if head[:3] == b"\xef\xbb\xbf" else 0


def first_char(raw: IO[bytes]) -> str:
    """The first non-blank character of a seekable binary file (UTF-8, or UTF-16
    or UTF-32 with a byte-order mark); the file is rewound."""
    head = b""
    while True:
        data = raw.read(4096)
        head += data
        name, _, _ = encoding_of(head)
        text = head.decode(name, errors="ignore").lstrip(_WS)
        if text or not data:
            raw.seek(0)
            return text[:1]


def read_whole(raw: IO[bytes], name: str, progress: Callable[[int], None] | None = None) -> Any:
    """Parse a whole (small) JSON document, translating errors to `InvalidInput`."""
    data = raw.read()
    if progress is not None:
        progress(len(data))
    codec, unit, bom = encoding_of(data)
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"{name} is not {unit.upper()} text ({exc}); pass the export file as downloaded"
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        at = bom + len(text[: exc.pos].encode(unit))
        raise InvalidInput(
            f"{name} is not valid JSON at byte {at} (line {exc.lineno}, column {exc.colno}): "
            f"{exc.msg}; check that the file is complete (not cut off) and is the export "
            "as downloaded"
        ) from None
    except RecursionError:
        raise too_deep(name) from None


def too_deep(name: str) -> InvalidInput:
    """A document nested too deeply for the standard library's parser (thousands
    of levels, where a real export has a few dozen)."""
    return InvalidInput(
        f"{name} nests objects and lists too deeply to read (thousands of levels); "
        "no chat export does: pass the export file as downloaded"
    )
