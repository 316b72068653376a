"""Terminal rendering of answers, search hits and ingest reports.

Everything is written as it is (see `adapters.cli.plain`): an answer's markdown is
shown as its text, so a path keeps its underscores, a list stays a list and the
piped output of `codecite ask` is the answer's markdown, ready to paste.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

from adapters.cli.plain import Wrapper, say, visible
from adapters.cli.status import StatusLine
from bot.answer.text import citation_note
from bot.llm.pricing import describe_cost
from bot.models import Answer

if TYPE_CHECKING:  # the ingest pipeline loads tree-sitter: `index` only
    from bot.answer.streaming import AnswerStream
    from bot.ingest.pipeline import IngestReport

SOURCE_HANG = 4  # a source whose link does not fit on its line continues under it


def print_answer(console: Console, answer: Answer, *, details: bool = True) -> None:
    say(console, answer.text.rstrip("\n"))
    print_footer(console, answer, details=details)


def print_streamed(
    console: Console, stream: AnswerStream, status: StatusLine | None = None, *, live: bool = True
) -> Answer:
    """The text as the model writes it, then the footer; the whole answer at once when the
    output is not a terminal or not `live` (CODECITE_STREAM off). The answer replaces
    `status`."""
    if not (console.is_terminal and live):
        answer = stream.answer  # the status stays up while the model writes
        if status is not None:
            status.clear()
        print_answer(console, answer)
        return answer
    wrapper = Wrapper(console.width)
    last = "\n"
    for piece in stream:
        if status is not None:
            status.clear()
        last = _write(console, wrapper.feed(visible(piece)), last)
    if status is not None:
        status.clear()  # an answer with no text at all
    last = _write(console, wrapper.end(), last)
    _write(console, "" if last == "\n" else "\n", last)
    print_footer(console, stream.answer)
    return stream.answer


def _write(console: Console, text: str, last: str) -> str:
    """Write as it comes (rich would re-wrap and restyle each piece); the last character."""
    if not text:
        return last
    console.file.write(text)
    console.file.flush()
    return text[-1]


def print_footer(console: Console, answer: Answer, *, details: bool = True) -> None:
    """Sources, freshness and (with `details`) mode, time and tokens."""
    if answer.citations:
        console.print()
        say(console, "Sources", style="bold")
        for cite in answer.citations:
            where = cite.url or f"({cite.repo})"  # a local repository: its name
            note = citation_note(cite, plain_link)
            say(console, f"  {cite.label}  {where}{note}", style="dim", hang=SOURCE_HANG)
    if answer.freshness:
        console.print()
        for fresh in answer.freshness:
            say(console, fresh.describe(), style="dim")
    for picture in answer.attachments:  # chat shows it; a terminal points at it
        hint = f"`codecite map <repo> --diagram {picture.filename}` draws it"
        say(console, f"{picture.title}: {hint}", style="dim")
    if details:
        u = answer.usage
        total = answer.timings.get("total", 0.0)
        tokens = f"{u.prompt_tokens} in / {u.completion_tokens} out"
        if u.embedding_tokens:
            tokens += f" / {u.embedding_tokens} embedding"
        say(console, f"{answer.mode} answer in {total:.2f}s; tokens {tokens}", style="dim")


def plain_link(label: str, url: str) -> str:
    """A link as a terminal shows it: the label, then the URL itself in angle brackets (so
    the terminal's URL detection stops at `>`, not at the `)` or `,` after it)."""
    return f"{label} <{url}>" if url else label


def print_report(console: Console, report: IngestReport, embed_model: str = "") -> None:
    """The ingest report: a title, then one aligned `name  value` line per fact."""
    rows = [
        ("commit", f"{report.branch or '-'}@{report.commit[:12] or 'working tree'}"),
        (
            "files",
            f"{report.files:,} indexed ({report.files_added:,} new, "
            f"{report.files_changed:,} changed, {report.files_removed:,} removed)",
        ),
        ("chunks", f"{report.chunks:,} (+{report.chunks_added:,} / -{report.chunks_removed:,})"),
        ("skipped", ", ".join(f"{k} {n:,}" for k, n in sorted(report.skipped.items())) or "none"),
    ]
    if report.secrets_redacted:
        redacted = ", ".join(f"{k} {n:,}" for k, n in sorted(report.secrets_redacted.items()))
        rows.append(("secrets redacted", redacted))
    if not report.symbols_stored:
        rows.append(
            (
                "symbol table",
                "not updated (see the log); exact symbol answers for this repository use "
                "search until the next ingest repairs it",
            )
        )
    if embed_model:
        cost = describe_cost(embed_model, report.embedding_tokens)
        rows.append(
            (
                "embeddings",
                f"{report.embedded_inputs:,} inputs, {report.embedding_tokens:,} tokens ({cost}); "
                f"{report.embedding_tokens_saved:,} tokens saved by the cache",
            )
        )
    rows.append(("time", f"{report.seconds:.1f}s"))
    say(console, f"Indexed {report.repo}", style="bold")
    column = max(len(name) for name, _ in rows)
    for name, value in rows:
        say(console, f"  {name:<{column}}  {value}")  # wraps under the value
