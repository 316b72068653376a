"""The lines of a cited block that show the point of a question, with a little context.

Each line is scored by the weights of the question's tokens it holds (rare words
weigh more, see `bot.retrieval.relevance`); a question about failure ("what
happens if the file is malformed?") also draws the lines that handle failure
(`except`, `raise`, `error`). The best line is widened to the statement holding it
(an option's whole `addoption(...)` call, with its help text) and, when it opens a
block (`except ...:`), to that block; a comment at the top of a block brings the
line that opens it, and a comment brings the code below it. Then a line of context
above (at least three lines in all), within a cap. Line numbers stay the file's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.retrieval.retriever import Source
from bot.text.tokens import code_tokens

EXCERPT_LINES = 12  # the most an excerpt shows
SHORT_BLOCK = 8  # a block this short is shown whole
CONTEXT = 1  # lines kept above the statement that holds the best line
MIN_LINES = 3  # a one-line statement is shown with the lines around it
HEADER_REACH = 3  # how far above the best line its block's opening line may be
BOUNDARY_REACH = 4  # how far up an excerpt may move to start where its docstring or comment does
DOC_SHARE = 0.5  # what a line of the doc comment above a definition counts, beside its code
_COMMENTS = ("#", "//", "/*", "*", "--")
# Question tokens (as `query_terms` gives them) that ask what happens when something fails.
FAILURE_WORDS = frozenset(
    """malformed malform invalid corrupt corrupted broken bad fail fails failed failing failure
    failur error errors wrong missing exception exceptions crash crashes raise rais raises
    unreadable unparsable unparseable timeout timeouts""".split()
)
# Tokens of the lines that handle failure, in most languages.
FAILURE_CODE = frozenset(
    "except raise rais error exception catch throw throws fail invalid err panic rescue".split()
)
_OPEN, _CLOSE = "([{", ")]}"


def best_excerpt(source: Source, weights: Mapping[str, float]) -> Source:
    """The part of `source` that best answers a question whose tokens weigh `weights`."""
    lines = source.text.split("\n")
    if len(lines) <= SHORT_BLOCK:
        return source
    scores = _code_over_docs(lines, line_scores(lines, weights))
    if not any(scores):
        return _cut(source, lines, 0, SHORT_BLOCK - 1)  # nothing matches: the block's head
    anchor = max(range(len(lines)), key=lambda i: (scores[i], _near(scores, i)))
    first, last = _statement(lines, _header(lines, anchor))
    last = _past_comments(lines, max(last, anchor))
    if first > 0 and _meaningful(lines[first - 1]):
        first -= CONTEXT  # the line before, unless it only closes what came earlier
    while _filled(lines[first : last + 1]) < MIN_LINES and (first > 0 or last + 1 < len(lines)):
        up = first > 0 and (_meaningful(lines[first - 1]) or last + 1 == len(lines))
        first, last = (first - 1, last) if up else (first, last + 1)
    if last - first + 1 > EXCERPT_LINES:  # too long: keep the best line near the top
        first = max(first, anchor - 2)
        last = first + EXCERPT_LINES - 1
    first = _boundary(lines, first, anchor)
    last = min(last, first + EXCERPT_LINES - 1)
    return _cut(source, lines, first, last)


def _boundary(lines: Sequence[str], first: int, anchor: int) -> int:
    """`first` moved off the middle of a docstring or comment: up to where it opens when that
    is near, else down past where it closes (never past `anchor`)."""
    opened = _open_quote(lines[:first])
    if opened is not None:
        at, quote = opened
        if first - at <= BOUNDARY_REACH:
            return at - 1 if at > 0 and lines[at - 1].rstrip().endswith(":") else at
        closes = next((i for i in range(first, anchor + 1) if quote in lines[i]), None)
        return first if closes is None or closes + 1 > anchor else closes + 1
    if not _comment(lines[first]):
        return first
    top = first
    while top > 0 and _comment(lines[top - 1]):
        top -= 1
    if first - top <= BOUNDARY_REACH:
        return top
    below = next((i for i in range(first, anchor + 1) if not _comment(lines[i])), None)
    return first if below is None else below  # a long comment's middle: start at the code


def _comment(line: str) -> bool:
    return line.lstrip().startswith(_COMMENTS)


def _open_quote(lines: Sequence[str]) -> tuple[int, str] | None:
    """The line and quote of a triple-quoted string `lines` leave open, if any."""
    opened: tuple[int, str] | None = None
    for i, line in enumerate(lines):
        for quote in ('"""', "'''"):
            count = line.count(quote)
            if opened is not None and opened[1] == quote and count:
                opened = None if count % 2 else opened
            elif opened is None and count % 2:
                opened = (i, quote)
    return opened


