"""`read_export`: find the format of an export and yield its conversations one by one."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import InvalidInput
from ..model import Event
from ..validate import MAX_CONTENT_BYTES, MAX_MESSAGE_BYTES, check_int
from . import chatgpt, claude, claudecode, codex, librechat, openwebui, sillytavern
from . import transcripts as agents
from .jsonstream import ArrayReader, first_char, read_whole
from .model import Conversation, Skipped
from .tree import Broken

FORMATS: dict[str, ModuleType] = {
    m.NAME: m for m in (chatgpt, claude, openwebui, librechat, sillytavern, claudecode, codex)
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


def read_export(
    path: PathLike | Sequence[PathLike],
    format: str = "auto",
    *,
    max_message_bytes: int = MAX_MESSAGE_BYTES,
) -> Export:
    """The conversations of an export, read one at a time.

    ``path`` is a file, a folder (SillyTavern chats), or a list of them.
    ``format`` is ``"auto"`` or one of `FORMATS`. An unknown format raises
    `UnknownFormat` at once; a broken conversation is skipped and listed in
    the result's ``skipped`` as iteration reaches it, and so is one with a
    message whose text is over ``max_message_bytes`` (UTF-8). In a folder, a
    file that is no export of a known format, and a link to a file outside the
    folder, are skipped (and listed) rather than read.

    >>> import json, pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "conversations.json"
    >>> _ = path.write_text(json.dumps([{"conversation_id": "c1", "current_node": "m1",
    ...     "mapping": {"m1": {"parent": None, "message": {"author": {"role": "user"},
    ...     "content": {"content_type": "text", "parts": ["你好"]}}}}}]))
    >>> [(c.id, c.current, len(c.events)) for c in read_export(path)]
    [('c1', 'm1', 1)]
    """
    return Export(path, format, max_message_bytes=max_message_bytes)


class Export:
    """An export being read (see `read_export`). Iterate it for `Conversation`s.

    ``format`` is the detected format (``None`` for an empty array);
    ``skipped`` holds the files left out of the folders named, and fills as
    iteration goes; ``progress``, if set, is called with
    (bytes read, total bytes) as the files are read; ``known``, if set, tells
    whether an event is stored already (a SillyTavern branch file whose main
    chat is not in this export then shares the stored main chat's events).
    """

    def __init__(
        self,
        path: PathLike | Sequence[PathLike],
        format: str = "auto",
        *,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
    ) -> None:
        if format != "auto" and format not in FORMATS:
            raise InvalidInput(
                f"unknown format {format!r}; use 'auto' or one of {', '.join(FORMATS)}"
            )
        self.max_message_bytes = check_int(
            max_message_bytes, "max_message_bytes", 1, MAX_CONTENT_BYTES
        )
        named, listed, self.skipped = _files(path)
        self.progress: Callable[[int, int], None] | None = None
        self.known: sillytavern.Known | None = None
        detected = {p: _detect(p, format) for p in named}
        for p in listed:  # found in a folder: one that is no chat is skipped, not fatal
            try:
                detected[p] = _detect(p, format)
            except InvalidInput as exc:
                self.skipped.append(Skipped(str(p), f"not read: {exc}"))
        if not detected:
            reasons = "; ".join(s.reason for s in self.skipped[:3])
            raise InvalidInput(f"no file to import was left: {reasons}")
        self.files = list(detected)
        self.total = sum(p.stat().st_size for p in self.files)
        self._done = 0
        found = set(detected.values())
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
        if self.format in agents.FORMATS:
            yield from self._transcripts(self.format)
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

    def _transcripts(self, fmt: str) -> Iterator[Conversation]:
        for path in self.files:
            try:
                convs, _ = agents.read_transcript(
                    path, fmt, max_message_bytes=self.max_message_bytes
                )
            except Broken as exc:
                self.skipped.append(Skipped(str(path), str(exc)))
                convs = []
            self._tick(path.stat().st_size)
            yield from convs

    def _convert(self, fmt: ModuleType, item: Any, i: int) -> Conversation | None:
        try:
            conv: Conversation = fmt.convert(item, i)
            check_sizes(conv.events, self.max_message_bytes)
            return conv
        except Broken as exc:
            self.skipped.append(Skipped(_id_of(item), str(exc)))
        except RecursionError:  # content nested too deeply to turn into text
            reason = "its messages nest objects and lists too deeply to read"
            self.skipped.append(Skipped(_id_of(item), reason))
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
                    check_sizes(conv.events, self.max_message_bytes)
                except Broken as exc:
                    self.skipped.append(Skipped(chat.name, str(exc)))
                    continue
                done[chat.name] = (chat, keys)
                yield conv


def check_sizes(events: Sequence[Event], most: int) -> None:
    """`Broken` names the first message whose text is over ``most`` UTF-8 bytes."""
    for e in events:
        n = len(e.content)
        if n * 4 > most and (n > most or len(e.content.encode("utf-8", "replace")) > most):
            size = len(e.content.encode("utf-8", "replace"))
            raise Broken(
                f"message {e.id!r} holds {size:,} bytes of text; the limit is {most:,} "
                "(max_message_bytes, --max-message-bytes; at most "
                f"{MAX_CONTENT_BYTES:,}, the content limit of every event): split the "
                "message to import this conversation"
            )


def _files(
    path: PathLike | Sequence[PathLike],
) -> tuple[list[Path], list[Path], list[Skipped]]:
    """The files named, the files found in the folders named, and what was left out
    of those folders (links that lead out of them)."""
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    if not paths:
        raise InvalidInput("no file to import; pass an export file or a folder of chats")
    named: list[Path] = []
    listed: list[Path] = []
    skipped: list[Skipped] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(x for x in p.iterdir() if x.suffix in (".json", ".jsonl"))
            # Transcripts nest: a subagent's under its session, rollouts by date.
            found += sorted(x for x in p.glob("*/**/*.jsonl") if not x.is_symlink())
            if not found:
                raise InvalidInput(f"{p} holds no .json or .jsonl file to import")
            inside = p.resolve()
            for x in found:
                real = x.resolve()
                if not real.is_relative_to(inside):
                    why = f"not read: a link to {real}, outside the folder {p}"
                    skipped.append(Skipped(str(x), why))
                elif real.is_file():
                    listed.append(x)
                else:  # a folder named like a chat, or a link to nothing
                    skipped.append(Skipped(str(x), "not read: not a file"))
        elif p.is_file():
            named.append(p)
        else:
            raise InvalidInput(f"{p} is not a file or folder; pass the export's path")
    return named, listed, skipped


def _detect(path: Path, format: str) -> str | None:
    """The format of one file (``format`` if given and plausible); `UnknownFormat` if none."""
    with open(path, "rb") as raw:
        if not first_char(raw):
            raise InvalidInput(
                f"{path} is empty (no bytes, or only blanks); pass the export file as downloaded"
            )
    if format in agents.FORMATS:
        return format
    if format == sillytavern.NAME or (format == "auto" and path.suffix == ".jsonl"):
        if _first_line_is_sillytavern(path):
            return sillytavern.NAME
        found = agents.detect(path) if format == "auto" else None
        if found is not None:
            return found
        raise UnknownFormat(
            str(path),
            "its first line is no SillyTavern header or message, Claude Code transcript "
            "entry or Codex rollout line",
        )
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
    except (json.JSONDecodeError, RecursionError):
        return False


def _id_of(item: Any) -> str | None:
    if isinstance(item, dict):
        for key in ("conversation_id", "id", "uuid", "conversationId"):
            value = item.get(key)
            if isinstance(value, str):
                return value
    return None
