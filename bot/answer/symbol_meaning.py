"""The sentences that say what a name is when no definition of that name says it all.

One per kind of `bot.retrieval.symbol_names.Meaning`: the aliases followed to the
definition they reach, another package's name, an assignment, members made at run time
for each name of a list ("made at run time: … creates a member of `ky` for each name in
`requestMethods`"), a method reached through a receiver's stated type, and, when the
table cannot tell, the candidates and why, none of them given as the definition. The
same facts go to the model's prompt (`meaning_facts`), each place with its source number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from bot.models import line_label
from bot.retrieval.symbol_language import language_of
from bot.retrieval.symbol_names import Meaning
from bot.symbols.builtins import GLOBAL_OBJECTS, standard_module
from bot.symbols.model import SymbolAlias, SymbolDef, SymbolRef

MAX_NAMES = 12  # names of a loop's list shown
MAX_CANDIDATES = 6


class Cites(Protocol):
    """Cites a place and returns its label as the answer shows it (`**a.py:L1-L3**`)."""

    def definition(self, d: SymbolDef) -> str: ...
    def site(self, site: SymbolRef) -> str: ...


def meaning_text(name: str, meaning: Meaning, defs: Sequence[SymbolDef], cites: Cites) -> str:
    """The answer's first paragraph for a name with a `meaning` (`name`: as asked)."""
    return _TEXTS[meaning.kind](f"`{name}`", meaning, defs, cites.definition, cites.site)


def meaning_facts(
    name: str, meaning: Meaning, defs: Sequence[SymbolDef], number: Number
) -> list[str]:
    """The same, as facts for the model's prompt (`number`: a place's " [n]", or "")."""
    plain = _Plain(number)
    return [f"- {meaning_text(name, meaning, defs, plain)}"]


Number = Callable[[SymbolDef | SymbolRef], str]
Cite = Callable[[SymbolDef], str]
CiteSite = Callable[[SymbolRef], str]


class _Plain:
    """Labels without markup, each followed by its source number (for the prompt)."""

    def __init__(self, number: Number) -> None:
        self._number = number

    def definition(self, d: SymbolDef) -> str:
        return f"{d.repo}: {line_label(d.path, d.start_line, d.end_line)}{self._number(d)}"

    def site(self, site: SymbolRef) -> str:
        return f"{site.repo}: {line_label(site.path, site.line, site.line)}{self._number(site)}"


def _last(name: str) -> str:
    """The last segment of a name as the answer quotes it (`` `ky.get` `` -> get)."""
    return name.strip("`").rpartition(".")[2]


def _place(a: SymbolAlias) -> SymbolDef:
    return SymbolDef(a.repo, a.path, a.name, a.name, a.kind, a.start_line, a.end_line)


def _what(d: SymbolDef) -> str:
    return f"{d.kind} `{d.symbol}`" if d.kind else f"`{d.symbol}`"


def _bound(a: SymbolAlias, cite: Cite) -> str:
    source = f" from `{a.module}`" if a.module else ""
    target = f"`{_written(a.path, a.target)}`" if a.target not in ("", "*") else "the module"
    return f"{cite(_place(a))} binds `{a.name}` to {target}{source}"


def _written(path: str, dotted: str) -> str:
    """A dotted name as the language of `path` writes it (`std::collections::BTreeMap`)."""
    return dotted.replace(".", "::") if language_of(path) in ("rust", "cpp") else dotted


def _outside(path: str, name: str) -> str:
    """Whose `name` is: the language's standard library, or another package."""
    language = language_of(path)
    root = name.replace("::", ".").partition(".")[0]
    if root in GLOBAL_OBJECTS.get(language, ()) or standard_module(language, name):
        return "the language's standard library"
    return "another package, which is not indexed"


