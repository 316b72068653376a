"""A small, realistic repository for end-to-end tests: billing, webhooks, docs."""

from __future__ import annotations

from tests.support.gitrepo import GitRepo

WEBHOOKS = '''"""Outgoing webhooks: delivery and retries."""

import time

MAX_ATTEMPTS = 5


class WebhookSender:
    """Delivers events to subscriber URLs."""

    def __init__(self, http, clock=time):
        self.http = http
        self.clock = clock

    def send(self, url, payload):
        return self.http.post(url, json=payload, timeout=10)

    def retry_failed_webhooks(self, failures):
        """Retry each failed delivery with exponential backoff, up to MAX_ATTEMPTS."""
        delivered = []
        for url, payload in failures:
            for attempt in range(MAX_ATTEMPTS):
                response = self.send(url, payload)
                if response.ok:
                    delivered.append(url)
                    break
                self.clock.sleep(2 ** attempt)
        return delivered
'''

BILLING = '''"""Billing: decide what to charge and charge it."""

from decimal import Decimal


def monthly_amount(plan, seats):
    """Price of a plan for a number of seats, with a volume discount above 50 seats."""
    price = Decimal(plan.price_per_seat) * seats
    if seats > 50:
        price *= Decimal("0.9")
    return price


def charge_customer(gateway, customer, plan):
    """Charge a customer's card for this month."""
    amount = monthly_amount(plan, customer.seats)
    return gateway.charge(customer.card_token, amount)
'''

README = """# Shop

The shop service sells seats.

## Billing

Invoices are computed monthly by `charge_customer`.

## Webhooks

Failed webhook deliveries are retried with backoff.
"""


def build_shop(repo: GitRepo) -> str:
    repo.write("shop/webhooks.py", WEBHOOKS)
    repo.write("shop/billing.py", BILLING)
    repo.write("README.md", README)
    return repo.commit("shop: billing and webhooks")


def line_of(text: str, needle: str) -> int:
    """1-based line number of the first line containing `needle`."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not found")
