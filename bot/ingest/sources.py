"""Repository sources: what files a repository has at one commit, and their text.

`open_source` accepts a git URL (cloned blobless into `home/repos/<name>` and
fetched on later opens), a local git repository (read from the commit's
objects, never the working tree) or a plain directory (walked). Each source
lists the files worth indexing, sorted by path, counting every skip by reason.

Content checks (binary, generated, minified...) need the bytes, so `files()`
reads each candidate once; the kept bytes are held (up to a budget) for the
`read_text`/`read_many` calls that usually follow, so nothing is read twice.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import stat
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.errors import SourceError
from bot.ingest import filters, trees
from bot.ingest.clone import fetch_blobs, sync_clone
from bot.ingest.git import Git, base_env
from bot.ingest.hosting import RemoteURL, is_url, parse_remote, redact, web_url_for

log = logging.getLogger(__name__)

# Content verdicts by blob, shared by every git source: a re-ingest reads only new blobs.
MEMO = filters.VerdictMemo(100_000)
CACHE_BYTES = 128 << 20  # file contents kept between files() and read_many()
_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_BRANCH = re.compile(r"^(?!-)(?!.*\.\.)(?!.*@\{)[A-Za-z0-9._/@+-]+(?<![./])$")


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str  # repo-relative, posix
    blob: str  # git blob sha; for plain directories the git-compatible sha of the content
    size: int


@dataclass(frozen=True, slots=True)
class Checkout:
    name: str
    root: Path
    commit: str  # "" for a plain directory
    branch: str
    source: str  # URL without credentials, or the absolute local path
    web_url: str  # https web URL for permalinks, "" if unknown or local


@dataclass(frozen=True, slots=True)
class _Entry:
    """A listing row before filtering. `blob` is "" when unknown until read."""

    path: str
    blob: str
    size: int
    kind: str  # file, symlink, submodule, special, or why the entry cannot be listed


def default_name(location: str) -> str:
    """`https://github.com/psf/requests.git` -> `requests`; a path -> its directory name."""
    text = location.strip().rstrip("/")
    if is_url(text):
        tail = re.split(r"[/:]", text)[-1]
    else:
        tail = Path(text).expanduser().resolve().name if text else ""
    tail = _NAME.sub("-", tail.removesuffix(".git")).strip("-.")
    return tail or "repo"


def git_blob_sha(data: bytes) -> str:
    """The sha git would give `data` as a blob, so plain directories get comparable ids."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def open_source(
    location: str,
    *,
    home: Path,
    name: str | None = None,
    branch: str | None = None,
    token: str | None = None,
    max_file_bytes: int = 1_000_000,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> Source:
    """Open a repository for listing and reading; SourceError with a reason if it cannot be."""
    name = _checked_name(name if name is not None else default_name(location))
    if branch is not None and branch != "" and not _BRANCH.match(branch):
        raise SourceError(f"{branch!r} is not a valid branch name.")
    options = _Options(max_file_bytes, filters.PathPatterns(include), filters.PathPatterns(exclude))
    text = location.strip()
    if not text:
        raise SourceError("No repository location was given.")
    local = Path(text).expanduser()
    if not is_url(text) or local.exists():
        return _open_local(local.resolve(), name, branch or None, options)
    remote = parse_remote(text)
    dest = home / "repos" / name
    git, commit, resolved = sync_clone(remote, dest, branch or None, token)
    checkout = Checkout(name, dest, commit, resolved, remote.url, web_url_for(remote.url))
    log.info("opened %s at %s@%s", checkout.source, resolved, commit[:12])
    return GitSource(checkout, git, options, remote)


def _checked_name(name: str) -> str:
    if not name or name in (".", "..") or any(c in name for c in "/\\\0#") or name.strip() != name:
        raise SourceError(f"{redact(name)!r} is not a usable repository name.")
    return name


@dataclass(frozen=True, slots=True)
class _Options:
    max_file_bytes: int
    include: filters.PathPatterns
    exclude: filters.PathPatterns


