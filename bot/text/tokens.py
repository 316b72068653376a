"""Code-aware tokens, shared by every lexical index and by query analysis.

An identifier is kept whole (lower-cased) and also split at snake_case and
camelCase boundaries, so `registerHook`, `register_hook` and "register hook"
meet. Parts are stemmed (`stem`): plural, -ing and -ed forms fold together.
Documents and questions go through the same functions, so they always agree.

Speed (indexing tokenises every chunk): ASCII text, nearly all code, is cut
into runs of `[A-Za-z0-9_]` by `str.translate` + `split` (C loops, no regex);
a run's tokens are computed once and cached, and `token_counts` counts runs
before expanding them, so a repeated word costs one dict update.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, pairwise

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_MAX_TOKEN = 64
# Every ASCII character that cannot be part of a word becomes a space.
_NOT_WORD = str.maketrans(
    dict.fromkeys((c for c in map(chr, range(128)) if not (c.isalnum() or c == "_")), " ")
)

# Words that carry no meaning in a question about code.
STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing done down during each
    else few for from further get gets got had has have having he her here hers how i if in
    into is it its itself just me more most my no nor not now of off on once only or other our
    out over own same she should so some such than that the their them then there these they
    this those through to too under until up us very was we were what when where which while
    who whom why will with would you your yours explain tell show describe mean means used use
    using happen happens work works way ways codebase""".split()
)


_VOWELS = frozenset("aeiouy")
# Irregular past forms whose regular stem would not meet the verb ("torn down" / `teardown`).
# Only forms with no other common meaning in code: "bound", "found", "left", "set" stay.
IRREGULAR = {
    "torn": "tear", "tore": "tear", "written": "write", "wrote": "write", "rewritten": "rewrite",
    "rewrote": "rewrite", "overwritten": "overwrite", "overridden": "override",
    "hidden": "hide", "chosen": "choose", "chose": "choose", "taken": "take", "took": "take",
    "given": "give", "gave": "give", "broken": "break", "broke": "break", "frozen": "freeze",
    "froze": "freeze", "driven": "drive", "thrown": "throw", "threw": "throw", "shown": "show",
    "known": "know", "knew": "know", "drawn": "draw", "drew": "draw", "begun": "begin",
    "began": "begin", "ran": "run", "sent": "send", "built": "build", "rebuilt": "rebuild",
    "held": "hold", "kept": "keep", "caught": "catch", "brought": "bring", "thought": "think",
    "stolen": "steal", "woken": "wake", "shaken": "shake", "undone": "undo",
}  # fmt: skip


def stem(word: str) -> str:
    """Fold plurals and -ing/-ed forms to one stem, the same way for code and questions.

    "chunks", "chunking" -> "chunk"; "caching", "cache" -> "cach"; "retries", "retried",
    "retrying" -> "retry"; "embedded" -> "embed". Short words are left alone, so
    identifiers like `need`, `base` or `status` survive.
    """
    irregular = IRREGULAR.get(word)
    if irregular is not None:
        word = irregular
    n = len(word)
    if n > 4 and word.endswith(("ies", "ied")):
        return word[:-3] + "y"
    if n > 5 and word.endswith("ing") and _VOWELS.intersection(word[:-3]):
        word = _undouble(word[:-3])
    elif n > 5 and word.endswith("ed") and word[-3] not in _VOWELS:
        word = _undouble(word[:-2])
    elif n > 4 and word.endswith(("sses", "shes", "ches", "xes", "zes")):
        word = word[:-2]
    elif n > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    return word


def _undouble(word: str) -> str:
    if len(word) > 2 and word[-1] == word[-2] and word[-1] not in "lsz" + "aeiou":
        return word[:-1]
    return word


