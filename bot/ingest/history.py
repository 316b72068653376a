"""Record a repository's history beside its index: commits, tags, and who changed each line.

Each ingest brings the recorded history up to the indexed commit:
  - first time (or new horizon settings): the newest `commits` commits (and/or those of
    the last `days` days) are read, line states computed from nothing (lines older
    than the oldest recorded commit are "older than the recorded history");
  - the recorded head is an ancestor of the new one: only the commits between are read,
    the line states of the files they touch are loaded, carried forward and written back;
  - it is not (a force-push rewrote history): everything is recorded afresh.
A blobless clone fetches the blobs those diffs read first, in `fetch_blobs`' bounded
batches, so git never fetches on its own. Messages and diff excerpts are scrubbed of
secrets like code. In a damaged repository only the commits git cannot read lose their
changes (`history_damage`); the head notes them (`history_unread`), `status` says so, and
each later ingest tries them again (one small `git log`), rebuilding once they read. The
history is written in one transaction after the index: a failure
leaves the previous history (and the index) as they were, and the next ingest retries.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

from bot.errors import BotError
from bot.ingest.clone import fetch_blobs
from bot.ingest.diff_secrets import scrub_excerpt
from bot.ingest.git import Git, GitError
from bot.ingest.github_prs import enrich_quietly
from bot.ingest.history_damage import (
    add_merge_diffs_damaged,
    damage_reason,
    logged,
    read_history,
    readable_now,
)
from bot.ingest.history_lines import Files, LineTracker
from bot.ingest.history_log import (
    EXCERPT_WIDTH,
    FileDiff,
    RawCommit,
    blob_ids,
)
from bot.ingest.history_refs import list_tags, shallow_commits, tag_records
from bot.ingest.history_skips import lines_needed, undiffed_skips
from bot.ingest.hosting import RemoteURL
from bot.ingest.secrets import scrub
from bot.store.base import HistoryRecords, SymbolTable
from bot.store.history_records import (
    CommitRecord,
    FileLines,
    HistoryHead,
    HistoryUpdate,
)
from bot.store.history_unread import UnreadNote, split_horizon, with_unread

log = logging.getLogger(__name__)

DEFAULT_COMMITS = 1000  # sympy: about ten months; what it costs: bench/history.py
DEFAULT_DAYS = 0  # no limit by age unless set
SYMBOLS_PER_DEFINITION = 3  # commits a definition's lines name as having changed them
BODY_CHARS = 4000
_MERGE_PR = re.compile(r"^Merge pull request #(\d+)\b")
_SQUASH_PR = re.compile(r"\(#(\d+)\)\s*$")
_GITLAB_MR = re.compile(r"See merge request [\w./-]*!(\d+)")
_REF = re.compile(r"(?<![\w&/#])(?:#|gh-|GH-)(\d{1,7})\b")


@dataclass(frozen=True, slots=True)
class HistoryOptions:
    enabled: bool = True
    commits: int | None = None  # None: DEFAULT_COMMITS; 0: no limit
    days: int | None = None  # None: DEFAULT_DAYS; 0: no limit
    # Pull-request titles from GitHub (`bot.ingest.github_prs`) when a token is given.
    github_token: str = field(default="", repr=False)
    github_api_url: str = "https://api.github.com"

    @property
    def max_commits(self) -> int:
        return DEFAULT_COMMITS if self.commits is None else self.commits

    @property
    def max_days(self) -> int:
        return DEFAULT_DAYS if self.days is None else self.days

    @property
    def horizon(self) -> str:
        return f"commits={self.max_commits};days={self.max_days}"


@dataclass(frozen=True, slots=True)
class HistoryReport:
    commits_added: int = 0
    commits: int = 0  # recorded in all
    rebuilt: bool = False  # everything was recorded afresh
    rewritten: bool = False  # because the recorded head is no longer an ancestor
    seconds: float = 0.0
    failed: str = ""  # why the history could not be brought up to date ("" when it was)
    unread: UnreadNote = UnreadNote()  # noqa: RUF009  (frozen) commits recorded without diffs


@dataclass(frozen=True, slots=True)
class GitAccess:
    """What history needs of a git source: its runner and, for a clone, the remote."""

    git: Git
    remote: RemoteURL | None
    web_url: str = ""  # https address of the repository's host page, "" when unknown
    lacking: frozenset[str] = frozenset()  # blobs the remote already refused (not asked again)


class HistorySync:
    def __init__(
        self, store: HistoryRecords, repo: str, symbols: SymbolTable | None = None
    ) -> None:
        self._store = store
        self._repo = repo
        self._symbols = symbols

    def run(
        self,
        access: GitAccess,
        head: str,
        options: HistoryOptions,
        kept: Collection[str] | None = None,
    ) -> HistoryReport:
        """`kept`: the paths the index holds at `head`; line states are carried for those
        (and the paths they were renamed from) only. None: for every file."""
        started = time.monotonic()
        recorded = self._store.head(self._repo)
        if not options.enabled:
            if recorded is not None:
                self._store.remove_repo(self._repo)
            return HistoryReport()
        horizon, before = split_horizon(recorded.horizon) if recorded else ("", UnreadNote())
        same = recorded is not None and horizon == options.horizon
        # commits once unreadable are tried again: readable now, the history is rebuilt
        retry = same and bool(before) and readable_now(access.git, before)
        if same and recorded is not None and recorded.head == head and not retry:
            return HistoryReport(commits=recorded.commits, unread=before)
        incremental = (
            same and not retry and recorded is not None
            and _is_ancestor(access.git, recorded.head, head)
        )  # fmt: skip
        rewritten = same and not retry and not incremental
        if rewritten:
            log.info("%s: the recorded history was rewritten; recording it afresh", self._repo)
        assert recorded is not None or not incremental
        revisions = [f"{recorded.head}..{head}"] if incremental and recorded else [head]
        limit = options.max_commits
        days = 0 if incremental else options.max_days
        if access.remote is not None:
            _fetch_diff_blobs(access, revisions, limit, days)
        with undiffed_skips() as config:
            commits, damage = read_history(
                access.git, revisions, max_count=limit, since_days=days, config=config
            )
            needed = None if kept is None else lines_needed(commits, kept)
            damage = add_merge_diffs_damaged(
                access.git, commits, damage, needed=needed, config=config
            )
        unread = logged(self._repo, damage)
        if incremental:
            unread = before.joined(unread)
        base_seq = self._store.last_seq(self._repo) if incremental else 0
        seqs = {c.sha: base_seq + i for i, c in enumerate(commits, start=1)}
        start: dict[str, Files] = {}
        touched = _touched_paths(commits)
        if incremental and recorded is not None:
            wanted = touched if needed is None else [p for p in touched if p in needed]
            loaded = self._store.file_lines(self._repo, wanted)
            start[recorded.head] = {p: f.lines() for p, f in loaded.items()}
        tracker = LineTracker(seqs, start, needed)
        tracker.expect(commits)
        boundary = shallow_commits(access.git)
        for commit in commits:
            tracker.add(commit, boundary=commit.sha in boundary or commit.sha in damage.blind)
        head_files = tracker.files(head) if commits else {}
        files = [FileLines.of(p, lines) for p, lines in sorted(head_files.items())]
        removed = [] if not incremental else sorted(set(touched) - set(head_files))
        tags = list_tags(access.git, access.remote)
        records = [_record(c, seqs[c.sha], tags) for c in commits]
        total = (recorded.commits if incremental and recorded else 0) + len(records)
        oldest = min((c.committed for c in commits), default=0)
        if incremental and recorded is not None:
            oldest = recorded.oldest
        complete = bool(commits) and not commits[0].parents and not boundary and not damage.stopped
        if incremental and recorded is not None:
            complete = recorded.complete
        update = HistoryUpdate(
            head=HistoryHead(
                self._repo, head, with_unread(options.horizon, unread), oldest, complete, total
            ),
            commits=records,
            files=files,
            removed_paths=removed,
            tags=tag_records(access.git, tags),
            symbols=self._symbols_of(files, records),
            replace=not incremental,
        )
        self._store.apply(update)
        if options.github_token and access.web_url:
            # every recorded number not cached yet: one refused or rate-limited before too
            numbers = [c.pr for c in self._store.commits(self._repo) if c.pr]
            enrich_quietly(
                self._store, self._repo, access.web_url, numbers,
                options.github_token, options.github_api_url,
            )  # fmt: skip
        return HistoryReport(
            commits_added=len(records),
            commits=total,
            rebuilt=not incremental,
            rewritten=rewritten,
            seconds=time.monotonic() - started,
            unread=unread,
        )

    def _symbols_of(
        self, files: Sequence[FileLines], records: Sequence[CommitRecord]
    ) -> dict[str, tuple[str, ...]]:
        """Per new commit, the definitions whose current lines it changed (the symbol table
        knows where each definition is at the indexed commit)."""
        if self._symbols is None or not files or not records:
            return {}
        by_seq = {r.seq: r for r in records}
        parents = {r.seq: len(r.parents) for r in records if r.is_merge}
        committed = {r.seq: r.committed for r in records}
        facts = self._symbols.file_facts(self._repo, [f.path for f in files])
        found: dict[str, list[str]] = {}
        for f in files:
            fact = facts.get(f.path)
            for definition in fact.definitions if fact is not None else ():
                seqs = f.touching(definition.start_line, definition.end_line, parents, committed)
                for seq in seqs[:SYMBOLS_PER_DEFINITION]:
                    record = by_seq.get(seq)
                    if record is not None:
                        where = f"{f.path}::{definition.symbol}"
                        found.setdefault(record.sha, []).append(where)
        return {sha: tuple(dict.fromkeys(names))[:50] for sha, names in found.items()}


def record_history(
    store: HistoryRecords | None,
    symbols: SymbolTable | None,
    source: object,
    repo: str,
    options: HistoryOptions,
    kept: Collection[str] | None = None,
) -> HistoryReport | None:
    """Bring `repo`'s history up to `source`'s commit; None for a source without history
    (a plain directory) or without a store. `kept`: the paths indexed at that commit (see
    `HistorySync.run`). A failure is logged and reported, never raised: the index is
    already in, and the next ingest tries again."""
    from bot.ingest.git_source import GitSource

    if store is None or not isinstance(source, GitSource) or not source.checkout.commit:
        return None
    access = GitAccess(source.git, source.remote, source.checkout.web_url, source.lacking)
    try:
        sync = HistorySync(store, repo, symbols)
        return sync.run(access, source.checkout.commit, options, kept)
    except BotError as exc:
        reason = exc.detail or exc.user_message
        log.warning("history of %s not recorded: %s", repo, reason)
        return HistoryReport(failed=exc.user_message)


def history_current(
    store: HistoryRecords | None, repo: str, commit: str, options: HistoryOptions
) -> bool:
    """Whether the recorded history already matches `commit` and `options`."""
    if store is None:
        return True
    try:
        head = store.head(repo)
    except BotError:
        return False
    if not options.enabled:
        return head is None
    if head is None:
        return False
    horizon, unread = split_horizon(head.horizon)
    return head.head == commit and horizon == options.horizon and not unread  # unread: retry


def _is_ancestor(git: Git, old: str, new: str) -> bool:
    """`old` is reachable from `new` (False too when `old` is no longer in the repository)."""
    return git.try_text("merge-base", "--is-ancestor", old, new) is not None


def _touched_paths(commits: Iterable[RawCommit]) -> list[str]:
    paths: set[str] = set()
    for commit in commits:
        for diffs in (commit.diffs, *commit.other_diffs.values()):
            for d in diffs:
                paths.update(p for p in (d.old_path, d.new_path) if p)
    return sorted(paths)


def _fetch_diff_blobs(access: GitAccess, revisions: Sequence[str], limit: int, days: int) -> None:
    """A blobless clone fetches every blob the diffs will read, before git reads them."""
    assert access.remote is not None
    try:
        wanted = sorted(blob_ids(access.git, revisions, max_count=limit, since_days=days))
    except GitError as exc:
        if not damage_reason(exc):
            raise
        log.warning("history blobs not fetched: %s", damage_reason(exc))
        return  # the diffs that need them are recorded without their changes
    # What the clone holds, listed without touching the promisor remote (asking about one
    # missing object, cat-file and rev-list both try to fetch it, or die)
    listing = access.git.run(
        "cat-file", "--batch-all-objects", "--unordered", "--batch-check=%(objectname)"
    )
    present = set(listing.decode("ascii", "replace").split())
    missing = [oid for oid in wanted if oid not in present and oid not in access.lacking]
    if missing:
        log.info("fetching %d blobs for the history diffs", len(missing))
        fetch_blobs(access.git, missing, access.remote)


def _record(commit: RawCommit, seq: int, tags: dict[str, list[str]]) -> CommitRecord:
    subject = _scrubbed(commit.subject)
    body = _scrubbed(commit.body[:BODY_CHARS])
    message = f"{subject}\n{body}"
    prs = _pull_requests(subject, body)
    refs = tuple(dict.fromkeys(int(n) for n in _REF.findall(message) if int(n) not in prs))[:20]
    spans = _new_lines(commit.diffs)
    ranges = ";".join(
        f"{path}:{','.join(f'{a}-{b}' for a, b in pairs[:20])}" for path, pairs in spans.items()
    )
    paths = tuple(dict.fromkeys(d.new_path or d.old_path for d in commit.diffs))
    excerpt = "" if len(commit.parents) > 1 else scrub_excerpt(commit.excerpt, EXCERPT_WIDTH)
    return CommitRecord(
        seq=seq,
        sha=commit.sha,
        parents=commit.parents,
        author=commit.author,
        email=commit.email,
        authored=commit.authored,
        committed=commit.committed,
        subject=subject,
        body=body,
        tags=tuple(tags.get(commit.sha, ())),
        prs=prs,
        refs=refs,
        paths=paths[:500],
        ranges=ranges[:20_000],
        excerpt=excerpt,
    )


def _scrubbed(text: str) -> str:
    """`text` with its secrets redacted; blank text (most bodies) has none to look for."""
    return scrub(text, "").text if text.strip() else text


def _pull_requests(subject: str, body: str) -> tuple[int, ...]:
    for pattern, text in ((_MERGE_PR, subject), (_SQUASH_PR, subject), (_GITLAB_MR, body)):
        match = pattern.search(text)
        if match:
            return (int(match.group(1)),)
    return ()


def _new_lines(diffs: Iterable[FileDiff]) -> dict[str, list[tuple[int, int]]]:
    """The line ranges each diff added, in the new file's numbering (for the record)."""
    out: dict[str, list[tuple[int, int]]] = {}
    for d in diffs:
        if d.new_path:
            spans = [(c, c + n - 1) for _, _, c, n in d.hunks if n > 0]
            if spans:
                out[d.new_path] = spans
    return out
