"""Answers from the symbol table: definitions, call sites, references and repository maps.

With no model configured these are the whole answer, exact and cited like any
other (`path:L10-L42`, linked at the indexed commit). With a model, the same
findings go into the prompt as a compact block of facts, numbered against the
sources so the model can cite them.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.answer.architecture_answer import architecture_text
from bot.answer.citations import Cites, Permalink
from bot.answer.symbol_meaning import meaning_facts, meaning_text
from bot.models import Citation, line_label
from bot.retrieval.architecture import Architecture
from bot.retrieval.dirtree import one_line
from bot.retrieval.repomap import RenderedMap, RepoMap, render_maps
from bot.retrieval.retriever import Source
from bot.retrieval.symbol_calls import Attribution
from bot.retrieval.symbol_facts import SymbolFacts
from bot.retrieval.symbol_inherited import Inherited
from bot.symbols.model import SymbolDef, SymbolRef

MAX_SITES = 20  # call sites listed; the rest are counted
MAX_LISTED_DEFINITIONS = 10
EXCERPT_LINES = 12
CODE_CHARS = 90
FACT_SITES = 12  # call sites given to the model
LEFT_OUT_LISTED = 3  # sites left out (they reach another definition) named by place
_DECORATION = ("@", "#[", "[")  # lines above a definition that belong to it


def symbol_answer(
    facts: SymbolFacts, sources: Sequence[Source], permalink: Permalink
) -> tuple[str, tuple[Citation, ...]]:
    """The exact answer for an answerable question (see `SymbolFacts.answerable`)."""
    cites = Cites(permalink)
    if facts.question.kind == "overview":
        return map_answer(facts.maps, permalink)
    multi_repo = len({d.repo for d in facts.definitions} | {s.repo for s in facts.sites}) > 1
    if _sites_first(facts):
        # "who calls X": the call sites are the answer, the definition follows as such
        sites = _sites_text(facts, cites, multi_repo)
        return "\n\n".join((sites, _definition_text(facts, cites, multi_repo))), cites.all()
    parts = [_definition_text(facts, cites, multi_repo)]
    if facts.question.kind == "definition":
        quoted = _quoted(facts)
        excerpt = _excerpt(quoted, sources) if quoted is not None else ""
        if excerpt:
            parts.append(excerpt)
        if not facts.definitions or facts.meaning is not None:  # its own sentence says it
            return "\n\n".join(p for p in parts if p), cites.all()
        name = facts.definitions[0].name
        if facts.references:
            parts.append(
                f"It is referred to {_times(facts.references)} in the indexed code; "
                f"ask “who calls `{name}`?” for the places."
            )
        else:
            parts.append(f"Nothing in the indexed code refers to `{name}`.")
    else:
        parts.append(_sites_text(facts, cites, multi_repo))
    return "\n\n".join(p for p in parts if p), cites.all()


def map_answer(
    maps: Sequence[RepoMap], permalink: Permalink, archs: Sequence[Architecture] = ()
) -> tuple[str, tuple[Citation, ...]]:
    """The map: each repository's parts and entry points (when known), then the tree."""
    rendered = render_maps(maps)
    cites = Cites(permalink)
    for d in rendered.symbols:
        cites.definition(d)
    intro = "Here is a map of the indexed code: directories with file counts, then the "
    intro += "symbols the rest of the code refers to most."
    if not any(m.top for m in maps):
        intro = "Here is a map of the indexed code (directories with file counts)."
    parts, part_cites = architecture_text(archs, permalink)
    if parts:
        intro = (
            f"How the code is organised (the diagram shows who uses whom):\n\n{parts}\n\n{intro}"
        )
    return f"{intro}\n\n{rendered.text}", (*part_cites, *cites.all())


def missing_note(facts: SymbolFacts | None) -> str:
    """One honest sentence when a named symbol is not in the table ("" otherwise)."""
    if facts is None or facts.answerable or not facts.question.name:
        return ""
    # The name is not repeated: a reply must carry nothing that looks like an answer from
    # a repository the place cannot see (see tests/reliability/test_scope_matrix.py). The
    # class below was found in this place's scope, so it may be named.
    if facts.inherited is not None:
        return _not_inherited(facts.inherited, facts.question.last)
    if facts.question.kind == "definition":
        return "I found no definition of that name in the repositories available here."
    return (
        "I found no definition of that name and no references to it in the repositories "
        "available here."
    )


