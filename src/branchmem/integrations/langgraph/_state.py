"""How `BranchmemSaver` keeps a serialised value (checkpoint, metadata, pending
write) in a record's meta: redacted before it is serialised, where the Store
has a redactor, then written as base64 whose digits are punctuation.

The Store redacts every string of a meta, these too. Standard base64 can hold
``/13812345678+``, which a mask would rewrite, breaking the value; text with
no digits, ``@`` or ``:`` is text in which no built-in detector finds
anything (and which it scans ten times faster). Values written before, in
standard base64 (a pair, without the third element), still load.
"""

from __future__ import annotations

import base64
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.types import Send

from ...redact import Redactor
from ...redact.scrub import Scrub

LETTERS = "b64-no-digits"
"""The third element of a value written in base64 without digits."""
_NO_DIGITS = bytes.maketrans(b"0123456789", b"!#$%&()*;?")
_DIGITS = bytes.maketrans(b"!#$%&()*;?", b"0123456789")


def dump(serde: SerializerProtocol, value: Any) -> list[str]:
    kind, data = serde.dumps_typed(value)
    return [kind, base64.b64encode(data).translate(_NO_DIGITS).decode("ascii"), LETTERS]


def load(serde: SerializerProtocol, stored: list[str]) -> Any:
    data = stored[1].encode("ascii")
    if len(stored) > 2:
        data = data.translate(_DIGITS)
    return serde.loads_typed((stored[0], base64.b64decode(data)))


def redacted(redactor: Redactor | None, value: Any) -> Any:
    """``value`` with every string in it redacted (dict keys, dataclass and model
    fields, a `Send`'s argument too); itself without a redactor."""
    return value if redactor is None else Scrub(redactor).value(value, _send)


def check_thread(redactor: Redactor | None, thread: str) -> None:
    """A thread id is in the ids of every checkpoint and item of the thread: one
    holding personal data is refused on a redacting store, like any id."""
    if redactor is not None:
        Scrub(redactor).identifier(thread, "thread id")


def _send(obj: Any, walk: Any) -> Any:
    if isinstance(obj, Send):
        arg = walk(obj.arg)
        return obj if arg is obj.arg else Send(obj.node, arg, timeout=obj.timeout)
    return obj
