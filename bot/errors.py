"""The errors codecite raises on purpose, each with a sentence a user may see.

    BotError                    anything we expect and can explain
    ├── ConfigError             codecite.toml or the environment is wrong
    ├── SourceError             a repository cannot be found, cloned or read
    ├── StoreError              the index cannot be read or written
    │   ├── DiskFullError       ... because the disk holding the data is full
    │   └── DatabaseUnavailable ... because the shared database does not answer
    ├── NotIndexedError         nothing (in scope) is indexed yet
    ├── ScopeError              a repository outside this channel's scope was named
    ├── QuestionError           empty, enormous or otherwise unusable question
    ├── PermissionDenied        an admin-only command from a non-admin
    ├── RateLimited             too many questions; try again later
    └── ServiceError            a model or other remote service failed
        └── ServiceUnavailable  ... and retrying now will not help

Lower-layer exceptions are translated at the boundary (`raise X(...) from exc`),
so adapters need to know only this tree. `user_message` never contains a
traceback, a secret or raw exception text; what a chat user reads names no host and
no setting either, while `operator_message` (the terminal's one line, a server's
start-up error) may say which setting to check and where.
"""

from __future__ import annotations


class BotError(Exception):
    user_message = "Something went wrong."
    incident = True  # shown with an incident id, logged under it (False: nothing went wrong)

    def __init__(self, user_message: str | None = None, *, detail: str = "") -> None:
        if user_message is not None:
            self.user_message = user_message
        self.detail = detail
        super().__init__(self.user_message if not detail else f"{self.user_message} ({detail})")

    @property
    def operator_message(self) -> str:
        """What the one who runs codecite is told (the terminal, a server's stderr)."""
        return self.user_message


class ConfigError(BotError):
    user_message = "codecite is misconfigured."


class SourceError(BotError):
    user_message = "That repository could not be read."


class StoreError(BotError):
    user_message = "The index could not be read or written."


class DiskFullError(StoreError):
    user_message = (
        "The disk holding codecite's data directory is full; free some space and try again."
    )


class DatabaseUnavailable(StoreError):
    """The shared database does not answer (down, restarting, unreachable, refusing us)."""

    user_message = "codecite's database is not answering right now; please try again shortly."

    def __init__(self, operator: str, *, detail: str = "") -> None:
        super().__init__(detail=detail)
        self._operator = operator

    @property
    def operator_message(self) -> str:
        return self._operator


class NotIndexedError(BotError):
    user_message = "Nothing is indexed yet. Run `codecite index PATH_OR_URL` first."


class ScopeError(BotError):
    user_message = "That repository is not available here."


class QuestionError(BotError):
    user_message = "Please ask a question."


class PermissionDenied(BotError):
    user_message = "Only codecite admins can do that."


class RateLimited(BotError):
    user_message = "Too many questions right now; please try again in a minute."


class ServiceError(BotError):
    user_message = "The language model did not answer; please try again."


class ServiceUnavailable(ServiceError):
    user_message = "The language model is unavailable right now."
