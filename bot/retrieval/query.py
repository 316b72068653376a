"""Query analysis: find what in a question must match the code exactly.

People paste identifiers (`register_hook`, `Session.send`), file paths
(`src/flask/app.py`), stack-trace frames and code blocks into questions. Those
become exact-match terms against symbols and paths, weighted above the plain
words around them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from bot.retrieval.boilerplate import URL, linked_paths, without_boilerplate
from bot.text.tokens import (
    FLAG_PREFIX,
    code_tokens,
    flags,
    joined_words,
    path_tokens,
    query_terms,
    query_words,
)

_CODE_BLOCK = re.compile(r"```[^\n]*\n(.*?)```", re.S)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_PY_FRAME = re.compile(r'File "([^"]+)", line (\d+)(?:, in ([\w.<>]+))?')
# pytest's long tracebacks: "src/_pytest/runner.py:244: in from_call" at the start of a line.
_PYTEST_FRAME = re.compile(r"^([\w./\\-]+\.py):(\d+):(?: in ([\w.<>]+))?", re.M)
_GENERIC_FRAME = re.compile(r"\bat ([\w.$]+)\(([\w./-]+\.\w+):(\d+)")
_PATH = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+|[\w-]+\.(?:py|js|jsx|ts|tsx|go|java|rs|c|h|cc|cpp|hpp|cs|rb|php|md|toml|yaml|yml|json|cfg|ini|txt|rst))(?![\w/])"
)
_DOTTED = re.compile(r"\b([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(\))?")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\(\)")
_IDENT = re.compile(r"\b([A-Za-z_]\w*)\b")
SUBJECT_MIN_CHARS = 200  # shorter questions are all subject
_ABBREVIATIONS = re.compile(r"\b(?:e\.g|i\.e|etc|vs|cf)\.", re.IGNORECASE)
# Words of the languages themselves: in pasted code they name nothing in the repository.
KEYWORDS = frozenset(
    """and as assert async await break case catch class const continue def del elif else enum
    except export extends false final finally for from func function global if impl import in
    interface is lambda let match mut new nil none nonlocal not null or package pass private
    protected pub public raise return self static struct super switch this throw throws true try
    type typeof use var void while with yield""".split()
)


def looks_like_identifier(word: str) -> bool:
    """snake_case, camelCase, PascalCase with an inner capital, or ALL_CAPS with `_`."""
    if len(word) < 3:
        return False
    if "_" in word.strip("_"):
        return True
    inner = word[1:]
    return any(c.isupper() for c in inner) and any(c.islower() for c in word)


@dataclass(frozen=True, slots=True)
class QueryAnalysis:
    text: str
    terms: tuple[str, ...]  # plain code-aware terms, stopwords dropped
    symbols: tuple[str, ...]  # identifiers / dotted-name parts to match symbols exactly
    paths: tuple[str, ...]  # file paths or file names mentioned
    code: str  # code pasted in the question (blocks and inline spans)
    subject: str = ""  # the first line of a long, multi-line question (an issue's title)
    # Each identifier or command-line option the question names, as the whole tokens that
    # stand for it in the index (`_bench_marker_3` -> ("bench_marker_3",), `--setup-show`
    # -> ("__setup_show", "setup_show")); plain words are not here.
    verbatim: tuple[tuple[str, ...], ...] = ()
    # The share of `terms` that are the tokens of what `verbatim` names: how much of the
    # question the identifiers are (0 for a report, whose prose says what it is about).
    focus: float = 0.0
    joined: tuple[str, ...] = ()  # adjacent words written as one ("torn down" -> "teardown")
    # The words of the question as their tokens, one entry a word (a report's: its subject's).
    concepts: tuple[tuple[str, ...], ...] = ()

    @property
    def is_report(self) -> bool:
        """A pasted issue or log: a long question whose first line says what it is about."""
        return bool(self.subject)

    @property
    def exact_terms(self) -> tuple[str, ...]:
        """Tokens that should hit the symbol and path fields."""
        seen: dict[str, None] = {}
        for sym in self.symbols:
            for tok in code_tokens(sym):
                seen.setdefault(tok, None)
        for path in self.paths:
            for tok in path_tokens(path):
                seen.setdefault(tok, None)
        return tuple(seen)

    @property
    def is_code_question(self) -> bool:
        return bool(self.symbols or self.paths or self.code)


@lru_cache(maxsize=64)
def analyze(text: str) -> QueryAnalysis:
    """What `text` names and the words it is searched by; a report's boilerplate (versions,
    banners, links) takes no part in either, though its traceback frames and the files its
    links point at do.

    Kept for the last few texts: a search analyses its question once to rank and once
    to judge relevance, and the analysis is immutable.
    """
    clean = without_boilerplate(text)
    code_parts = [m.group(1) for m in _CODE_BLOCK.finditer(clean)]
    code_parts += [m.group(1) for m in _INLINE_CODE.finditer(clean)]
    prose = _ABBREVIATIONS.sub(" ", URL.sub(" ", _CODE_BLOCK.sub(" ", clean)))

    symbols: dict[str, None] = {}
    paths: dict[str, None] = dict.fromkeys(linked_paths(text))
    for frame in (_PY_FRAME, _PYTEST_FRAME):
        for m in frame.finditer(text):
            paths.setdefault(_trim_path(m.group(1)), None)
            if m.group(3) and not m.group(3).startswith("<"):
                symbols.setdefault(m.group(3), None)
    for m in _GENERIC_FRAME.finditer(text):
        symbols.setdefault(m.group(1).split(".")[-1], None)
        paths.setdefault(m.group(2), None)
    for m in _PATH.finditer(prose):
        candidate = m.group(1).strip(".")
        if "/" in candidate or "." in candidate:
            paths.setdefault(candidate, None)
    for m in _DOTTED.finditer(prose):
        dotted = m.group(1)
        if dotted in paths or _is_path_like(dotted):
            continue
        parts = dotted.split(".")
        symbols.setdefault(".".join(parts[-2:]), None)
    for m in _CALL.finditer(prose):
        symbols.setdefault(m.group(1), None)
    # Each distinct word is judged once: a pasted log repeats the same words many times.
    for span in code_parts:
        short = len(span) < 60  # an inline `name` is a symbol even without a capital or `_`
        for word in dict.fromkeys(_IDENT.findall(span)):
            if word.lower() not in KEYWORDS and (short or looks_like_identifier(word)):
                symbols.setdefault(word, None)
    for word in dict.fromkeys(_IDENT.findall(prose)):
        if looks_like_identifier(word):
            symbols.setdefault(word, None)

    named = tuple(s for s in symbols if len(s) > 2)
    subject = subject_of(text)
    terms = tuple(query_terms(clean))
    verbatim, covered = _verbatim(named, clean)
    return QueryAnalysis(
        text=text,
        terms=terms,
        symbols=named,
        paths=tuple(paths),
        code="\n".join(code_parts),
        subject=subject,
        verbatim=verbatim,
        focus=len(covered.intersection(terms)) / len(terms) if terms and not subject else 0.0,
        joined=tuple(joined_words(subject or text)),
        concepts=tuple(query_words(subject or clean)),
    )


def _verbatim(symbols: tuple[str, ...], text: str) -> tuple[tuple[tuple[str, ...], ...], set[str]]:
    """The whole tokens of each compound identifier and option named (distinct, in order),
    and every token of what they name."""
    groups: dict[tuple[str, ...], None] = {}
    covered: set[str] = set()
    for symbol in symbols:
        for part in symbol.split("."):
            whole = part.lower().strip("_")
            tokens = code_tokens(part)
            if looks_like_identifier(part) and whole and whole in tokens:
                groups.setdefault((whole,), None)
                covered.update(tokens)
    for flag in dict.fromkeys(flags(text)):
        name = flag.removeprefix(FLAG_PREFIX)
        # `--setup-show` is read back as `setup_show` (argparse's dest) or `setupshow`.
        spellings = (flag, name, name.replace("_", "")) if "_" in name else (flag,)
        groups.setdefault(spellings, None)
        covered.update((*spellings, *code_tokens(name)))
    return tuple(groups), covered


def subject_of(text: str) -> str:
    """The first line of a long question that goes on below it, else "".

    A bug report or a question followed by pasted logs leads with what it is
    about; the lines below add detail and a lot of noise (output, versions).
    """
    if len(text) < SUBJECT_MIN_CHARS:
        return ""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if len(lines) > 1 else ""


def _trim_path(path: str) -> str:
    """Drop the absolute prefix a traceback carries (site-packages, home dirs)."""
    path = path.replace("\\", "/")
    for marker in ("/site-packages/", "/dist-packages/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path.lstrip("/")


def _is_path_like(dotted: str) -> bool:
    last = dotted.rsplit(".", 1)[-1]
    return last in {
        "py",
        "js",
        "ts",
        "tsx",
        "go",
        "java",
        "rs",
        "rb",
        "php",
        "md",
        "cs",
        "cpp",
        "c",
    }