def facts_block(facts: SymbolFacts | None, sources: Sequence[Source]) -> str:
    """The findings for the model's prompt, each location with the source number holding it.

    Names and paths come from the repository: each fact is kept on one line (`one_line`),
    so none can start a line of its own in the prompt.
    """
    if facts is None:
        return ""
    if facts.question.kind == "overview":
        return _map_facts(render_maps(facts.maps), sources) if facts.maps else ""
    return "\n".join(one_line(line) for line in _fact_lines(facts, sources))


def _fact_lines(facts: SymbolFacts, sources: Sequence[Source]) -> list[str]:
    missing = missing_note(facts)
    if missing:
        return [f"- {missing}"]
    lines = [_definition_fact(d, sources) for d in facts.definitions[:MAX_LISTED_DEFINITIONS]]
    if facts.meaning is not None:
        number = lambda where: _number(sources, where)  # noqa: E731
        lines = meaning_facts(facts.question.name, facts.meaning, facts.definitions, number)
    via = facts.inherited
    if via is not None and via.definer is not None:
        through = " -> ".join(c.symbol for c in via.chain)
        lines.append(f"- `{via.owner.symbol}` inherits it from `{via.definer.symbol}` ({through}).")
    if facts.question.kind == "definition":
        if facts.references and facts.definitions:
            name = facts.definitions[0].name
            lines.append(f"- `{name}` is referred to {_times(facts.references)}.")
        return lines
    if not facts.sites:
        what = "calls to" if facts.question.kind == "callers" else "references to"
        return [*lines, f"- The symbol table has no {what} `{facts.question.name}`."]
    sites = _site_facts(facts, sources)
    return [*sites, *lines] if _sites_first(facts) else [*lines, *sites]


def _site_facts(facts: SymbolFacts, sources: Sequence[Source]) -> list[str]:
    how = (
        "resolved through imports and classes unless marked" if facts.reaches else "matched by name"
    )
    lines = [f"- {_count_sentence(facts)} ({how}):"]
    for site in facts.sites[:FACT_SITES]:
        where = _site_caller(site)
        said = _how(facts, site)
        lines.append(f"  - {site.repo}: {_site_label(site)}{where}{said}{_number(sources, site)}")
    if len(facts.sites) > FACT_SITES:
        lines.append(f"  - … and {len(facts.sites) - FACT_SITES} more")
    left_out = _left_out(facts.left_out)
    if left_out:
        lines.append(f"- {left_out}")
    return lines


def _not_inherited(how: Inherited, member: str) -> str:
    owner = how.owner
    where = line_label(owner.path, owner.start_line, owner.end_line)
    text = (
        f"I found no definition of `{member}` in {_what(owner)} ({where}) or in the classes "
        "it inherits from in the indexed code"
    )
    if how.unresolved:
        bases = ", ".join(f"`{b}`" for b in how.unresolved)
        return f"{text}; it may come from {bases}, which {_is_are(how.unresolved)} not indexed."
    return f"{text}."


def _is_are(items: tuple[str, ...]) -> str:
    return "is" if len(items) == 1 else "are"


# -- definitions ------------------------------------------------------------------------------


def _quoted(facts: SymbolFacts) -> SymbolDef | None:
    """The lines an answer about a definition quotes: the definition, or what made the name."""
    if facts.definitions:
        return facts.definitions[0]
    meaning = facts.meaning
    if meaning is None:
        return None
    if meaning.kind in ("generated", "assigned") and meaning.aliases:
        a = meaning.aliases[-1]  # the loop, or the assignment (after the aliases to it)
        return SymbolDef(a.repo, a.path, a.name, a.name, a.kind, a.start_line, a.end_line)
    return meaning.candidates[0] if len(meaning.candidates) == 1 else None


def _sites_first(facts: SymbolFacts) -> bool:
    """Whether the answer leads with the call sites: a callers question that has some and
    a definition to follow them (with none, the answer first says that it has none)."""
    if facts.question.kind != "callers" or facts.meaning is not None:
        return False
    return bool(facts.sites) and bool(facts.definitions)


