"""What the libraries under codecite may log (issue 27: every question logged the Pinecone
SDK's and the HTTP client's lines): their warnings always, their INFO lines only with -v.

The real SDKs make their real requests against the fakes, under the logging a server
(`codecite serve`) and the CLI set up; what reaches stderr and the log file is read back.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from openai import OpenAI
from pinecone import Pinecone

from adapters.cli.logs import setup_logging
from bot.config import Settings
from tests.servers.openai_fake import FakeOpenAI
from tests.servers.pinecone_fake import FakePinecone


@pytest.fixture
def restored_logging() -> Iterator[None]:
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    levels = {name: logging.getLogger(name).level for name in ("pinecone", "httpx", "httpx2")}
    yield
    for handler in root.handlers:
        if handler not in saved[0]:
            handler.close()
    root.handlers[:], root.level = saved
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


def _requests() -> None:
    """A Pinecone query and a chat completion, as one question makes them."""
    with FakePinecone(dimension=4) as pinecone, FakeOpenAI() as openai:
        index = Pinecone(api_key=pinecone.api_key, ssl_verify=False).index(host=pinecone.url)
        index.query(top_k=3, vector=[0.1, 0.2, 0.3, 0.4])
        index.close()
        model = OpenAI(base_url=openai.base_url, api_key="sk-test-logs", max_retries=0)
        model.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "hello"}]
        )
        model.close()
        logging.getLogger("pinecone").warning("a warning of the SDK's")


@pytest.mark.parametrize("server", [True, False])
def test_library_info_lines_are_left_out_unless_verbose(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], restored_logging: None, server: bool
) -> None:
    settings = Settings(CODECITE_HOME=tmp_path / "home")  # type: ignore[call-arg]
    setup_logging(settings, server=server)
    _requests()
    logged = capsys.readouterr().err
    if not server:  # the CLI keeps its details in the data directory's log file
        logged += (settings.home / "codecite.log").read_text(encoding="utf-8")
    assert "a warning of the SDK's" in logged
    assert "Querying index" not in logged  # pinecone.index at INFO
    assert "HTTP Request:" not in logged  # httpx2 at INFO


def test_verbose_lets_the_library_info_lines_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], restored_logging: None
) -> None:
    setup_logging(Settings(CODECITE_HOME=tmp_path / "home"), verbose=True, server=True)  # type: ignore[call-arg]
    _requests()
    logged = capsys.readouterr().err
    assert "Querying index" in logged
    assert "HTTP Request:" in logged
