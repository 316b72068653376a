""" "What changed since <tag | date>": the commits after it, and a summary by area.

A tag among the recorded commits splits them by ancestry (what the tag's commit cannot
reach is "since"), as `git log <tag>..HEAD` would; a tag older than the horizon, or a
date, splits them by commit time. Three hundred subjects help nobody, so the answer
counts commits by area (directory) and names the definitions they changed most.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from bot.answer.history_refs import date_of
from bot.retrieval.history_intent import HistoryIntent
from bot.retrieval.history_search import CommitCorpus
from bot.store.history_records import CommitRecord, TagRecord

RECENT = 50  # "recent changes" with no start: the newest commits
AREAS = 8
SYMBOLS_PER_AREA = 4


def since_commits(
    corpus: CommitCorpus, tags: Sequence[TagRecord], intent: HistoryIntent
) -> tuple[list[CommitRecord], str]:
    """The commits after the question's start, newest first, and how the start was read."""
    commits = corpus.commits
    tag = _tag(tags, intent.since_tag) if intent.since_tag else None
    if tag is not None and tag.sha in corpus.by_sha:
        before = _ancestors(corpus, tag.sha)
        found = [c for c in commits if c.sha not in before]
        start = f"since {tag.name} ({date_of(tag.committed)})"
    elif tag is not None:
        found = [c for c in commits if c.committed > tag.committed]
        start = f"since {tag.name} ({date_of(tag.committed)}, older than the recorded history)"
    elif intent.since_time:
        found = [c for c in commits if c.committed >= intent.since_time]
        start = f"since {date_of(intent.since_time)}"
    else:
        found = commits[-RECENT:]
        start = f"in the newest {len(found)} recorded commits"
        if intent.since_tag:
            start = f"(no tag {intent.since_tag} is recorded) {start}"
    return sorted(found, key=lambda c: (c.committed, c.seq), reverse=True), start


def summary_text(repo: str, commits: Sequence[CommitRecord], start: str) -> str:
    if not commits:
        return f"Nothing recorded changed in {repo} {start}."
    own = [c for c in commits if not c.is_merge] or list(commits)
    authors = len({c.author for c in own})
    lines = [f"{repo} {start}: {len(own)} commits by {authors} authors. By area:"]
    areas: Counter[str] = Counter()
    symbols: dict[str, Counter[str]] = {}
    for c in own:
        for area in {_area(p) for p in c.paths}:
            areas[area] += 1
            mine = (s.rpartition("::")[2] for s in c.symbols if _area(s.partition("::")[0]) == area)
            symbols.setdefault(area, Counter()).update(mine)
    for area, count in areas.most_common(AREAS):
        named = ", ".join(f"`{s}`" for s, _ in symbols[area].most_common(SYMBOLS_PER_AREA))
        lines.append(f"- {area} ({count} commits){': ' + named if named else ''}")
    if len(areas) > AREAS:
        lines.append(f"- and {len(areas) - AREAS} more areas")
    lines.append("Notable commits:")
    return "\n".join(lines)


def _area(path: str) -> str:
    parts = path.split("/")
    if len(parts) <= 1:
        return "(top level)"
    depth = 2 if parts[0] in ("src", "lib", "pkg", "packages", "crates") and len(parts) > 2 else 1
    return "/".join(parts[:depth])


def _tag(tags: Sequence[TagRecord], name: str) -> TagRecord | None:
    wanted = {name, name.removeprefix("v"), f"v{name.removeprefix('v')}"}
    return next((t for t in tags if t.name in wanted), None)


def _ancestors(corpus: CommitCorpus, sha: str) -> set[str]:
    seen = {sha}
    stack = [sha]
    while stack:
        commit = corpus.by_sha.get(stack.pop())
        for parent in commit.parents if commit is not None else ():
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return seen
