"""An answer released piece by piece as the model writes it, safe at every moment.

The visible text is always `make_safe` applied to a cited prefix of what the
model wrote, cut where no further text can change its meaning: before the last
word (a word may grow into `@here`, a URL or a secret), and before any `<`, `[`
or `](` that is not closed yet (a Slack mention, a markdown link, a citation
marker). A piece is released only when that safe text extends what was already
shown, so nothing shown is ever taken back; the final `Answer` is composed
exactly as a non-streamed one would be.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from bot.answer.safety import MAX_ANSWER_CHARS
from bot.errors import ServiceError
from bot.models import Answer

CUT_OFF = "The answer was cut off; ask again."
# Safe text past this is held to the end: the length bound may cut it back to a line break.
RELEASE_LIMIT = MAX_ANSWER_CHARS - 600
OPEN_WINDOW = 400  # an opener further back than this cannot be closed into a match any more
# Rendering re-reads the whole prefix, so a long answer is rendered once per this share of
# its shown length (or per RENDER_INTERVAL), not once a word: linear work, not quadratic.
RENDER_SHARE = 16
RENDER_INTERVAL = 0.2  # seconds; adapters show text at most once a second anyway
_OPENERS = (("<", ">"), ("[", "]"), ("](", ")"))

Render = Callable[[str], str]  # a raw prefix -> its cited, safe text
Finish = Callable[[str, bool], Answer]  # (whole raw text, cut off) -> the final answer


class TextPieces(Protocol):
    """What `LLM.stream` gives: text pieces; ServiceError when it breaks midway."""

    def __iter__(self) -> Iterator[str]: ...


def stable_cut(raw: str) -> int:
    """The longest prefix length of `raw` that more text cannot change the meaning of."""
    cut = _last_space_run(raw)  # the last word may still grow
    moved = True
    while moved:  # an opener with no closer yet may become a mention, a link or a marker
        moved = False
        for opener, closer in _OPENERS:
            at = raw.rfind(opener, max(0, cut - OPEN_WINDOW), cut)
            if at >= 0 and raw.find(closer, at + len(opener), cut) < 0:
                cut, moved = _before_space(raw, at), True
    return cut


def _last_space_run(raw: str) -> int:
    """Where the last run of white space starts (0 if none), read from the end: a token's
    cost follows the last word's length, not the answer's."""
    at = len(raw)
    while at > 0 and not raw[at - 1].isspace():
        at -= 1
    return _before_space(raw, at) if at else 0


def _before_space(raw: str, at: int) -> int:
    """Cut before the white space that precedes `at`: a dropped marker takes its space along."""
    while at > 0 and raw[at - 1].isspace():
        at -= 1
    return at


class SafeRelease:
    """Turns a growing raw text into pieces whose concatenation is always safe to show."""

    def __init__(self, render: Render, clock: Callable[[], float] = time.monotonic) -> None:
        self._render = render
        self._clock = clock
        self.raw = ""
        self.shown = ""
        self._cut = 0  # the stable prefix last rendered
        self._rendered_at = clock()

    def feed(self, piece: str) -> str:
        """Add model text; return the newly releasable text ("" when nothing is stable yet)."""
        self.raw += piece
        cut = stable_cut(self.raw)
        if not self._due(cut):
            return ""
        self._cut, self._rendered_at = cut, self._clock()
        safe = self._render(self.raw[:cut])
        if len(safe) > RELEASE_LIMIT or not safe.startswith(self.shown):
            return ""  # held: shown text is never taken back
        delta, self.shown = safe[len(self.shown) :], safe
        return delta

    def _due(self, cut: int) -> bool:
        """Render again? Only when the stable prefix grew, and for a long answer only when
        it grew by a share of what is shown or the interval has passed."""
        grown = cut - self._cut
        if grown <= 0:
            return False
        if grown >= len(self.shown) // RENDER_SHARE:
            return True
        return self._clock() - self._rendered_at >= RENDER_INTERVAL

    def rest(self, final_text: str) -> str:
        """What the final text adds to what was shown ("" if they parted ways)."""
        return final_text[len(self.shown) :] if final_text.startswith(self.shown) else ""


class AnswerStream:
    """Iterate for the text pieces; once exhausted, `answer` is the complete Answer.

    `"".join(pieces) == answer.text` unless a late rewrite (the length bound, a
    marker whose meaning changed) parted them; adapters post `answer.text` last.
    """

    def __init__(
        self, pieces: Iterable[str], finish: Callable[[], Answer], *, streamed: bool = True
    ) -> None:
        self._pieces = iter(pieces)
        self._finish = finish
        self._answer: Answer | None = None
        # False for `whole`: nothing to show before the end, adapters may post it at once
        self.streamed = streamed

    @classmethod
    def whole(cls, answer: Answer) -> AnswerStream:
        """An answer that was not streamed (no model): its text as one piece."""
        return cls([answer.text] if answer.text else [], lambda: answer, streamed=False)

    @classmethod
    def of_model(cls, pieces: TextPieces, render: Render, finish: Finish) -> AnswerStream:
        release = SafeRelease(render)
        done: list[Answer] = []

        def run() -> Iterator[str]:
            cut_off = False
            try:
                for piece in pieces:
                    delta = release.feed(piece)
                    if delta:
                        yield delta
            except ServiceError:
                cut_off = True  # the partial text stays, ended by one sentence
            answer = finish(release.raw, cut_off)
            done.append(answer)
            rest = release.rest(answer.text)
            if rest:
                yield rest

        return cls(run(), lambda: done[0])

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        return next(self._pieces)

    @property
    def answer(self) -> Answer:
        """The complete answer; reading it first drains any pieces not yet taken."""
        if self._answer is None:
            for _ in self._pieces:
                pass
            self._answer = self._finish()
        return self._answer

    def on_first(self, hook: Callable[[], None]) -> AnswerStream:
        """The same stream; `hook()` runs as its first piece is taken (first text shown)."""

        def pieces() -> Iterator[str]:
            for number, piece in enumerate(self._pieces):
                if number == 0:
                    hook()
                yield piece

        return AnswerStream(pieces(), lambda: self.answer, streamed=self.streamed)

    def translated(self, error: Callable[[Exception], Exception]) -> AnswerStream:
        """The same stream; whatever it raises passes through `error` first."""

        def pieces() -> Iterator[str]:
            try:
                yield from self._pieces
            except Exception as exc:
                raise _mapped(error, exc) from exc

        def finish() -> Answer:
            try:
                return self.answer
            except Exception as exc:
                raise _mapped(error, exc) from exc

        return AnswerStream(pieces(), finish, streamed=self.streamed)

    def then(self, step: Callable[[Answer], Answer]) -> AnswerStream:
        """The same pieces, with `step` applied once to the final answer (recording it)."""
        return AnswerStream(self._pieces, lambda: step(self.answer), streamed=self.streamed)


def _mapped(error: Callable[[Exception], Exception], exc: Exception) -> Exception:
    mapped = error(exc)
    if mapped is exc:
        raise exc
    return mapped


def ended(text: str, cut_off: bool) -> str:
    """The final text, with the cut-off sentence when the stream broke."""
    if not cut_off:
        return text
    return f"{text.rstrip()}\n\n{CUT_OFF}" if text.strip() else CUT_OFF
