"""Re-ingest on real git repositories: skip unchanged, replace changed, delete vanished."""

from __future__ import annotations

import sqlite3

import pytest

from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from bot.errors import StoreError
from bot.index.local import schema as local_schema
from tests.servers.openai_fake import FakeOpenAI
from tests.support.shop import BILLING, build_shop


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


def _core(fake: FakeOpenAI | None = None) -> Core:
    env = {}
    if fake is not None:
        env = {"OPENAI_API_KEY": "sk-test-abcdef", "OPENAI_BASE_URL": fake.base_url}
    return Core.from_settings(Settings(**env), FileConfig())


def test_unchanged_reindex_does_no_work(make_repo, fake):
    repo = make_repo("shop")
    build_shop(repo)
    core = _core(fake)
    first = core.index_repo(str(repo.path), name="shop")
    inputs = fake.embedding_inputs
    assert first.embedded_inputs == first.chunks == inputs > 0

    again = core.index_repo(str(repo.path), name="shop")
    assert again.unchanged and again.chunks_added == 0 and again.chunks_removed == 0
    assert again.chunks == first.chunks
    assert fake.embedding_inputs == inputs  # no embedding call at all
    assert core.index.stats().chunks == first.chunks


def test_one_changed_function_embeds_only_its_chunks(make_repo, fake):
    repo = make_repo("shop")
    build_shop(repo)
    core = _core(fake)
    core.index_repo(str(repo.path), name="shop")
    before = fake.embedding_inputs
    repo.write("shop/billing.py", BILLING.replace('Decimal("0.9")', 'Decimal("0.85")'))
    repo.commit("bigger discount")

    report = core.index_repo(str(repo.path), name="shop")
    assert report.files_changed == 1 and report.files_added == 0
    assert 1 <= report.chunks_added <= 2
    assert report.chunks_removed == report.chunks_added
    assert fake.embedding_inputs - before == report.chunks_added
    hits = core.search("volume discount seats", CLI, top_k=1)
    assert "0.85" in hits[0].chunk.text


def test_rename_needs_no_new_embeddings(make_repo, fake):
    repo = make_repo("shop")
    build_shop(repo)
    core = _core(fake)
    core.index_repo(str(repo.path), name="shop")
    before = fake.embedding_inputs
    repo.move("shop", "store")
    repo.commit("rename the package")

    report = core.index_repo(str(repo.path), name="shop")
    assert report.files_added == 2 and report.files_removed == 2
    assert fake.embedding_inputs == before  # the cache knows every text
    assert report.embedding_tokens == 0 and report.embedding_tokens_saved > 0
    paths = {h.chunk.path for h in core.search("retry webhooks backoff", CLI, top_k=20)}
    assert "store/webhooks.py" in paths and "shop/webhooks.py" not in paths


def test_deleted_file_disappears(make_repo):
    repo = make_repo("shop")
    build_shop(repo)
    core = _core()
    core.index_repo(str(repo.path), name="shop")
    repo.remove("shop/webhooks.py")
    repo.commit("drop webhooks")
    report = core.index_repo(str(repo.path), name="shop")
    assert report.files_removed == 1 and report.chunks_removed > 0
    assert not any(
        h.chunk.path == "shop/webhooks.py" for h in core.search("webhooks retry", CLI, top_k=50)
    )
    assert "shop/webhooks.py" not in core.index.manifest("shop")


def test_force_push_converges(make_repo, tmp_path):
    work = make_repo("work")
    build_shop(work)
    remote = work.bare_clone(tmp_path / "remote.git")
    core = _core()
    core.index_repo(f"file://{remote}", name="shop")
    # rewrite history: a new root commit with different content, force-pushed
    from tests.support.gitrepo import git

    git(work.path, "checkout", "-q", "--orphan", "rewritten")
    git(work.path, "rm", "-rq", "--cached", ".")
    for f in ("shop/webhooks.py", "shop/billing.py", "README.md"):
        (work.path / f).unlink()
    work.write("app/main.py", "def main():\n    print('rewritten history')\n")
    work.commit("rewritten")
    work.push(remote, force=True)

    report = core.index_repo(f"file://{remote}", name="shop")
    assert report.commit == work.head()
    assert set(core.index.manifest("shop")) == {"app/main.py"}
    assert core.search("rewritten history", CLI, top_k=1)[0].chunk.path == "app/main.py"


