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
        self._dec = codecs.getincrementaldecoder("utf-8-sig")()
        self._buf = ""
        self._pos = 0
        self._eof = False
        self.done = 0

    def _more(self, at_least: int = 0) -> bool:
        """Append at least one chunk (or ``at_least`` characters) to the buffer."""
        if self._eof:
            return False
        if self._pos > self._chunk:  # drop what is parsed, now and then, not per element
            self._buf = self._buf[self._pos :]
            self._pos = 0
        want = max(self._chunk, at_least)
        parts = []
        got = 0
        while got < want:
            data = self._raw.read(self._chunk)
            self.done += len(data)
            if not data:
                parts.append(self._dec.decode(b"", final=True))
                self._eof = True
                break
            try:
                text = self._dec.decode(data)
            except UnicodeDecodeError as exc:
                raise InvalidInput(
                    f"{self._name} is not UTF-8 text ({exc}); pass the export file as downloaded"
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

    def _fail(self, what: str) -> InvalidInput:
        return InvalidInput(
            f"{self._name} is not valid JSON near character {self._pos} of the buffered "
            f"text: {what}; check that the file is complete (not cut off) and is the "
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


def first_char(raw: IO[bytes]) -> str:
    """The first non-blank character of a seekable binary file; the file is rewound."""
    head = b""
    while True:
        data = raw.read(4096)
        head += data
        text = head.lstrip(b"\xef\xbb\xbf" + _WS.encode())
        if text or not data:
            raw.seek(0)
            return text[:1].decode("latin-1")


def read_whole(raw: IO[bytes], name: str, progress: Callable[[int], None] | None = None) -> Any:
    """Parse a whole (small) JSON document, translating errors to `InvalidInput`."""
    data = raw.read()
    if progress is not None:
        progress(len(data))
    try:
        return json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(
            f"{name} is not valid UTF-8 JSON ({exc}); pass the export file as downloaded"
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
