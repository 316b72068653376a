"""The peer: a plain `git log --grep` over the question's words.

What a team member would type without a bot, made fair and fixed in advance:

- words: the question split on white space, surrounding punctuation and quotes stripped
  (so `URL.build`, `--no-require-git` and `files.add_file` stay whole), lower-cased, words
  of one character and the stop words below dropped, each word once;
- one `git log -i -F --grep=<word> ... <pinned commit>` with a `--grep` per word (git ORs
  them: a commit matching any word is listed), case-insensitive, fixed strings;
- ranked by how many of the words a commit's message contains (git's own matching: a
  case-insensitive substring), newest committer date first on ties.

The stop words are common English function words plus the words that frame a history
question rather than name its subject (who, when, why, since, last, changed, touched,
knows, pr, commit...). The list was written before any run and is not tuned on the set.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

STOP_WORDS = frozenset(
    """
    a about after again all also am an and any anymore are as at be been before being both
    but by can could did do does doing done each for from had has have having he her here
    him his how i if in into is it its itself just me more most my no nor not now of off on
    once only or other our out over own same she should so some such than that the their
    them then there these they this those through to too under until up us very was we
    were what when where which while who whom why will with would you your
    since last lately changed change changes touched touch modified modify knows know best
    latest recently someone somebody pr prs commit commits happen happened
    """.split()
)
_STRIP = "\"'`?!,.;:()[]{}<>*"


def query_words(question: str) -> list[str]:
    words: list[str] = []
    for raw in question.split():
        word = raw.strip(_STRIP).lower()
        if word.endswith("'s"):
            word = word[:-2]
        if len(word) > 1 and word not in STOP_WORDS and word not in words:
            words.append(word)
    return words


@dataclass(frozen=True, slots=True)
class GitGrep:
    """Ranks the commits reachable from `commit` in `git_dir` for a question."""

    git_dir: Path
    commit: str

    def rank(self, question: str) -> list[str]:
        words = query_words(question)
        if not words:
            return []
        out = subprocess.run(
            [
                "git",
                f"--git-dir={self.git_dir}",
                "log",
                "-i",
                "-F",
                *(f"--grep={w}" for w in words),
                "--format=%H%x1f%ct%x1f%B%x1e",
                self.commit,
            ],
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            check=True,
        ).stdout
        ranked: list[tuple[int, int, str]] = []
        for record in out.split("\x1e"):
            record = record.lstrip("\n")
            if not record:
                continue
            sha, seconds, message = record.split("\x1f", 2)
            text = message.lower()
            ranked.append((sum(w in text for w in words), int(seconds), sha))
        ranked.sort(key=lambda r: (-r[0], -r[1]))
        return [sha for _, _, sha in ranked]


class GitGrepSystem:
    """The peer behind the harness's system interface (nothing to index)."""

    name = "gitgrep"
    sources = ("answer",)

    def __init__(self) -> None:
        self._git_dirs: dict[str, Path] = {}

    def prepare(self, repo: str, git_dir: Path, commit: str) -> None:
        self._git_dirs[repo] = git_dir

    def ask(self, repo: str, commit: str, question: str) -> dict[str, list[str]]:
        return {"answer": GitGrep(self._git_dirs[repo], commit).rank(question)}

    def close(self) -> None:
        self._git_dirs.clear()
