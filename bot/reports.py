"""Text for the shared commands (status, repos, reindex, forget), in plain markdown.

Each function takes plain values (states, the run log, model names), never the
Core, so the core can use them without an import loop. Help is generated from
the command table in `bot.commands`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bot.errors import BotError
from bot.llm.pricing import describe_cost
from bot.models import RepoState, ago
from bot.store.base import HistoryRecords, IngestLocks, RunRecords, SymbolTable
from bot.store.history_unread import split_horizon
from bot.store.runs import DONE, RUNNING, Run
from bot.store.sqlite import notices

if TYPE_CHECKING:  # the ingest pipeline loads tree-sitter; `status` needs none
    from bot.ingest.pipeline import IngestReport


@dataclass(frozen=True, slots=True)
class StatusFacts:
    """What `status` reports on, handed over by the core as plain values and stores."""

    indexed: Sequence[RepoState]  # every indexed repository
    configured: Sequence[str]  # repositories named in codecite.toml
    scope: frozenset[str] | None  # what the asker may see; None = everything
    model: str  # chat model, "" for extractive answers
    embed_model: str  # "" for lexical search only
    index: str  # "local" or "pinecone"
    symbols: SymbolTable | None  # None: no symbol table could be opened
    runs: RunRecords
    locks: IngestLocks
    folders: Iterable[Path]  # where damaged files may have been set aside
    history: HistoryRecords | None = None  # None: no history store to ask


def status_text(facts: StatusFacts) -> str:
    scope = facts.scope
    states = [s for s in facts.indexed if scope is None or s.name in scope]
    indexed = {s.name for s in states}
    pending = [n for n in facts.configured if n not in indexed and (scope is None or n in scope)]
    model = facts.model or "none (extractive answers)"
    embed = facts.embed_model or "none (lexical search)"
    lines = [f"Model: {model}; embeddings: {embed}; index: {facts.index}"]
    if not states and not pending:
        lines.append("Nothing is indexed here yet.")
    symbol_commits = _symbol_commits(facts.symbols)
    for s in states:
        lines.append(f"• {s.freshness().describe()} — {s.files:,} files, {s.chunks:,} chunks")
        if symbol_commits is not None and symbol_commits.get(s.name) != s.commit:
            lines.append(
                "    symbol table: behind the index (an ingest stopped before updating it, or "
                "it was rebuilt); exact symbol answers use search until the next ingest"
            )
        lines.extend(_history_lines(facts.history, s.name))
        lines.extend(_run_lines(facts, s.name))
    for name in pending:  # configured, but no run has succeeded yet
        lines.append(f"• {name}: not indexed yet")
        lines.extend(_run_lines(facts, name))
    lines += [notice.sentence() for notice in notices(facts.folders)]  # last: reads may find one
    return "\n".join(lines)


def _history_lines(history: HistoryRecords | None, repo: str) -> list[str]:
    """What the recorded history lacks, when git could not read some of it."""
    try:
        head = history.head(repo) if history is not None else None
    except BotError:
        return []  # an unreadable store is reported where it is used
    unread = split_horizon(head.horizon)[1] if head is not None else None
    return [f"    history: {unread.sentence()}"] if unread else []


def _symbol_commits(symbols: SymbolTable | None) -> dict[str, str] | None:
    if symbols is None:
        return None
    try:
        return symbols.commits()
    except BotError:
        return None  # an unreadable table is reported where it is used


def _run_lines(facts: StatusFacts, repo: str) -> list[str]:
    runs = facts.runs
    out = []
    last = runs.last(repo)
    if last is not None:
        live = last.state == RUNNING and facts.locks.busy(repo)
        out.append(_run_line(last, live))
        if not (last.ok or live):
            good = runs.last_ok(repo)
            out.append(
                f"    last successful run {ago(good.started_at)} ({good.trigger})"
                if good is not None
                else "    no run has succeeded yet"
            )
    used, saved = runs.embedding_totals(repo)
    if facts.embed_model and (used or saved):
        out.append(
            f"    embeddings: {used:,} tokens ({describe_cost(facts.embed_model, used)}), "
            f"{saved:,} saved by the cache"
        )
    upcoming = runs.next_run(repo)
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
        f"{run.embedding_tokens:,} embedding tokens" + _left_out(run)
    )


def _left_out(run: Run) -> str:
    """What the run kept out of the index for holding secrets, as a sentence's tail."""
    parts = []
    if run.secret_files:
        parts.append(_count(run.secret_files, "file holding a secret", "files holding secrets"))
    if run.key_blocks:
        parts.append(_count(run.key_blocks, "private key block"))
    if run.redactions:
        parts.append(_count(run.redactions, "other secret") + " redacted")
    return f"; left out: {_listed(parts)}" if parts else ""


def repos_text(indexed: Iterable[RepoState], scope: frozenset[str] | None) -> str:
    states = {s.name: s for s in indexed}
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


@dataclass(frozen=True, slots=True)
class ForgetPreview:
    """What forgetting a repository would remove (`state` None: an earlier forget of it
    stopped after the index; only leftovers remain)."""

    repo: str
    state: RepoState | None
    symbols: int  # definitions in the symbol table
    clone: bool  # a clone under CODECITE_HOME/repos


@dataclass(frozen=True, slots=True)
class ForgetReport:
    repo: str
    state: RepoState | None  # what the index held; None when only leftovers were found
    symbols: int
    runs: int
    jobs: int  # queued re-index jobs cancelled
    clone: bool


def forget_preview_text(preview: ForgetPreview, confirm: str) -> str:
    """The question asked before anything is removed; `confirm` says how to say yes."""
    state, what = preview.state, []
    if state is not None:
        when = state.freshness().describe().removeprefix(f"{preview.repo} ")
        what.append(f"its {_index_part(state)} in the index ({when})")
    what.append(f"its {_count(preview.symbols, 'symbol')}" if preview.symbols else "its symbols")
    what.append("its run history")
    if preview.clone:
        what.append("its clone")
    head = f"Forget {preview.repo}?"
    if state is None:
        head = (
            f"{preview.repo} is not indexed, but traces of it are left (from a forget that "
            "stopped midway, or a first index that failed). Forget what is left?"
        )
    return (
        f"{head} This removes {_listed(what)}; answers stop citing it at once. Past answers "
        "and their feedback stay on record, and it can be indexed again later.\n"
        f"To confirm: {confirm}"
    )


def forgot_text(report: ForgetReport) -> str:
    state, done = report.state, []
    if state is not None:
        done.append(f"{_index_part(state)} from the index")
    done.append(f"{_count(report.symbols, 'symbol')} from the symbol table")
    done.append(f"{_count(report.runs, 'run')} from the run log")
    if report.jobs:
        done.append(f"{_count(report.jobs, 'queued re-index', 'queued re-indexes')}")
    if report.clone:
        done.append("its clone")
    verb = "Forgot" if state is not None else "Finished forgetting"
    return f"{verb} {report.repo}: removed {_listed(done)}."


def _index_part(state: RepoState) -> str:
    return f"{_count(state.files, 'file')} and {_count(state.chunks, 'chunk')}"


def _count(n: int, noun: str, plural: str = "") -> str:
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def _listed(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
