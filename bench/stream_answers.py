"""The streaming bench's model, corpus and Cores: what every surface answers from.

The fake OpenAI server writes one scripted answer of `tokens` tokens (the fake's
rule: four characters a token) at `rate` tokens a second after `first_token`
seconds, one token per SSE chunk, and answers a non-streamed request when that
stream would have ended. The answer cites the retrieved sources, has a fenced code
block, and numbers its sentences ("Step 7:") so the bench can check that every
sentence reached the final message exactly once.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.config import FileConfig, LimitsConfig, Settings
from bot.core import Core
from tests.servers.openai_fake import FakeOpenAI

KEY = "sk-bench-stream-0123456789"
TOKEN_CHARS = 4  # the fake's token rule: ceil(characters / 4)
MARKER = re.compile(r"Step \d+:")
_SOURCE = re.compile(r'<source-[0-9a-f]+ n="(\d+)"')
_BODIES = (
    "the session builds the request from its defaults and the caller's arguments",
    "the adapter picks a connection from the pool that matches the host",
    "retries are counted per request, and a failed read is not retried twice",
    "redirects are followed by resolving each location against the previous URL",
    "cookies from every response are merged into the session's jar",
    "the timeout applies to connecting and to each read, not to the whole body",
    "hooks run after the response arrives, in the order they were registered",
    "authentication headers are dropped when a redirect leaves the original host",
)
_CODE = (
    "```python\n"
    "adapter = HTTPAdapter(max_retries=3)\n"
    "session.mount(prefix, adapter)\n"
    "response = session.send(prepared, timeout=5)\n"
    "```"
)


@dataclass(frozen=True)
class Pace:
    """How the fake model writes: `tokens` at `rate` a second, the first after `first_token`."""

    tokens: int = 600
    rate: float = 40.0
    first_token: float = 0.3

    @property
    def writing_seconds(self) -> float:
        return self.first_token + self.tokens / self.rate


def answer_text(refs: list[str], tokens: int) -> str:
    """About `tokens` tokens of numbered sentences citing `refs` in turn, code before Step 5."""
    target = tokens * TOKEN_CHARS
    text, step = "", 0
    while len(text) < target:
        step += 1
        cite = f" [{refs[(step - 1) % len(refs)]}]" if refs else ""
        sentence = f"Step {step}: {_BODIES[step % len(_BODIES)]}{cite}."
        gap = "" if step == 1 else ("\n\n" if step % 5 == 1 else " ")
        if step == 5:
            gap = f"\n\n{_CODE}\n\n"
        text += gap + sentence
    return _cut(text, target)


def _cut(text: str, target: int) -> str:
    """`text` cut to `target` characters at most, at a word, ending a sentence."""
    if len(text) <= target:
        return text
    cut = text.rfind(" ", 0, target - 1)
    return text[:cut].rstrip(" ,") + "."


def expected_markers(tokens: int) -> list[str]:
    """The numbered sentences the model writes (all citing single-digit sources)."""
    return MARKER.findall(answer_text(["1", "2", "3"], tokens))


def reply_for(tokens: int) -> Any:
    """The fake's `chat_reply`: the answer, citing up to three of the prompt's sources."""

    def reply(body: dict[str, Any]) -> str:
        prompt = str(body["messages"][-1].get("content") or "")
        return answer_text(list(dict.fromkeys(_SOURCE.findall(prompt)))[:3], tokens)

    return reply


def one_token_each(text: str) -> list[str]:
    """The stream split: one token (four characters) per SSE chunk, as models send."""
    return [text[i : i + TOKEN_CHARS] for i in range(0, len(text), TOKEN_CHARS)]


@contextmanager
def paced_model(pace: Pace) -> Iterator[FakeOpenAI]:
    with FakeOpenAI(api_key=KEY) as fake:
        fake.chat_reply = reply_for(pace.tokens)
        fake.stream_split = one_token_each
        fake.first_chunk_delay = pace.first_token
        fake.stream_interval = 1.0 / pace.rate
        fake.pace_whole_replies = True
        yield fake


def index_home(corpus: Path, home: Path, name: str) -> Path:
    """A data directory with `corpus` indexed lexically (runs copy it; no model needed)."""
    settings = Settings(  # type: ignore[call-arg]
        CODECITE_HOME=home, OPENAI_API_KEY=None, OPENAI_BASE_URL=None, CODECITE_INDEX="local"
    )
    core = Core.from_settings(settings, FileConfig())
    try:
        core.index_repo(str(corpus), name=name)
    finally:
        core.close()
    return home


def make_core(template: Path, home: Path, model_url: str, *, stream: bool, workers: int) -> Core:
    """A Core on a copy of `template` whose model is the fake; quotas off, `workers` answering
    at once (the bench measures streaming, not the answer queue)."""
    shutil.copytree(template, home)
    settings = Settings(  # type: ignore[call-arg]
        CODECITE_HOME=home,
        OPENAI_API_KEY=KEY,
        OPENAI_BASE_URL=model_url,
        CODECITE_EMBED_MODEL="none",
        CODECITE_INDEX="local",
        CODECITE_STREAM=stream,
    )
    limits = LimitsConfig(
        workers=workers,
        queue_size=max(32, workers * 2),
        per_user_per_minute=0,
        per_channel_per_minute=0,
        daily_answers=0,
    )
    return Core.from_settings(settings, FileConfig(limits=limits))
