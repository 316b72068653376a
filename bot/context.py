"""Who asks, from where, and what the adapter decided they may do.

The core never learns a platform's rules: the adapter resolves them (an admin
role in a configured server, a user listed in `admins`, the person at the
terminal) into the flags of the `Context` it hands the core.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Audience = Literal["internal", "external", "unknown"]


@dataclass(frozen=True, slots=True)
class Context:
    """Who asks, and from where.

    `platform` names the asker's surface in records and limits ("slack", "cli"...);
    the core attaches no meaning to it. `is_dm`: a private conversation with the
    bot, one-to-one or a group DM (the DM allowlist applies). `audience`: who can
    read the conversation: members of the organisation only, people of other
    organisations too (a shared channel), or unknown (the platform could not say);
    outside "internal" only an explicit mapping of the conversation gives a scope.
    `is_admin`: may run admin commands (`reindex`). `unlimited`: exempt from the
    rate limits (whoever runs the terminal owns the data directory and the keys).
    `operator`: the person who runs this installation, at its terminal: codecite.toml's
    scopes (`default_scope`, `[channels]`) are for chat conversations, so the operator
    sees every indexed repository. `repos`: the adapter's own narrowing of whatever the
    scope is (a terminal chat started with `--repo`); it applies to questions and
    commands alike. None: no narrowing.
    """

    platform: str
    user: str
    channel: str = ""
    guild: str = ""
    is_dm: bool = False
    audience: Audience = "internal"
    is_admin: bool = False
    unlimited: bool = False
    operator: bool = False
    repos: frozenset[str] | None = None


# The person at the terminal: every repository, admin, no rate limits.
CLI = Context(platform="cli", user="local", is_admin=True, unlimited=True, operator=True)
