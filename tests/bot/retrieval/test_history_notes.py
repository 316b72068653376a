"""Which commits only edit release notes (ranked at half strength: they quote a change)."""

from __future__ import annotations

import pytest

from bot.retrieval.history_search import notes_only


@pytest.mark.parametrize(
    "paths",
    [["CHANGES.md"], ["HISTORY.rst"], ["NEWS"], ["changelog.d/123.change.md"],
     ["docs/change_log.md", "CHANGELOG.md"], ["docs/whatsnew/1.2.rst"]],
)  # fmt: skip
def test_release_notes_only(paths: list[str]) -> None:
    assert notes_only(paths)


@pytest.mark.parametrize(
    "paths", [[], ["CHANGELOG.md", "README.md"], ["src/changes.py"], ["lib/news.py"]]
)
def test_code_or_other_docs_too(paths: list[str]) -> None:
    assert not notes_only(paths)
