"""What kind of file a question wants: implementation, tests, docs or examples.

A question about behaviour wants the implementation first; "how do I test
X" wants tests; "where is this documented" wants docs. Files of the kind the
question does not ask for are demoted, never removed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from bot.text.tokens import code_tokens

_TEST_DIRS = {"test", "tests", "testing", "__tests__", "spec", "specs", "test_utils", "testdata"}
_TEST_FILE = re.compile(
    r"(^test_.*|.*_test\.\w+$|.*_tests\.\w+$|.*\.(test|spec)\.\w+$|^conftest\.py$|.*Tests?\.\w+$)"
)
_DOC_DIRS = {"doc", "docs", "documentation", "changelog", "changes"}
_DOC_EXT = (".md", ".rst", ".txt", ".adoc", ".markdown")
# Prose files that often have no extension at all (`ChangeLog`, `NEWS`, `AUTHORS`).
_DOC_NAMES = {
    "changelog", "changes", "history", "news", "authors", "contributors", "license",
    "licence", "copying", "readme", "notice", "thanks", "todo", "maintainers", "install",
}  # fmt: skip
_CONFIG_NAMES = {
    "makefile", "dockerfile", "procfile", "justfile", "rakefile", "gemfile", "vagrantfile",
    "cmakelists.txt", "build.gradle", "pom.xml", "setup.py", "setup.cfg", "tox.ini", "noxfile.py",
}  # fmt: skip
_CONFIG_EXT = (".toml", ".cfg", ".ini", ".yml", ".yaml", ".json", ".lock", ".mk", ".cmake")
_EXAMPLE_DIRS = {"example", "examples", "sample", "samples", "demo", "demos", "benchmarks", "bench"}

# Asking *for tests* is a matter of phrasing; "test" alone is common in bug reports
# ("this test fails") and in the vocabulary of testing tools themselves.
_ASKS_TESTS = re.compile(
    r"\b(how (do|can|should|would) (i|we|you|one) (unit[- ])?test"
    r"|(which|what|where|any) (are the |is the )?(unit |integration )?tests?\b"
    r"|tests? (files?|suites?|cases?|coverage) (for|of|that)"
    r"|(unit|integration|regression) tests? (for|of|that|cover)"
    r"|tests? (that |which )?(cover|covers|covering|exercise|check)s?\b"
    r"|(write|add|run) (a |the )?(unit |integration )?tests?\b)",
    re.IGNORECASE,
)
_ASKS_DOCS = {
    "doc", "docs", "documentation", "documented", "readme", "guide", "changelog", "tutorial",
}  # fmt: skip
_ASKS_EXAMPLES = {"example", "examples", "sample", "samples", "demo"}
_ASKS_CONFIG = {
    "build", "builds", "install", "installation", "config", "configure", "configuration",
    "setting", "settings", "deploy", "deployment", "docker", "ci", "makefile", "dependency",
    "dependencies", "package", "packaging", "version", "lint", "environment", "env", "variable",
}  # fmt: skip

# Multipliers for a file of a kind the question did not ask for.
TEST_PRIOR = 0.35
DOC_PRIOR = 0.7
EXAMPLE_PRIOR = 0.75
CONFIG_PRIOR = 0.8
CODE_QUESTION_PRIOR = 0.5  # prose and config files rarely answer a question that carries code
REPORT_PRIOR = 0.3  # a pasted bug report is about code, not the changelog or CI that mention it


@dataclass(frozen=True, slots=True)
class Intent:
    tests: bool
    docs: bool
    examples: bool
    config: bool = False


def intent_of(question: str) -> Intent:
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", question)}
    words |= set(code_tokens(question))
    return Intent(
        tests=bool(_ASKS_TESTS.search(question)),
        docs=bool(words & _ASKS_DOCS),
        examples=bool(words & _ASKS_EXAMPLES),
        config=bool(words & _ASKS_CONFIG),
    )


@lru_cache(maxsize=100_000)
def file_kind(path: str) -> str:
    """ "test", "doc", "example" or "code"."""
    parts = path.lower().split("/")
    name = path.rsplit("/", 1)[-1]
    if any(p in _TEST_DIRS for p in parts[:-1]) or _TEST_FILE.match(name):
        return "test"
    if (
        name.lower().endswith(_DOC_EXT)
        or any(p in _DOC_DIRS for p in parts[:-1])
        or name.lower() in _DOC_NAMES
    ):
        return "doc"
    if any(p in _EXAMPLE_DIRS for p in parts[:-1]):
        return "example"
    lower = name.lower()
    if lower in _CONFIG_NAMES or lower.endswith(_CONFIG_EXT) or parts[0] in (".github", ".ci"):
        return "config"
    return "code"


def prior(
    path: str,
    intent: Intent,
    *,
    code_question: bool = False,
    report: bool = False,
    named: bool = False,
) -> float:
    """A multiplier for a file of `path`'s kind; questions that carry code want code most,
    and a bug report wants code above all, unless it names the file or asks for its kind.
    """
    kind = file_kind(path)
    if kind == "test":
        return 1.0 if intent.tests else TEST_PRIOR
    if kind == "code" or named:
        return 1.0
    asked = {"doc": intent.docs, "example": intent.examples, "config": intent.config}[kind]
    if asked:
        return 1.0
    if report:
        return REPORT_PRIOR
    if kind == "example":
        return EXAMPLE_PRIOR
    if code_question:
        return CODE_QUESTION_PRIOR
    return DOC_PRIOR if kind == "doc" else CONFIG_PRIOR
