"""`LLMExtractor`: proposals from any OpenAI-compatible ``/chat/completions`` endpoint.

Standard library only (urllib). The prompt lists the window's events with
their ids and the visible memories with their ids; the reply's content must
be JSON::

    {"memories": [{"op": "add" | "update" | "delete", "content": str,
                   "key": str | null, "target": str | null, "sources": [event ids]}],
     "edges": [{"subject": str, "predicate": str, "object": str, "sources": [...]}]}

(``edges`` is asked for by ``LLMExtractor(edges=True)`` and optional in a reply.)

The reply is checked strictly (shape and types); ids are checked by the
writer against the gate. A malformed reply is asked for once more, then
`ExtractionError` carries its first 200 characters. Timeouts and HTTP errors
are `ExtractionError` too, and nothing is written.
"""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.request
from typing import Any

from ..errors import ExtractionError, InvalidInput
from ..model import Event, Memory
from .proposal import ADD, EDGE, OPS, Proposal
from .rules import language

MAX_ITEMS = 16
"""At most this many memories (and as many edges) in one structured reply."""

MAX_TEXT = 300
"""At most this many characters in a structured reply's content."""

KEY_PATTERN = "^[a-z][a-z0-9_]{0,20}([.][a-z][a-z0-9_]{0,20}){0,3}$"
"""A key in a structured reply: dotted lower-case words (``user.employer``)."""


def schema(
    events: list[str] | None = None, memories: list[str] | None = None, *, edges: bool = False
) -> dict[str, Any]:
    """The reply's JSON schema, sent as ``response_format``. Given the ids
    shown in the prompt, ``sources`` may name only ``events`` and ``target``
    only ``memories`` (or null); texts and lists are bounded, so a model
    decoding under the schema cannot write without end. The writer checks
    every id against the gate all the same.

    >>> s = schema(["e1", "e2"], [])
    >>> s["properties"]["memories"]["items"]["properties"]["sources"]["items"]
    {'enum': ['e1', 'e2']}
    >>> s["properties"]["memories"]["items"]["properties"]["target"]
    {'enum': [None]}
    """
    source: dict[str, Any] = {"enum": list(events)} if events else {"type": "string"}
    target: dict[str, Any] = (
        {"enum": [*memories, None]}
        if memories is not None and len(memories) <= 200
        else {"type": ["string", "null"], "maxLength": 200}
    )
    sources = {"type": "array", "items": source, "minItems": 1, "maxItems": 8}
    text = {"type": "string", "maxLength": MAX_TEXT}
    memory = {
        "type": "object",
        "properties": {
            "op": {"type": "string", "enum": ["add", "update", "delete"]},
            "content": text,
            "key": {"anyOf": [{"type": "string", "pattern": KEY_PATTERN}, {"type": "null"}]},
            "target": target,
            "sources": sources,
        },
        "required": ["op", "content", "key", "target", "sources"],
        "additionalProperties": False,
    }
    props: dict[str, Any] = {"memories": {"type": "array", "items": memory, "maxItems": MAX_ITEMS}}
    if edges:
        name = {"type": "string", "maxLength": 100}
        edge = {
            "type": "object",
            "properties": {"subject": name, "predicate": name, "object": name, "sources": sources},
            "required": ["subject", "predicate", "object", "sources"],
            "additionalProperties": False,
        }
        props["edges"] = {"type": "array", "items": edge, "maxItems": MAX_ITEMS}
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


SCHEMA: dict[str, Any] = schema()
"""The reply's general JSON schema (`schema` narrows it to a prompt's ids)."""

INSTRUCTIONS = {
    "en": (
        "You maintain long-term memory about the user. From the conversation "
        "events below, propose memory changes: durable facts the user states about "
        "themselves (add), changes to a known memory (update, with target = its id), "
        "and memories the user says are no longer true (delete, with target = its id). "
        "Cite as sources only event ids listed below. Propose nothing already known. "
        'Reply with JSON only: {"memories": [{"op": "add"|"update"|"delete", '
        '"content": str, "key": str|null, "target": str|null, "sources": [event ids]}]}'
    ),
    "zh": (
        "你负责维护关于用户的长期记忆。根据下面的对话事件，提出记忆的变更：用户陈述的关于自己的"
        "持久事实（add），对已有记忆的修改（update，target 为其 id），以及用户说已不再成立的记忆"
        "（delete，target 为其 id）。sources 只能引用下面列出的事件 id。已知的不要重复。"
        '只回复 JSON：{"memories": [{"op": "add"|"update"|"delete", "content": 字符串, '
        '"key": 字符串或null, "target": 字符串或null, "sources": [事件id]}]}'
    ),
}


