"""Terminal rendering of answers, search hits and ingest reports."""

from __future__ import annotations

from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table

from adapters.cli.status import StatusLine
from bot.answer.streaming import AnswerStream
from bot.ingest.pipeline import IngestReport
from bot.llm.pricing import describe_cost
from bot.models import Answer


def print_answer(console: Console, answer: Answer, *, details: bool = True) -> None:
    console.print(Markdown(answer.text))
    print_footer(console, answer, details=details)


def print_streamed(
    console: Console, stream: AnswerStream, status: StatusLine | None = None, *, live: bool = True
) -> Answer:
    """Plain text pieces as the model writes them, then the footer; the whole answer at
    once (as markdown) when the output is not a terminal or not `live` (CODECITE_STREAM
    off). The answer replaces `status`."""
    if not (console.is_terminal and live):
        answer = stream.answer  # the status stays up while the model writes
        if status is not None:
            status.clear()
        print_answer(console, answer)
        return answer
    for piece in stream:
        if status is not None:
            status.clear()
        console.file.write(piece)  # as written: rich would re-wrap and restyle each piece
        console.file.flush()
    if status is not None:
        status.clear()  # an answer with no text at all
    console.file.write("\n")
    print_footer(console, stream.answer)
    return stream.answer


def print_footer(console: Console, answer: Answer, *, details: bool = True) -> None:
    """Sources, freshness and (with `details`) mode, time and tokens."""
    if answer.citations:
        console.print()
        console.print("[bold]Sources[/bold]")
        for cite in answer.citations:
            where = cite.url or f"{cite.repo}: {cite.path}"
            console.print(f"  {cite.label}  [dim]{where}[/dim]", highlight=False)
    if answer.freshness:
        console.print()
        for fresh in answer.freshness:
            console.print(f"[dim]{fresh.describe()}[/dim]", highlight=False)
    if details:
        u = answer.usage
        total = answer.timings.get("total", 0.0)
        tokens = f"{u.prompt_tokens} in / {u.completion_tokens} out"
        if u.embedding_tokens:
            tokens += f" / {u.embedding_tokens} embedding"
        console.print(f"[dim]{answer.mode} answer in {total:.2f}s; tokens {tokens}[/dim]")


def print_report(console: Console, report: IngestReport, embed_model: str = "") -> None:
    table = Table(title=f"Indexed {report.repo}", show_header=False, title_justify="left")
    table.add_row("commit", f"{report.branch or '-'}@{report.commit[:12] or 'working tree'}")
    table.add_row(
        "files",
        f"{report.files:,} indexed ({report.files_added:,} new, {report.files_changed:,} changed, "
        f"{report.files_removed:,} removed)",
    )
    table.add_row(
        "chunks", f"{report.chunks:,} (+{report.chunks_added:,} / -{report.chunks_removed:,})"
    )
    skipped = ", ".join(f"{reason} {n:,}" for reason, n in sorted(report.skipped.items()))
    table.add_row("skipped", skipped or "none")
    if report.secrets_redacted:
        redacted = ", ".join(f"{k} {n:,}" for k, n in sorted(report.secrets_redacted.items()))
        table.add_row("secrets redacted", redacted)
    if not report.symbols_stored:
        table.add_row(
            "symbol table",
            "not updated (see the log); exact symbol answers for this repository use search "
            "until the next ingest repairs it",
        )
    if embed_model:
        cost = describe_cost(embed_model, report.embedding_tokens)
        table.add_row(
            "embeddings",
            f"{report.embedded_inputs:,} inputs, {report.embedding_tokens:,} tokens ({cost}); "
            f"{report.embedding_tokens_saved:,} tokens saved by the cache",
        )
    table.add_row("time", f"{report.seconds:.1f}s")
    console.print(table)
