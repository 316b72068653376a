"""`CODECITE_INDEX=pinecone` end to end: same answers, same shapes, same scope rules as local."""

from __future__ import annotations

import pytest

from bot.config import ChannelConfig, FileConfig, Settings
from bot.core import CLI, Context, Core
from bot.index.local.index import LocalIndex
from bot.index.pinecone.index import PineconeIndex
from tests.servers.openai_fake import FakeOpenAI
from tests.servers.pinecone_fake import FakePinecone
from tests.support.shop import build_shop

DIM = 64


@pytest.fixture(autouse=True)
def _instant_sdk_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pinecone._internal.http_client._retry_sleep", lambda _s: None)


@pytest.fixture
def services():
    with FakeOpenAI(dimensions=DIM) as openai, FakePinecone(dimension=DIM) as pinecone:
        yield openai, pinecone


def _env(openai: FakeOpenAI, pinecone: FakePinecone | None) -> dict[str, str]:
    env = {
        "OPENAI_API_KEY": "sk-test-abcdef",
        "OPENAI_BASE_URL": openai.base_url,
        "CODECITE_EMBED_DIMENSIONS": str(DIM),
    }
    if pinecone is not None:
        env |= {
            "CODECITE_INDEX": "pinecone",
            "PINECONE_API_KEY": pinecone.api_key,
            "PINECONE_HOST": pinecone.url,
        }
    return env


def test_pinecone_and_local_give_the_same_results_shape(services, make_repo, tmp_path):
    openai, pinecone = services
    repo = make_repo("shop")
    build_shop(repo)
    remote = Core.from_settings(Settings(**_env(openai, pinecone)), FileConfig())
    assert isinstance(remote.index, PineconeIndex)
    remote.index.init_index(DIM)
    report = remote.index_repo(str(repo.path), name="shop")
    assert report.chunks > 0 and pinecone.calls("/vectors/upsert")

    local = Core.from_settings(
        Settings(**_env(openai, None), CODECITE_HOME=str(tmp_path / "local")), FileConfig()
    )
    assert isinstance(local.index, LocalIndex)
    local.index_repo(str(repo.path), name="shop")

    question = "where do we retry failed webhooks with backoff?"
    theirs = remote.search(question, CLI, top_k=3)
    ours = local.search(question, CLI, top_k=3)
    assert theirs[0].chunk.path == ours[0].chunk.path == "shop/webhooks.py"
    assert (theirs[0].chunk.start_line, theirs[0].chunk.end_line) == (
        ours[0].chunk.start_line,
        ours[0].chunk.end_line,
    )
    answer = remote.ask(question, CLI)
    assert answer.citations and answer.citations[0].path == "shop/webhooks.py"
    assert answer.freshness[0].describe().startswith("shop main@")
    # hybrid: one query carrying both a dense and a sparse vector
    query = pinecone.bodies("/query")[-1]
    assert query.get("vector") and query.get("sparseVector")
    assert answer.usage.embedding_tokens == 0  # the search before embedded this question
    fresh = remote.ask("how is the monthly amount for many seats computed?", CLI)
    (served,) = [r for r in openai.embeddings_served if "many seats" in r.inputs[0]]
    assert fresh.usage.embedding_tokens == served.total_tokens > 0  # the hybrid query's own


def test_scope_is_a_server_side_filter(services, make_repo):
    openai, pinecone = services
    a = make_repo("alpha")
    a.write("alpha/core.py", "def alpha_thing():\n    return 1\n")
    a.commit()
    b = make_repo("beta")
    b.write("beta/secret_sauce.py", "def secret_sauce_recipe():\n    return 'salt'\n")
    b.commit()
    config = FileConfig(channels={"C1": ChannelConfig(repos=("alpha",))})
    core = Core.from_settings(Settings(**_env(openai, pinecone)), config)
    core.index.init_index(DIM)
    core.index_repo(str(a.path), name="alpha")
    core.index_repo(str(b.path), name="beta")
    seen = len(pinecone.bodies("/query"))
    hits = core.search("secret_sauce_recipe salt", Context("slack", "U1", "C1"), top_k=20)
    assert all(h.chunk.repo == "alpha" for h in hits)
    for body in pinecone.bodies("/query")[seen:]:
        assert "alpha" in str(body.get("filter")) and "beta" not in str(body.get("filter"))


def test_embedding_calls_first_unchanged_and_renamed(services, make_repo):
    openai, pinecone = services
    repo = make_repo("shop")
    build_shop(repo)
    core = Core.from_settings(Settings(**_env(openai, pinecone)), FileConfig())
    core.index.init_index(DIM)
    first = core.index_repo(str(repo.path), name="shop")
    assert first.embedded_inputs == first.chunks > 0
    inputs = openai.embedding_inputs
    again = core.index_repo(str(repo.path), name="shop")
    assert again.unchanged and openai.embedding_inputs == inputs
    repo.move("shop", "store")
    repo.commit("rename")
    moved = core.index_repo(str(repo.path), name="shop")
    assert moved.files_added == 2 and openai.embedding_inputs == inputs
    assert {h.chunk.path for h in core.search("charge customer", CLI, top_k=5)} <= {
        "store/billing.py",
        "store/webhooks.py",
        "README.md",
    }


def test_lost_state_is_rebuilt_from_pinecone(services, make_repo):
    openai, pinecone = services
    repo = make_repo("shop")
    build_shop(repo)
    settings = Settings(**_env(openai, pinecone))
    core = Core.from_settings(settings, FileConfig())
    core.index.init_index(DIM)
    report = core.index_repo(str(repo.path), name="shop")
    core.close()
    for leftover in settings.home.glob("pinecone_state.sqlite*"):
        leftover.unlink()

    again = Core.from_settings(settings, FileConfig())
    states = again.index.repo_states()
    assert [s.name for s in states] == ["shop"] and states[0].commit == report.commit
    assert set(again.index.manifest("shop")) == {"README.md", "shop/billing.py", "shop/webhooks.py"}
    rerun = again.index_repo(str(repo.path), name="shop")
    assert rerun.unchanged  # nothing re-sent: the rebuilt state knows every file
    assert again.search("retry failed webhooks", CLI, top_k=1)[0].chunk.path == "shop/webhooks.py"
