"""Adapters talk to the Core through its methods and the values they return, nothing else.

The collaborators a Core keeps (index, stores, models, retriever, queues) are
for tests and benchmarks to inspect; an adapter that reaches them is coupled to
how the core is built today. This reads every adapter module's source.
"""

from __future__ import annotations

import re
from pathlib import Path

import adapters

INTERNALS = re.compile(
    r"\bcore\.(index|symbols|feedback|runs|stores|llm|embedder|retriever|pruner|_\w+)\b"
)


def test_no_adapter_reaches_into_the_core() -> None:
    root = Path(adapters.__file__).parent
    reaches = [
        f"{path.relative_to(root)}:{number}: {match.group(0)}"
        for path in sorted(root.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        for match in INTERNALS.finditer(line)
    ]
    assert reaches == []


def test_the_pattern_catches_a_reach() -> None:
    """The check above can fail: these lines are what it looks for."""
    assert INTERNALS.search("self.core.feedback.record_vote(x)")
    assert INTERNALS.search("core._queue.submit(job)")
    assert not INTERNALS.search("core.record_vote(x)")
