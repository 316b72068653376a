"""Architecture answers: where to start, the main parts with their roles, how they depend.

Written from `bot.retrieval.architecture`'s facts, each role and entry point cited at
the lines that say it; the same facts become the diagram attached to the answer
(`bot.answer.diagram`) and, with a model, a block of facts in its prompt.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.answer.citations import Cites, Permalink
from bot.answer.diagram import diagram_of, mermaid, png
from bot.models import Attachment, Citation, line_label
from bot.retrieval.architecture import Architecture, Edge, Entry, Part
from bot.retrieval.dirtree import one_line
from bot.retrieval.retriever import Source

MAX_USES = 3  # parts named as what one part depends on


def architecture_text(
    archs: Sequence[Architecture], permalink: Permalink
) -> tuple[str, tuple[Citation, ...]]:
    """The answer's architecture sections, one per repository with parts."""
    cites = Cites(permalink)
    sections = [_section(a, cites) for a in archs if a.parts]
    return "\n\n".join(sections), cites.all()


def _section(arch: Architecture, cites: Cites) -> str:
    lines = [f"**{one_line(arch.repo)}**: where to start"]
    lines += [f"• {_entry(arch.repo, e, cites)}" for e in arch.entries]
    lines.append("Main parts, and what each uses:")
    for i, part in enumerate(arch.parts):
        lines.append(f"• {_part(arch, i, part, cites)}")
    return "\n".join(lines)


def _entry(repo: str, e: Entry, cites: Cites) -> str:
    d = e.definition
    if d is None:
        return f"{cites.at(repo, e.path, 1, 1)} ({e.why})"
    where = cites.at(repo, d.path, d.start_line, d.end_line, d.symbol)
    return f"`{one_line(d.symbol)}` {where} ({e.why})"


def _part(arch: Architecture, i: int, part: Part, cites: Cites) -> str:
    files = "" if len(part.files) == 1 else f" ({len(part.files)} files)"
    text = f"`{one_line(part.name)}`{files}"
    if part.role is not None:
        r = part.role
        text += f": {one_line(r.text)} ({cites.at(arch.repo, r.path, r.start_line, r.end_line)})"
    uses = [arch.parts[e.target].name for e in _uses(arch, i)]
    if uses:
        text += " — uses " + ", ".join(f"`{one_line(u)}`" for u in uses)
    return text


def _uses(arch: Architecture, i: int) -> list[Edge]:
    return sorted((e for e in arch.edges if e.source == i), key=lambda e: -e.weight)[:MAX_USES]


def entries_first(sources: Sequence[Source], entries: Sequence[Source]) -> list[Source]:
    """Where reading starts (`entries`), then the sources that do not repeat them."""

    def repeats(s: Source) -> bool:
        return any(
            (s.repo, s.path) == (e.repo, e.path)
            and s.start_line <= e.end_line
            and e.start_line <= s.end_line
            for e in entries
        )

    return [*entries, *(s for s in sources if not repeats(s))]


def architecture_facts(archs: Sequence[Architecture]) -> str:
    """The same facts for the model's prompt (the diagram's content, in words)."""
    lines = []
    for a in archs:
        for e in a.entries:
            what = f"`{e.definition.symbol}` at " if e.definition else ""
            d = e.definition
            where = line_label(d.path, d.start_line, d.end_line) if d else e.path
            lines.append(f"- {a.repo}: entry point {what}{where} ({e.why})")
        for i, part in enumerate(a.parts):
            role = f": {part.role.text}" if part.role else ""
            uses = ", ".join(a.parts[e.target].name for e in a.edges if e.source == i)
            lines.append(
                f"- {a.repo}: part `{part.name}` ({len(part.files)} files){role}"
                + (f"; uses {uses}" if uses else "")
            )
    if not lines:
        return ""
    return "\n".join(
        ["Architecture (exact, from the index; drawn in the attached diagram):"]
        + [one_line(line) for line in lines]
    )


MAX_DIAGRAMS = 3  # pictures attached to one answer (one per repository)


def diagram_attachment(archs: Sequence[Architecture]) -> tuple[Attachment, ...]:
    """Per repository with parts, its diagram as a PNG with its Mermaid source as alt text."""
    out = []
    for arch in [a for a in archs if len(a.parts) > 1][:MAX_DIAGRAMS]:
        drawn = diagram_of(arch)
        out.append(
            Attachment(
                filename=f"{_safe(arch.repo)}-architecture.png",
                data=png(drawn),
                mime="image/png",
                title=f"Architecture of {one_line(arch.repo)}",
                alt_text=mermaid([drawn]),
            )
        )
    return tuple(out)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in name)[:60] or "code"
