"""Read the lines of an append-only JSON Lines file (a coding agent's transcript)
from a byte offset, so that a file that grew is read from where the last read
stopped.

A line that is not JSON is `Broken` (the whole read is refused, nothing is
returned). The last line without a line break is a line still being written:
with ``partial="wait"`` it is left for the next read (the offset stops before
it); with ``partial="strict"`` it is read if it parses and `Broken` otherwise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .tree import Broken


@dataclass(frozen=True)
class Lines:
    """What one read found: ``entries`` as (line number from 1, object), and
    where the next read starts (``end`` bytes, ``line`` lines read)."""

    entries: list[tuple[int, dict[str, Any]]]
    end: int
    line: int


def read_lines(path: Path, start: int = 0, line: int = 0, *, partial: str = "strict") -> Lines:
    """The JSON objects of ``path`` from byte ``start`` (line ``line`` + 1 on).

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.jsonl"
    >>> _ = p.write_text('{"a": 1}\\n{"a": 2}\\n{"a"')
    >>> got = read_lines(p, partial="wait")
    >>> [obj["a"] for _, obj in got.entries], got.end, got.line
    ([1, 2], 18, 2)
    """
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read()
    entries: list[tuple[int, dict[str, Any]]] = []
    pos = 0
    n = line
    while pos < len(data):
        cut = data.find(b"\n", pos)
        last = cut < 0
        if last and partial == "wait":
            break
        raw = data[pos:] if last else data[pos:cut]
        n += 1
        pos = len(data) if last else cut + 1
        if not raw.strip():
            continue
        entries.append((n, _parse(raw, n, last)))
    return Lines(entries, start + pos, n)


def _parse(raw: bytes, n: int, last: bool) -> dict[str, Any]:
    try:
        obj = json.loads(raw.decode("utf-8-sig" if n == 1 else "utf-8"))
    except UnicodeDecodeError:
        raise Broken(f"line {n} is not UTF-8 text; nothing of this file was imported") from None
    except json.JSONDecodeError as exc:
        if last:
            raise Broken(
                f"line {n}, the last, is cut off ({exc.msg}): the file was still being "
                "written or was truncated; nothing of this file was imported. Import it "
                "again when it is complete"
            ) from None
        raise Broken(
            f"line {n} is not JSON ({exc.msg}); nothing of this file was imported. "
            "Remove or repair that line and import again"
        ) from None
    except RecursionError:
        raise Broken(f"line {n} nests objects and lists too deeply to read") from None
    if not isinstance(obj, dict):
        raise Broken(f"line {n} is a JSON {type(obj).__name__}, not an object")
    return obj


def first_object(path: Path) -> Any:
    """The first non-empty line of ``path`` as JSON (None if it is not JSON)."""
    with open(path, encoding="utf-8-sig", errors="replace") as f:
        for line in f:
            if line.strip():
                try:
                    return json.loads(line)
                except (json.JSONDecodeError, RecursionError):
                    return None
    return None