def _open_local(root: Path, name: str, branch: str | None, options: _Options) -> Source:
    if not root.exists():
        raise SourceError(f"{root} does not exist and is not a git URL.")
    if not root.is_dir():
        raise SourceError(f"{root} is not a directory.")
    if _is_git_repo(root):
        return _open_local_git(root, name, branch, options)
    if branch:
        raise SourceError(f"{root} is not a git repository, so branch {branch!r} cannot be used.")
    checkout = Checkout(name, root, "", "", str(root), "")
    return DirectorySource(checkout, options)


def _is_git_repo(root: Path) -> bool:
    if (root / ".git").exists():
        return True
    if not ((root / "HEAD").is_file() and (root / "objects").is_dir()):
        return False
    return Git(root).try_text("rev-parse", "--is-bare-repository") == "true"


def _open_local_git(root: Path, name: str, branch: str | None, options: _Options) -> Source:
    git = Git(root, base_env())
    commit = git.try_text("rev-parse", "--verify", "--quiet", f"{branch or 'HEAD'}^{{commit}}")
    if not commit:
        if branch:
            raise SourceError(f"Branch {branch!r} was not found in {root}.")
        raise SourceError(f"The git repository {root} has no commits yet.")
    current = branch or git.try_text("symbolic-ref", "--quiet", "--short", "HEAD") or ""
    origin = git.try_text("config", "--get", "remote.origin.url") or ""
    checkout = Checkout(name, root, commit, current, str(root), web_url_for(origin))
    return GitSource(checkout, git, options)