def line_scores(lines: Sequence[str], weights: Mapping[str, float]) -> list[float]:
    """Each line's weight of distinct question tokens (plus the failure cue, when asked)."""
    asks_failure = not FAILURE_WORDS.isdisjoint(weights)
    cue = max(weights.values(), default=0.0)  # failure handling is the point of such a question
    scores = []
    for line in lines:
        tokens = set(code_tokens(line))
        score = sum(weights.get(t, 0.0) for t in tokens)
        if asks_failure and not FAILURE_CODE.isdisjoint(tokens):
            score += cue
        scores.append(score)
    return scores


def _code_over_docs(lines: Sequence[str], scores: list[float]) -> list[float]:
    """The doc comment a block opens with (`///`, `/** ... */`, `//`) counts for half: it
    repeats the question's words, but the code below it is what shows how."""
    out = list(scores)
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped and not stripped.startswith((*_COMMENTS, "@")):
            break
        out[i] = scores[i] * DOC_SHARE
    return out


def _near(scores: Sequence[float], i: int) -> float:
    """The score of a line's neighbours: breaks ties towards the denser place."""
    return sum(scores[max(0, i - 2) : i + 3])


def _past_comments(lines: Sequence[str], last: int) -> int:
    """A comment is about the code below it: through the comment, to that code's line."""
    if not lines[last].lstrip().startswith(_COMMENTS):
        return last
    while last + 1 < len(lines) and lines[last + 1].lstrip().startswith(_COMMENTS):
        last += 1
    return last + 1 if last + 1 < len(lines) and lines[last + 1].strip() else last


def _header(lines: Sequence[str], anchor: int) -> int:
    """The line opening the block `anchor` starts (`except ...:` above its comment), if it is
    right above; else `anchor` itself."""
    indent = _indent(lines[anchor])
    for i in range(anchor - 1, max(-1, anchor - HEADER_REACH - 1), -1):
        if not lines[i].strip():
            continue
        if _indent(lines[i]) < indent:
            return i if lines[i].rstrip().endswith((":", "{")) else anchor
        if i < anchor - 1 or not lines[i].lstrip().startswith(_COMMENTS):
            return anchor  # code of the same block above: the anchor is not at its top
    return anchor


def _statement(lines: Sequence[str], anchor: int) -> tuple[int, int]:
    """The lines of the statement holding `anchor`, and of the block it opens, if any."""
    depth_before = _depths(lines)
    first = anchor
    while first > 0 and depth_before[first] > 0:  # inside brackets: back to the opener
        first -= 1
    last = anchor
    while last + 1 < len(lines) and depth_before[last + 1] > depth_before[first]:
        last += 1  # until the brackets opened by the statement close
    if lines[last].rstrip().endswith((":", "{")):  # a block opener: its indented body follows
        indent = _indent(lines[first])
        while last + 1 < len(lines) and (
            not lines[last + 1].strip() or _indent(lines[last + 1]) > indent
        ):
            last += 1
    while last > anchor and not lines[last].strip():
        last -= 1
    return first, last


def _depths(lines: Sequence[str]) -> list[int]:
    """The bracket depth at the start of each line (strings and comments roughly skipped)."""
    depths, depth = [], 0
    for line in lines:
        depths.append(depth)
        quote = ""
        for ch in line:
            if quote:
                quote = "" if ch == quote else quote
            elif ch in "\"'":
                quote = ch
            elif ch == "#":
                break
            elif ch in _OPEN:
                depth += 1
            elif ch in _CLOSE:
                depth = max(0, depth - 1)
    return depths


def _filled(lines: Sequence[str]) -> int:
    """How many of `lines` show something (blank lines are no context)."""
    return sum(1 for line in lines if line.strip())


def _meaningful(line: str) -> bool:
    """Worth showing as context: not blank, not only the end of what came before."""
    return bool(line.strip().strip(_CLOSE + ",;"))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _cut(source: Source, lines: Sequence[str], first: int, last: int) -> Source:
    while first < last and not lines[first].strip():
        first += 1  # an excerpt never opens on a blank line
    chosen = list(lines[first : last + 1])
    while len(chosen) > 1 and not chosen[-1].strip():
        chosen.pop()
    start = source.start_line + first
    return Source(
        source.repo,
        source.path,
        source.language,
        start,
        start + len(chosen) - 1,
        source.symbol,
        "\n".join(chosen),
        source.score,
    )