def _alias(name: str, m: Meaning, defs: Sequence[SymbolDef], cite: Cite, _s: CiteSite) -> str:
    if defs:  # the definition first: it is what the answer is about
        d = defs[0]
        where = cite(d)
        steps = "; ".join(_bound(a, cite) for a in m.aliases)
        how = "under another name" if m.aliases[0].name != d.name else "and re-exported"
        text = f"{name} is {_what(d)}, defined in {where}, {how}: {steps}."
        others = [o for o in defs[1:] if o.name == d.name][:3]
        if others:
            listed = ", ".join(cite(o) for o in others)
            text += f" Other definitions of that name, which it is not: {listed}."
        return text
    steps = "; ".join(_bound(a, cite) for a in m.aliases)
    if m.external:
        last = m.aliases[-1]
        outside = _written(last.path, m.external)
        return (
            f"{name} is not defined in the indexed code: {steps}; that is `{outside}` of "
            f"{_outside(last.path, m.external)}."
        )
    if m.module:
        at = SymbolDef(m.aliases[-1].repo, m.module, "", "", "", 1, 1)
        return f"{name} is an alias: {steps}; that is the module `{m.module}` ({cite(at)})."
    target = m.aliases[-1].target
    return f"{name} is an alias: {steps}; the indexed code has no definition of `{target}`."


def _assigned(name: str, m: Meaning, _d: Sequence[SymbolDef], cite: Cite, _s: CiteSite) -> str:
    *steps, a = m.aliases
    through = "; ".join(_bound(step, cite) for step in steps)
    text = f"{name} is not a function or class: " + (
        f"{through}; `{a.name}` is" if steps else "it is"
    )
    text += f" assigned at {cite(_place(a))} from `{a.target}`"
    if m.made_by is not None:
        return f"{text}; `{m.made_by.name}` is {_what(m.made_by)}, defined in {cite(m.made_by)}."
    return f"{text}."


def _generated(name: str, m: Meaning, _d: Sequence[SymbolDef], cite: Cite, _s: CiteSite) -> str:
    a = m.aliases[0]
    owner = f"`{a.owner}`" if a.owner else "the module"
    text = (
        f"{name} is made at run time, not defined by name: {cite(_place(a))} creates a member "
        f"of {owner} for each name in `{m.source}`"
    )
    if m.listed is not None:
        listed = m.listed
        at = SymbolDef(listed.repo, listed.path, "", "", "", listed.line, listed.line)
        names = ", ".join(f"`{n}`" for n in listed.names[:MAX_NAMES])
        more = ", …" if len(listed.names) > MAX_NAMES else ""
        return f"{text} ({cite(at)}: {names}{more})."
    if m.source_module:
        return (
            f"{text}, which comes from `{m.source_module}` (not indexed), so the names are not "
            f"known here; `{_last(name)}` is probably one of them."
        )
    return f"{text}; the names are not listed in the indexed code."


def _receiver(name: str, m: Meaning, defs: Sequence[SymbolDef], cite: Cite, site: CiteSite) -> str:
    d = defs[0]
    defined = cite(d)
    cls = m.types[0] if m.types else None
    where = ", ".join(site(s) for s in m.typed_at)
    kind = f"a `{cls.symbol}`" if cls is not None else "of a stated type"
    return (
        f"{name} is {_what(d)}, defined in {defined}: where the code calls it, "
        f"`{m.receiver}` is {kind} ({where})."
    )


def _unsure(name: str, m: Meaning, _d: Sequence[SymbolDef], cite: Cite, site: CiteSite) -> str:
    candidates = m.candidates[:MAX_CANDIDATES]
    labels = [cite(d) for d in candidates]  # cited first: the answer is about them
    evidence = ""
    if m.typed_at:
        places = ", ".join(site(s) for s in m.typed_at[:3])
        kinds = " or ".join(f"a `{t.symbol}`" for t in m.types[:3]) or "a variable of a stated type"
        evidence = f" Elsewhere the code calls `{_last(name)}` on {kinds} ({places})."
    if len(candidates) == 1:
        d = candidates[0]
        return (
            f"I can't be sure what {name} is: {m.reason}. The one candidate in the indexed code "
            f"is {_what(d)} in {labels[0]}, but nothing confirms it is this one.{evidence}"
        )
    lines = [f"I can't tell which definition {name} is: {m.reason}. The candidates:"]
    lines += [f"• {label} {_what(d)}" for label, d in zip(labels, candidates, strict=True)]
    if len(m.candidates) > len(candidates):
        lines.append(f"… and {len(m.candidates) - len(candidates)} more.")
    return "\n".join(lines) + (f"\n{evidence.strip()}" if evidence else "")


_TEXTS = {
    "alias": _alias,
    "assigned": _assigned,
    "generated": _generated,
    "receiver": _receiver,
    "unsure": _unsure,
}