class Source(ABC):
    """Files of one repository at one commit (or a directory as it is now).

    One thread at a time: a source owns one `git cat-file` process.
    """

    def __init__(self, checkout: Checkout, options: _Options) -> None:
        self.checkout = checkout
        self._options = options
        self._skipped: Counter[str] = Counter()
        self._cache: dict[str, tuple[str, bytes]] = {}  # path -> (blob, bytes)
        self._cached_bytes = 0
        self._memo: filters.VerdictMemo | None = None  # set where blob ids name the content

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Drop cached contents and stop helper processes; the source can be used again."""
        self._cache.clear()
        self._cached_bytes = 0

    def files(self) -> Iterator[SourceFile]:
        """The files to index, sorted by path; `skipped()` is complete once this is exhausted."""
        self._skipped = Counter()
        self.close()
        candidates = []
        for entry in self._entries():
            reason = self._listing_reason(entry)
            if reason is None:
                candidates.append(entry)
            else:
                self._skipped[reason] += 1
        memo = self._memo
        known = [memo.lookup(_memo_key(e)) if memo else (False, None) for e in candidates]
        contents = self._contents(
            [e for e, (hit, _) in zip(candidates, known, strict=True) if not hit]
        )
        for entry, (hit, verdict) in zip(candidates, known, strict=True):
            data = None
            if not hit:
                data = next(contents)
                verdict = "unreadable" if data is None else self._content_reason(entry, data)
                if memo and data is not None:
                    memo.put(_memo_key(entry), verdict)
            if verdict is not None:
                self._skipped[verdict] += 1
                continue
            if data is None:  # content verdict remembered from an earlier listing
                yield SourceFile(entry.path, entry.blob, entry.size)
                continue
            found = SourceFile(entry.path, entry.blob or git_blob_sha(data), len(data))
            self._remember(found, data)
            yield found

    def skipped(self) -> Counter[str]:
        return Counter(self._skipped)

    def read_text(self, f: SourceFile) -> str:
        return next(self.read_many([f]))[1]

    def read_many(self, files: Sequence[SourceFile]) -> Iterator[tuple[SourceFile, str]]:
        """(file, text) in the given order; one streaming reader for everything not cached."""
        held = [self._take(f) for f in files]
        stream = self._read([f for f, data in zip(files, held, strict=True) if data is None])
        for f, data in zip(files, held, strict=True):
            yield f, _decode(data if data is not None else next(stream))

    def _listing_reason(self, entry: _Entry) -> str | None:
        if entry.kind != "file":
            return entry.kind
        opts = self._options
        if (opts.include and not opts.include.matches(entry.path)) or (
            opts.exclude and opts.exclude.matches(entry.path)
        ):
            return "excluded"
        return filters.skip_reason(entry.path, entry.size, max_file_bytes=opts.max_file_bytes)

    def _content_reason(self, entry: _Entry, data: bytes) -> str | None:
        if len(data) > self._options.max_file_bytes:
            return "too_large"  # a plain file that grew since it was listed
        return filters.content_reason(entry.path, data)

    def _remember(self, f: SourceFile, data: bytes) -> None:
        if self._cached_bytes + len(data) <= CACHE_BYTES:
            self._cache[f.path] = (f.blob, data)
            self._cached_bytes += len(data)

    def _take(self, f: SourceFile) -> bytes | None:
        held = self._cache.get(f.path)
        if held is None or held[0] != f.blob:
            return None
        del self._cache[f.path]
        self._cached_bytes -= len(held[1])
        return held[1]

    @abstractmethod
    def _entries(self) -> Iterator[_Entry]:
        """Every entry of the tree, sorted by path."""

    @abstractmethod
    def _contents(self, entries: Sequence[_Entry]) -> Iterator[bytes | None]:
        """Bytes of each entry in order; None for one that can no longer be read."""

    @abstractmethod
    def _read(self, files: Sequence[SourceFile]) -> Iterator[bytes]:
        """Bytes of each file, in order."""


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace").removeprefix("\ufeff")


_MODES = {"100644": "file", "100755": "file", "120000": "symlink", "160000": "submodule"}


class GitSource(Source):
    """A commit read from git objects: its trees parsed, its blobs streamed by `cat-file`.

    A clone (`remote` given) is blobless: the blobs worth reading are fetched in
    batches before they are read, so git itself never fetches (see `bot.ingest.git`).
    A blob the repository lacks (and cannot fetch) skips its file as `missing_blob`.
    """

    def __init__(
        self, checkout: Checkout, git: Git, options: _Options, remote: RemoteURL | None = None
    ) -> None:
        super().__init__(checkout, options)
        self._git = git
        self._remote = remote
        self._blobs = git.blobs()
        self._memo = MEMO

    def close(self) -> None:
        super().close()
        self._blobs.close()

    def _entries(self) -> Iterator[_Entry]:
        commit = self.checkout.commit
        absent = trees.missing_objects(self._git, commit)
        root = self._git.text("rev-parse", "--verify", f"{commit}^{{tree}}")
        rows = trees.walk(self._blobs, root, absent)
        self._blobs.close()  # its process slot is free while the commands below run
        if self._remote is not None and absent:
            absent = self._fetch_wanted(rows, absent)
        files = [r.oid for r in rows if not r.problem and _MODES.get(r.mode) == "file"]
        sizes = trees.blob_sizes(self._git, [oid for oid in files if oid not in absent])
        entries = sorted((_tree_entry(r, sizes) for r in rows), key=lambda e: e.path)
        missing = [e.path for e in entries if e.kind == "missing_blob"]
        for path in missing[:20]:
            log.warning("%s in %s: blob missing from the repository", path, self.checkout.name)
        if len(missing) > 20:
            log.warning("... and %d more files whose blobs are missing", len(missing) - 20)
        return _unique_paths(entries)

    def _fetch_wanted(self, rows: list[trees.TreeEntry], absent: set[str]) -> set[str]:
        """Fetch the absent blobs of files worth reading; what is absent afterwards."""
        assert self._remote is not None
        wanted = [
            r.oid
            for r in rows
            if r.oid in absent
            and _MODES.get(r.mode) == "file"
            and self._listing_reason(_Entry(r.path, r.oid, 0, "file")) is None
        ]
        if not wanted:
            return absent
        log.info("fetching %d blobs of %s", len(wanted), self.checkout.name)
        fetch_blobs(self._git, list(dict.fromkeys(wanted)), self._remote)
        return trees.missing_objects(self._git, self.checkout.commit)

    def _contents(self, entries: Sequence[_Entry]) -> Iterator[bytes | None]:
        for _, _, data in self._blobs.read_objects(e.blob for e in entries):
            yield data

    def _read(self, files: Sequence[SourceFile]) -> Iterator[bytes]:
        for _, data in self._blobs.read_many(f.blob for f in files):
            yield data


def _memo_key(entry: _Entry) -> str:
    return f"{entry.blob}:{entry.path.rsplit('/', 1)[-1]}"


def _tree_entry(row: trees.TreeEntry, sizes: dict[str, int]) -> _Entry:
    if row.problem:
        return _Entry(row.path, row.oid, 0, row.problem)
    kind = _MODES.get(row.mode, "special")
    if kind == "file" and row.oid not in sizes:
        return _Entry(row.path, row.oid, 0, "missing_blob")
    return _Entry(row.path, row.oid, sizes.get(row.oid, 0), kind)


def _unique_paths(entries: list[_Entry]) -> Iterator[_Entry]:
    """Sorted entries with a name repeated in one tree (malformed) listed once, the rest counted.

    Entries already skipped for another reason (an unsafe name) keep that reason.
    """
    previous = None
    for entry in entries:
        if entry.kind not in _LISTED_KINDS:
            yield entry
        elif entry.path == previous:
            yield _Entry(entry.path, entry.blob, 0, "duplicate_path")
        else:
            previous = entry.path
            yield entry


_LISTED_KINDS = frozenset({*_MODES.values(), "special", "missing_blob"})


class DirectorySource(Source):
    """A plain directory, walked without following symlinks; a top-level .gitignore applies."""

    def __init__(self, checkout: Checkout, options: _Options) -> None:
        super().__init__(checkout, options)
        self._root = str(checkout.root)  # joined as text: Path's `/` costs more, per file
        gitignore = checkout.root / ".gitignore"
        readable = gitignore.is_file() and not gitignore.is_symlink()
        lines = gitignore.read_text("utf-8", "replace").splitlines() if readable else []
        self._ignore = filters.IgnoreRules(lines)

    def _entries(self) -> Iterator[_Entry]:
        found: list[_Entry] = []
        pending = [""]
        while pending:
            rel = pending.pop()
            try:
                listing = list(os.scandir(f"{self._root}/{rel}"))
            except OSError as exc:
                log.warning("cannot list %s: %s", rel or ".", exc.strerror)
                self._skipped["unreadable"] += 1
                continue
            for item in listing:
                path = f"{rel}/{item.name}" if rel else item.name
                entry = self._classify(item, path)
                if entry is None:
                    continue
                if entry.kind == "dir":
                    pending.append(path)
                else:
                    found.append(entry)
        found.sort(key=lambda e: e.path)
        return iter(found)

    def _classify(self, item: os.DirEntry[str], path: str) -> _Entry | None:
        try:
            info = item.stat(follow_symlinks=False)
        except OSError:
            return _Entry(path, "", 0, "unreadable")
        is_dir = stat.S_ISDIR(info.st_mode)
        if self._ignore.ignored(path, is_dir) or (is_dir and filters.tool_dir(item.path)):
            return None
        try:
            path.encode("utf-8")
        except UnicodeEncodeError:
            shown = path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            return _Entry(shown, "", 0, "bad_path")
        if stat.S_ISLNK(info.st_mode):
            return _Entry(path, "", 0, "symlink")
        if is_dir:
            return _Entry(path, "", 0, "dir")
        kind = "file" if stat.S_ISREG(info.st_mode) else "special"
        return _Entry(path, "", info.st_size, kind)

    def _contents(self, entries: Sequence[_Entry]) -> Iterator[bytes | None]:
        for entry in entries:
            yield self._read_path(entry.path)

    def _read(self, files: Sequence[SourceFile]) -> Iterator[bytes]:
        for f in files:
            data = self._read_path(f.path)
            if data is None:
                raise SourceError(f"{f.path} can no longer be read from {self.checkout.root}.")
            yield data

    def _read_path(self, path: str) -> bytes | None:
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(f"{self._root}/{path}", flags)
        except OSError as exc:
            log.warning("cannot read %s: %s", path, exc.strerror)
            return None
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            return handle.read(self._options.max_file_bytes + 1)
