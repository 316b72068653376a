"""The core end to end: a real git repo, real SQLite, the real openai SDK against a fake."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.answer.prompts import NOT_ANSWERED
from bot.config import ChannelConfig, FileConfig, LimitsConfig, Settings
from bot.core import CLI, Context, Core
from bot.errors import NotIndexedError, PermissionDenied, QuestionError, ScopeError
from bot.models import Turn
from tests.servers.openai_fake import FakeOpenAI
from tests.support.gitrepo import git
from tests.support.jobs import running_jobs
from tests.support.shop import WEBHOOKS, build_shop, line_of

SLACK = Context(platform="slack", user="U1", channel="C1")


def _source_numbers_reply(body: dict) -> str:
    """Cite the first two sources of our prompt, plus a number that does not exist."""
    prompt = body["messages"][-1]["content"]
    numbers = re.findall(r' n="(\d+)"', prompt)
    return f"Retries happen in the sender [{numbers[0]}][99]." if numbers else NOT_ANSWERED


@pytest.fixture
def shop(make_repo):
    repo = make_repo("shop")
    build_shop(repo)
    git(repo.path, "remote", "add", "origin", "git@github.com:acme/shop.git")
    return repo


def _core(config: FileConfig | None = None, **env: str) -> Core:
    return Core.from_settings(Settings(**env), config or FileConfig())


def test_extractive_answer_cites_exact_lines(shop):
    core = _core()
    report = core.index_repo(str(shop.path), name="shop")
    assert report.files == 3 and report.chunks >= 3

    answer = core.ask("where do we retry failed webhooks?", CLI)

    assert answer.mode == "extractive"
    assert answer.citations, answer.text
    top = answer.citations[0]
    assert top.path == "shop/webhooks.py"
    target = line_of(WEBHOOKS, "def retry_failed_webhooks")
    assert top.start_line <= target + 3 and top.end_line >= target
    lines = WEBHOOKS.splitlines()
    # the excerpt printed is exactly the cited lines of the file
    excerpt = "\n".join(lines[top.start_line - 1 : top.end_line])
    assert excerpt in answer.text
    sha = shop.head()
    assert top.url == (
        f"https://github.com/acme/shop/blob/{sha}/shop/webhooks.py#L{top.start_line}-L{top.end_line}"
    )
    assert answer.freshness and answer.freshness[0].describe().startswith(f"shop main@{sha[:7]}")
    assert "total" in answer.timings


def test_llm_answer_through_the_openai_sdk(shop):
    with FakeOpenAI() as fake:
        fake.chat_reply = _source_numbers_reply
        core = _core(
            OPENAI_API_KEY="sk-test-123456",
            OPENAI_BASE_URL=fake.base_url,
            CODECITE_EMBED_MODEL="none",
            CODECITE_ANSWER_MAX_TOKENS="321",
        )
        core.index_repo(str(shop.path), name="shop")
        answer = core.ask("how are failed webhooks retried?", CLI)
        body = fake.bodies("/chat/completions")[-1]

    assert answer.mode == "llm"
    assert body["temperature"] == 0
    assert body.get("max_tokens", body.get("max_completion_tokens")) == 321
    system = body["messages"][0]["content"]
    assert "untrusted" in system and "ONLY" in system
    # [99] pointed at nothing retrieved: dropped; [n] became the source's label
    assert "[99]" not in answer.text and "99" not in answer.text
    assert len(answer.citations) == 1
    assert answer.citations[0].label in answer.text
    assert answer.usage.prompt_tokens > 0 and answer.usage.completion_tokens > 0


def test_dense_retrieval_when_embeddings_are_configured(shop):
    with FakeOpenAI() as fake:
        core = _core(OPENAI_API_KEY="sk-test-123456", OPENAI_BASE_URL=fake.base_url)
        report = core.index_repo(str(shop.path), name="shop")
        calls_after_index = fake.embedding_calls
        hits = core.search("charge customer card monthly amount", CLI, top_k=3)
    assert report.embedded_inputs == report.chunks_added > 0
    assert calls_after_index >= 1
    assert hits[0].chunk.path == "shop/billing.py"


def test_scope_is_applied_in_retrieval(make_repo):
    a = make_repo("alpha")
    a.write("alpha/core.py", "def alpha_thing():\n    return 1\n")
    a.commit()
    b = make_repo("beta")
    b.write("beta/secret_sauce.py", "def secret_sauce_recipe():\n    return 'salt'\n")
    b.commit()
    config = FileConfig(channels={"C1": ChannelConfig(repos=("alpha",))})
    core = _core(config)
    core.index_repo(str(a.path), name="alpha")
    core.index_repo(str(b.path), name="beta")

    answer = core.ask("secret_sauce_recipe salt", SLACK)
    assert all(c.repo == "alpha" for c in answer.citations)
    # beta matches best, but the channel only sees alpha: nothing of beta comes back
    assert all(h.chunk.repo == "alpha" for h in core.search("secret_sauce_recipe", SLACK, top_k=50))
    assert all(h.chunk.repo == "alpha" for h in core.search("alpha_thing salt", SLACK, top_k=50))
    with pytest.raises(ScopeError):
        core.ask("secret sauce", SLACK, repos=frozenset({"beta"}))
    # unmapped channels see everything when no default scope is set
    other = core.search("secret_sauce_recipe", Context("slack", "U1", "C2"), top_k=1)
    assert other[0].chunk.repo == "beta"


def test_questions_are_validated(shop):
    core = _core(FileConfig(limits=LimitsConfig(max_question_chars=100)))
    with pytest.raises(NotIndexedError):
        core.ask("anything?", CLI)
    core.index_repo(str(shop.path), name="shop")
    with pytest.raises(QuestionError):
        core.ask("   ", CLI)
    with pytest.raises(QuestionError) as info:
        core.ask("x" * 101, CLI)
    assert "too long" in info.value.user_message
    with pytest.raises(NotIndexedError):
        core.ask("billing", CLI, repos=frozenset({"nope"}))


def test_question_with_no_matching_code(shop):
    core = _core()
    core.index_repo(str(shop.path), name="shop")
    answer = core.ask("zyzzyva quokka", CLI)
    assert answer.mode == "empty" and answer.citations == ()
    assert answer.text == NOT_ANSWERED


def test_commands(shop):
    core = _core()
    core.index_repo(str(shop.path), name="shop")
    assert "reindex" in core.run_command("help", SLACK).text
    status = core.run_command("status", SLACK)
    assert status.ephemeral and "shop main@" in status.text
    assert "shop" in core.run_command("repos", SLACK).text
    with pytest.raises(PermissionDenied):
        core.run_command("reindex", SLACK)
    admin = Context("slack", "UADMIN", "C1", is_admin=True)  # the adapter decided so
    with running_jobs(core):  # the scheduler's runner, which runs the job recorded
        reindex = core.run_command("reindex shop", admin)
        assert reindex.text == "" and reindex.later is not None  # a job, run elsewhere
        assert "up to date" in reindex.final_text(timeout=60)
    result = core.run_command("ask where is the volume discount?", SLACK)
    assert result.answer is not None and result.answer.citations[0].path == "shop/billing.py"
    bare = core.run_command("volume discount", SLACK)
    assert bare.answer is not None


FOLLOW_UP = "and how exactly?"  # no word of it is in the repository: only the conversation helps


def test_follow_up_searches_with_the_previous_question(shop):
    core = _core()
    core.index_repo(str(shop.path), name="shop")
    alone = core.ask(FOLLOW_UP, CLI)
    assert alone.mode == "empty" and not alone.citations  # the control: nothing to find
    history = (Turn("user", "how is the monthly_amount computed?"), Turn("assistant", "..."))
    answer = core.ask(FOLLOW_UP, CLI, history)
    assert answer.citations and answer.citations[0].path == "shop/billing.py"
    assert answer.citations[0].symbol.split(", ")[0] == "monthly_amount"


def test_follow_up_prompt_carries_the_conversation(shop):
    """The model sees the earlier turns, in order and with their roles, before the question."""
    earlier = "how is the monthly_amount computed?"
    reply = "It multiplies the seat price by the seats, minus 10% above 50 seats."
    with FakeOpenAI() as fake:
        fake.chat_reply = _source_numbers_reply
        core = _core(
            OPENAI_API_KEY="sk-test-123456",
            OPENAI_BASE_URL=fake.base_url,
            CODECITE_EMBED_MODEL="none",
        )
        core.index_repo(str(shop.path), name="shop")
        core.ask(FOLLOW_UP, CLI, (Turn("user", earlier), Turn("assistant", reply)))
        messages = fake.bodies("/chat/completions")[-1]["messages"]
        core.close()
    roles = [m["role"] for m in messages]
    assert roles == ["system", "user", "assistant", "user"]
    assert messages[1]["content"] == earlier and messages[2]["content"] == reply
    assert f"Question: {FOLLOW_UP}" in messages[3]["content"]
    # and the sources the model was given were found through the earlier question
    assert "def monthly_amount" in messages[3]["content"]


def test_dm_allowlist(shop):
    core = _core(FileConfig(dm_allowlist=("UFRIEND",)))
    core.index_repo(str(shop.path), name="shop")
    with pytest.raises(PermissionDenied):
        core.ask("billing", Context("slack", "USTRANGER", "D1", is_dm=True))
    assert core.ask("billing", Context("slack", "UFRIEND", "D1", is_dm=True)).citations


def test_same_name_from_another_place_is_refused(shop, make_repo):
    core = _core()
    core.index_repo(str(shop.path), name="shop")
    other = make_repo("other")
    other.write("x.py", "x = 1\n")
    other.commit()
    from bot.errors import SourceError

    with pytest.raises(SourceError):
        core.index_repo(str(other.path), name="shop")
    assert core.index.repo_states()[0].source == str(Path(shop.path).resolve())
