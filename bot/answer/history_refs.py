"""A recorded commit as an answer shows it: its date, its permalinks, its citation."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.answer.permalinks import commit_link, pull_request_link
from bot.models import ChangeRef, Citation
from bot.store.history_records import CommitRecord


def date_of(when: int) -> str:
    return datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%d") if when else "?"


def change_ref(commit: CommitRecord, web_url: str) -> ChangeRef:
    return ChangeRef(
        sha=commit.sha,
        date=date_of(commit.authored),
        author=commit.author,
        subject=commit.subject,
        pr=commit.pr,
        url=commit_link(web_url, commit.sha),
        pr_url=pull_request_link(web_url, commit.pr),
    )


def commit_citation(repo: str, commit: CommitRecord, web_url: str) -> Citation:
    ref = change_ref(commit, web_url)
    path = commit.paths[0] if commit.paths else ""
    return Citation(repo, path, 0, 0, ref.url, kind="commit", sha=commit.sha, changed=ref)