def test_bad_files_are_skipped_and_counted(make_repo):
    repo = make_repo("messy")
    repo.write("ok.py", "def fine():\n    return 'ok'\n")
    repo.write("logo.png", b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    repo.write("blob.dat", b"abc\x00def" * 10)
    repo.write("big.txt", "line of text\n" * 100_000)  # 1.3 MB
    repo.write("latin.py", "# caf\xe9\ndef cafe_menu():\n    return 'na\xefve'\n".encode("latin-1"))
    repo.write("package-lock.json", "{}\n")
    repo.write(".env", "SECRET_KEY=abc\n")
    repo.write("vendor/lib.py", "def vendored():\n    pass\n")
    (repo.path / "link.py").symlink_to("/etc/passwd")
    repo.commit("messy")
    core = _core()

    report = core.index_repo(str(repo.path), name="messy")

    assert set(core.index.manifest("messy")) == {"ok.py", "latin.py"}
    skipped = report.skipped
    assert skipped.get("binary", 0) >= 2
    assert skipped.get("too_large") == 1
    assert skipped.get("lockfile") == 1
    assert skipped.get("secret_file") == 1
    assert skipped.get("vendored") == 1
    assert skipped.get("symlink") == 1
    hit = core.search("cafe_menu", CLI, top_k=1)[0]
    assert hit.chunk.path == "latin.py" and "\ufffd" in hit.chunk.text


def test_a_write_failing_midway_leaves_the_previous_state_answering(make_repo, monkeypatch):
    """The failure strikes inside the index's write transaction, after its deletes and
    inserts have run, so only a real rollback keeps the old state answering."""
    repo = make_repo("shop")
    build_shop(repo)
    core = _core()
    first = core.index_repo(str(repo.path), name="shop")
    before = core.index.stats().chunks
    repo.remove("shop/billing.py")
    repo.write("shop/refunds.py", "def refund_customer(order):\n    return order.total\n")
    repo.commit("drop billing, add refunds")

    reached = []
    write_state = local_schema._put_state

    def failing_midway(conn, state):
        paths = conn.execute("SELECT DISTINCT path FROM chunks WHERE repo = 'shop'").fetchall()
        reached.append({path for (path,) in paths})
        raise sqlite3.OperationalError("disk I/O error")

    with monkeypatch.context() as patch:
        patch.setattr(local_schema, "_put_state", failing_midway)
        with pytest.raises(StoreError):
            core.index_repo(str(repo.path), name="shop")
    # the transaction had already deleted and inserted rows when it failed
    assert reached == [{"shop/refunds.py", "shop/webhooks.py", "README.md"}]

    core.close()
    reopened = _core()  # what any process reads from disk now
    assert reopened.index.repo_states()[0].commit == first.commit
    assert reopened.index.stats().chunks == before
    assert set(reopened.index.manifest("shop")) == {
        "shop/billing.py",
        "shop/webhooks.py",
        "README.md",
    }
    hit = reopened.search("charge_customer", CLI, top_k=1)[0]
    assert hit.chunk.path == "shop/billing.py"
    assert all(h.chunk.path != "shop/refunds.py" for h in reopened.search("refund_customer", CLI))
    # the next run completes the job
    monkeypatch.setattr(local_schema, "_put_state", write_state)
    report = reopened.index_repo(str(repo.path), name="shop")
    assert report.files_removed == 1
    assert reopened.search("refund_customer", CLI, top_k=1)[0].chunk.path == "shop/refunds.py"
    reopened.close()
