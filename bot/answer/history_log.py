"""`codecite log <repo> [path|symbol]`: the recorded commits that touched a path or a
definition, newest first. A path matches a file or a directory; a symbol is found in the
symbol table and its current lines are followed back (`FileLines.touching`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.answer.history_refs import change_ref
from bot.errors import BotError
from bot.models import ChangeRef
from bot.retrieval.history_search import CommitCorpus
from bot.store.base import SymbolTable
from bot.store.history_records import CommitRecord, FileLines

LinesOf = Callable[[str, str], FileLines | None]


@dataclass(frozen=True, slots=True)
class LogResult:
    repo: str
    target: str  # what was followed: "" (everything), a path, or `symbol (path:Lx-Ly)`
    commits: tuple[ChangeRef, ...]  # newest first


def log_of(
    corpus: CommitCorpus,
    repo: str,
    target: str,
    web_url: str,
    lines_of: LinesOf,
    symbols: SymbolTable | None,
    limit: int,
) -> LogResult:
    target = target.strip().strip("/")
    newest = sorted(corpus.commits, key=lambda c: (c.committed, c.seq), reverse=True)
    if not target:
        return _result(repo, "", newest[:limit], web_url)
    by_path = [c for c in newest if any(p == target or p.startswith(target + "/") for p in c.paths)]
    if by_path:
        followed = _followed(corpus, by_path, lines_of(repo, target))
        return _result(repo, target, followed[:limit], web_url)
    found = symbols.definitions(target, repos=frozenset({repo}), limit=5) if symbols else []
    for d in found:
        commits = corpus.touching(lines_of(repo, d.path), d.start_line, d.end_line)
        if commits:
            where = f"{d.symbol} ({d.path}:L{d.start_line}-L{d.end_line})"
            return _result(repo, where, commits[:limit], web_url)
    named = [c for c in newest if any(s.endswith(f"::{target}") for s in c.symbols)]
    if named:
        return _result(repo, target, named[:limit], web_url)
    raise BotError(f"No recorded commit of {repo} touched a path or symbol named {target!r}.")


def _followed(
    corpus: CommitCorpus, by_path: list[CommitRecord], lines: FileLines | None
) -> list[CommitRecord]:
    """A file's commits and those that wrote its current lines under an earlier name (a
    rename followed back, like `git log --follow`, through the line attribution), newest
    first. A commit before a rename whose lines were all replaced since is not among them."""
    if lines is None:
        return by_path
    end = sum(count for count, _ in lines.runs)
    found = {c.sha: c for c in [*by_path, *corpus.touching(lines, 1, end)]}
    return sorted(found.values(), key=lambda c: (c.committed, c.seq), reverse=True)


def _result(repo: str, target: str, commits: list[CommitRecord], web_url: str) -> LogResult:
    return LogResult(repo, target, tuple(change_ref(c, web_url) for c in commits))
