"""Reading a process's `/metrics` as Prometheus does: with prometheus_client's own parser of
the text format, into {(sample name, labels): value}; tests compare two readings, since
one process's metrics are shared by every test it runs."""

from __future__ import annotations

import urllib.request
from collections.abc import Mapping

from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str) -> Samples:
    return {
        (s.name, frozenset(s.labels.items())): float(s.value)
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def scrape(url: str) -> tuple[str, Samples]:
    """GET `url` (a /metrics route): its content type and samples."""
    with urllib.request.urlopen(url, timeout=10) as resp:
        return resp.headers.get("Content-Type", ""), parse(resp.read().decode("utf-8"))


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sample's value (0 when absent: a counter not yet incremented)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def total(samples: Samples, name: str, **labels: str) -> float:
    """The sum over every sample of `name` whose labels include `labels`."""
    wanted = set(labels.items())
    return sum(v for (n, have), v in samples.items() if n == name and wanted <= have)


def grew(
    before: Mapping[tuple[str, frozenset[tuple[str, str]]], float],
    after: Samples,
    name: str,
    **labels: str,
) -> float:
    return total(after, name, **labels) - total(dict(before), name, **labels)
