"""The metrics module: silent until enabled, then every family in Prometheus's text format
(read back with prometheus_client's own parser)."""

from __future__ import annotations

import subprocess
import sys

from bot.runtime import metrics
from tests.support.metrics import grew, parse, value
from tests.support.paths import ROOT


def test_nothing_is_loaded_or_recorded_until_metrics_are_enabled() -> None:
    snippet = (
        "import sys\n"
        "from bot.runtime import metrics\n"
        "metrics.question('slack'); metrics.answered('slack', 'llm', 1.0)\n"
        "with metrics.timed_store('sqlite', 'run log'): pass\n"
        "assert not metrics.enabled() and metrics.exposition()[0] == b''\n"
        "print('prometheus_client' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", snippet], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"  # the CLI's commands never import the client


def test_enabled_metrics_speak_the_text_format() -> None:
    metrics.enable()
    metrics.enable()  # idempotent: one registry
    before = parse(metrics.exposition()[0].decode())
    metrics.question("discord")
    metrics.answered("discord", "extractive", 0.4)
    metrics.first_text("discord", 0.2)
    metrics.error("ServiceUnavailable")
    metrics.refused("user")
    metrics.ingested("schedule", "ok", 12.0)
    metrics.job_done("failed", 3.0)
    metrics.model_tokens("chat", "gpt-4o-mini", prompt=120, completion=30)
    metrics.pinecone_units(read=5, written=2)
    with metrics.timed_store("pinecone", "query"):
        pass
    with metrics.timed_model("embed", "text-embedding-3-small"):
        pass
    metrics.gauges(lambda: {"answer_queue_waiting": 3, "ingest_jobs_queued": None})
    body, content_type = metrics.exposition()
    after = parse(body.decode())
    assert content_type.startswith("text/plain; version=")
    assert grew(before, after, "codecite_questions_total", platform="discord") == 1
    assert grew(before, after, "codecite_answers_total", mode="extractive") == 1
    assert grew(before, after, "codecite_answer_seconds_count", platform="discord") == 1
    assert grew(before, after, "codecite_answer_first_text_seconds_count") == 1
    assert grew(before, after, "codecite_errors_total", kind="ServiceUnavailable") == 1
    assert grew(before, after, "codecite_refusals_total", reason="user") == 1
    assert grew(before, after, "codecite_ingests_total", trigger="schedule", outcome="ok") == 1
    assert grew(before, after, "codecite_ingest_seconds_sum", outcome="ok") == 12.0
    assert grew(before, after, "codecite_jobs_total", outcome="failed") == 1
    assert grew(before, after, "codecite_model_tokens_total", type="prompt") == 120
    assert grew(before, after, "codecite_model_tokens_total", type="completion") == 30
    assert grew(before, after, "codecite_pinecone_read_units_total") == 5
    assert grew(before, after, "codecite_pinecone_records_written_total") == 2
    assert grew(before, after, "codecite_store_request_seconds_count", store="pinecone") == 1
    assert grew(before, after, "codecite_model_request_seconds_count", kind="embed") == 1
    assert value(after, "codecite_answer_queue_waiting") == 3
    assert ("codecite_ingest_jobs_queued", frozenset()) not in after  # unknown: left out
    assert value(after, "process_resident_memory_bytes") > 0
