""" "What changed since <tag | date>": the commits after it, and a summary by area.

A tag among the recorded commits splits them by ancestry (what the tag's commit cannot
reach is "since"), as `git log <tag>..HEAD` would; a tag older than the horizon, or a
date, splits them by commit time. "What changed in the text formatter since v1.8.1"
names an area: when the question's words name paths those commits touched
(`text_formatter.go`, `zapcore/`), only the commits touching them count. Three hundred
subjects help nobody, so the answer counts commits by area (directory) and names the
definitions they changed most.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from bot.answer.history_refs import date_of
from bot.retrieval.history_intent import HistoryIntent
from bot.retrieval.history_search import CommitCorpus
from bot.store.history_records import CommitRecord, TagRecord
from bot.text.tokens import code_tokens, path_tokens, query_words

RECENT = 50  # "recent changes" with no start: the newest commits
AREAS = 8
SYMBOLS_PER_AREA = 4
# Words of a "since" question that name no area: its frame, and what any part is called.
_NOT_AREA = frozenset(
    "changed change changes new happened landed merged commits commit release version tag "
    "code part parts module modules file files package packages directory folder repo "
    "repository project everything anything last past week weeks month months year years day "
    "days yesterday today recent recently lately ago".split()
)


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


def in_area(commits: Sequence[CommitRecord], question: str, repo: str) -> list[CommitRecord]:
    """The commits touching the paths the question's words name best; all when none does.

    A path's score is how many of the area words (the question's words less its frame, the
    tag and the repository's own name) its directory and file names hold."""
    skip = set(code_tokens(repo.replace("/", " ")))
    words = [
        w
        for w in query_words(question.split(" since ")[0].split(" after ")[0])
        if w[0] not in _NOT_AREA and not set(w) & skip and not any(ch.isdigit() for ch in w[0])
    ]
    if not words:
        return list(commits)
    scores: dict[str, int] = {}
    for path in {p for c in commits for p in c.paths}:
        held = set(path_tokens(path))
        scores[path] = sum(1 for w in words if held.intersection(w))
    best = max(scores.values(), default=0)
    if best == 0:
        return list(commits)
    named = {p for p, n in scores.items() if n == best}
    return [c for c in commits if named.intersection(c.paths)]


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