# Each irregular form by the stem it folds to ("tear" -> "torn", "tore"): the text holds the
# form, not the stem (see `tokens_in`).
_IRREGULAR_FORMS: dict[str, tuple[str, ...]] = {}
for _form in IRREGULAR:
    _IRREGULAR_FORMS[stem(_form)] = (*_IRREGULAR_FORMS.get(stem(_form), ()), _form)


def _identifier_tokens(ident: str) -> tuple[str, ...]:
    whole = ident.lower().strip("_")
    if not whole or len(whole) > _MAX_TOKEN:
        return ()
    parts = [p.lower() for seg in ident.split("_") if seg for p in _CAMEL.findall(seg)]
    out = [whole] if len(whole) > 1 else []
    if len(parts) > 1 or (parts and parts[0] != whole):
        out.extend(stem(p) for p in parts if len(p) > 1)
    elif len(whole) > 1:
        stemmed = stem(whole)
        if stemmed != whole:
            out.append(stemmed)
    return tuple(out)


def _word_tokens(word: str) -> tuple[str, ...]:
    if word[0].isdigit():
        return (word,) if 1 < len(word) <= 8 else ()
    return _identifier_tokens(word)


def _run_tokens(run: str) -> tuple[str, ...]:
    """Tokens of a run of word characters: one word, or digits then a word (`2to3`)."""
    words = _WORD.findall(run)
    if len(words) == 1:
        return _word_tokens(words[0])
    return tuple(chain.from_iterable(map(_word_tokens, words)))


class _Memo(dict[str, tuple[str, ...]]):
    """run -> tokens, computed once; a plain dict lookup is the hot path of indexing.

    Bounded: a larger vocabulary starts over rather than grow (about 300 bytes an entry).
    50,000 runs hold nearly every repeat: tokenising the standard library's chunks takes
    5% more CPU than with 300,000 and 22 MB less memory in each ingest process.
    """

    def __init__(self, compute: Callable[[str], tuple[str, ...]], limit: int) -> None:
        super().__init__()
        self._compute = compute
        self._limit = limit

    def __missing__(self, run: str) -> tuple[str, ...]:
        if len(self) >= self._limit:
            self.clear()
        value = self[run] = self._compute(run)
        return value


_RUNS = _Memo(_run_tokens, 50_000)
_tokens_of = _RUNS.__getitem__


def _runs(text: str) -> list[str]:
    """The text's runs in order; `_WORD` matches never cross a run, so each splits alone."""
    if text.isascii():
        return text.translate(_NOT_WORD).split()
    return _WORD.findall(text)


# kebab-case words: CLI flags (`--setup-show`), message ids (`unused-import`), config keys.
_KEBAB = re.compile(r"(?<!\w)[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z][A-Za-z0-9]*)+(?!\w)")
_KEBAB_HINT = re.compile(r"[A-Za-z0-9]-[A-Za-z]")


def compounds(text: str) -> list[str]:
    """Each kebab-case word of `text` as one snake_case token, in order ("setup_show").

    Its parts are tokens anyway; the compound keeps the exact phrase, which is rare
    and therefore telling, and meets the snake_case name argparse and friends derive.
    """
    if "-" not in text:
        return []
    # Every compound holds a letter or digit, a dash, a letter: most texts hold none, and
    # none starts before the word of the first one, so the costly scan starts there.
    hint = _KEBAB_HINT.search(text)
    if hint is None:
        return []
    start = hint.start()
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        start -= 1
    return [
        m.group().lower().replace("-", "_")
        for m in _KEBAB.finditer(text, start)
        if len(m.group()) <= _MAX_TOKEN
    ]


# Command-line options: `--setup-show`, `--debug/--no-debug`, `"-k"`, `pytest -x`. A long
# option starts after anything but a word character or a dash; a short one only after a
# quote, a backtick, `[`, a line start or a space after a word (`pytest -x`, `"-x"`, `[-x]`),
# and ends at a space, quote or bracket: not `a-x`, `(-x)` or `y = -x`. The scan looks for
# dashes first (a regex that starts with a literal is fast) and checks the rest in Python.
_DASH = re.compile(r"--?[A-Za-z]")
_LONG_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*")
_OPENS_SHORT = frozenset("\"'`[\n")
_ENDS_SHORT = frozenset((*" \t\r\n\"'`),]=:", ""))  # "": the end of the text
FLAG_PREFIX = "__"  # no word yields a token starting with "_": option tokens stand apart


