"""Answers from a model behind any OpenAI-compatible Chat Completions endpoint.

Standard library only (urllib). Every system gets the same prompt and
temperature 0, so answers differ only by the context a system built.
Transient failures (connection errors, HTTP 408/409/429/5xx) are retried a
bounded number of times with exponential backoff; anything else fails at
once with a message that says what to check.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

PROMPTS = ("neutral", "conflict")

SYSTEM_PROMPT = (
    "你是用户的助手。下面给出你记得的与用户有关的信息和对话记录，请根据这些信息简短回答用户的问题。"
)
CONFLICT_SENTENCE = "如果信息之间有冲突，以用户当前这段对话的最新情况为准，只给出一个答案。"
"""Appended verbatim to the system prompt by ``--prompt conflict``."""

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


class LLMError(RuntimeError):
    """The endpoint could not give an answer; the message says what to check."""


@dataclass(frozen=True)
class LLMConfig:
    """Where to send requests. ``api_key`` is never written to a run directory."""

    base_url: str
    model: str
    api_key: str | None = None
    timeout_s: float = 60.0
    max_attempts: int = 4
    backoff_s: float = 1.0

    @property
    def url(self) -> str:
        """The Chat Completions endpoint under ``base_url``."""
        return self.base_url.rstrip("/") + "/chat/completions"


def config_from(base_url: str | None, model: str | None, api_key: str | None) -> LLMConfig | None:
    """Options first, then BRANCHBENCH_* variables; ``None`` when no model is configured."""
    base = base_url or os.environ.get("BRANCHBENCH_BASE_URL")
    name = model or os.environ.get("BRANCHBENCH_MODEL")
    key = api_key or os.environ.get("BRANCHBENCH_API_KEY")
    if not base and not name:
        return None
    if not base or not name:
        missing = (
            "--model (or BRANCHBENCH_MODEL)" if base else "--base-url (or BRANCHBENCH_BASE_URL)"
        )
        raise LLMError(f"an answer run needs both a base URL and a model; missing {missing}")
    return LLMConfig(base_url=base, model=name, api_key=key or None)


def system_prompt(prompt: str) -> str:
    """The system prompt for ``neutral`` or ``conflict`` (neutral plus `CONFLICT_SENTENCE`)."""
    if prompt not in PROMPTS:
        raise ValueError(f"unknown prompt {prompt!r}; choose one of {', '.join(PROMPTS)}")
    return SYSTEM_PROMPT + (CONFLICT_SENTENCE if prompt == "conflict" else "")


def build_messages(context: str, question: str, prompt: str) -> list[dict[str, str]]:
    """The chat messages for one question: the same shape for every system."""
    user = f"{context}\n\n用户的问题：{question}" if context else f"用户的问题：{question}"
    return [
        {"role": "system", "content": system_prompt(prompt)},
        {"role": "user", "content": user},
    ]


class ChatClient:
    """A minimal Chat Completions client with bounded retries."""

    def __init__(self, config: LLMConfig, sleep: Callable[[float], None] | None = None) -> None:
        self.config = config
        self.sleep = sleep or _sleep

    def complete(self, messages: list[dict[str, str]]) -> str:
        """The first choice's message content for ``messages`` at temperature 0."""
        body = json.dumps(
            {"model": self.config.model, "messages": messages, "temperature": 0},
            ensure_ascii=False,
        ).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        last = ""
        for attempt in range(1, self.config.max_attempts + 1):
            request = urllib.request.Request(
                self.config.url, data=body, headers=headers, method="POST"
            )
            try:
                with urllib.request.urlopen(request, timeout=self.config.timeout_s) as resp:
                    return self._content(resp.read())
            except urllib.error.HTTPError as exc:
                detail = exc.read().decode("utf-8", "replace")[:300]
                last = f"HTTP {exc.code} from {self.config.url}: {detail}"
                if exc.code not in RETRY_STATUS:
                    raise LLMError(last + _hint(exc.code)) from exc
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                last = f"cannot reach {self.config.url}: {exc}"
            if attempt < self.config.max_attempts:
                self.sleep(self.config.backoff_s * 2 ** (attempt - 1))
        raise LLMError(f"{last} (gave up after {self.config.max_attempts} attempts)")

    def _content(self, raw: bytes) -> str:
        try:
            data: Any = json.loads(raw)
            content = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError(
                f"{self.config.url} did not return a Chat Completions response "
                f"(choices[0].message.content): {raw[:300]!r}"
            ) from exc
        return "" if content is None else str(content)


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


def _hint(code: int) -> str:
    if code in (401, 403):
        return "; check --api-key or BRANCHBENCH_API_KEY"
    if code == 404:
        return "; check --base-url (it should end before /chat/completions, e.g. .../v1)"
    return "; check --model and the endpoint"
