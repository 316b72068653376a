"""Text for the shared commands (help, status, repos, reindex), in plain markdown."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.errors import BotError
from bot.models import ago
from bot.pricing import describe_cost
from bot.sqlite_files import notices

if TYPE_CHECKING:
    from bot.core import Core
    from bot.ingest.pipeline import IngestReport

_ASK = {
    "slack": "mention me with a question, DM me, or use `/codecite ask <question>`",
    "discord": "mention me with a question, DM me, or use `/ask`",
    "cli": '`codecite ask "<question>"`, or `codecite chat` for a conversation',
}
_COMMAND = {"slack": "/codecite {}", "discord": "/{}", "cli": "codecite {}"}


def help_text(platform: str = "slack") -> str:
    """What codecite does and how to ask, in the syntax of the platform asking (markdown)."""
    command = _COMMAND.get(platform, _COMMAND["slack"]).format
    lines = [
        "**codecite** answers questions about your code and cites the exact lines.",
        f"• Ask: {_ASK.get(platform, _ASK['slack'])}",
    ]
    if platform != "cli":
        lines.append("• Follow-ups: keep talking in the thread where I answered; I read the thread")
    lines += [
        f"• `{command('status')}`: what is indexed, at which commit, and how fresh",
        f"• `{command('repos')}`: the repositories available here",
        f"• `{command('map [repo]')}`: the directory tree and the most referenced symbols",
        f"• `{command('reindex [repo]')}`: re-ingest now (admins only)",
        f"• `{command('help')}`: this message",
        'Good questions name things: "where do we retry failed webhooks?", '
        '"what calls `charge_customer`?". "Where is `X` defined?", "who calls `X`?" and '
        '"how is this project organised?" are answered exactly from the symbol table.',
    ]
    return "\n".join(lines)


def status_text(core: Core, scope: frozenset[str] | None) -> str:
    states = [s for s in core.index.repo_states() if scope is None or s.name in scope]
    model = core.llm.model if core.llm is not None else "none (extractive answers)"
    embed = core.embedder.model if core.embedder is not None else "none (lexical search)"
    lines = [f"Model: {model}; embeddings: {embed}; index: {core.settings.index}"]
    indexed = {s.name for s in states}
    pending = [
        r.name
        for r in core.config.repos
        if r.name not in indexed and (scope is None or r.name in scope)
    ]
    if not states and not pending:
        lines.append("Nothing is indexed here yet.")
    for s in states:
        lines.append(f"• {s.freshness().describe()} — {s.files:,} files, {s.chunks:,} chunks")
        lines.extend(_run_lines(core, s.name))
    for name in pending:  # configured, but no run has succeeded yet
        lines.append(f"• {name}: not indexed yet")
        lines.extend(_run_lines(core, name))
    folders = (
        core.settings.home,
        core.settings.index_path.parent,
    )  # last: reads above may find one
    lines += [notice.sentence() for notice in notices(folders)]
    return "\n".join(lines)


def _run_lines(core: Core, repo: str) -> list[str]:
    out = []
    last = core.runs.last(repo)
    if last is not None:
        when = ago(last.started_at)
        if last.ok:
            out.append(
                f"    last run {when} ({last.trigger}, {last.seconds:.1f}s): "
                f"files +{last.files_added} ~{last.files_changed} -{last.files_removed}, "
                f"chunks +{last.chunks_added} -{last.chunks_removed}, "
                f"{last.embedding_tokens:,} embedding tokens"
            )
        else:
            out.append(f"    last run {when} ({last.trigger}) failed: {last.error}")
    used, saved = core.runs.embedding_totals(repo)
    if core.embedder is not None and (used or saved):
        out.append(
            f"    embeddings: {used:,} tokens ({describe_cost(core.embedder.model, used)}), "
            f"{saved:,} saved by the cache"
        )
    upcoming = core.runs.next_run(repo)
    if upcoming is not None:
        out.append(f"    next run {upcoming:%Y-%m-%d %H:%M} UTC")
    return out


def repos_text(core: Core, scope: frozenset[str] | None) -> str:
    states = {s.name: s for s in core.index.repo_states()}
    names = sorted(states if scope is None else scope)
    if not names:
        return "No repositories are available here."
    lines = ["Repositories available here:"]
    for name in names:
        state = states.get(name)
        where = state.web_url or state.source if state else "not indexed yet"
        lines.append(f"• {name} ({where})")
    return "\n".join(lines)


def reindex_text(results: Sequence[tuple[str, IngestReport | BotError]]) -> str:
    if not results:
        return "There is nothing to reindex."
    lines = []
    for name, outcome in results:
        if isinstance(outcome, BotError):
            lines.append(f"• {name}: failed: {outcome.user_message}")
        elif outcome.unchanged:
            lines.append(f"• {name}: up to date at {outcome.commit[:7] or 'working tree'}")
        else:
            lines.append(
                f"• {name}: {outcome.commit[:7] or 'working tree'}, "
                f"{outcome.files_added + outcome.files_changed} files updated, "
                f"{outcome.files_removed} removed, "
                f"+{outcome.chunks_added}/-{outcome.chunks_removed} chunks "
                f"in {outcome.seconds:.1f}s"
            )
    return "\n".join(lines)
