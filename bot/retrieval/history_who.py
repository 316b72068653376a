""" "Who made the last change to X": the phrasings that ask for the newest change's author
without a verb `history_intent`'s patterns know ("who made the most recent change to X",
"who was the last to touch X", "the last person to edit X", "whose commit last changed X").

Each needs both a person ("who", "whose", "which author", "the last person") and a change
noun or verb next to "last"/"latest"/"most recent"/"newest": "who calls the last handler"
and "who handles the latest request" stay code questions.
"""

from __future__ import annotations

import re

_NEWEST = r"(?:last|latest|newest|most\s+recent(?:ly)?|final)"
_CHANGE_NOUN = (
    r"(?:change|changes|edit|edits|commit|commits|modification|modifications|update|updates|"
    r"touch|patch|rewrite|refactor(?:ing)?|revision|fix)"
)
_CHANGE_VERB = (
    r"(?:chang\w*|edit\w*|touch\w*|modif\w*|updat\w*|rewr\w*|refactor\w*|commit\w*|"
    r"work(?:ed)? on|patch\w*|fix\w*)"
)
_PERSON = r"(?:person|one|author|developer|dev|engineer|contributor|committer|maintainer|editor)"
_LAST_CHANGE = re.compile(
    # who made / did / pushed the most recent change to X; whose latest commit touched X
    rf"\b(?:who|whose|which\s+{_PERSON})\b[^?.!]*?\b{_NEWEST}\s+(?:\w+\s+)?{_CHANGE_NOUN}\b"
    # who was the last (person) to touch X
    rf"|\bwho\b[^?.!]*?\b(?:was|is|were)\s+(?:the\s+)?{_NEWEST}\s+(?:{_PERSON}\s+)?to\s+"
    rf"{_CHANGE_VERB}"
    # the last person to change X; the most recent author of X
    rf"|\b{_NEWEST}\s+{_PERSON}s?\s+(?:to\s+{_CHANGE_VERB}|of|on|who\s+{_CHANGE_VERB})"
    # whose commit (last) changed X; which developer most recently edited X
    rf"|\b(?:whose|which\s+{_PERSON})\b[^?.!]*?\b{_NEWEST}?\s*{_CHANGE_VERB}",
    re.IGNORECASE,
)


def asks_last_change(question: str) -> bool:
    """True when `question` asks who made the newest change to something."""
    return bool(_LAST_CHANGE.search(question))


# `Owner::name` (Rust, C++, Ruby, PHP), `Owner#name` (Ruby and JS docs), `Owner->name`
_QUALIFIED = re.compile(r"`?\b([A-Za-z_]\w*(?:(?:::|#|->|\.)[A-Za-z_]\w*)+)\b`?")
_SEPARATORS = re.compile(r"::|#|->")


def qualified_names(question: str) -> list[str]:
    """The qualified names `question` holds as the symbol table spells them, each then its
    shorter suffixes down to `Owner.name` (a crate, module or package path in front of
    the owner is not part of a definition's name): `crate::error::Error::msg` ->
    `crate.error.Error.msg`, `error.Error.msg`, `Error.msg`; a JavaScript method set on a
    prototype is its owner's (`Runner.prototype.run` -> `Runner.run`)."""
    names: list[str] = []
    for match in _QUALIFIED.finditer(question):
        parts = _SEPARATORS.sub(".", match.group(1)).split(".")
        if "prototype" in parts[1:-1]:  # `Runner.prototype.run = ...` defines `Runner.run`
            parts = [p for i, p in enumerate(parts) if p != "prototype" or i in (0, len(parts) - 1)]
        names += [".".join(parts[i:]) for i in range(len(parts) - 1)]
    return list(dict.fromkeys(names))
