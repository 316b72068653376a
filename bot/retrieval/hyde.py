"""HyDE: ask the model for the code it expects to find, and search with that too.

A question in prose ("where do we retry failed webhooks?") and the code that
answers it share few words; a hypothetical snippet shares many more
(`retry`, `attempt`, `backoff`, `sleep`). The snippet is an extra query,
never shown to users. Output is capped; failures fall back to the question.
"""

from __future__ import annotations

import logging

from bot.errors import ServiceError
from bot.llm.chat import LLM, Message
from bot.models import Usage

log = logging.getLogger(__name__)

MAX_TOKENS = 160

PROMPT = (
    "Write a short, plausible code snippet (about 10-20 lines, any fitting language) that "
    "would answer the developer question below if it existed in their repository. Use the "
    "identifiers the question mentions. Output only code, no explanation."
)


class HydeExpander:
    def __init__(self, llm: LLM, *, max_tokens: int = MAX_TOKENS) -> None:
        self._llm = llm
        self._max_tokens = max_tokens

    def __call__(self, question: str) -> tuple[str, Usage]:
        """The hypothetical code and what it cost; ("", nothing) when the model fails."""
        messages = [Message("system", PROMPT), Message("user", question)]
        try:
            completion = self._llm.complete(messages, max_tokens=self._max_tokens)
        except ServiceError as exc:
            log.warning("HyDE skipped: %s", exc.detail or exc.user_message)
            return "", Usage()
        usage = Usage(completion.prompt_tokens, completion.completion_tokens)
        return completion.text.strip(), usage
