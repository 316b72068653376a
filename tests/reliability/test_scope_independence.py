"""An answer scoped to repositories does not depend on what else the data directory holds.

Two repositories of real code (copies of this project's retrieval and text packages)
are indexed and asked a mix of questions, scoped to one of them or to both: where
something is defined, who calls it, how something works in plain words, one the code
does not answer. Every ranking (`Core.search`, scores included), every answer (text,
citations) and, with a model, every prompt it was sent (but for the random marker
fencing its sources) is recorded; locally without a model, locally with one (dense
search too), and on Pinecone (hybrid queries whose sparse half is weighed by document
frequencies). Then an unrelated repository (the polyglot fixture plus this project's
index package, whose words overlap the first two a lot) is indexed into the same data
directory and everything is asked again: it must be byte for byte the same (issue 26,
item 5). Unscoped, the new repository may of course change the answers; a check that it
does keeps the test honest.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from bot.index.pinecone.index import PineconeIndex
from tests.servers.openai_fake import FakeOpenAI
from tests.servers.pinecone_fake import FakePinecone
from tests.support.gitrepo import GitRepo
from tests.support.paths import POLYGLOT, ROOT

QUESTIONS = (
    "where is RelevanceJudge defined?",
    "who calls concepts_of?",
    "how does the relevance judge decide that the code does not cover a question?",
    "how are hits from the lexical and dense searches fused?",
    "where do we split camelCase identifiers into tokens?",
    "what happens to a long pasted bug report before it is searched?",
    "how do we retry failed webhooks to Stripe?",
    "stopwords",
)
DIM = 64
_NONCE = re.compile(r"source-[0-9a-f]{8}\b")
SCOPES = (frozenset({"retrieval"}), frozenset({"text"}), frozenset({"retrieval", "text"}))


def _copy(make_repo, name: str, sources: dict[str, Path]) -> GitRepo:
    repo: GitRepo = make_repo(name)
    for prefix, source in sources.items():
        for path in sorted(source.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                repo.write(f"{prefix}/{path.relative_to(source)}", path.read_text("utf-8"))
    repo.commit(f"{name} sources")
    return repo


@pytest.fixture(params=["extractive", "llm", "pinecone"])
def bot(
    request: pytest.FixtureRequest, make_repo, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Core, FakeOpenAI, Path]]:
    retrieval = _copy(make_repo, "retrieval", {"retrieval": ROOT / "bot" / "retrieval"})
    text = _copy(make_repo, "text", {"text": ROOT / "bot" / "text"})
    unrelated = _copy(
        make_repo, "unrelated", {"polyglot": POLYGLOT, "local": ROOT / "bot" / "index" / "local"}
    )
    monkeypatch.setattr("pinecone._internal.http_client._retry_sleep", lambda _s: None)
    with FakeOpenAI(dimensions=DIM) as fake, FakePinecone(dimension=DIM) as pinecone:
        env = {}
        if request.param != "extractive":
            env = {
                "OPENAI_API_KEY": "sk-test-independence",
                "OPENAI_BASE_URL": fake.base_url,
                "CODECITE_EMBED_DIMENSIONS": str(DIM),
            }
        if request.param == "pinecone":  # its sparse half weighs terms by the scope's df
            env |= {
                "CODECITE_INDEX": "pinecone",
                "PINECONE_API_KEY": pinecone.api_key,
                "PINECONE_HOST": pinecone.url,
            }
        core = Core.from_settings(Settings(**env), FileConfig())
        if isinstance(core.index, PineconeIndex):
            core.index.init_index(DIM)
        core.index_repo(str(retrieval.path), name="retrieval")
        core.index_repo(str(text.path), name="text")
        yield core, fake, unrelated.path
        core.close()


def _everything(core: Core, fake: FakeOpenAI, scopes: tuple[frozenset[str] | None, ...]) -> str:
    """Every ranking, answer and prompt for every question in every scope, as one text."""
    out = []
    for scope in scopes:
        for question in QUESTIONS:
            hits = core.search(question, CLI, repos=scope, top_k=30)
            sent = len(fake.bodies("/chat/completions"))
            answer = core.ask(question, CLI, repos=scope)
            # Each prompt fences its sources with a fresh random marker (against injection).
            prompts = _NONCE.sub("source-N", json.dumps(fake.bodies("/chat/completions")[sent:]))
            record = {
                "scope": sorted(scope) if scope is not None else None,
                "question": question,
                "ranking": [[h.chunk.id, h.score] for h in hits],
                "text": answer.text,
                "citations": [[c.repo, c.label] for c in answer.citations],
                "prompts": prompts,
            }
            out.append(json.dumps(record, sort_keys=True))
    return "\n".join(out)


def _first_difference(before: str, after: str) -> str:
    for old, new in zip(before.splitlines(), after.splitlines(), strict=True):
        if old != new:
            pretty = [json.dumps(json.loads(r), indent=1).splitlines() for r in (old, new)]
            return "\n".join(difflib.unified_diff(*pretty, "alone", "beside another", lineterm=""))
    return "a different number of records"


def test_scoped_rankings_and_answers_ignore_an_unrelated_repository(bot) -> None:
    core, fake, unrelated = bot
    before = _everything(core, fake, SCOPES)
    unscoped_before = _everything(core, fake, (None,))
    core.index_repo(str(unrelated), name="unrelated")
    after = _everything(core, fake, SCOPES)
    assert after == before, _first_difference(before, after)
    # Unscoped, the new repository is searched too: its code comes up for its own words.
    assert _everything(core, fake, (None,)) != unscoped_before
    assert any(h.chunk.repo == "unrelated" for h in core.search("segment postings", CLI, top_k=10))