EDGES = {
    "en": (
        " Also list the relations the messages state between named things (people, teams, "
        'services, libraries, places): add "edges": [{"subject": str, "predicate": str, '
        '"object": str, "sources": [event ids]}], predicates such as "owns", "member of", '
        '"depends on", "uses", "located in", "is a", "likes", "affected by".'
    ),
    "zh": (
        ' 另外列出消息中陈述的具名事物（人、团队、服务、库、地点）之间的关系：加上 "edges": '
        '[{"subject": 字符串, "predicate": 字符串, "object": 字符串, "sources": [事件id]}]，'
        'predicate 用英文，如 "owns"、"member of"、"depends on"、"uses"、"located in"、"is a"、'
        '"likes"、"affected by"。'
    ),
}
"""Appended to the instructions by `LLMExtractor(edges=True)`: triples in the reply."""

RETRY = 'That was not valid JSON of the required shape. Reply with JSON only: {"memories": [...]}'


class LLMExtractor:
    """Proposals from a chat model; ``language`` is ``"auto"``, ``"zh"`` or ``"en"``
    (the prompt's language; ``auto`` follows the window's content). ``max_tokens``
    caps each reply (a reply cut off by it is malformed: asked for once more, then
    `ExtractionError`), so a model that keeps writing cannot hold the call until
    ``timeout``.

    >>> ex = LLMExtractor(base_url="http://localhost:11434/v1", model="qwen2.5:7b")
    >>> ex.url
    'http://localhost:11434/v1/chat/completions'
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 30,
        language: str = "auto",
        *,
        roles: tuple[str, ...] = ("user",),
        edges: bool = False,
        max_tokens: int = 1024,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise InvalidInput(f"base_url must be an http(s) URL, got {base_url!r}")
        if not isinstance(model, str) or not model:
            raise InvalidInput("model must name the model to call, e.g. 'qwen2.5:7b'")
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
            raise InvalidInput(f"timeout must be a positive number of seconds, got {timeout!r}")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 16:
            raise InvalidInput(f"max_tokens must be an int of at least 16, got {max_tokens!r}")
        if language not in ("auto", "zh", "en"):
            raise InvalidInput(f"language must be 'auto', 'zh' or 'en', got {language!r}")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout = float(timeout)
        self.language = language
        self.roles = roles
        self.edges = edges
        self.max_tokens = max_tokens
        self.formats: tuple[str, ...] = ("json_schema", "json_object")  # until refused

    def messages(self, window: list[Event], visible: list[Memory]) -> list[dict[str, str]]:
        """The chat messages sent for this window (for inspection and tests)."""
        lang = self.language
        if lang == "auto":
            lang = language("".join(e.content for e in window))
        lines = ["Events (id | role | content):"]
        lines += [f"{e.id} | {e.role} | {e.content}" for e in window]
        lines.append("Known memories (id | key | content):")
        lines += [f"{m.id} | {m.key or '-'} | {m.content}" for m in visible] or ["(none)"]
        lines.append(f"Extract from messages whose role is one of: {', '.join(self.roles)}.")
        return [
            {"role": "system", "content": INSTRUCTIONS[lang] + (EDGES[lang] if self.edges else "")},
            {"role": "user", "content": "\n".join(lines)},
        ]

    def propose(self, window: list[Event], visible: list[Memory]) -> list[Proposal]:
        if not any(e.role in self.roles for e in window):
            return []
        msgs = self.messages(window, visible)
        shape = schema([e.id for e in window], [m.id for m in visible], edges=self.edges)
        reply = self._call(msgs, shape)
        try:
            return parse_reply(reply)
        except ExtractionError:
            retry = [
                *msgs,
                {"role": "assistant", "content": reply},
                {"role": "user", "content": RETRY},
            ]
            second = self._call(retry, shape)
            try:
                return parse_reply(second)
            except ExtractionError as exc:
                raise ExtractionError(
                    f"the model at {self.url} replied twice without the JSON asked for "
                    f"({exc.args[0].split('; the reply began')[0]}); check that the model "
                    "follows JSON instructions, or use RuleExtractor",
                    second,
                ) from None

    def _call(self, messages: list[dict[str, str]], shape: dict[str, Any]) -> str:
        """One completion, asking for structured output (``shape``, a `schema`): as
        ``json_schema`` (OpenAI, vLLM, Ollama), then as ``json_object`` with the
        schema (llama.cpp's server), then plain JSON, each form dropped for good
        once this server refuses it (an HTTP error naming ``response_format``
        or ``json_schema``)."""
        while self.formats:
            try:
                return self._post(messages, self.formats[0], shape)
            except ExtractionError as exc:
                msg = exc.args[0]
                named = "response_format" in msg or "json_schema" in msg
                if not ("answered HTTP" in msg and named):
                    raise
                self.formats = self.formats[1:]
        return self._post(messages, None, shape)

    @property
    def structured(self) -> bool:
        """Does this server still take a structured-output form?"""
        return bool(self.formats)

    def _post(self, messages: list[dict[str, str]], form: str | None, shape: dict[str, Any]) -> str:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": 0,
            "max_tokens": self.max_tokens,
        }
        if form == "json_schema":
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "memories", "schema": shape, "strict": True},
            }
        elif form == "json_object":
            payload["response_format"] = {"type": "json_object", "schema": shape}
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as exc:
            text = exc.read().decode("utf-8", "replace") if exc.fp is not None else ""
            raise ExtractionError(
                f"the model endpoint {self.url} answered HTTP {exc.code}; check the URL, "
                "the model name and the API key",
                text,
            ) from None
        except TimeoutError as exc:
            raise ExtractionError(
                f"the model endpoint {self.url} did not answer within {self.timeout:g}s; "
                "raise timeout= or check that the server is up"
            ) from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (TimeoutError, socket.timeout)):
                raise ExtractionError(
                    f"the model endpoint {self.url} did not answer within {self.timeout:g}s; "
                    "raise timeout= or check that the server is up"
                ) from exc
            raise ExtractionError(
                f"could not reach the model endpoint {self.url}: {exc.reason}"
            ) from exc
        except (http.client.HTTPException, OSError) as exc:  # e.g. the server died mid-reply
            raise ExtractionError(
                f"the model endpoint {self.url} broke off the reply ({exc!r}); "
                "check that the server is up"
            ) from exc
        try:
            content = json.loads(raw)["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ExtractionError(
                f"the endpoint {self.url} did not answer in the chat completions shape "
                "(choices[0].message.content)",
                raw,
            ) from None
        if not isinstance(content, str):
            raise ExtractionError("the model's message content is not text", str(content))
        return content


def parse_reply(text: str) -> list[Proposal]:
    """The proposals in a model's reply, or `ExtractionError` if its shape is wrong.

    A reply wrapped in a Markdown code fence is accepted.

    >>> parse_reply('{"memories": [{"op": "add", "content": "x", "sources": ["e1"]}]}')[0].op
    'add'
    """
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`")
        body = body[body.find("\n") + 1 :] if "\n" in body else body
    try:
        data = json.loads(body)
    except ValueError:
        raise ExtractionError("the reply is not JSON", text) from None
    items = data.get("memories") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ExtractionError('the reply has no "memories" list', text)
    edges = data.get("edges", [])
    if not isinstance(edges, list):
        raise ExtractionError('"edges" must be a list', text)
    return [_proposal(item, text) for item in items] + [_edge(item, text) for item in edges]


def _edge(item: Any, text: str) -> Proposal:
    if not isinstance(item, dict):
        raise ExtractionError('an item of "edges" is not an object', text)
    parts = [item.get(k) for k in ("subject", "predicate", "object")]
    if not all(isinstance(x, str) and x.strip() for x in parts):
        raise ExtractionError("an edge needs subject, predicate and object strings", text)
    sources = item.get("sources")
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise ExtractionError("sources must be a list of event ids", text)
    s, p, o = (str(x).strip() for x in parts)
    return Proposal(
        EDGE, f"{s} {p} {o}", tuple(sources), triple=(s, p, o), meta={"extractor": "llm"}
    )


def _proposal(item: Any, text: str) -> Proposal:
    if not isinstance(item, dict):
        raise ExtractionError('an item of "memories" is not an object', text)
    op = item.get("op")
    if op not in OPS or op == EDGE:
        raise ExtractionError(f"op {op!r} is not one of {', '.join(OPS)}", text)
    content, key, target = item.get("content", ""), item.get("key"), item.get("target")
    sources = item.get("sources")
    if not isinstance(content, str):
        raise ExtractionError("content must be a string", text)
    if key is not None and not isinstance(key, str):
        raise ExtractionError("key must be a string or null", text)
    if target is not None and not isinstance(target, str):
        raise ExtractionError("target must be a string or null", text)
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise ExtractionError("sources must be a list of event ids", text)
    meta = {"extractor": "llm"}
    return Proposal(
        op,
        content,
        tuple(sources),
        key=key or None,
        target=None if op == ADD else target,
        meta=meta,
    )
