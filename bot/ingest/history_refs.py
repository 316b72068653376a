"""What history reads of a repository beside its log: the tags (with their commits' times)
and a shallow clone's boundary (the commits whose parents it lacks)."""

from __future__ import annotations

from bot.ingest.clone import transport_args
from bot.ingest.git import Git
from bot.ingest.hosting import RemoteURL
from bot.store.history_records import TagRecord


def shallow_commits(git: Git) -> set[str]:
    """Commits whose parents a shallow clone lacks (their diffs would add every file)."""
    path = git.try_text("rev-parse", "--git-path", "shallow")
    if not path:
        return set()
    try:
        text = (git.cwd / path).read_text(encoding="ascii", errors="replace")
    except OSError:
        return set()
    return {line.strip() for line in text.splitlines() if line.strip()}


def list_tags(git: Git, remote: RemoteURL | None) -> dict[str, list[str]]:
    """Commit sha -> the tags pointing at it (a clone asks its remote: it has no tags)."""
    if remote is None:
        out = git.text(
            "for-each-ref", "refs/tags", "--format=%(refname:strip=2) %(objectname) %(*objectname)"
        )
        rows = [line.split() for line in out.splitlines()]
        pairs = [(r[0], r[2] if len(r) > 2 else r[1]) for r in rows if len(r) >= 2]
    else:
        listing = git.text(
            "ls-remote", *transport_args(remote.url), "--tags", "origin", transfer=True
        )
        peeled: dict[str, str] = {}
        for line in listing.splitlines():
            sha, _, ref = line.partition("\t")
            name = ref.removeprefix("refs/tags/")
            if name.endswith("^{}"):
                peeled[name[:-3]] = sha
            else:
                peeled.setdefault(name, sha)
        pairs = list(peeled.items())
    found: dict[str, list[str]] = {}
    for name, sha in pairs:
        found.setdefault(sha, []).append(name)
    return found


def tag_records(git: Git, tags: dict[str, list[str]]) -> list[TagRecord]:
    """Tags whose commit the repository has, with that commit's time."""
    shas = list(tags)
    times: dict[str, int] = {}
    check = "--batch-check=%(objectname) %(objecttype)"
    if shas:
        out = git.run("cat-file", check, input="".join(f"{s}\n" for s in shas).encode())
        present = [
            parts[0]
            for parts in (line.split() for line in out.decode("ascii", "replace").splitlines())
            if len(parts) == 2 and parts[1] == "commit"
        ]
        for i in range(0, len(present), 500):
            listing = git.text(
                "log", "--no-walk=unsorted", "--format=%H %ct", *present[i : i + 500]
            )
            for line in listing.splitlines():
                sha, _, ct = line.partition(" ")
                times[sha] = int(ct) if ct.isdigit() else 0
    return [
        TagRecord(name, sha, times[sha])
        for sha, names in tags.items()
        if sha in times
        for name in names
    ]
