"""History from a damaged repository: only the commits git cannot diff lose their changes.

One unreadable object (a loose object deleted, a corrupt pack entry, a blob a blobless
clone's promisor cannot give, a tree a damaged clone lacks) makes `git log -p` die, and
with it every commit's diff. When it does, the commits are listed without diffs (that
reads commit objects only; a missing commit ends the walk there, like a shallow cut),
then diffed in batches of `git log --no-walk`, halving the batches that fail until each
unreadable commit stands alone (about twice the work of one `git log -p` for one bad
object; at most MAX_CALLS calls). A commit left unread is recorded with the files it
touched (a raw listing, trees only) and no line ranges, and those files' lines lose their
attribution from it on (they read as older than the recorded history) rather than being
credited to an earlier commit; one whose trees are unreadable too cuts every file's lines.
A `git log` stopped by its deadline is not retried piecemeal (the halves would take as
long): its commits are recorded without their changes.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.ingest.git import Git, GitError
from bot.ingest.history_log import (
    FileDiff,
    RawCommit,
    add_merge_diffs,
    list_commits,
    read_commits,
    read_given,
)
from bot.store.history_unread import KEEP_SHAS, UnreadNote

log = logging.getLogger(__name__)

MAX_CALLS = 200  # git calls spent finding the unreadable commits
MAX_LISTED = 100  # unreadable commits whose touched files are listed (one call each)
_DAMAGE = re.compile(
    r"unable to read|could not read|bad object|invalid object|corrupt|inflate|"
    r"missing (?:blob|tree|commit|object)|failed to traverse|revision walk|lazy fetch|"
    r"promisor|not a valid object|unable to parse|packed object|loose object|"
    r"bad tree object|did not receive expected object",
    re.IGNORECASE,
)
_OBJECT = re.compile(r"\b([0-9a-f]{40}|[0-9a-f]{64})\b")


@dataclass(frozen=True, slots=True)
class Damage:
    """What reading the history lost."""

    unread: tuple[str, ...] = ()  # commits recorded without their changes (parents first)
    blind: frozenset[str] = frozenset()  # of those, the ones whose touched files are unknown
    reason: str = ""
    stopped: str = ""  # the walk ended at an unreadable commit ("" when it did not)

    def note(self) -> UnreadNote:
        """For the head's record: the unread commits, and a lost one the walk stopped at
        (tried again by its own id: readable once restored)."""
        shas, reason = self.unread, self.reason
        lost = _OBJECT.search(self.stopped)
        if lost is not None:
            shas = (lost.group(1), *shas)
            reason = f"git could not read commit {lost.group(1)[:12]}: older history stops there"
        if not shas:
            return UnreadNote()
        return UnreadNote(len(shas), shas[:KEEP_SHAS], reason)


def damage_reason(exc: GitError) -> str:
    """One line on why git could not read the repository's objects; "" for other failures."""
    if "timed out" in exc.user_message or "no progress" in exc.user_message:
        return exc.user_message.rstrip(".")
    text = f"{exc.detail} {exc.stderr}"
    if not _DAMAGE.search(text):
        return ""
    found = _OBJECT.search(text)
    what = f"object {found.group(1)[:12]}" if found else "an object"
    return f"git could not read {what}: missing or corrupt"


def readable_now(git: Git, unread: UnreadNote) -> bool:
    """Whether the commits once unreadable can be diffed now (one bounded `git log`)."""
    try:
        read_given(git, unread.shas)
    except GitError:
        return False
    return True


def logged(repo: str, damage: Damage) -> UnreadNote:
    """What damage cost, said once in the log (one line each, never a traceback)."""
    note = damage.note()
    if note:
        log.warning("history of %s: %s", repo, note.sentence())
    elif damage.stopped:
        log.warning("history of %s stops at an unreadable commit: %s", repo, damage.stopped)
    return note


def read_history(
    git: Git,
    revisions: Sequence[str],
    *,
    max_count: int = 0,
    since_days: int = 0,
    config: Sequence[str] = (),
) -> tuple[list[RawCommit], Damage]:
    """`read_commits`, losing only what damage must (see the module's note)."""
    try:
        commits = read_commits(
            git, revisions, max_count=max_count, since_days=since_days, config=config
        )
        return commits, Damage()
    except GitError as exc:
        reason = damage_reason(exc)
        if not reason:
            raise
        timed_out = "git could not read" not in reason
    listed, stopped = list_commits(git, revisions, max_count=max_count, since_days=since_days)
    if not listed:
        raise GitError("git could not read the repository's history.", stderr=stopped)
    listed = parents_first(listed)
    read = {} if timed_out else diff_readable(git, [c.sha for c in listed], config)
    commits = [read.get(c.sha, c) for c in listed]
    unread = [c for c in commits if c.sha not in read]
    blind = mark_touched(git, unread)
    damage = Damage(tuple(c.sha for c in unread), blind, reason, stopped)
    return commits, damage


