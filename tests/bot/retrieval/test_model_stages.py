"""HyDE and context pruning through the real openai SDK against the fake server."""

from __future__ import annotations

import re

from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from bot.retrieval.hyde import PROMPT as HYDE_PROMPT
from bot.retrieval.prune import MAX_TOKENS as PRUNE_MAX_TOKENS
from bot.retrieval.prune import PROMPT as PRUNE_PROMPT
from tests.servers.openai_fake import FakeOpenAI
from tests.support.shop import build_shop

QUESTION = "what happens to deliveries that did not go through?"

# The question's own words match this report best; only the hypothetical retry loop points
# at shop/webhooks.py, where failed deliveries are actually retried. (Its path does not
# name deliveries: a module named after the question's words would count as named.)
DELIVERY_REPORT = '''"""Support dashboard: a report of deliveries, good and bad."""


def deliveries_that_did_not_go_through(report):
    """What happens to deliveries that did not go through? They are listed here for support."""
    return [d for d in report.deliveries if not d.went_through]
'''
JOBS = ("mailer", "exports", "search", "imports", "thumbnails", "invoices_pdf", "audit", "cleanup")
MODELS = ("customer", "plan", "seat", "coupon", "address", "order", "product", "cart", "tax")


def _system(body: dict) -> str:
    return body["messages"][0]["content"]


def _reply(body: dict) -> str:
    system = _system(body)
    if system == HYDE_PROMPT:
        return "def retry_failed_webhooks(failures):\n    for attempt in range(MAX_ATTEMPTS):\n        sleep(2 ** attempt)"
    if system == PRUNE_PROMPT:
        return "1"  # keep only the first snippet of each group
    numbers = re.findall(r' n="(\d+)"', body["messages"][-1]["content"])
    return f"See [{numbers[0]}]." if numbers else "The indexed code does not answer this."


def _core(fake: FakeOpenAI, **extra: str) -> Core:
    env = {
        "OPENAI_API_KEY": "sk-test-abcdef",
        "OPENAI_BASE_URL": fake.base_url,
        "CODECITE_EMBED_MODEL": "none",
        **extra,
    }
    return Core.from_settings(Settings(**env), FileConfig())


def _add_decoy_and_neighbours(repo) -> None:
    """The report that the question's words match, polling jobs that share a few words with
    the hypothetical code (so the report ranks low in HyDE's own list), and plain records
    (so common words carry little weight)."""
    repo.write("shop/support_dashboard.py", DELIVERY_REPORT)
    for i, name in enumerate(JOBS):
        repo.write(
            f"shop/jobs/{name}.py",
            f"from time import sleep\n\n\ndef poll_{name}(queue):\n"
            f"    for attempt in range({i + 2}):\n        job = queue.take()\n"
            f"        if job is not None:\n            return job\n        sleep({i + 1})\n",
        )
    for name in MODELS:
        repo.write(
            f"shop/models/{name}.py",
            f"class {name.title()}:\n    def __init__(self, key, label):\n"
            f"        self.key = key\n        self.label = label\n",
        )
    repo.commit("delivery report, jobs and records")


def test_hyde_lifts_the_code_its_hypothetical_answer_describes(make_repo):
    repo = make_repo("shop")
    build_shop(repo)
    _add_decoy_and_neighbours(repo)
    with FakeOpenAI() as fake:
        fake.chat_reply = _reply
        plain = _core(fake)
        plain.index_repo(str(repo.path), name="shop")
        without = plain.search(QUESTION, CLI, top_k=3)
        hyde = _core(fake, CODECITE_HYDE="1")
        with_hyde = hyde.search(QUESTION, CLI, top_k=3)
        answer = hyde.ask(QUESTION, CLI)
        hyde_calls = [b for b in fake.bodies("/chat/completions") if _system(b) == HYDE_PROMPT]
    assert hyde_calls and all(b.get("max_tokens") == 160 for b in hyde_calls)
    assert all(b["temperature"] == 0 for b in hyde_calls)
    # Without HyDE the question's words lead to the report; with it, the code that retries
    # failed deliveries leads and the report comes next (the question still counts). With
    # HyDE's weight near zero the two rankings would be the same.
    assert [h.chunk.path for h in without[:2]] == ["shop/support_dashboard.py", "shop/webhooks.py"]
    assert [h.chunk.path for h in with_hyde[:2]] == [
        "shop/webhooks.py",
        "shop/support_dashboard.py",
    ]
    assert answer.usage.prompt_tokens > 0


def test_pruning_runs_in_parallel_with_capped_output_and_shrinks_context(make_repo):
    repo = make_repo("shop")
    build_shop(repo)
    for i in range(8):
        repo.write(
            f"shop/extra_{i}.py", f"def helper_{i}(deliveries):\n    return len(deliveries) + {i}\n"
        )
    repo.commit("more code")
    with FakeOpenAI() as fake:
        fake.chat_reply = _reply
        core = _core(fake, CODECITE_PRUNE="1", CODECITE_PRUNE_MODEL="tiny-model")
        core.index_repo(str(repo.path), name="shop")
        fake.gate(
            2
        )  # requests wait until two are in flight: only parallel calls get through at once
        answer = core.ask("deliveries helper webhooks", CLI)
        bodies = fake.bodies("/chat/completions")
        peak = fake.in_flight_peak
    prune_calls = [b for b in bodies if _system(b) == PRUNE_PROMPT]
    final = [b for b in bodies if _system(b) not in (PRUNE_PROMPT, HYDE_PROMPT)][-1]
    assert len(prune_calls) >= 2
    assert all(
        b["model"] == "tiny-model" and b["max_tokens"] == PRUNE_MAX_TOKENS for b in prune_calls
    )
    assert peak >= 2  # groups were judged concurrently
    sent = len(re.findall(r' n="\d+"', final["messages"][-1]["content"]))
    assert sent == len(prune_calls)  # one survivor per group
    assert answer.citations


def test_a_failed_pruning_call_keeps_its_sources(make_repo):
    repo = make_repo("shop")
    build_shop(repo)
    with FakeOpenAI() as fake:
        fake.chat_reply = _reply
        core = _core(fake, CODECITE_PRUNE="1")
        core.index_repo(str(repo.path), name="shop")
        retrieval = core.retriever.retrieve("webhooks billing discount", None)
        fake.fail_next(400, count=1)  # not retried: the group is kept whole
        kept, _ = core.pruner.prune("webhooks billing discount", retrieval.sources)
    assert 2 <= len(retrieval.sources) <= 3  # one group, so the failure hit exactly that group
    assert kept == retrieval.sources
