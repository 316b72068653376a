"""What a pasted bug report carries besides the bug: environment dumps, banners and links.

Issue templates ask for versions, so reports arrive with `show_versions()` output, `pip
freeze` and `pip list` tables, a Python or IPython banner, a test runner's session header,
"_No response_" for empty form fields, ticked checklists, and links. Their words name the
modules that print them (`print_versions.py`, the IPython printer, CI configs), not the
code the report is about. `without_boilerplate` blanks those lines, keeping the line
count, so the words a question is searched by come from what the person wrote. Links are
blanked wherever they stand; a link to a file in a repository (`.../blob/<ref>/<path>`)
outside the boilerplate still names that file (`linked_paths`).
"""

from __future__ import annotations

import re

URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+")
_BLOB = re.compile(r"/(?:blob|tree|raw|src)/[^/\s]+/([^\s#?)\]>'\"`]+\.\w+)")

# Lines that are boilerplate on their own.
_BANNER = re.compile(
    r"^\s*(?:"
    r"Python \d+\.\d+\S*\s*\(.*\)\s*(?:\[.*\])?(?:\s+on \w+)?"  # Python 3.9.9 (main, ...) [GCC]
    r"|\[(?:GCC|Clang|MSC|PyPy)\b.*\](?:\s+on \w+)?"  # the banner's compiler line
    r"|Type [\"'](?:help|copyright)[\"'].*for more information\.?"
    r"|IPython \d[\w.]*.*Interactive Python.*"
    r"|platform \w+ -- Python \d.*"  # a test runner's session header
    r"|(?:rootdir|cachedir|plugins|inifile|configfile|testpaths): .*"
    r"|=+ test session starts =+"
    r"|collect(?:ed|ing) \d+ items?.*"
    r"|_No response_"
    r"|[-*] \[[ xX]\] .*"  # a template's checklist ("- [x] I searched the existing issues")
    r"|INSTALLED VERSIONS"
    r"|-{3,}(?:\s+-{3,})*"  # the rule under a table's header (`pip list`)
    r"|Package\s+Version(?:\s+\S+)?"
    r"|(?:<details>\s*)?<summary>.*</summary>"  # a collapsed section's title
    r"|(?:</?(?:details|summary|br|hr|p|pre|code|tt)\s*/?>\s*)+"
    r")\s*$",
    re.IGNORECASE,
)
_KEY = r"[-*]?\s*[A-Za-z][\w.\[\]-]*"
_VERSION = r"v?\d+(?:\.[\w+]+)+[\w.+!-]*"
# One package or setting and its version: `name==1.2.3`, `name 1.2.3`, `python: 3.11.4 (main,
# ...)`, `Sphinx version: 7.1.2`, `commit: None`. Lines like these in a run are boilerplate.
_VERSIONED = re.compile(
    r"^\s*" + _KEY + r"(?:"
    r"\s*(?:==|>=|<=|~=|===)\s*\S+"
    r"|\s*:?\s+" + _VERSION + r"(?:\s.*)?"
    r"|(?: [A-Za-z][\w.-]*){0,2}\s*:\s*(?:" + _VERSION + r"(?:\s.*)?|None|installed|\d+)"
    r"|\s+@\s+\S+"
    r")\s*$",
    re.IGNORECASE,
)
# `key: value` (a key of up to three words): in a run beside versions, the rest of the listing
# (`OS: Linux`, `LANG: en_US.UTF-8`, `Python implementation: CPython`).
_SETTING = re.compile(r"^\s*" + _KEY + r"(?: [A-Za-z][\w.-]*){0,2}\s*:\s+\S.{0,150}$")
_MIN_VERSIONS = 2  # version lines that make a run of settings an environment listing


def without_boilerplate(text: str) -> str:
    """`text` with links, banners and environment listings blanked (lines kept in place)."""
    return URL.sub(" ", _without_listings(text))


def linked_paths(text: str) -> list[str]:
    """Repository file paths named by links in `text` (GitHub, GitLab and Bitbucket forms),
    outside boilerplate (a template checklist's links name the project's own guides)."""
    return [
        m.group(1)
        for url in URL.finditer(_without_listings(text))
        for m in _BLOB.finditer(url.group())
    ]


def _without_listings(text: str) -> str:
    """`text` with banners and environment listings blanked, links left in place."""
    lines = text.split("\n")
    listing = _listings(lines)
    return "\n".join(
        "" if listing[n] or _BANNER.match(line) else line for n, line in enumerate(lines)
    )


def _listings(lines: list[str]) -> list[bool]:
    """Per line: whether it is in an environment listing, a run of consecutive version and
    setting lines holding at least `_MIN_VERSIONS` version lines."""
    versioned = [bool(_VERSIONED.match(line)) for line in lines]
    setting = [v or bool(_SETTING.match(line)) for v, line in zip(versioned, lines, strict=True)]
    out = [False] * len(lines)
    start = 0
    while start < len(lines):
        end = start
        while end < len(lines) and setting[end]:
            end += 1
        if sum(versioned[start:end]) >= _MIN_VERSIONS:
            out[start:end] = [True] * (end - start)
        start = end + 1
    return out
