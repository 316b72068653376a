"""Which repositories a conversation may see, and the checks every question passes first.

The rules read codecite.toml only; the adapter has already said where the
question comes from (`Context`). An entry for the conversation's own id decides;
without one, a conversation with outsiders (or of unknown kind) sees nothing, a
DM needs the asker on the DM allowlist, then the guild's entry, then the default.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.config import FileConfig
from bot.context import Context
from bot.errors import NotIndexedError, PermissionDenied, QuestionError, ScopeError
from bot.models import RepoState

DM_REFUSED = "Direct messages to codecite are not enabled for you; ask in a channel."
EXTERNAL_REFUSED = (
    "This conversation includes people from other organisations, so codecite answers here "
    "only if it is mapped in codecite.toml."
)
UNKNOWN_REFUSED = (
    "codecite could not check who can read this conversation, so it answers here only if "
    "it is mapped in codecite.toml; ask in a channel or in a direct message with codecite."
)


def scope_for(config: FileConfig, ctx: Context) -> frozenset[str] | None:
    """The repositories `ctx` may see, narrowed to `ctx.repos`; None means every indexed
    repository. The operator (the terminal) sees everything; see `_granted` for chats."""
    granted = None if ctx.operator else _granted(config, ctx)
    return narrowed(granted, ctx.repos)


def _granted(config: FileConfig, ctx: Context) -> frozenset[str] | None:
    """What codecite.toml grants a chat conversation.

    An entry for the conversation's own id decides, whatever the conversation is
    (a team that maps a group DM or a shared channel has chosen). Without one: a
    conversation with outsiders, or of unknown kind, sees nothing; a DM needs the
    asker on the DM allowlist; then the guild's entry, then the default scope.
    """
    channel = config.channels.get(ctx.channel) if ctx.channel else None
    if channel is not None:
        return frozenset(channel.repos)
    if ctx.audience == "external":
        raise PermissionDenied(EXTERNAL_REFUSED)
    if ctx.audience != "internal":
        raise PermissionDenied(UNKNOWN_REFUSED)
    allowlist = config.dm_allowlist
    if ctx.is_dm and allowlist is not None and ctx.user not in allowlist:
        raise PermissionDenied(DM_REFUSED)
    guild = config.channels.get(ctx.guild) if ctx.guild else None
    if guild is not None:
        return frozenset(guild.repos)
    if config.default_scope is not None:
        return frozenset(config.default_scope)
    return None


def narrowed(scope: frozenset[str] | None, repos: frozenset[str] | None) -> frozenset[str] | None:
    """`repos` when given (each must lie inside `scope`), else `scope`."""
    if repos is None:
        return scope
    outside = sorted(repos - scope) if scope is not None else []
    if outside:
        raise ScopeError(f"The repository {outside[0]!r} is not available here.")
    return repos


def validated(text: str, limit: int) -> str:
    """The question, stripped; QuestionError when it is empty or longer than `limit`."""
    text = text.strip()
    if not text:
        raise QuestionError("Please ask a question about the code, e.g. `where do we retry?`")
    if len(text) > limit:
        raise QuestionError(
            f"That question is too long ({len(text):,} characters; the limit is {limit:,})."
        )
    return text


def states_in_scope(
    indexed: Iterable[RepoState], scope: frozenset[str] | None
) -> dict[str, RepoState]:
    """The indexed repositories inside `scope`; NotIndexedError when there are none."""
    states = {s.name: s for s in indexed}
    if not states:
        raise NotIndexedError()
    if scope is None:
        return states
    in_scope = {name: states[name] for name in scope if name in states}
    if not in_scope:
        if scope and len(scope) == 1 and next(iter(scope)) not in states:
            raise NotIndexedError(f"The repository {next(iter(scope))!r} is not indexed.")
        raise NotIndexedError("None of the repositories available here is indexed yet.")
    return in_scope
