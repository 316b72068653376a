"""The symbol table kept by ingest, on real git repositories."""

from __future__ import annotations

import logging

import pytest

import bot.ingest.symbol_sync as sync
from bot.config import FileConfig, Settings
from bot.core import Core
from bot.errors import StoreError
from bot.store.symbols.table import SymbolStore
from bot.symbols.extract import extract_text
from bot.wiring import make_symbols, symbols_path
from tests.support.shop import BILLING, WEBHOOKS, build_shop, line_of


def _core() -> Core:
    return Core.from_settings(Settings(), FileConfig())


@pytest.fixture
def shop(make_repo):
    repo = make_repo("shop")
    build_shop(repo)
    return repo


class CountingExtract:
    """Counts the files read again for their symbols alone (not chunked)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.paths: list[str] = []
        monkeypatch.setattr(sync, "extract_text", self)

    def __call__(self, path, text, language):
        self.paths.append(path)
        return extract_text(path, text, language)


def test_first_ingest_fills_the_table(shop):
    core = _core()
    report = core.index_repo(str(shop.path), name="shop")
    table = core.symbols
    assert table is not None
    assert report.symbol_files == 3  # README.md is recorded too, with no symbols
    assert set(table.blobs("shop")) == {"shop/webhooks.py", "shop/billing.py", "README.md"}
    [definition] = table.definitions("WebhookSender.retry_failed_webhooks", repos=None)
    start = line_of(WEBHOOKS, "def retry_failed_webhooks")
    assert (definition.path, definition.kind, definition.start_line) == (
        "shop/webhooks.py",
        "method",
        start,
    )
    [site] = table.references("monthly_amount", repos=None, calls_only=True)
    assert (site.path, site.line, site.caller) == (
        "shop/billing.py",
        line_of(BILLING, "amount = monthly_amount("),
        "charge_customer",
    )
    assert table.top_symbols("shop")
    core.close()


def test_a_changed_file_is_the_only_one_read_again(shop, monkeypatch):
    core = _core()
    core.index_repo(str(shop.path), name="shop")
    counting = CountingExtract(monkeypatch)
    shop.write("shop/billing.py", BILLING.replace("monthly_amount(plan,", "yearly_amount(plan,"))
    shop.commit("rename a call")

    report = core.index_repo(str(shop.path), name="shop")

    assert report.files_changed == 1 and report.symbol_files == 1
    assert counting.paths == []  # taken from the chunker's parse, not read again
    table = core.symbols
    assert table is not None
    assert table.references("monthly_amount", repos=None, calls_only=True) == []
    assert [r.caller for r in table.references("yearly_amount", repos=None)] == ["charge_customer"]
    assert table.blobs("shop")["shop/webhooks.py"].endswith(":" + _blob(shop, "shop/webhooks.py"))
    again = core.index_repo(str(shop.path), name="shop")
    assert again.symbol_files == 0
    core.close()


def test_a_removed_file_leaves_the_table(shop):
    core = _core()
    core.index_repo(str(shop.path), name="shop")
    shop.remove("shop/webhooks.py")
    shop.commit("drop webhooks")
    core.index_repo(str(shop.path), name="shop")
    table = core.symbols
    assert table is not None
    assert "shop/webhooks.py" not in table.blobs("shop")
    assert table.definitions("WebhookSender", repos=None) == []
    assert table.references("MAX_ATTEMPTS", repos=None) == []
    core.close()


def test_a_lost_table_is_rebuilt_without_re_indexing(shop, monkeypatch):
    core = _core()
    first = core.index_repo(str(shop.path), name="shop")
    core.close()
    path = symbols_path(Settings())
    for suffix in ("", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    counting = CountingExtract(monkeypatch)

    core = _core()
    report = core.index_repo(str(shop.path), name="shop", quick=True)

    assert report.chunks_added == 0 and report.chunks == first.chunks  # the index was current
    assert report.symbol_files == 3
    assert sorted(counting.paths) == ["README.md", "shop/billing.py", "shop/webhooks.py"]
    table = core.symbols
    assert table is not None
    assert [d.symbol for d in table.definitions("charge_customer", repos=None)] == [
        "charge_customer"
    ]
    # now complete: a quick run does nothing at all
    assert core.index_repo(str(shop.path), name="shop", quick=True).symbol_files == 0
    core.close()


def test_a_new_extractor_version_reads_every_file_once(shop, monkeypatch):
    core = _core()
    core.index_repo(str(shop.path), name="shop")
    monkeypatch.setattr(sync, "SYMBOLS_VERSION", "test-next")
    counting = CountingExtract(monkeypatch)
    report = core.index_repo(str(shop.path), name="shop")
    assert report.unchanged and report.symbol_files == 3 and len(counting.paths) == 3
    assert core.index_repo(str(shop.path), name="shop").symbol_files == 0
    core.close()


def test_a_failing_table_never_fails_the_ingest(shop, monkeypatch, caplog):
    core = _core()
    table = core.symbols
    assert table is not None

    def broken(*args, **kwargs):
        raise StoreError(detail="disk full")

    with monkeypatch.context() as patch:
        patch.setattr(table, "apply", broken)
        with caplog.at_level(logging.WARNING):
            report = core.index_repo(str(shop.path), name="shop")
    assert report.files_added == 3
    assert "symbols of shop not stored: disk full" in caplog.text
    assert table.blobs("shop") == {}
    # the next run finds the table behind the index and catches up
    assert core.index_repo(str(shop.path), name="shop").symbol_files == 3
    assert table.definitions("WebhookSender", repos=None)
    core.close()


def test_an_ingest_that_fails_leaves_the_table_alone(shop, monkeypatch):
    core = _core()
    core.index_repo(str(shop.path), name="shop")
    shop.remove("shop/billing.py")
    shop.commit("drop billing")

    def broken(change):
        raise StoreError("disk full")

    with monkeypatch.context() as patch:
        patch.setattr(core.index, "apply", broken)
        with pytest.raises(StoreError):
            core.index_repo(str(shop.path), name="shop")
    table = core.symbols
    assert table is not None
    assert table.definitions("charge_customer", repos=None)  # still matches the index
    core.close()


def test_the_table_lives_beside_the_index(tmp_path):
    local = Settings()
    assert symbols_path(local) == local.index_path.with_name("index.symbols.sqlite")
    pinecone = Settings(CODECITE_INDEX="pinecone")
    assert symbols_path(pinecone) == pinecone.home / "symbols.sqlite"
    store = make_symbols(local)
    assert isinstance(store, SymbolStore)
    store.close()


def test_an_unopenable_table_leaves_the_core_without_one(monkeypatch, caplog, shop):
    blocker = Settings().home / "not-a-directory"
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("x")
    monkeypatch.setattr("bot.wiring.symbols_path", lambda settings: blocker / "symbols.sqlite")
    with caplog.at_level(logging.WARNING):
        core = _core()
    assert core.symbols is None
    assert "no symbol table" in caplog.text
    assert core.index_repo(str(shop.path), name="shop").files_added == 3
    core.close()


def _blob(repo, path: str) -> str:
    from tests.support.gitrepo import git

    return git(repo.path, "rev-parse", f"HEAD:{path}")


def test_a_repository_removed_from_the_index_leaves_the_table(shop, make_repo):
    other = make_repo("other")
    other.write("lib/tool.py", "def sharpen(blade):\n    return blade.hone()\n")
    other.commit("tool")
    core = _core()
    core.index_repo(str(shop.path), name="shop")
    core.index_repo(str(other.path), name="other")
    table = core.symbols
    assert table is not None and table.repos() == ["other", "shop"]
    core.forget_repo("other")  # what the scheduler does when a repo leaves the config
    assert table.repos() == ["shop"]
    assert table.definitions("sharpen", repos=None) == []
    core.close()