def _definition_text(facts: SymbolFacts, cites: Cites, multi_repo: bool) -> str:
    defs = facts.definitions
    name = f"`{facts.question.name}`"
    if facts.meaning is not None:
        return meaning_text(facts.question.name, facts.meaning, defs, cites)
    if not defs:
        return (
            f"The indexed code has no function, class or method named {name} (it may be a "
            "variable or constant, or come from a library)."
        )
    if facts.inherited is not None and facts.inherited.definer is not None:
        return _inherited_text(name, facts.inherited, defs[0], cites, multi_repo)
    after = _sites_first(facts)
    if len(defs) == 1:
        d = defs[0]
        lead = "The definition: " if after else ""
        return (
            f"{lead}{name} is defined in {cites.definition(d)}{_repo(d.repo, multi_repo)}"
            f" ({_what(d)})."
        )
    listed = defs[:MAX_LISTED_DEFINITIONS]
    lines = [f"{name} has {len(defs)} definitions:"]
    lines += [f"• {cites.definition(d)} {_what(d)}{_repo(d.repo, multi_repo)}" for d in listed]
    if facts.question.kind != "definition":
        lines.append(
            f"Each place {'above' if after else 'below'} says which one it reaches where its "
            "imports and classes tell; the others are matched by name and may use any of them."
        )
    return "\n".join(lines)


def _inherited_text(name: str, how: Inherited, d: SymbolDef, cites: Cites, multi_repo: bool) -> str:
    """`Flask.x` is inherited from `Scaffold`: where, and through which classes."""
    definer = how.definer
    assert definer is not None
    through = " → ".join(f"`{c.symbol}`" for c in how.chain)
    return (
        f"{name} is inherited from `{definer.symbol}`: it is defined in "
        f"{cites.definition(d)}{_repo(d.repo, multi_repo)} ({_what(d)}). "
        f"`{how.owner.symbol}` ({cites.definition(how.owner)}) gets it through {through}."
    )


def _what(d: SymbolDef) -> str:
    return f"{d.kind} `{d.symbol}`" if d.kind else f"`{d.symbol}`"


def _excerpt(d: SymbolDef, sources: Sequence[Source]) -> str:
    """The head of the definition, with its decorators, from the source that holds it."""
    source = next(
        (
            s
            for s in sources
            if s.repo == d.repo and s.path == d.path and s.start_line <= d.start_line <= s.end_line
        ),
        None,
    )
    if source is None:
        return ""
    lines = source.text.split("\n")
    first = d.start_line - source.start_line
    while first > 0 and lines[first - 1].lstrip().startswith(_DECORATION):
        first -= 1
    last = min(d.end_line - source.start_line, first + EXCERPT_LINES - 1, len(lines) - 1)
    body = "\n".join(lines[first : last + 1])
    fence = "````" if "```" in body else "```"
    cut = "\n…" if d.end_line - source.start_line > last else ""
    return f"{fence}{_fence_lang(source.language)}\n{body}{cut}\n{fence}"


def _definition_fact(d: SymbolDef, sources: Sequence[Source]) -> str:
    label = line_label(d.path, d.start_line, d.end_line)
    number = _number(sources, d)
    return f"- `{d.name}` is defined at {d.repo}: {label} ({d.kind} `{d.symbol}`){number}"


# -- call sites and references ----------------------------------------------------------------


def _sites_text(facts: SymbolFacts, cites: Cites, multi_repo: bool) -> str:
    name = f"`{facts.question.name}`"
    if not facts.sites:
        what = "calls to" if facts.question.kind == "callers" else "references to"
        return f"I found no {what} {name} in the indexed code."
    lines = [f"{_count_sentence(facts)}:"]
    for site in facts.sites[:MAX_SITES]:
        code = facts.code.get((site.repo, site.path, site.line), "").strip()
        quoted = f": {_inline(code)}" if code else ""
        label = cites.site(site)
        how = _how(facts, site)
        lines.append(f"• {label}{_repo(site.repo, multi_repo)}{_site_caller(site)}{quoted}{how}")
    hidden = facts.sites[MAX_SITES:]
    more = facts.total_sites - min(len(facts.sites), MAX_SITES)
    if _read_all(facts) and hidden:
        files = len({(s.repo, s.path) for s in hidden})
        lines.append(f"… and {more:,} more in {_files(files)}.")
    elif more > 0:
        lines.append(f"… and {more:,} more.")
    left_out = _left_out(facts.left_out)
    if left_out:
        lines.append(left_out)
    return "\n".join(lines)


