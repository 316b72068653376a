"""A subject only the docs or the tests mention is not presented as found (issue 26).

A real repository whose README and test names speak of a `RateLimiter` and a
`WebhookRelay` that its code does not have: a how-question about either must open by
saying the code does not define it and where it is only mentioned, while questions
about what the code does have (also written another way: `rate_limiter` in code,
`RateLimiter` in the question) and about a test asked for by name are answered.
"""

from __future__ import annotations

import pytest

from bot.config import FileConfig, Settings
from bot.core import CLI, Core

README = """\
# shop

A tiny shop. Orders are checked by the RateLimiter before they are saved, and
the payment gateway settles them.
"""

ORDERS = '''\
"""Orders and their storage."""


class OrderBook:
    def __init__(self):
        self.orders = []

    def add(self, order):
        """Keep an order after checking its total."""
        if order["total"] <= 0:
            raise ValueError("empty order")
        self.orders.append(order)
        return len(self.orders)
'''

PAYMENTS = '''\
"""Settling orders with the payment gateway."""


def settle_with_gateway(order, payment_gateway):
    """Charge an order's total through the gateway; the receipt id it returns."""
    return payment_gateway.charge(order["total"])
'''

TESTS = """\
from src.orders import OrderBook


def test_webhook_relay_forwards_orders():
    # the WebhookRelay will get its own module
    assert OrderBook().add({"total": 1}) == 1
"""


@pytest.fixture
def core(make_repo):
    repo = make_repo("shop")
    repo.write("README.md", README)
    repo.write("src/orders.py", ORDERS)
    repo.write("src/payments.py", PAYMENTS)
    repo.write("tests/test_orders.py", TESTS)
    repo.commit("shop")
    bot = Core.from_settings(Settings(), FileConfig())
    bot.index_repo(str(repo.path), name="shop")
    yield bot
    bot.close()


def test_a_subject_only_the_readme_names_is_not_presented_as_found(core: Core) -> None:
    answer = core.ask("how does the RateLimiter decide to block an order?", CLI)
    assert answer.text.startswith(
        "The indexed code does not define or use `RateLimiter`: only the docs mention it "
        "(README.md:L1-L4)"
    ), answer.text


def test_a_subject_only_a_test_names_is_not_presented_as_found(core: Core) -> None:
    answer = core.ask("what does the WebhookRelay do with an order?", CLI)
    assert answer.text.startswith(
        "The indexed code does not define or use `WebhookRelay`: only the tests mention it "
        "(tests/test_orders.py:L"
    ), answer.text


def test_a_subject_the_code_has_in_another_spelling_is_answered(core: Core) -> None:
    answer = core.ask("how does settleWithGateway charge an order?", CLI)
    assert not answer.text.startswith("The indexed code does not"), answer.text
    assert answer.citations[0].path == "src/payments.py", answer.text


def test_a_test_asked_for_by_name_is_answered(core: Core) -> None:
    answer = core.ask("what does test_webhook_relay_forwards_orders check?", CLI)
    assert not answer.text.startswith("The indexed code does not"), answer.text
    assert answer.citations[0].path == "tests/test_orders.py", answer.text
