"""`read_export`: find the format of an export and yield its conversations one by one."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import InvalidInput
from . import chatgpt, claude, librechat, openwebui, sillytavern
from .jsonstream import ArrayReader, first_char, read_whole
from .model import Conversation, Skipped
from .tree import Broken

FORMATS: dict[str, ModuleType] = {
    m.NAME: m for m in (chatgpt, claude, openwebui, librechat, sillytavern)
}
"""Format name -> module; the order is the order detection tries them in."""

JSON_FORMATS = ("chatgpt", "claude", "openwebui", "librechat")

PathLike = str | os.PathLike[str]


class UnknownFormat(InvalidInput):
    """A file is no chat export branchmem knows, or ``format=`` names none."""

    def __init__(self, path: str, what: str) -> None:
        self.path = path
        super().__init__(
            f"{path}: {what}; formats tried: {', '.join(FORMATS)}. Pass the export file "
            "as downloaded, or name its format (format=... or --format)"
        )


def read_export(path: PathLike | Sequence[PathLike], format: str = "auto") -> Export:
    """The conversations of an export, read one at a time.

    ``path`` is a file, a folder (SillyTavern chats), or a list of them.
    ``format`` is ``"auto"`` or one of `FORMATS`. An unknown format raises
    `UnknownFormat` at once; a broken conversation is skipped and listed in
    the result's ``skipped`` as iteration reaches it.

    >>> import json, pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "conversations.json"
    >>> _ = path.write_text(json.dumps([{"conversation_id": "c1", "current_node": "m1",
    ...     "mapping": {"m1": {"parent": None, "message": {"author": {"role": "user"},
    ...     "content": {"content_type": "text", "parts": ["你好"]}}}}}]))
    >>> [(c.id, c.current, len(c.events)) for c in read_export(path)]
    [('c1', 'm1', 1)]
    """
    return Export(path, format)


class Export:
    """An export being read (see `read_export`). Iterate it for `Conversation`s.

    ``format`` is the detected format (``None`` for an empty array);
    ``skipped`` fills as iteration goes; ``progress``, if set, is called with
    (bytes read, total bytes) as the files are read; ``known``, if set, tells
    whether an event is stored already (a SillyTavern branch file whose main
    chat is not in this export then shares the stored main chat's events).
    """

    def __init__(self, path: PathLike | Sequence[PathLike], format: str = "auto") -> None:
        if format != "auto" and format not in FORMATS:
            raise InvalidInput(
                f"unknown format {format!r}; use 'auto' or one of {', '.join(FORMATS)}"
            )
        self.files = _files(path)
        self.skipped: list[Skipped] = []
        self.progress: Callable[[int, int], None] | None = None
        self.known: sillytavern.Known | None = None
        self.total = sum(p.stat().st_size for p in self.files)
        self._done = 0
        found = {_detect(p, format) for p in self.files}
        found.discard(None)
        if len(found) > 1:
            raise InvalidInput(
                f"the files are of different formats ({', '.join(sorted(map(str, found)))}); "
                "import each format separately"
            )
        self.format: str | None = found.pop() if found else None

    def _tick(self, n: int) -> None:
        self._done += n
        if self.progress is not None:
            self.progress(self._done, self.total)

    def __iter__(self) -> Iterator[Conversation]:
        if self.format == sillytavern.NAME:
            yield from self._sillytavern()
            return
        if self.format is None:
            return
        fmt = FORMATS[self.format]
        for path in self.files:
            with open(path, "rb") as raw:
                if first_char(raw) == "[":
                    reader = ArrayReader(raw, name=str(path))
                    before = 0
                    for i, item in enumerate(reader):
                        self._tick(reader.done - before)
                        before = reader.done
                        conv = self._convert(fmt, item, i)
                        if conv is not None:
                            yield conv
                    self._tick(reader.done - before)
                else:
                    item = read_whole(raw, str(path), self._tick)
                    conv = self._convert(fmt, item, 0)
                    if conv is not None:
                        yield conv

    def _convert(self, fmt: ModuleType, item: Any, i: int) -> Conversation | None:
        try:
            conv: Conversation = fmt.convert(item, i)
            return conv
        except Broken as exc:
            self.skipped.append(Skipped(_id_of(item), str(exc)))
            return None

    def _sillytavern(self) -> Iterator[Conversation]:
        chats = []
        for path in self.files:
            try:
                chats.append(sillytavern.parse(path))
            except Broken as exc:
                self.skipped.append(Skipped(path.stem, str(exc)))
            self._tick(path.stat().st_size)
        names = {c.name for c in chats}
        done: dict[str, tuple[sillytavern.Chat, list[str]]] = {}
        waiting = chats
        while waiting:  # main chats before their branches (a branch may have branches)
            ready = [c for c in waiting if c.main not in names or c.main in done]
            if not ready:  # main_chat links that loop: take them as they come
                ready = waiting[:1]
            waiting = [c for c in waiting if c not in ready]
            for chat in ready:
                try:
                    conv, keys = sillytavern.convert(chat, done, self.known)
                except Broken as exc:
                    self.skipped.append(Skipped(chat.name, str(exc)))
                    continue
                done[chat.name] = (chat, keys)
                yield conv


def _files(path: PathLike | Sequence[PathLike]) -> list[Path]:
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    if not paths:
        raise InvalidInput("no file to import; pass an export file or a folder of chats")
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(x for x in p.iterdir() if x.suffix in (".json", ".jsonl"))
            if not found:
                raise InvalidInput(f"{p} holds no .json or .jsonl file to import")
            out += found
        elif p.is_file():
            out.append(p)
        else:
            raise InvalidInput(f"{p} is not a file or folder; pass the export's path")
    return out


def _detect(path: Path, format: str) -> str | None:
    """The format of one file (``format`` if given and plausible); `UnknownFormat` if none."""
    if format == sillytavern.NAME or (format == "auto" and path.suffix == ".jsonl"):
        if _first_line_is_sillytavern(path):
            return sillytavern.NAME
        raise UnknownFormat(str(path), "its first line is no SillyTavern header or message")
    with open(path, "rb") as raw:
        first = first_char(raw)
        if first == "[":
            items = iter(ArrayReader(raw, name=str(path)))
            try:
                sample = next(items)
            except StopIteration:
                return None if format == "auto" else format
            what = "its first element is no conversation of a known format"
        elif first == "{":
            try:
                sample = read_whole(raw, str(path))
            except InvalidInput:
                if format == "auto" and _first_line_is_sillytavern(path):
                    return sillytavern.NAME
                raise
            what = "its top-level object is no conversation of a known format"
        else:
            raise UnknownFormat(str(path), "it is not a JSON array or object")
    if format != "auto":
        return format
    for name in JSON_FORMATS:
        if FORMATS[name].looks_like(sample):
            return name
    raise UnknownFormat(str(path), what)


def _first_line_is_sillytavern(path: Path) -> bool:
    with open(path, encoding="utf-8-sig", errors="replace") as f:
        line = f.readline()
    try:
        return sillytavern.looks_like(json.loads(line))
    except json.JSONDecodeError:
        return False


def _id_of(item: Any) -> str | None:
    if isinstance(item, dict):
        for key in ("conversation_id", "id", "uuid", "conversationId"):
            value = item.get(key)
            if isinstance(value, str):
                return value
    return None