def _how(facts: SymbolFacts, site: SymbolRef) -> str:
    """Why a site is kept when it is not resolved to a definition exactly, or which of
    several definitions it reaches ("" for the one definition asked about)."""
    at = (site.repo, site.path, site.line)
    reaches = facts.reaches.get(at)
    if reaches is not None and len(facts.definitions) > 1:
        alike = sum(d.symbol == reaches.symbol for d in facts.definitions) > 1
        return f" → `{reaches.symbol}`" + (f" in {reaches.path}" if alike else "")
    how = facts.how.get(at)
    return f" ({how})" if how and (site.call or facts.question.kind == "callers") else ""


def _left_out(left: tuple[Attribution, ...]) -> str:
    """One sentence on the calls that reach another definition of the name."""
    if not left:
        return ""
    named = []
    for a in left[:LEFT_OUT_LISTED]:
        reaches = f"`{a.instead}`" if a.instead else "another definition"
        named.append(f"{line_label(a.site.path, a.site.line, a.site.line)} calls {reaches}")
    more = f", and {len(left) - LEFT_OUT_LISTED:,} more" if len(left) > LEFT_OUT_LISTED else ""
    what = "call" if len(left) == 1 else "calls"
    whose = "of another definition of the name"
    if all(a.outside for a in left):
        whose = f"that {'reaches' if len(left) == 1 else 'reach'} the language or another package"
    return f"Left out, {len(left):,} {what} {whose}: " + ("; ".join(named) + more + ".")


def _count_sentence(facts: SymbolFacts) -> str:
    n = max(facts.total_sites, len(facts.sites))
    files = _files(facts.files) if _read_all(facts) else f"at least {_files(facts.files)}"
    verb = "Called from" if facts.question.kind == "callers" else "Referenced in"
    return f"{verb} {n:,} place{'' if n == 1 else 's'} in {files}"


def _read_all(facts: SymbolFacts) -> bool:
    return facts.total_sites <= len(facts.sites)


def _site_caller(site: SymbolRef) -> str:
    return f" in `{site.caller}`" if site.caller else " at module level"


def _site_label(site: SymbolRef) -> str:
    return line_label(site.path, site.line, site.line)


def _inline(code: str) -> str:
    if len(code) > CODE_CHARS:
        code = code[: CODE_CHARS - 1].rstrip() + "…"
    return f"`` {code} ``" if "`" in code else f"`{code}`"


# -- shared -----------------------------------------------------------------------------------


def _map_facts(rendered: RenderedMap, sources: Sequence[Source]) -> str:
    numbered = [
        one_line(
            f"- {d.repo}: {line_label(d.path, d.start_line, d.end_line)} is {d.kind} "
            f"`{d.symbol}`{_number(sources, d)}"
        )
        for d in rendered.symbols
        if _number(sources, d)
    ]
    extra = "\n".join(["Central definitions quoted in the sources:", *numbered]) if numbered else ""
    return f"Repository map (exact, from the index):\n{rendered.text}" + (
        f"\n\n{extra}" if extra else ""
    )


def _number(sources: Sequence[Source], where: SymbolDef | SymbolRef) -> str:
    line = where.start_line if isinstance(where, SymbolDef) else where.line
    for n, s in enumerate(sources, start=1):
        if s.repo == where.repo and s.path == where.path and s.start_line <= line <= s.end_line:
            return f" [{n}]"
    return ""


def _repo(repo: str, show: bool) -> str:
    return f" ({repo})" if show else ""


def _files(n: int) -> str:
    return f"{n:,} file" if n == 1 else f"{n:,} files"


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n:,} times"


def _fence_lang(language: str) -> str:
    return {"csharp": "cs", "text": "", "markdown": "md"}.get(language, language)