def add_merge_diffs_damaged(
    git: Git,
    commits: Sequence[RawCommit],
    damage: Damage,
    *,
    needed: Iterable[str] | None = None,
    config: Sequence[str] = (),
) -> Damage:
    """`add_merge_diffs` for the readable commits; a merge whose other parents cannot be
    compared joins the unread (its touched files lose their lines)."""
    wanted = None if needed is None else frozenset(needed)
    unread = set(damage.unread)
    readable = [c for c in commits if c.sha not in unread]
    try:
        add_merge_diffs(git, readable, needed=wanted, config=config)
        return damage
    except GitError as exc:
        reason = damage_reason(exc)
        if not reason:
            raise
    merges = [c for c in readable if len(c.parents) > 1]
    lost = merges if "git could not read" not in reason else []  # a deadline: no retries
    for count, merge in enumerate(merges if not lost else []):
        if count >= MAX_CALLS:
            lost.extend(merges[count:])
            break
        try:
            add_merge_diffs(git, [merge], needed=wanted, config=config)
        except GitError as exc:
            if not damage_reason(exc):
                raise
            lost.append(merge)
    for merge in lost:
        merge.other_diffs.clear()
    blind = mark_touched(git, lost)
    order = {c.sha: i for i, c in enumerate(commits)}
    shas = sorted(unread | {c.sha for c in lost}, key=order.__getitem__)
    return Damage(tuple(shas), damage.blind | blind, damage.reason or reason, damage.stopped)


def parents_first(commits: Sequence[RawCommit]) -> list[RawCommit]:
    """`commits` ordered so that each comes after its parents among them."""
    by_sha = {c.sha: c for c in commits}
    done: set[str] = set()
    out: list[RawCommit] = []
    for root in reversed(commits):  # oldest first, as git listed them
        stack = [root.sha]
        while stack:
            sha = stack[-1]
            if sha in done:
                stack.pop()
                continue
            waiting = [p for p in by_sha[sha].parents if p in by_sha and p not in done]
            if waiting:
                stack.extend(reversed(waiting))
                continue
            done.add(sha)
            out.append(by_sha[sha])
            stack.pop()
    return out


def diff_readable(git: Git, shas: Sequence[str], config: Sequence[str]) -> dict[str, RawCommit]:
    """The commits of `shas` git can diff, found by halving the batches that fail."""
    found: dict[str, RawCommit] = {}
    pending = [list(shas)]
    calls = 0
    while pending and calls < MAX_CALLS:
        batch = pending.pop()
        calls += 1
        try:
            found.update((c.sha, c) for c in read_given(git, batch, config=config))
        except GitError as exc:
            reason = damage_reason(exc)
            if not reason:
                raise
            if "git could not read" not in reason:
                break  # a deadline: what is left stays unread
            if len(batch) > 1:
                middle = len(batch) // 2
                pending += [batch[middle:], batch[:middle]]  # the older half first
    return found


def mark_touched(git: Git, commits: Sequence[RawCommit]) -> frozenset[str]:
    """Give each unread commit its touched files (no lines: their attribution is lost);
    the shas of those whose trees cannot be read either."""
    blind: set[str] = set()
    for count, commit in enumerate(commits):
        commit.diffs = []
        commit.excerpt = ""
        listing = _raw_listing(git, commit) if count < MAX_LISTED else None
        if listing is None:
            blind.add(commit.sha)
            continue
        commit.diffs = listing
    return frozenset(blind)


def _raw_listing(git: Git, commit: RawCommit) -> list[FileDiff] | None:
    """The files `commit` changed against its first parent (trees only), None when its
    trees are unreadable too."""
    pair = [commit.parents[0], commit.sha] if commit.parents else ["--root", commit.sha]
    try:
        out = git.run("diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", *pair)
    except GitError as exc:
        if damage_reason(exc):
            return None
        raise
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    diffs = []
    for at, head in enumerate(fields[:-1]):  # ":modes oids S", then its path
        path = fields[at + 1]
        if not head.startswith(":") or not path:
            continue
        status = head.split()[-1][:1]
        old = "" if status == "A" else path
        new = "" if status == "D" else path
        diffs.append(FileDiff(old, new, binary=True))  # binary: no lines to follow
    return diffs
