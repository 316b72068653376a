"""Small source files that several end-to-end tests index (one copy, so they agree)."""

from __future__ import annotations

WEBHOOK_RETRY_PY = '''"""Webhook delivery."""

MAX_ATTEMPTS = 5


def retry_failed_webhooks(queue):
    """Retry every failed webhook with exponential backoff."""
    for hook in queue.failed():
        for attempt in range(MAX_ATTEMPTS):
            if hook.deliver():
                break
            hook.wait(2 ** attempt)
'''

LEDGER_PY = '''"""Ledger batches."""


def reconcile_ledger_batch(batch):
    """Reconcile one ledger batch against the bank statement."""
    totals = sum(entry.amount for entry in batch)
    return totals == batch.statement_total
'''
