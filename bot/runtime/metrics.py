"""The process's Prometheus metrics: recorded where the values already are, served at
`GET /metrics` beside the health routes (adapters/common/http_routes.py).

    metrics.enable()                        # a server process, once, before it starts
    metrics.answered("slack", "llm", 2.4)   # anywhere: nothing happens until enabled
    body, content_type = metrics.exposition()

Only this module knows prometheus_client, and it imports it in `enable`: a process that
never serves metrics (the CLI's commands) records nothing and loads nothing. Every
recording function is one call and never raises. Families, all named `codecite_*`:

    questions_total{platform}                 questions taken (validated, in scope, allowed)
    answers_total{platform,mode}              answers given; mode: llm, extractive, empty
    answer_seconds{platform,mode}             question taken to complete answer
    answer_first_text_seconds{platform}       question taken to its first streamed text
    errors_total{kind}                        failures a user was told of, by error class
    refusals_total{reason}                    questions refused: user, channel, daily, busy
    ingests_total{trigger,outcome}            outcome: ok, failed, busy, cancelled
    ingest_seconds{outcome}
    jobs_total{outcome}, job_seconds{outcome} re-ingest jobs this process's runner ran
    ingest_jobs_queued                        jobs waiting for a runner (read at each scrape)
    answer_queue_running, answer_queue_waiting   this process's answer line (at each scrape)
    store_request_seconds{store,op}           store: postgresql, sqlite, pinecone
    model_request_seconds{kind,model}         kind: chat, embed
    model_tokens_total{kind,model,type}       type: prompt, completion, embedding
    pinecone_read_units_total                 what Pinecone bills queries and fetches by
    pinecone_records_written_total

plus the client's process collectors (CPU, resident memory, open files, GC). Work an
ingest does in its child process (`bot.jobs.offload`) is counted by the parent from the
run's report (duration, outcome, embedding tokens); its requests are the child's own.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

log = logging.getLogger(__name__)

PREFIX = "codecite"
# Seconds: answers take from a fraction of a second (excerpts) to a minute (a long model
# answer); requests from milliseconds to the timeouts.
ANSWER_BUCKETS = (0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 20.0, 30.0, 60.0, 120.0)
REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
INGEST_BUCKETS = (1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0, 3600.0)

Gauges = Callable[[], dict[str, float | None]]  # gauge name -> value now (None: unknown)


class _Families:
    """Every family of one registry (built by `enable`)."""

    def __init__(self) -> None:
        from prometheus_client import (
            CollectorRegistry,
            Counter,
            GCCollector,
            Histogram,
            PlatformCollector,
            ProcessCollector,
        )

        self.registry = CollectorRegistry()
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)

        def counter(name: str, doc: str, labels: tuple[str, ...] = ()) -> Any:
            return Counter(f"{PREFIX}_{name}", doc, labels, registry=self.registry)

        def histogram(name: str, doc: str, labels: tuple[str, ...], buckets: Any) -> Any:
            return Histogram(
                f"{PREFIX}_{name}", doc, labels, buckets=buckets, registry=self.registry
            )

        self.questions = counter("questions", "Questions taken.", ("platform",))
        self.answers = counter("answers", "Answers given.", ("platform", "mode"))
        self.answer_seconds = histogram(
            "answer_seconds",
            "Seconds from a question taken to its complete answer.",
            ("platform", "mode"),
            ANSWER_BUCKETS,
        )
        self.first_text = histogram(
            "answer_first_text_seconds",
            "Seconds from a question taken to its first streamed text.",
            ("platform",),
            ANSWER_BUCKETS,
        )
        self.errors = counter("errors", "Failures a user was told of.", ("kind",))
        self.refusals = counter("refusals", "Questions refused by a limit.", ("reason",))
        self.ingests = counter("ingests", "Ingests run.", ("trigger", "outcome"))
        self.ingest_seconds = histogram(
            "ingest_seconds", "Seconds an ingest took.", ("outcome",), INGEST_BUCKETS
        )
        self.jobs = counter("jobs", "Re-ingest jobs run by this process.", ("outcome",))
        self.job_seconds = histogram(
            "job_seconds",
            "Seconds from claiming a job to its result.",
            ("outcome",),
            INGEST_BUCKETS,
        )
        self.store_seconds = histogram(
            "store_request_seconds",
            "Seconds a store or index request took.",
            ("store", "op"),
            REQUEST_BUCKETS,
        )
        self.model_seconds = histogram(
            "model_request_seconds",
            "Seconds a model request took (a stream: until it started).",
            ("kind", "model"),
            (*REQUEST_BUCKETS, 60.0),
        )
        self.tokens = counter("model_tokens", "Model tokens used.", ("kind", "model", "type"))
        self.read_units = counter("pinecone_read_units", "Pinecone read units reported.")
        self.written = counter("pinecone_records_written", "Records written to Pinecone.")


_families: _Families | None = None
_gauges: list[Gauges] = []
_lock = threading.Lock()


def enable() -> None:
    """Start recording in this process (idempotent): servers call it before they start."""
    global _families
    with _lock:
        if _families is None:
            _families = _Families()
            _families.registry.register(_GaugeCollector())


def enabled() -> bool:
    return _families is not None


def gauges(read: Gauges) -> None:
    """Read `read()` at every scrape (each value a gauge `codecite_<name>`; None: left out)."""
    with _lock:
        _gauges.append(read)


def registry() -> CollectorRegistry | None:
    return _families.registry if _families is not None else None


def exposition() -> tuple[bytes, str]:
    """The text format of every family, and its content type (empty until enabled)."""
    families = _families
    if families is None:
        return b"", "text/plain; charset=utf-8"
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    return generate_latest(families.registry), CONTENT_TYPE_LATEST


def _record(action: Callable[[_Families], object]) -> None:
    families = _families
    if families is None:
        return
    try:
        action(families)
    except Exception:  # a metric must never cost an answer
        log.debug("metric not recorded", exc_info=True)


# -- what the rest of codecite records -------------------------------------------------------


def question(platform: str) -> None:
    _record(lambda f: f.questions.labels(platform).inc())


def answered(platform: str, mode: str, seconds: float) -> None:
    def record(f: _Families) -> None:
        f.answers.labels(platform, mode).inc()
        f.answer_seconds.labels(platform, mode).observe(seconds)

    _record(record)


def first_text(platform: str, seconds: float) -> None:
    _record(lambda f: f.first_text.labels(platform).observe(seconds))


def error(kind: str) -> None:
    _record(lambda f: f.errors.labels(kind).inc())


def refused(reason: str) -> None:
    _record(lambda f: f.refusals.labels(reason).inc())


def ingested(trigger: str, outcome: str, seconds: float) -> None:
    def record(f: _Families) -> None:
        f.ingests.labels(trigger, outcome).inc()
        f.ingest_seconds.labels(outcome).observe(seconds)

    _record(record)


def job_done(outcome: str, seconds: float) -> None:
    def record(f: _Families) -> None:
        f.jobs.labels(outcome).inc()
        f.job_seconds.labels(outcome).observe(seconds)

    _record(record)


def model_tokens(kind: str, model: str, **counts: int) -> None:
    """`prompt=`, `completion=`, `embedding=` token counts of one request."""

    def record(f: _Families) -> None:
        for kind_of_token, count in counts.items():
            if count > 0:
                f.tokens.labels(kind, model, kind_of_token).inc(count)

    _record(record)


def pinecone_units(*, read: int = 0, written: int = 0) -> None:
    def record(f: _Families) -> None:
        if read > 0:
            f.read_units.inc(read)
        if written > 0:
            f.written.inc(written)

    _record(record)


@contextmanager
def timed_store(store: str, op: str) -> Iterator[None]:
    """Time one store or index request (also when it fails)."""
    with _timed(lambda f, seconds: f.store_seconds.labels(store, op).observe(seconds)):
        yield


@contextmanager
def timed_model(kind: str, model: str) -> Iterator[None]:
    """Time one model request (also when it fails)."""
    with _timed(lambda f, seconds: f.model_seconds.labels(kind, model).observe(seconds)):
        yield


@contextmanager
def _timed(observe: Callable[[_Families, float], None]) -> Iterator[None]:
    """Time the block and hand its seconds to `observe` (nothing when metrics are off)."""
    if _families is None:
        yield
        return
    started = time.perf_counter()
    try:
        yield
    finally:
        seconds = time.perf_counter() - started
        _record(lambda f: observe(f, seconds))


class _GaugeCollector:
    """The gauges read at each scrape (`gauges`): queue depths and the like."""

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        with _lock:
            readers = list(_gauges)
        values: dict[str, float] = {}
        for read in readers:
            try:
                found = read()
            except Exception:  # an unreadable gauge is left out, not fatal
                log.debug("a gauge could not be read", exc_info=True)
                continue
            values.update({k: v for k, v in found.items() if v is not None})
        for name, value in sorted(values.items()):
            family = GaugeMetricFamily(f"{PREFIX}_{name}", name.replace("_", " ") + ".")
            family.add_metric([], value)
            yield family

    def describe(self) -> list[Any]:
        return []  # read at collection only: never called at registration
