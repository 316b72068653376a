"""The LLM contract: complete (or stream) a chat with a cap on output tokens."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


class LLM(Protocol):
    model: str

    def complete(self, messages: Sequence[Message], *, max_tokens: int) -> Completion:
        """Temperature 0. Raises ServiceError / ServiceUnavailable on failure."""

    def stream(self, messages: Sequence[Message], *, max_tokens: int) -> Iterator[str]:
        """Yield text pieces as they arrive (temperature 0)."""
