"""A Core whose codecite.toml lists the shop repository (a real git repository), not indexed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bot.core import Core
from tests.support.jobs import configured_shop
from tests.support.shop import build_shop


@pytest.fixture
def core(make_repo: Any) -> Iterator[Core]:
    repo = make_repo("shop")
    build_shop(repo)
    core = configured_shop(repo.path)
    yield core
    core.close()
