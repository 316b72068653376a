"""Text for the shared commands (help, status, repos, reindex), in plain markdown."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.errors import BotError
from bot.llm.pricing import describe_cost
from bot.models import ago
from bot.store.runs import DONE, RUNNING, Run
from bot.store.sqlite import notices

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
    symbol_commits = _symbol_commits(core)
    for s in states:
        lines.append(f"• {s.freshness().describe()} — {s.files:,} files, {s.chunks:,} chunks")
        if symbol_commits is not None and symbol_commits.get(s.name) != s.commit:
            lines.append(
                "    symbol table: behind the index (an ingest stopped before updating it, or "
                "it was rebuilt); exact symbol answers use search until the next ingest"
            )
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


def _symbol_commits(core: Core) -> dict[str, str] | None:
    if core.symbols is None:
        return None
    try:
        return core.symbols.commits()
    except BotError:
        return None  # an unreadable table is reported where it is used


def _run_lines(core: Core, repo: str) -> list[str]:
    out = []
    last = core.runs.last(repo)
    if last is not None:
        live = last.state == RUNNING and core.stores.locks.busy(repo)
        out.append(_run_line(last, live))
        if not (last.ok or live):
            good = core.runs.last_ok(repo)
            out.append(
                f"    last successful run {ago(good.started_at)} ({good.trigger})"
                if good is not None
                else "    no run has succeeded yet"
            )
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


def _run_line(run: Run, live: bool) -> str:
    when = ago(run.started_at)
    if live:
        return f"    running now, since {when} ({run.trigger})"
    if run.state != DONE:  # its process died before it could finish
        return (
            f"    last run {when} ({run.trigger}) was interrupted before it finished; "
            "the state above is what answers"
        )
    if run.error:
        return f"    last run {when} ({run.trigger}) failed: {run.error}"
    return (
        f"    last run {when} ({run.trigger}, {run.seconds:.1f}s): "
        f"files +{run.files_added} ~{run.files_changed} -{run.files_removed}, "
        f"chunks +{run.chunks_added} -{run.chunks_removed}, "
        f"{run.embedding_tokens:,} embedding tokens"
    )


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
