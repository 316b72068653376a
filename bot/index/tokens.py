"""Code-aware tokens, shared by every lexical index and by query analysis.

An identifier is kept whole (lower-cased) and also split at snake_case and
camelCase boundaries, so `registerHook`, `register_hook` and "register hook"
meet. Parts are stemmed (`stem`): plural, -ing and -ed forms fold together.
Documents and questions go through the same functions, so they always agree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from itertools import chain

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_MAX_TOKEN = 64

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


def stem(word: str) -> str:
    """Fold plurals and -ing/-ed forms to one stem, the same way for code and questions.

    "chunks", "chunking" -> "chunk"; "caching", "cache" -> "cach"; "retries", "retried",
    "retrying" -> "retry"; "embedded" -> "embed". Short words are left alone, so
    identifiers like `need`, `base` or `status` survive.
    """
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


@lru_cache(maxsize=200_000)
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


@lru_cache(maxsize=400_000)
def _word_tokens(word: str) -> tuple[str, ...]:
    if word[0].isdigit():
        return (word,) if 1 < len(word) <= 8 else ()
    return _identifier_tokens(word)


def iter_tokens(text: str) -> Iterator[str]:
    return chain.from_iterable(map(_word_tokens, _WORD.findall(text)))


def code_tokens(text: str) -> list[str]:
    """Every token of `text`, in order, duplicates kept (term frequency matters)."""
    return list(chain.from_iterable(map(_word_tokens, _WORD.findall(text))))


def path_tokens(path: str) -> list[str]:
    """Directory and file names, split like identifiers, plus the extension."""
    return code_tokens(path.replace("/", " ").replace(".", " ").replace("-", " "))


def query_terms(text: str) -> list[str]:
    """Distinct tokens of a question, stopwords dropped, in first-seen order."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text):
        word = match.group()
        if word.lower() in STOPWORDS:
            continue  # drop the word before stemming, so "does" cannot survive as "doe"
        for tok in iter_tokens(word):
            if tok not in STOPWORDS:
                seen.setdefault(tok, None)
    return list(seen)


def join(tokens: Iterable[str]) -> str:
    return " ".join(tokens)
