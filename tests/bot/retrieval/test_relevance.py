"""Absolute relevance and the coverage verdict, over a real index of small repositories."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config import Settings
from bot.core import CLI, Core
from bot.retrieval.relevance import (
    PRESENT_MIN,
    Concept,
    Coverage,
    RelevanceJudge,
    concepts_of,
    not_covered_sentence,
)

LEDGER = {
    "ledger/store.py": (
        '"""Where ledger entries live: a SQLite file next to the config."""\n'
        "\n"
        "import sqlite3\n"
        "\n"
        "\n"
        "def open_store(path):\n"
        '    """Connect to the SQLite ledger database, creating its tables on first use."""\n'
        "    conn = sqlite3.connect(path)\n"
        '    conn.execute("CREATE TABLE IF NOT EXISTS entries (amount, memo)")\n'
        "    return conn\n"
    ),
    "ledger/cli.py": (
        "def add_options(parser):\n"
        "    parser.add_argument(\n"
        '        "--dry-run",\n'
        '        action="store_true",\n'
        '        help="Print the entries that would be written, write nothing",\n'
        "    )\n"
    ),
    "ledger/rounding.py": (
        "def round_half_even(amount, places=2):\n"
        '    """Banker\'s rounding of an amount of money."""\n'
        "    return round(amount, places)\n"
    ),
    # The rest of a small but real project: words then have a realistic spread of rarity.
    **{
        f"ledger/{name}.py": (
            f"def {name}_total(entries):\n"
            f'    """Sum the amount of every {name} entry in the ledger."""\n'
            "    return sum(entry.amount for entry in entries)\n"
            "\n\n"
            f"def {name}_report(entries, out):\n"
            f'    """Write one line per {name} entry: its memo and amount."""\n'
            "    for entry in entries:\n"
            '        out.write(f"{entry.memo}: {entry.amount}\\n")\n'
        )
        for name in ("income", "expense", "transfer", "refund", "fee", "tax", "payroll")
    },
}
SHAPES = {
    "shapes/polygon.py": (
        "class Polygon:\n"
        '    """A closed polygon; its area is computed with the shoelace formula."""\n'
        "\n"
        "    def area(self):\n"
        "        return shoelace(self.points)\n"
    ),
}


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def core(tmp_path: Path) -> Iterator[Core]:
    core = Core.from_settings(Settings())
    core.index_repo(str(_tree(tmp_path / "ledger", LEDGER)), name="ledger")
    core.index_repo(str(_tree(tmp_path / "shapes", SHAPES)), name="shapes")
    yield core
    core.close()


def _judge(core: Core, question: str, repo: str = "ledger") -> Coverage:
    return RelevanceJudge(core.index).coverage(question, frozenset({repo}))


# -- what a question is made of -------------------------------------------------------


def _named(text: str) -> list[tuple[str, tuple[str, ...], bool]]:
    return [(c.surface, c.tokens, c.code) for c in concepts_of(text) if c.named]


def test_named_things_are_identifiers_flags_and_mid_sentence_names() -> None:
    assert _named("where does the ledger connect to PostgreSQL?") == [
        ("PostgreSQL", ("postgresql",), False)
    ]
    assert _named("what does --dry-run do?") == [("--dry-run", ("dry_run",), True)]
    assert _named("why is `open_store` slow with Redis?") == [
        ("open_store", ("open_store", "openstore"), True),
        ("Redis", ("redis",), False),
    ]
    # A CamelCase name is also looked for as code writes it in snake_case, and back.
    assert _named("how does the RateLimiter work?") == [
        ("RateLimiter", ("ratelimiter", "rate_limiter"), False)
    ]
    # A capital at the start of a sentence is only a sentence starting.
    assert _named("Rounding is off by a cent. Why?") == []