def flags(text: str) -> list[str]:
    """Each command-line option of `text` as one token, in order (`--setup-show` ->
    "__setup_show", `-k` -> "__k").

    Its words are tokens anyway; the option token finds where the option itself is
    written (where it is defined, documented, or read back by name), not every use of
    its words.
    """
    if "-" not in text:
        return []
    out = []
    for m in _DASH.finditer(text):
        at = m.start()
        before = text[at - 1] if at else "\n"
        if m.end() - at == 3:  # "--x"
            if before.isalnum() or before in "_-":
                continue
            long = _LONG_NAME.match(text, at + 2)  # always: a letter follows the dashes
            name = long.group() if long else ""
        elif _opens_short(text, at, before) and text[at + 2 : at + 3] in _ENDS_SHORT:
            name = text[at + 1]
        else:
            continue
        if 0 < len(name) < _MAX_TOKEN:
            out.append(FLAG_PREFIX + name.lower().replace("-", "_"))
    return out


def _opens_short(text: str, at: int, before: str) -> bool:
    """Whether a short option may start at `at`: after a quote, backtick, `[`, a line
    start, or a space that follows a word character."""
    if before in _OPENS_SHORT:
        return True
    return before == " " and at > 1 and (text[at - 2].isalnum() or text[at - 2] == "_")


def _extras(text: str) -> list[str]:
    """The whole-phrase tokens that come after a text's words: compounds, then options."""
    return compounds(text) + flags(text)


def iter_tokens(text: str) -> Iterator[str]:
    return chain(chain.from_iterable(map(_tokens_of, _runs(text))), _extras(text))


def code_tokens(text: str) -> list[str]:
    """Every token of `text`, in order, duplicates kept (term frequency matters); the
    kebab-case compounds and the options come after the words."""
    out = list(chain.from_iterable(map(_tokens_of, _runs(text))))
    out.extend(_extras(text))
    return out


def token_counts(text: str) -> dict[str, int]:
    """`Counter(code_tokens(text))`, same order (first occurrence), without the token list.

    Runs are counted first (in C); a run's tokens then get its count at once, in
    the run's first-seen order, which is each token's first-seen order too.
    """
    counts: dict[str, int] = {}
    get = counts.get
    for run, n in Counter(_runs(text)).items():
        for token in _tokens_of(run):
            counts[token] = get(token, 0) + n
    for token in _extras(text):
        counts[token] = get(token, 0) + 1
    return counts


def tokens_in(text: str, wanted: Iterable[str]) -> set[str]:
    """Which of `wanted` are tokens of `text`: `set(iter_tokens(text)) & set(wanted)`, found
    by searching the text for each wanted token rather than tokenising all of it.

    Every token is a lower-cased substring of the text, or its stem (a prefix of one), but
    for four shapes: a "-ies"/"-ied" stem ends in "y" where the text has "i", a kebab-case
    compound has "_" where the text has "-", an option token ("__setup_show") stands for
    `--setup-show`, and an irregular form's stem ("tear") for the form ("torn"). Each place
    a probe is found is confirmed by tokenising only the word around it, so the answer is
    exact (text with non-ASCII characters is simply tokenised).
    """
    if not text.isascii():  # Unicode digits and case rules: the tokenizer itself decides
        return set(iter_tokens(text)).intersection(wanted)
    lower = text.lower()
    # Most wanted tokens are not in a text at all: one substring test each rules them out.
    maybe = [t for t in dict.fromkeys(wanted) if t and any(p in lower for p in _probes(t))]
    return {token for token in maybe if _holds(text, lower, token)}


