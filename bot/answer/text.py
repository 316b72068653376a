"""Platform-neutral text shaping for answers: citation links and safe splitting.

Adapters pass a formatter for their link syntax; the core never knows which
platform asked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from bot.models import Citation

LinkFormat = Callable[[str, str], str]  # (label, url) -> platform link

_FENCE = re.compile(r"^\s*(```|~~~)")


def link_citations(text: str, citations: Sequence[Citation], fmt: LinkFormat) -> str:
    """Turn each citation label outside code fences into a link (labels without a URL stay)."""
    by_label = {c.label: c.url for c in citations if c.url}
    if not by_label:
        return text
    labels = "|".join(re.escape(k) for k in sorted(by_label, key=len, reverse=True))
    # Whole labels only: `a.py:L3` must not match inside `a.py:L30-L40` or `xa.py:L3`.
    pattern = re.compile(rf"(?<![\w/.-])(?:{labels})(?![\w-])")
    out: list[str] = []
    in_fence = False
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            in_fence = not in_fence
            out.append(line)
            continue
        if in_fence:
            out.append(line)
            continue
        out.append(pattern.sub(lambda m: fmt(m.group(), by_label[m.group()]), line))
    return "".join(out)


def split_message(text: str, limit: int, *, paragraphs: bool = True) -> list[str]:
    """Split markdown into pieces of at most `limit` characters.

    Prefers paragraph, then line boundaries; never leaves a code fence open in
    a piece (it is closed and reopened, with its language, in the next one).
    A single line longer than the limit is cut at a word boundary (a space), and hard
    only when it has none near the limit; the rest of it begins the next piece.
    With `paragraphs=False` every piece is filled line by line before the next
    begins, so the pieces of a growing text stay put: all but the last are final
    once a later piece exists (what a message edited as an answer streams needs).
    """
    if limit < 20:
        raise ValueError("limit too small to split safely")
    if len(text) <= limit:
        return [text]
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    fence_open = ""  # the opening fence line of the block we are inside, or ""

    def flush() -> None:
        nonlocal current, size
        body = "".join(current).rstrip("\n")
        if fence_open:
            body += "\n```"
        if body.strip():
            pieces.append(body)
        current = [fence_open + "\n"] if fence_open else []
        size = sum(len(p) for p in current)

    for raw in text.splitlines(keepends=True):
        while raw:
            # Inside a block, the reopened fence line takes room in the piece too.
            width = limit - 8 - (len(fence_open) + 1 if fence_open else 0)
            line, raw = _first_part(raw, width)
            closing = 4 if fence_open or _FENCE.match(line) else 0
            blank_break = paragraphs and not line.strip() and not fence_open and size > limit // 2
            if size + len(line) + closing > limit or blank_break:
                flush()
                if blank_break:
                    continue
            current.append(line)
            size += len(line)
            if _FENCE.match(line):
                fence_open = "" if fence_open else line.strip()
            if raw:  # the line goes on in the next piece, never after a line break in this one
                flush()
    if fence_open:
        fence_open = ""
    body = "".join(current).rstrip("\n")
    if body.strip():
        pieces.append(body)
    return pieces


def _first_part(line: str, width: int) -> tuple[str, str]:
    """`line` (with its newline) if it fits in `width`, else its first part and the rest.

    The cut falls after the last space that leaves at most `width` characters before it
    and at least three quarters of them, so no word is split; a line with no such space
    is cut at `width`.
    """
    if len(line) <= width:
        return line, ""
    space = line.rfind(" ", width - width // 4, width + 1)
    at = space + 1 if space > 0 else width
    return line[:at].rstrip(" ") + "\n", line[at:]


def citation_note(c: Citation, fmt: LinkFormat) -> str:
    """What a citation says besides its label, links in the platform's `fmt`: a code
    citation's ` · last changed 3b16957c (2025-03-02, #2873)`, a commit's
    ` · 2025-03-02 · author · subject (#2873)`; "" when nothing is known."""
    ref = c.changed
    if ref is None:
        return ""
    pr = (fmt(f"#{ref.pr}", ref.pr_url) if ref.pr_url else f"#{ref.pr}") if ref.pr else ""
    if c.kind == "commit":
        subject = ref.subject[:120]
        if pr and f"#{ref.pr}" in subject:  # "Merge pull request #34", "Add x (#34)": linked
            return f" · {ref.date} · {ref.author} · {subject.replace(f'#{ref.pr}', pr, 1)}"
        return f" · {ref.date} · {ref.author} · {subject}{f' ({pr})' if pr else ''}"
    if not ref.sha:
        return f" · {ref.note}"
    sha = fmt(ref.sha[:8], ref.url) if ref.url else ref.sha[:8]
    return f" · last changed {sha} ({ref.date}{', ' + pr if pr else ''})"
