"""Query analysis: find what in a question must match the code exactly.

People paste identifiers (`register_hook`, `Session.send`), file paths
(`src/flask/app.py`), stack-trace frames and code blocks into questions. Those
become exact-match terms against symbols and paths, weighted above the plain
words around them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.text.tokens import code_tokens, path_tokens, query_terms

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
_URL = re.compile(r"\bhttps?://\S+|\bwww\.\S+")
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


def analyze(text: str) -> QueryAnalysis:
    code_parts = [m.group(1) for m in _CODE_BLOCK.finditer(text)]
    code_parts += [m.group(1) for m in _INLINE_CODE.finditer(text)]
    prose = _ABBREVIATIONS.sub(" ", _URL.sub(" ", _CODE_BLOCK.sub(" ", text)))

    symbols: dict[str, None] = {}
    paths: dict[str, None] = {}
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

    return QueryAnalysis(
        text=text,
        terms=tuple(query_terms(text)),
        symbols=tuple(s for s in symbols if len(s) > 2),
        paths=tuple(paths),
        code="\n".join(code_parts),
        subject=subject_of(text),
    )


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