def _probes(token: str) -> tuple[str, ...]:
    """What the text must hold, lower-cased, for `token` to be one of its tokens."""
    if token.startswith(FLAG_PREFIX):
        return (token.removeprefix(FLAG_PREFIX).replace("_", "-"),)
    probes: tuple[str, ...] = (token, token[:-1] + "i") if token.endswith("y") else (token,)
    if "_" in token:
        probes += (token.replace("_", "-"),)
    return probes + _IRREGULAR_FORMS.get(token, ())


def _holds(text: str, lower: str, token: str) -> bool:
    if token.startswith(FLAG_PREFIX):
        return token in flags(text)
    if "_" in token and token.replace("_", "-") in lower and token in compounds(text):
        return True
    words: tuple[str, ...] = (token, token[:-1] + "i") if token.endswith("y") else (token,)
    for probe in words + _IRREGULAR_FORMS.get(token, ()):
        at = lower.find(probe)
        while at >= 0:
            start, end = at, at + len(probe)
            while start > 0 and _is_word_char(text[start - 1]):
                start -= 1
            while end < len(text) and _is_word_char(text[end]):
                end += 1
            if token in _tokens_of(text[start:end]):
                return True
            at = lower.find(probe, end)
    return False


def _is_word_char(ch: str) -> bool:
    return ch == "_" or ch.isalnum()  # the text is ASCII here


def path_tokens(path: str) -> list[str]:
    """Directory and file names, split like identifiers, plus the extension."""
    return code_tokens(path.replace("/", " ").replace(".", " ").replace("-", " "))


def query_terms(text: str) -> list[str]:
    """Distinct tokens of a question, stopwords dropped, in first-seen order."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text):
        if word.lower() in STOPWORDS:
            continue  # drop the word before stemming, so "does" cannot survive as "doe"
        for tok in _tokens_of(word):
            if tok not in STOPWORDS:
                seen.setdefault(tok, None)
    for tok in _extras(text):
        seen.setdefault(tok, None)
    return list(seen)


def query_words(text: str) -> list[tuple[str, ...]]:
    """Each distinct word of a question that is not a stopword, as its tokens."""
    seen: dict[tuple[str, ...], None] = {}
    for word in dict.fromkeys(_WORD.findall(text)):
        if word.lower() not in STOPWORDS:
            tokens = tuple(tok for tok in _tokens_of(word) if tok not in STOPWORDS)
            if tokens:
                seen.setdefault(tokens, None)
    return list(seen)


_PROSE_WORD = re.compile(r"(?<![\w.])[A-Za-z]+(?![\w.])")  # not a piece of an identifier
_PARTICLES = frozenset({"up", "down", "out", "off", "over", "on", "in"})  # "set up", "log in"


def joined_words(text: str) -> list[str]:
    """Adjacent words of a question written as one, the way code names them: "torn down"
    -> "teardown", "set up" -> "setup", "file name" -> "filename" (the first word in its
    stem's form, so "setting up" meets `setUp`).

    Distinct, in order; a pair that starts with a stopword is skipped. Most pairs name
    nothing and match no document; the few that do are the question's own compounds.
    """
    found = list(_PROSE_WORD.finditer(text))
    seen: dict[str, None] = {}
    for a, b in pairwise(found):
        first, second = a.group().lower(), b.group().lower()
        if len(first) < 2 or len(second) < 2:
            continue
        if (
            text[a.end() : b.start()].strip()  # a kebab-case name has its own tokens
            or first in STOPWORDS
            or (second in STOPWORDS and second not in _PARTICLES)
        ):
            continue
        base = stem(first) if first in IRREGULAR or first.endswith("ing") else first
        joined = base + second
        if len(joined) <= _MAX_TOKEN:
            seen.setdefault(joined, None)
    return list(seen)


def join(tokens: Iterable[str]) -> str:
    return " ".join(tokens)