def test_plain_words_keep_their_stems_and_drop_stopwords() -> None:
    plain = [(c.surface, c.tokens) for c in concepts_of("how are entries rounded?")]
    assert plain == [("entries", ("entries", "entry")), ("rounded", ("rounded", "round"))]


def test_a_long_report_is_judged_by_its_first_line() -> None:
    report = "Dry run writes entries anyway\n\n" + "Traceback: frame in sqlite3 module\n" * 20
    words = [c.surface for c in concepts_of(report)]
    assert words == ["Dry", "run", "writes", "entries", "anyway"]


# -- relevance of hits ------------------------------------------------------------------


def test_relevance_is_absolute_where_the_rank_score_is_not(core: Core) -> None:
    covered = core.search("how do we connect to the sqlite ledger database?", CLI, top_k=3)
    missing = core.search("how do we connect to the PostgreSQL cluster?", CLI, top_k=3)
    assert covered[0].chunk.path == missing[0].chunk.path == "ledger/store.py"
    assert covered[0].score == pytest.approx(missing[0].score, abs=0.2)  # both rank first
    assert covered[0].relevance == 1.0
    assert missing[0].relevance is not None and missing[0].relevance < 0.3
    assert all(h.relevance is not None and 0.0 <= h.relevance <= 1.0 for h in covered + missing)


def test_rare_words_weigh_more_than_common_ones(core: Core) -> None:
    question = "which amount is rounded with banker's rounding?"
    coverage = _judge(core, question)
    weights = dict(zip((c.surface for c in coverage.concepts), coverage.weights, strict=True))
    assert weights["banker"] > weights["amount"] > 0  # one chunk holds "banker"; most "amount"
    hits = core.search(question, CLI, top_k=3)
    assert hits[0].chunk.path == "ledger/rounding.py"
    assert hits[0].relevance == 1.0


# -- the verdict ----------------------------------------------------------------------


def test_a_question_the_code_covers(core: Core) -> None:
    coverage = _judge(core, "what does --dry-run print?")
    assert coverage.covered
    assert coverage.missing == ()
    assert not_covered_sentence(coverage) == ""


def test_a_named_thing_the_scope_never_mentions_is_not_covered(core: Core) -> None:
    coverage = _judge(core, "where does the ledger connect to PostgreSQL?")
    assert not coverage.covered
    assert [c.surface for c in coverage.missing] == ["PostgreSQL"]
    sentence = not_covered_sentence(coverage)
    assert sentence == "The indexed code does not seem to mention PostgreSQL"


def test_the_verdict_is_per_scope(core: Core) -> None:
    question = "how is the polygon area computed with the shoelace formula?"
    assert _judge(core, question, "shapes").covered
    elsewhere = _judge(core, question, "ledger")
    assert not elsewhere.covered
    missing = [c.surface for c in elsewhere.missing]
    assert missing == ["polygon", "area", "computed", "shoelace", "formula"]
    assert elsewhere.present_share < PRESENT_MIN


def test_an_identifier_that_exists_nowhere(core: Core) -> None:
    coverage = _judge(core, "_bench_marker_3")
    assert not coverage.covered
    assert not_covered_sentence(coverage) == (
        "The indexed code does not seem to mention `_bench_marker_3`"
    )
    hits = core.search("_bench_marker_3", CLI, top_k=5)
    assert all(h.relevance == 0.0 for h in hits)


def test_questions_with_nothing_to_judge_are_covered(core: Core) -> None:
    assert _judge(core, "how does this work?").covered
    assert _judge(core, "").covered


def test_the_sentence_names_at_most_three_things() -> None:
    concepts = tuple(
        Concept(name, (name.lower(),), named=True, code="_" in name)
        for name in ("Kafka", "Redis", "send_later", "Celery")
    )
    coverage = Coverage(concepts, (1.0,) * 4, (False,) * 4)
    assert not_covered_sentence(coverage) == (
        "The indexed code does not seem to mention Kafka, Redis or `send_later`"
    )
